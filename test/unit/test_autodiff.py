"""The `autodiff` pass and training steps (SPEC §8, issue 24): a forward program becomes one SGD / AdamW
step whose loss, updated parameters and optimizer state equal eager torch's (`torch.autograd` +
`torch.optim`), on the simulated mesh under rule=oneflow, cost and global; the gradient of a replicated
weight used by batch-split activations comes out P(sum) from the SBP rules, before any boxing."""

from __future__ import annotations

import re

import numpy as np
import pytest

import sbpc
from sbpc.dialects.sbp import PartialAttr, SignatureAttr, SplitAttr
from sbpc.dialects.sbp_ops import BoxingOp, MatmulOp
from sbpc.runtime import train_step

pytestmark = pytest.mark.torch

PIPELINE = "infer-sbp{{rule={rule}}},materialize-boxing,lower-boxing,spmdize"


def mlp(weights: str, activation: str = "relu") -> str:
    """x @ w1 + b1 (a broadcast bias), relu (or gelu), @ w2, summed to a 0-d loss; the weights' SBP is
    `weights`."""
    w = f", {weights}" if weights else ""
    return f"""
sbp.placement @p "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<8x16xf32, @p, [S(0), B]>, %w1: !sbp.tensor<16x32xf32, @p{w}>,
                %b1: !sbp.tensor<32xf32, @p{w}>, %w2: !sbp.tensor<32x4xf32, @p{w}>) -> !sbp.tensor<f32, @p> {{
  %h = sbp.matmul %x, %w1 : !sbp.tensor<8x16xf32, @p, [S(0), B]>, !sbp.tensor<16x32xf32, @p{w}>
    -> !sbp.tensor<8x32xf32, @p>
  %hb = sbp.add %h, %b1 : !sbp.tensor<8x32xf32, @p>, !sbp.tensor<32xf32, @p{w}> -> !sbp.tensor<8x32xf32, @p>
  %r = sbp.{activation} %hb : !sbp.tensor<8x32xf32, @p> -> !sbp.tensor<8x32xf32, @p>
  %o = sbp.matmul %r, %w2 : !sbp.tensor<8x32xf32, @p>, !sbp.tensor<32x4xf32, @p{w}> -> !sbp.tensor<8x4xf32, @p>
  %l = sbp.reduce_sum %o {{axes = array<i64: 0, 1>}} : !sbp.tensor<8x4xf32, @p> -> !sbp.tensor<f32, @p>
  func.return %l : !sbp.tensor<f32, @p>
}}
"""


NORM = """
sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<2x4x8xf32, @p, [S(0)]>, %w: !sbp.tensor<8x8xf32, @p>, %g: !sbp.tensor<8xf32, @p>,
                %b: !sbp.tensor<1x8xf32, @p>) -> !sbp.tensor<1x1xf32, @p> {
  %h = sbp.matmul %x, %w {transpose_b} : !sbp.tensor<2x4x8xf32, @p, [S(0)]>, !sbp.tensor<8x8xf32, @p>
    -> !sbp.tensor<2x4x8xf32, @p>
  %n = sbp.layer_norm %h, %g, %g : !sbp.tensor<2x4x8xf32, @p>, !sbp.tensor<8xf32, @p>, !sbp.tensor<8xf32, @p>
    -> !sbp.tensor<2x4x8xf32, @p>
  %a = sbp.gelu %n : !sbp.tensor<2x4x8xf32, @p> -> !sbp.tensor<2x4x8xf32, @p>
  %t = sbp.transpose %a {perm = array<i64: 1, 0, 2>} : !sbp.tensor<2x4x8xf32, @p> -> !sbp.tensor<4x2x8xf32, @p>
  %f = sbp.reshape %t : !sbp.tensor<4x2x8xf32, @p> -> !sbp.tensor<8x8xf32, @p>
  %c = sbp.add %f, %b : !sbp.tensor<8x8xf32, @p>, !sbp.tensor<1x8xf32, @p> -> !sbp.tensor<8x8xf32, @p>
  %e = sbp.exp %c : !sbp.tensor<8x8xf32, @p> -> !sbp.tensor<8x8xf32, @p>
  %eb = sbp.exp %b : !sbp.tensor<1x8xf32, @p> -> !sbp.tensor<1x8xf32, @p>
  %q = sbp.div %e, %eb : !sbp.tensor<8x8xf32, @p>, !sbp.tensor<1x8xf32, @p> -> !sbp.tensor<8x8xf32, @p>
  %s = sbp.mul_scalar %q, 2.5e-01 : f32 : !sbp.tensor<8x8xf32, @p> -> !sbp.tensor<8x8xf32, @p>
  %l = sbp.reduce_sum %s {axes = array<i64: 0, 1>, keepdims} : !sbp.tensor<8x8xf32, @p> -> !sbp.tensor<1x1xf32, @p>
  func.return %l : !sbp.tensor<1x1xf32, @p>
}
"""


