"""The `--sbp-report` of a training step (issue 24 item 4, `passes/infer_sbp/report_train.py`): per value
class (weights, optimizer state, gradients, activations, inputs) the chosen SBPs, the bytes per device at
the step's memory peak (adding up to the step's memory) and the bytes sent per collective kind (adding up
to the plan's); the DOT picture clusters and colours the nodes by class."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from xdsl.context import Context

from sbpc.passes.infer_sbp.global_search.objective import plan_objective
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.infer_sbp.report import build_report, render_text, report_of
from sbpc.passes.infer_sbp.report_train import CLASS_COLOURS, CLASSES, GRADIENTS, STATE, WEIGHTS
from test.unit.test_autodiff import mlp, step
from test.unit.test_autodiff_plan import gpt_step


def _step_module() -> object:
    """A data-parallel AdamW step (replicated weights and moments, a batch-split input) on 2x2."""
    return step(mlp("[B, B]"), "optimizer=adamw lr=0.01").module


def test_report_of_a_step_by_value_class() -> None:
    module = _step_module()
    report = build_report(module, "oneflow")  # type: ignore[arg-type]
    (entry,) = report["training"]
    classes = entry["classes"]
    assert list(classes) == list(CLASSES)
    clone = module.clone()  # type: ignore[attr-defined]
    InferSbpPass().apply(Context(), clone)  # the inference the report ran
    assert entry["memory_bytes"] == plan_objective(clone).memory_bytes
    assert sum(c["bytes_at_peak"] for c in classes.values()) == entry["memory_bytes"]
    sent = sum(sum(c["collective_bytes"].values()) for c in classes.values())
    assert sent == report["totals"]["oneflow"]["bytes_sent_all_ranks"] > 0
    assert classes[WEIGHTS]["by_name"] == {"%w1": "[B, B]", "%b1": "[B, B]", "%w2": "[B, B]"}
    assert set(classes[STATE]["by_name"]) == {f"%{w}_{m}" for w in ("w1", "b1", "w2") for m in "mv"}
    assert classes[GRADIENTS]["sbp"].get("[P, P]", 0) == 3  # the replicated weights' gradients: partial sums
    assert classes[GRADIENTS]["collective_bytes"].get("reduce_scatter", 0) > 0  # ... reduced before the update
    text = render_text(report)
    assert "training step @main:" in text and "  optimizer state: 18 values" in text


@pytest.mark.parametrize("render", [False, pytest.param(True, marks=pytest.mark.skipif(
    shutil.which("dot") is None, reason="graphviz dot absent"))])
def test_dot_clusters_a_step_by_value_class(render: bool) -> None:
    text = report_of(_step_module(), InferSbpPass(), "dot", "optimal")  # type: ignore[arg-type]
    for kind in CLASSES:
        assert f'label="{kind}"; style="rounded,dashed"; color="{CLASS_COLOURS[kind]}";' in text
    assert f'label="%w1\\nf32[16,32] [B, B]", style=filled, fillcolor="{CLASS_COLOURS[WEIGHTS]}"' in text
    assert text.count(f'fillcolor="{CLASS_COLOURS[GRADIENTS]}"') >= 5
    if render:
        done = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "<svg" in done.stdout, done.stderr


@pytest.mark.exhaustive  # ~10 s: a GPT layer's step planned, lowered and laid out by dot
@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot absent")
def test_dot_of_one_gpt_layer_step_renders() -> None:
    """One GPT layer's AdamW step (Megatron weights, 2x4): its class clusters lay out (dot's default
    ranking fails on edges between clusters of this size; the report asks for `newrank`)."""
    text = report_of(gpt_step(1, weights="megatron").module, InferSbpPass(), "dot", "optimal")  # type: ignore[arg-type]
    assert "newrank=true;" in text
    done = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "<svg" in done.stdout and not done.stderr, done.stderr
