"""Gradients of the SPEC §7 ops that are their own ops (issue 24, `dialects/sbp_ops_grad_nn.py`): rms_norm,
embedding (a scatter-add of rows), cross_entropy (softmax - one-hot from the rows' statistics, vocab-split
as Megatron's), slice (dy written back into zeros), maximum/minimum (torch's tie rule: half each). A step
through all of them equals eager torch's (`torch.autograd`) under every rule, on the simulator and on
torch ranks; its `--emit-mlir` form passes mlir-opt-22."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import sbpc
from sbpc.dialects.sbp import SignatureAttr, SplitAttr
from sbpc.tools.sbp_translate import main as translate_main
from test.unit.test_autodiff import PIPELINE, assert_equals_eager, step

pytestmark = pytest.mark.torch

MLIR_OPT = shutil.which("mlir-opt-22")

T = "!sbp.tensor<{}, @p{}>"


def program_text(table: str = "[B]", head: str = "[B]") -> str:
    """Token ids (batch-split) -> embedding -> rms_norm -> maximum with its input -> minimum with a
    broadcast gamma -> maximum with itself (a tie everywhere) -> a strided slice -> logits -> the
    cross-entropy of the targets, summed. `table` and `head` are the embedding's and the logits
    projection's SBP."""
    return f"""
sbp.placement @p "cpu" [0, 1]
func.func @main(%tok: !sbp.tensor<8xi32, @p, [S(0)]>, %tgt: !sbp.tensor<8xi32, @p, [S(0)]>,
                %E: !sbp.tensor<16x8xf32, @p, {table}>, %g: !sbp.tensor<8xf32, @p, [B]>,
                %w: !sbp.tensor<4x16xf32, @p, {head}>) -> !sbp.tensor<f32, @p> {{
  %h = sbp.embedding %E, %tok : !sbp.tensor<16x8xf32, @p, {table}>, !sbp.tensor<8xi32, @p, [S(0)]>
    -> !sbp.tensor<8x8xf32, @p>
  %n = sbp.rms_norm %h, %g : !sbp.tensor<8x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<8x8xf32, @p>
  %m = sbp.maximum %n, %h : !sbp.tensor<8x8xf32, @p>, !sbp.tensor<8x8xf32, @p> -> !sbp.tensor<8x8xf32, @p>
  %q = sbp.minimum %m, %g : !sbp.tensor<8x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<8x8xf32, @p>
  %t = sbp.maximum %q, %q : !sbp.tensor<8x8xf32, @p>, !sbp.tensor<8x8xf32, @p> -> !sbp.tensor<8x8xf32, @p>
  %s = sbp.slice %t {{start = array<i64: 0, 1>, stop = array<i64: 8, 8>, step = array<i64: 1, 2>}}
    : !sbp.tensor<8x8xf32, @p> -> !sbp.tensor<8x4xf32, @p>
  %l = sbp.matmul %s, %w : !sbp.tensor<8x4xf32, @p>, !sbp.tensor<4x16xf32, @p, {head}> -> !sbp.tensor<8x16xf32, @p>
  %ce = sbp.cross_entropy %l, %tgt : !sbp.tensor<8x16xf32, @p>, !sbp.tensor<8xi32, @p, [S(0)]>
    -> !sbp.tensor<8xf32, @p>
  %loss = sbp.reduce_sum %ce {{axes = array<i64: 0>}} : !sbp.tensor<8xf32, @p> -> !sbp.tensor<f32, @p>
  func.return %loss : !sbp.tensor<f32, @p>
}}
"""


NEW_OPS = {"sbp.rms_norm_grad", "sbp.rms_norm_grad_gamma", "sbp.embedding_grad", "sbp.cross_entropy_grad",
           "sbp.slice_grad", "sbp.maximum_grad", "sbp.minimum_grad"}


@pytest.mark.parametrize("rule", ["oneflow", "cost", "global"])
def test_step_through_every_new_gradient_equals_eager_torch(rule: str) -> None:
    program = step(program_text(), "optimizer=sgd lr=0.5 params=E,g,w")
    assert NEW_OPS <= {op.name for op in program.module.walk()}
    result = sbpc.run(program, pipeline=PIPELINE.format(rule=rule))
    assert_equals_eager(program, result)


def vocab_parallel_step() -> sbpc.Program:
    """The step with a vocab-split table and logits projection, AdamW, and the cross-entropy's gradient
    hinted to the vocab-split signature (S(last) logits, the rows' statistics all-reduced)."""
    program = step(program_text("[S(0)]", "[S(1)]"), "optimizer=adamw lr=0.01 params=E,g,w")
    text = re.sub(r"(sbp.cross_entropy_grad [^:]*) :",
                  r"\1 {sbp.hint = #sbp.sig<[S(1)], [B], [B], [B], [B] -> ?>} :", str(program.module))
    return sbpc.parse(text)


@pytest.mark.parametrize("backend", ["simulator", pytest.param("torch", marks=pytest.mark.exhaustive)])
def test_vocab_parallel_cross_entropy_gradient_equals_eager_torch(backend: str) -> None:
    """Each rank's range of `softmax - onehot` (the one-hot where the rank holds the target): the AdamW step
    equals eager torch's on the simulated mesh and on torch ranks (gloo)."""
    program = vocab_parallel_step()
    inferred = sbpc.compile(program, "infer-sbp")
    (grad,) = [op for op in inferred.module.walk() if op.name == "sbp.cross_entropy_grad"]
    sig = grad.attributes["sbp.signature"]
    assert isinstance(sig, SignatureAttr) and isinstance(next(iter(sig.outputs.data[0])), SplitAttr)
    result = sbpc.run(program, pipeline=PIPELINE.format(rule="oneflow"), backend=backend)  # type: ignore[arg-type]
    assert_equals_eager(program, result)


@pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt-22 absent (apt-get install -y mlir-22-tools)")
@pytest.mark.parametrize("vocab_split", [False, True])
def test_the_new_gradients_export_and_verify(tmp_path: Path, vocab_split: bool) -> None:
    program = vocab_parallel_step() if vocab_split else step(program_text(), "optimizer=sgd lr=0.5 params=E,g,w")
    path = tmp_path / "step.mlir"
    path.write_text(str(program.module))
    out = tmp_path / "step.up.mlir"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert translate_main([str(path), "--emit-mlir", "-o", str(out)]) == 0, err.getvalue()
    text = out.read_text()
    assert '"sbp.' not in text and "tensor.insert_slice" in text
    done = subprocess.run([MLIR_OPT, "--verify-each", str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