NN = """
sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4x8xf32, @p, [S(0)]>, %w: !sbp.tensor<8x8xf32, @p, [B]>,
                %v: !sbp.tensor<8xf32, @p, [B]>, %c: !sbp.tensor<4x8xi1, @p, [S(0)]>) -> !sbp.tensor<f32, @p> {
  %h = sbp.matmul %x, %w : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8x8xf32, @p, [B]>
    -> !sbp.tensor<4x8xf32, @p>
  %s = sbp.sigmoid %h : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %t = sbp.tanh %h : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %u = sbp.silu %h : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %vb = sbp.broadcast_to %v : !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %sel = sbp.where %c, %s, %vb : !sbp.tensor<4x8xi1, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p>
    -> !sbp.tensor<4x8xf32, @p>
  %cat = sbp.concat %sel, %t {axis = 1 : i64} : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p>
    -> !sbp.tensor<4x16xf32, @p>
  %sm = sbp.softmax %cat {axis = 1 : i64} : !sbp.tensor<4x16xf32, @p> -> !sbp.tensor<4x16xf32, @p>
  %d = sbp.dropout %sm {p = 0.0 : f32} : !sbp.tensor<4x16xf32, @p> -> !sbp.tensor<4x16xf32, @p>
  %us = sbp.reduce_sum %u {axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<f32, @p>
  %ds = sbp.mul %d, %d : !sbp.tensor<4x16xf32, @p>, !sbp.tensor<4x16xf32, @p> -> !sbp.tensor<4x16xf32, @p>
  %l0 = sbp.reduce_sum %ds {axes = array<i64: 0, 1>} : !sbp.tensor<4x16xf32, @p> -> !sbp.tensor<f32, @p>
  %l = sbp.add %l0, %us : !sbp.tensor<f32, @p>, !sbp.tensor<f32, @p> -> !sbp.tensor<f32, @p>
  func.return %l : !sbp.tensor<f32, @p>
}
"""
"""sigmoid, tanh, silu, broadcast_to, where, concat, softmax and dropout (SPEC §7) on the way to the loss."""


def step(source: str, options: str) -> sbpc.Program:
    return sbpc.compile(sbpc.parse(source), f"autodiff{{{options}}}")


def assert_equals_eager(program: sbpc.Program, result: sbpc.RunResult) -> None:
    """The run passed its check (float64 bound and eager torch) and equals the eager step explicitly."""
    assert result.ok, result.mismatches
    assert any("vs eager torch" in line for line in result.tolerances)
    eager = train_step.eager_step(program.module, "main", result.inputs)
    assert len(eager) == len(result.outputs)
    for got, want in zip(result.outputs, eager, strict=True):
        np.testing.assert_allclose(got, np.asarray(want).reshape(got.shape), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("rule", "weights"), [("oneflow", "[B, B]"), ("cost", "[B, S(1)]"), ("global", "")])
@pytest.mark.parametrize("optimizer", ["sgd lr=0.125 weight-decay=0.0625", "adamw lr=0.01 weight-decay=0.1"])
def test_mlp_step_equals_eager_torch(rule: str, weights: str, optimizer: str) -> None:
    """SGD and AdamW steps of a relu MLP on 2x2, under each rule (rule=global decides the free weights,
    their gradients and the optimizer state)."""
    source = mlp(weights).replace("<32xf32, @p, [B, S(1)]>", "<32xf32, @p, [B, S(0)]>")  # b1 is 1-D
    program = step(source, f"optimizer={optimizer}")
    result = sbpc.run(program, pipeline=PIPELINE.format(rule=rule))
    assert_equals_eager(program, result)
    assert len(result.outputs) == (4 if optimizer.startswith("sgd") else 10)


