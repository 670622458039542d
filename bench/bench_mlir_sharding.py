"""sbpc's sharding choices side by side with MLIR 22's `--sharding-propagation` + `--shard-partition`.

For examples/mlp_tp.mlir and examples/transformer_block.mlir: sbpc under every `infer-sbp` rule
(bytes from the lowered program's collectives, `runtime.simulator.modelled_bytes`), and mlir-opt-22
under every traversal of `--sharding-propagation` on the program exported with only its inputs
annotated (`lowering.to_upstream_global.to_upstream_inputs_only`), then `--shard-partition`. MLIR's
collectives are read from its partitioned output and sized with the same formula
(`dialects.collectives.step_bytes_exact`, summed over ranks). Where mlir-opt fails, its exit status
is recorded. Writes bench/RESULTS_mlir_sharding.md; deterministic (no timing in the table).

    python bench/bench_mlir_sharding.py
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from io import StringIO
from pathlib import Path

from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.printer import Printer

from sbpc.dialects.collectives import step_bytes_exact
from sbpc.dialects.context import register_dialects
from sbpc.dialects.sbp import BroadcastAttr, PartialAttr, SplitAttr
from sbpc.runtime.pipeline import UsageError, checking_callback, parse_pipeline_spec
from sbpc.runtime.simulator import modelled_bytes
from sbpc.translate.to_upstream_global import to_upstream_inputs_only

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ("mlp_tp", "transformer_block")
RULES = ("oneflow", "cost", "global")
TRAVERSALS = ("forward", "backward", "forward-backward", "backward-forward")
MLIR_OPT = shutil.which("mlir-opt-22")
_ELT = {"f16": 2, "bf16": 2, "f32": 4, "i16": 2, "i32": 4, "i64": 8}
_COLLECTIVE = re.compile(r"shard\.(all_gather|all_reduce|reduce_scatter|all_to_all|all_slice|broadcast|gather|"
                         r"scatter|shift|send|recv|reduce) (.*?) : tensor<([^>]*)> -> tensor<([^>]*)>")


def _parse(path: Path) -> tuple[Context, object]:
    ctx = Context()
    register_dialects(ctx)
    return ctx, Parser(ctx, path.read_text(), str(path)).parse_module()


def sbpc_row(path: Path, rule: str) -> tuple[str, str, int | None]:
    """(matmul results' SBPs, collectives, bytes) for one rule; bytes None if the rule is absent."""
    try:
        infer = parse_pipeline_spec([f"infer-sbp{{rule={rule}}}"], checking_callback(False))
    except UsageError:
        return "not available in this build", "", None
    ctx, module = _parse(path)
    infer.apply(ctx, module)  # type: ignore[arg-type]
    text = StringIO()
    Printer(stream=text).print_op(module)  # type: ignore[arg-type]
    chosen = re.findall(r"sbp\.matmul .*-> !sbp\.tensor<[^,]*, @\w+, (\[[^\]]*\])>", text.getvalue())
    lower = parse_pipeline_spec(["materialize-boxing,lower-boxing,spmdize"], checking_callback(False))
    lower.apply(ctx, module)  # type: ignore[arg-type]
    text = StringIO()
    Printer(stream=text).print_op(module)  # type: ignore[arg-type]
    kinds = re.findall(r"= sbp\.(all_gather|all_reduce|reduce_scatter|all_to_all|all_slice|to_partial) .*?"
                       r"mesh_axes = array<i64: ([\d, ]*)>", text.getvalue())
    return " ".join(chosen), _summary([f"{k}[{a}]" for k, a in kinds]), modelled_bytes(module, "main")  # type: ignore[arg-type]


def _summary(items: list[str]) -> str:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return ", ".join(f"{n}× {k}" for k, n in counts.items()) or "none"


def _shape(text: str) -> tuple[list[int], str]:
    *dims, elt = text.split("x")
    return [int(d) for d in dims], elt


def mlir_bytes(kind: str, attrs: str, src: str, dst: str, hierarchy: list[int]) -> int:
    """Bytes (summed over ranks) of one partitioned-MLIR collective, as sbpc sizes the same step."""
    axes = [int(a) for a in re.search(r"grid_axes = \[([\d, ]*)\]", attrs).group(1).split(",") if a.strip()]  # type: ignore[union-attr]
    (in_shape, elt), (out_shape, _) = _shape(src), _shape(dst)

    def state(per_axis: dict[int, object]) -> tuple[object, ...]:
        return tuple(per_axis.get(a, BroadcastAttr()) for a in range(len(hierarchy)))

    def axis(name: str) -> int:
        return int(re.search(rf"{name} = (\d+)", attrs).group(1))  # type: ignore[union-attr]

    if kind == "all_reduce":
        shape, s, d = in_shape, state({a: PartialAttr() for a in axes}), state({})
    elif kind == "all_gather":
        g = axis("gather_axis")
        shape, s, d = out_shape, state({a: SplitAttr(g) for a in axes}), state({})
    elif kind == "reduce_scatter":
        g = axis("scatter_axis")
        shape, s, d = in_shape, state({a: PartialAttr() for a in axes}), state({a: SplitAttr(g) for a in axes})
    elif kind == "all_to_all":
        sp, cc = axis("split_axis"), axis("concat_axis")
        shape = list(in_shape)
        shape[cc] = out_shape[cc]
        s, d = state({a: SplitAttr(cc) for a in axes}), state({a: SplitAttr(sp) for a in axes})
    else:
        return 0
    sent = step_bytes_exact(kind, s, d, axes, shape, hierarchy, _ELT[elt])  # type: ignore[arg-type]
    return sum(sent.values())


def mlir_rows(path: Path, work: Path) -> list[tuple[str, str, str, str]]:
    """Per traversal: (traversal, matmul result shardings, collectives, bytes or the exit status)."""
    _, module = _parse(path)
    exported = work / f"{path.stem}.inputs.mlir"
    text = StringIO()
    Printer(stream=text, print_generic_format=True).print_op(to_upstream_inputs_only(module))  # type: ignore[arg-type]
    exported.write_text(text.getvalue() + "\n")
    hierarchy = [int(n) for n in re.search(r"shape = array<i64: ([\d, ]*)>", text.getvalue()).group(1).split(",")]  # type: ignore[union-attr]
    rows = []
    for traversal in TRAVERSALS:
        assert MLIR_OPT is not None
        propagate = f"sharding-propagation{{traversal={traversal}}}"
        prop = subprocess.run([MLIR_OPT, f"--pass-pipeline=builtin.module(func.func({propagate}))", str(exported)],
                              capture_output=True, text=True, timeout=120)
        chosen = _matmul_shardings(prop.stdout) if prop.returncode == 0 else _failure(prop)
        run = subprocess.run([MLIR_OPT, f"--pass-pipeline=builtin.module(func.func({propagate},shard-partition))",
                              str(exported)], capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            rows.append((traversal, chosen, "", f"fails: {_failure(run)}"))
            continue
        found = _COLLECTIVE.findall(run.stdout)
        total = sum(mlir_bytes(k, a, s, d, hierarchy) for k, a, s, d in found)
        names = [f"{k}[{_grid_axes(a)}]" for k, a, _, _ in found]
        rows.append((traversal, chosen, _summary(names), f"{total:,}"))
    return rows


def _failure(run: subprocess.CompletedProcess[str]) -> str:
    """The exit status (negative: the signal) and mlir-opt's first error, without the file position."""
    first = re.search(r"error: (.*)", run.stderr)
    return f"exit status {run.returncode}" + (f" ({first.group(1)})" if first else "")


def _grid_axes(attrs: str) -> str:
    found = re.search(r"grid_axes = \[([\d, ]*)\]", attrs)
    return found.group(1) if found else ""


def _matmul_shardings(text: str) -> str:
    """split_axes of each matmul-like generic's result (two inputs, a reduction loop) after propagation."""
    shardings = dict(re.findall(r"(%[\w.]+) = shard\.sharding @\w+ split_axes = (\[\[.*?\]\])", text))
    found = []
    for name in re.findall(r"(%[\w.]+) = linalg\.generic \{[^}]*\"reduction\"\]\} ins\(%[\w.]+, %[\w.]+ :", text):
        use = re.search(rf"= shard\.shard {re.escape(name)} to (%[\w.]+)(?! annotate_for_users)", text)
        found.append(shardings.get(use.group(1), "?") if use else "none")
    return " ".join(found)


def main() -> int:
    if MLIR_OPT is None:
        print("mlir-opt-22 not found (apt-get install -y mlir-22-tools)", file=sys.stderr)
        return 1
    lines = ["# sbpc vs MLIR 22 sharding propagation", "",
             "`python bench/bench_mlir_sharding.py`. sbpc: `infer-sbp{rule=R}`, then materialize-boxing,",
             "lower-boxing, spmdize; bytes = `modelled_bytes` of the lowered program (summed over ranks).",
             "MLIR: the example exported with only its inputs annotated, `mlir-opt-22 --pass-pipeline=",
             "'builtin.module(func.func(sharding-propagation{traversal=T},shard-partition))'`; its collectives",
             "sized with the same formula (`dialects.collectives.step_bytes_exact`). *chose*: the result",
             "SBP (sbpc) or `split_axes` (MLIR, after propagation) of each matmul, in program order.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        for example in EXAMPLES:
            path = ROOT / "examples" / f"{example}.mlir"
            lines += [f"## {example}", "", "| tool | variant | chose | collectives | bytes sent |",
                      "|---|---|---|---|---:|"]
            for rule in RULES:
                chosen, kinds, sent = sbpc_row(path, rule)
                lines.append(f"| sbpc | rule={rule} | {chosen} | {kinds} | {'' if sent is None else f'{sent:,}'} |")
            for traversal, chosen, kinds, sent in mlir_rows(path, Path(tmp)):
                lines.append(f"| mlir-opt-22 | traversal={traversal} | {chosen} | {kinds} | {sent} |")
            lines.append("")
    out = ROOT / "bench" / "RESULTS_mlir_sharding.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
