"""`--sbp-report=dot` rendered by Graphviz (issue 14, point 6): the transformer block's plan becomes
an SVG whose nodes are the program's arguments and ops and whose edges are its def-use pairs, with
the collectives coloured and their bytes those the simulator's cost model counts."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.context import register_dialects
from sbpc.dialects.diagnostics import LocatedParser, Source
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.lower_boxing import LowerBoxingPass
from sbpc.passes.materialize_boxing import MaterializeBoxingPass
from sbpc.runtime.simulator import modelled_bytes
from sbpc.tools.sbp_opt import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "transformer_block.mlir"
SVG = "{http://www.w3.org/2000/svg}"


def compiled(rule: str):
    ctx = Context()
    register_dialects(ctx)
    module = LocatedParser(ctx, Source(EXAMPLE.read_text(encoding="utf-8"), str(EXAMPLE))).parse_module()
    for p in (InferSbpPass(rule=rule), MaterializeBoxingPass(), LowerBoxingPass()):
        p.apply(ctx, module)
    return module


def dot_text(rule: str) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main([str(EXAMPLE), f"--infer-sbp=rule={rule}", "--sbp-report=dot", "-o", os.devnull]) == 0
    return err.getvalue()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed (.ci/run installs it)")
@pytest.mark.parametrize("rule", ["oneflow", "cost"])
def test_the_transformer_block_renders_to_svg_with_every_op_and_value(rule: str) -> None:
    svg = subprocess.run(["dot", "-Tsvg"], input=dot_text(rule), capture_output=True, text=True, check=True).stdout
    root = ET.fromstring(svg)
    groups = list(root.iter(f"{SVG}g"))
    nodes = [g for g in groups if g.get("class") == "node"]
    edges = [g for g in groups if g.get("class") == "edge"]

    module = compiled(rule)
    (main,) = [f for f in module.walk() if isinstance(f, func.FuncOp)]
    ops = list(main.body.block.ops)
    uses = sum(len(op.operands) for op in ops)
    assert len(nodes) == len(main.body.block.args) + len(ops)
    assert len(edges) == uses

    # Every collective is a filled node (orange when it sends, khaki when local), labelled with its op.
    collectives = [op for op in ops if isinstance(op, CollectiveOp)]
    assert collectives
    filled = [n for n in nodes if any(p.get("fill") in ("orange", "khaki") for p in n.iter(f"{SVG}polygon"))]
    assert len(filled) == len(collectives)
    texts = sorted(" ".join(t.text or "" for t in n.iter(f"{SVG}text")).split(" mesh")[0] for n in filled)
    assert texts == sorted(op.name for op in collectives)

    # The total in the title is the simulator's modelled total for the same plan.
    title = " ".join(t.text or "" for t in root.iter(f"{SVG}text") if "sent (all ranks)" in (t.text or ""))
    total = modelled_bytes(module, "main")
    assert f"{len(collectives)} collective(s)" in title
    mib = float(re.search(r"([0-9.]+) MiB sent", title).group(1))  # type: ignore[union-attr]
    assert abs(mib - total / 2**20) < 0.05


def test_each_edge_names_a_value_with_its_shape_and_sbp() -> None:
    text = dot_text("cost")
    assert '-> f0_op' in text
    assert 'label="%x f16[8,128,1024] [S(0), B]"' in text
    assert 'style=dashed' in text  # the partial sums out of the row-parallel matmuls
    assert 'f0_arg1 [shape=invhouse, label="%wq\\nf16[1024,1024] [B, S(1)]"];' in text