def test_layer_norm_gelu_step_equals_eager_torch() -> None:
    """layer_norm, gelu, a batched matmul with transpose_b, transpose, reshape, a [1, n] broadcast add and
    divide, exp, mul_scalar and a keepdims 1x1 loss: every gradient rule, AdamW at step 3 under rule=global."""
    program = step(NORM, "optimizer=adamw lr=0.001 step=3 params=w,g,b")
    result = sbpc.run(program, pipeline=PIPELINE.format(rule="global"))
    assert_equals_eager(program, result)


def test_nn_ops_step_equals_eager_torch() -> None:
    """The gradients of the SPEC §7 ops written as forward ops, against torch autograd (v reaches the
    loss only through broadcast_to and where's other branch, and moves)."""
    program = step(NN, "optimizer=sgd lr=0.5 params=w,v")
    result = sbpc.run(program, pipeline=PIPELINE.format(rule="oneflow"))
    assert_equals_eager(program, result)
    assert not np.array_equal(result.outputs[2], result.inputs[2])


SOFTMAX_BY_HAND = """
sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4x8xf32, @p, [S(0)]>, %w: !sbp.tensor<8x8xf32, @p, [B]>) -> !sbp.tensor<f32, @p> {
  %h = sbp.matmul %x, %w : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %m = sbp.reduce_max %h {axes = array<i64: 1>, keepdims} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x1xf32, @p>
  %z = sbp.sub %h, %m : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x1xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %e = sbp.exp %z : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %s = sbp.reduce_sum %e {axes = array<i64: 1>, keepdims} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x1xf32, @p>
  %p = sbp.div %e, %s : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x1xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %q = sbp.mul %p, %h : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %lo = sbp.reduce_min %q {axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<8xf32, @p>
  %l = sbp.reduce_sum %lo {axes = array<i64: 0>} : !sbp.tensor<8xf32, @p> -> !sbp.tensor<f32, @p>
  func.return %l : !sbp.tensor<f32, @p>
}
"""
"""A softmax written as the GPT block writes it (x - max(x), exp, / sum) and a reduce_min into the loss."""


def test_reduce_max_and_min_gradients_equal_torch() -> None:
    """reduce_max/min's gradient spreads dy over the extremal elements (torch's amax/amin); through the
    softmax's shift it cancels, through the reduce_min it selects."""
    program = step(SOFTMAX_BY_HAND, "optimizer=sgd lr=0.5")
    assert any(op.name == "sbp.reduce_extremum_grad" for op in program.module.walk())
    result = sbpc.run(program, pipeline=PIPELINE.format(rule="oneflow"))
    assert_equals_eager(program, result)


def test_replicated_weight_gradient_is_partial_before_boxing() -> None:
    """dW = x^T @ dy with x and dy split on the batch axis: the matmul rule gives P(sum), and the update,
    which needs w's SBP, gets it through a boxing (all-reduce or reduce-scatter)."""
    program = step(mlp("[B, B]"), "optimizer=sgd")

    def w1_grad(module: object) -> MatmulOp:
        (found,) = [op for op in module.walk() if isinstance(op, MatmulOp)  # type: ignore[attr-defined]
                    and op.transpose_a is not None and op.results[0].type.get_shape() == (16, 32)]
        return found

    inferred = sbpc.compile(program, "infer-sbp")
    sig = w1_grad(inferred.module).attributes["sbp.signature"]
    assert isinstance(sig, SignatureAttr)
    assert all(isinstance(entry, PartialAttr) for entry in sig.outputs.data[0])
    boxed = sbpc.compile(inferred, "materialize-boxing")
    assert any(isinstance(use.operation, BoxingOp) for use in w1_grad(boxed.module).results[0].uses)


def test_the_torch_comparison_catches_a_wrong_step() -> None:
    """A step whose first moment mixes the gradient in with the wrong weight still matches its own
    float64 reference, but not eager torch's AdamW: the check fails."""
    program = step(mlp("[B, B]"), "optimizer=adamw")
    text = str(program.module)
    assert "beta = 9.000000e-01 : f64" in text
    text = text.replace("beta = 9.000000e-01 : f64", "beta = 8.000000e-01 : f64", 1)
    wrong = sbpc.parse(text)
    result = sbpc.run(wrong, pipeline=PIPELINE.format(rule="oneflow"))
    assert any("differs from eager torch's step" in m for m in result.mismatches)


def test_three_steps_carry_parameters_and_state() -> None:
    """`steps=3` equals three eager AdamW steps in a row (parameters and state carried, the step count
    advancing), and reports the three losses and the parameters by name. (gelu: no gradient is exactly 0,
    where AdamW's `m/√v` of two correct runs may differ by the sign of their roundings.)"""
    program = step(mlp("[B, B]", "gelu"), "optimizer=adamw lr=0.01")
    result = sbpc.run(program, pipeline=PIPELINE.format(rule="oneflow"), steps=3)
    assert result.ok, result.mismatches
    assert len(result.losses) == 3 and set(result.parameters) == {"w1", "b1", "w2"}
    spec = train_step.step_spec(program.module, "main")
    assert spec is not None
    current, losses = list(result.inputs), []
    first = sbpc.run(program, pipeline=PIPELINE.format(rule="oneflow"), check=False)
    current = list(first.inputs)
    for k in range(3):
        train_step.set_step_count(program.module, "main", 1 + k)
        eager = train_step.eager_step(program.module, "main", current)
        losses.append(float(eager[0]))
        current = train_step.carried(spec, current, eager)
    train_step.set_step_count(program.module, "main", 1)
    np.testing.assert_allclose(result.losses, losses, rtol=1e-5)
    for name, index in zip(spec.names, spec.params, strict=True):
        np.testing.assert_allclose(result.parameters[name], current[index], rtol=1e-4, atol=1e-6)
    assert losses[2] < losses[0]  # the steps descend


@pytest.mark.parametrize(("options", "message"), [
    ("loss=1", "autodiff: loss=1, but @main returns 1 result"),
    ("params=w9", "autodiff: params=w9: @main has no argument 'w9'"),
])
def test_located_option_errors(options: str, message: str) -> None:
    with pytest.raises(sbpc.Error, match=message):
        step(mlp("[B, B]"), options)


@pytest.mark.exhaustive  # ~2 s: a budgeted global search and a run
def test_memory_budget_shards_the_optimizer_state() -> None:
    """rule=global under the smallest `mem` the AdamW step fits (the located error names it): every
    parameter's m and v is sharded over every mesh axis (ZeRO-like, with reduce-scattered gradients) and
    the step still equals eager torch's."""
    source = mlp("").replace("8x16xf32", "64x16xf32").replace("8x32xf32", "64x32xf32").replace("8x4xf32", "64x4xf32")
    program = step(source, "optimizer=adamw lr=0.01")
    with pytest.raises(sbpc.Error, match=r"the smallest budget this function fits is (\d+) bytes") as info:
        sbpc.compile(program, "infer-sbp{rule=global mem=1}")
    smallest = int(re.search(r"fits is (\d+) bytes", str(info.value)).group(1))  # type: ignore[union-attr]
    pipeline = f"infer-sbp{{rule=global mem={smallest}}},materialize-boxing,lower-boxing,spmdize"
    planned = sbpc.compile(program, f"infer-sbp{{rule=global mem={smallest}}}")
    fn = next(op for op in planned.module.walk() if op.name == "func.func")
    spec = train_step.spec_of(fn)  # type: ignore[arg-type]
    assert spec is not None and len(spec.state) == 6
    for index in spec.state:
        sbp = fn.function_type.inputs.data[index].nd_sbp  # type: ignore[attr-defined]
        assert all(isinstance(entry, SplitAttr) for entry in sbp), (index, sbp)
    result = sbpc.run(program, pipeline=pipeline)
    assert_equals_eager(program, result)
