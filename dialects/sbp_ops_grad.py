"""Backward and optimizer ops of the `sbp` dialect (SPEC §8), made by the `autodiff` pass.

A gradient that is a forward op is written as one (matmul's gradients are matmuls with transpose
flags, a broadcast's is a reduce_sum, mul/div/exp's are mul/div, reshape/transpose's are
reshape/transpose); the ops here are the ones that are not: the masks and slopes of relu and gelu,
layer_norm's input and gamma gradients, the broadcast back of a reduce_sum, reduce_max/min's spread
over the extremal elements, the loss seed, and the SGD and AdamW parameter updates. Every op has one
result, so that the simulator, the torch ranks, the error bounds and the export treat it as any other
op; AdamW is `sbp.adam_moment1(m, g)`, `sbp.adam_moment2(v, g)` and `sbp.adamw_update(w, m', v')`.
SBP rules are `dialects/signatures_grad.py`'s, FLOP counts `dialects/flops.py`'s.
"""

from __future__ import annotations

import abc

from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, UnitAttr, i64
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from sbpc.dialects.flops import PerElement
from sbpc.dialects.sbp_op_base import SbpOp, TensorT, as_tensor_type
from sbpc.dialects.sbp_ops import LAYER_NORM_EPSILON, UnaryOp
from sbpc.dialects.signatures_grad import (
    ElementwiseGradRule,
    ExpandRule,
    ExtremumGradRule,
    LayerNormGradRule,
    OnesLikeRule,
)


class _SameShapeOp(SbpOp, abc.ABC):
    """Elementwise op on floating-point operands of one shape and element type; the result is alike."""

    def verify_semantics(self) -> None:
        first = as_tensor_type(self.operands[0].type)
        self.expect_float(first)
        for k, value in enumerate(self.operands[1:], start=1):
            t = as_tensor_type(value.type)
            if t.get_shape() != first.get_shape() or t.element_type != first.element_type:
                raise self.fail(f"operand {k} is {t.element_type}{list(t.get_shape())}, expected "
                                f"{first.element_type}{list(first.get_shape())} as operand 0")
        self.expect_result(first.get_shape(), first.element_type)


def _float_prop(op: SbpOp, name: str, default: float) -> float:
    attr = op.properties.get(name)
    return default if attr is None else float(attr.value.data)  # type: ignore[attr-defined]


@irdl_op_definition
class ReluGradOp(_SameShapeOp):
    """`dy · (x > 0)`: relu's input gradient (0 at x = 0, as torch's threshold_backward)."""

    name = "sbp.relu_grad"
    dy = operand_def(TensorT)
    x = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), ElementwiseGradRule(linear_in=(0,)), PerElement(1.0))
    assembly_format = "$dy `,` $x attr-dict `:` type($dy) `,` type($x) `->` type($result)"


@irdl_op_definition
class GeluGradOp(_SameShapeOp):
    """`dy · gelu'(x)`, the derivative of the tanh form: with `u = √(2/π)(x + 0.044715x³)`,
    `gelu'(x) = 0.5(1 + tanh u) + 0.5x(1 - tanh²u)·√(2/π)(1 + 3·0.044715x²)`."""

    name = "sbp.gelu_grad"
    dy = operand_def(TensorT)
    x = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), ElementwiseGradRule(linear_in=(0,)), PerElement(16.0))
    assembly_format = "$dy `,` $x attr-dict `:` type($dy) `,` type($x) `->` type($result)"


class NormGrad(SbpOp, abc.ABC):
    """Shared checks of a row-normalisation's gradients (layer_norm's here, rms_norm's in
    `sbp_ops_grad_nn`): dy and x of one float shape (rank ≥ 1), `epsilon` positive (default
    `default_epsilon()`)."""

    def default_epsilon(self) -> float:
        return LAYER_NORM_EPSILON

    def get_epsilon(self) -> float:
        epsilon = self.properties.get("epsilon")
        return self.default_epsilon() if epsilon is None else float(epsilon.value.data)  # type: ignore[attr-defined]

    def verify_semantics(self) -> None:
        dy, x = as_tensor_type(self.operands[0].type), as_tensor_type(self.operands[1].type)
        self.expect_float(x)
        if x.rank < 1:
            raise self.fail(f"{self.name.removeprefix('sbp.')} needs a tensor of rank >= 1")
        if dy.get_shape() != x.get_shape() or dy.element_type != x.element_type:
            raise self.fail(f"dy is {dy.element_type}{list(dy.get_shape())}, expected x's "
                            f"{x.element_type}{list(x.get_shape())}")
        if not self.get_epsilon() > 0:
            raise self.fail(f"epsilon must be positive, got {self.get_epsilon():g}")


class NormGradInput(NormGrad, abc.ABC):
    """A normalisation's input gradient `(dy, x, gamma) -> dx`, gamma 1-D of the last axis."""

    dy = operand_def(TensorT)
    x = operand_def(TensorT)
    gamma = operand_def(TensorT)
    epsilon = opt_prop_def(FloatAttr)
    result = result_def(TensorT)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$dy `,` $x `,` $gamma attr-dict `:` type($dy) `,` type($x) `,` type($gamma) `->` type($result)"

    def verify_semantics(self) -> None:
        super().verify_semantics()
        x, g = as_tensor_type(self.x.type), as_tensor_type(self.gamma.type)
        if g.get_shape() != x.get_shape()[-1:] or g.element_type != x.element_type:
            raise self.fail(f"gamma is {g.element_type}{list(g.get_shape())}, expected "
                            f"{x.element_type}{list(x.get_shape()[-1:])}")
        self.expect_result(x.get_shape(), x.element_type)


class NormGradGamma(NormGrad, abc.ABC):
    """A normalisation's gamma gradient `(dy, x) -> dgamma`, 1-D of the last axis."""

    dy = operand_def(TensorT)
    x = operand_def(TensorT)
    epsilon = opt_prop_def(FloatAttr)
    result = result_def(TensorT)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$dy `,` $x attr-dict `:` type($dy) `,` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        super().verify_semantics()
        x = as_tensor_type(self.x.type)
        self.expect_result(x.get_shape()[-1:], x.element_type)


@irdl_op_definition
class LayerNormGradOp(NormGradInput):
    """layer_norm's input gradient: with `x̂ = (x - mean)/σ` and `ĝ = dy·gamma` per row of n,
    `dx = (ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)) / σ`."""

    name = "sbp.layer_norm_grad"
    traits = traits_def(Pure(), LayerNormGradRule(), PerElement(12.0))


@irdl_op_definition
class LayerNormGradGammaOp(NormGradGamma):
    """layer_norm's gamma gradient `Σ_rows dy · x̂` (1-D of the last axis); beta's is `reduce_sum(dy)`."""

    name = "sbp.layer_norm_grad_gamma"
    traits = traits_def(Pure(), LayerNormGradRule(reduces_rows=True), PerElement(6.0, "operand"))


@irdl_op_definition
class ReduceSumGradOp(SbpOp):
    """reduce_sum's gradient: dy (of the reduce's result shape) broadcast back along `axes` to the
    result type's shape (the reduce's operand shape), `keepdims` as the reduce had it."""

    name = "sbp.reduce_sum_grad"
    dy = operand_def(TensorT)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), ExpandRule(), PerElement(0.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$dy attr-dict `:` type($dy) `->` type($result)"

    def get_axes(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        dy, out = as_tensor_type(self.dy.type), as_tensor_type(self.result.type)
        axes = self.get_axes()
        if len(set(axes)) != len(axes) or any(not 0 <= a < out.rank for a in axes):
            raise self.fail(f"axes {list(axes)} must be distinct axes of the rank-{out.rank} result")
        shape = out.get_shape()
        reduced = [1 if i in axes else d for i, d in enumerate(shape)] if self.keepdims else [
            d for i, d in enumerate(shape) if i not in axes]
        if list(dy.get_shape()) != reduced:
            raise self.fail(f"dy has shape {list(dy.get_shape())}, but reducing {list(shape)} over {list(axes)} "
                            f"gives {reduced}")
        if dy.element_type != out.element_type:
            raise self.fail(f"result element type {out.element_type} should be {dy.element_type}")


@irdl_op_definition
class ReduceExtremumGradOp(SbpOp):
    """reduce_max's (and reduce_min's) gradient, as torch's amax/amin: dy (of the reduction's result
    shape, `axes` and `keepdims` as it had them) spread evenly over the elements of x equal to the
    reduced value y, 0 elsewhere: `dy · (x == y) / count(x == y)`."""

    name = "sbp.reduce_extremum_grad"
    dy = operand_def(TensorT)
    x = operand_def(TensorT)
    y = operand_def(TensorT)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), ExtremumGradRule(), PerElement(4.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$dy `,` $x `,` $y attr-dict `:` type($dy) `,` type($x) `,` type($y) `->` type($result)"

    def get_axes(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        dy, x, y = (as_tensor_type(v.type) for v in (self.dy, self.x, self.y))
        self.expect_float(x)
        axes = self.get_axes()
        if len(set(axes)) != len(axes) or any(not 0 <= a < x.rank for a in axes):
            raise self.fail(f"axes {list(axes)} must be distinct axes of the rank-{x.rank} x")
        shape = x.get_shape()
        reduced = [1 if i in axes else d for i, d in enumerate(shape)] if self.keepdims else [
            d for i, d in enumerate(shape) if i not in axes]
        for what, t in (("dy", dy), ("y", y)):
            if list(t.get_shape()) != reduced or t.element_type != x.element_type:
                raise self.fail(f"{what} is {t.element_type}{list(t.get_shape())}, expected x's reduction "
                                f"{x.element_type}{reduced}")
        self.expect_result(shape, x.element_type)


@irdl_op_definition
class OnesLikeOp(UnaryOp):
    """A tensor of ones of x's shape and element type (x's values are not read): the loss's seed."""

    name = "sbp.ones_like"
    traits = traits_def(Pure(), OnesLikeRule(), PerElement(0.0))


@irdl_op_definition
class SgdUpdateOp(_SameShapeOp):
    """torch.optim.SGD's step without momentum: `w - lr·(g + weight_decay·w)`."""

    name = "sbp.sgd_update"
    w = operand_def(TensorT)
    g = operand_def(TensorT)
    lr = prop_def(FloatAttr)
    weight_decay = opt_prop_def(FloatAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), ElementwiseGradRule(linear_in=(0, 1)), PerElement(4.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$w `,` $g attr-dict `:` type($w) `,` type($g) `->` type($result)"

    def hyper(self) -> tuple[float, float]:
        """(lr, weight_decay)."""
        return _float_prop(self, "lr", 0.0), _float_prop(self, "weight_decay", 0.0)


class _MomentOp(_SameShapeOp, abc.ABC):
    """A moment update of AdamW `(state, g) -> state'`, elementwise with state and g of one SBP: a partial
    gradient is boxed first (all-reduce, or reduce-scatter for a sharded state, as ZeRO), since the
    update amplifies the rounding of partial pieces where a gradient is 0 (`m'/√v'` jumps by ±1)."""

    state = operand_def(TensorT)
    g = operand_def(TensorT)
    beta = prop_def(FloatAttr)
    result = result_def(TensorT)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$state `,` $g attr-dict `:` type($state) `,` type($g) `->` type($result)"

    def get_beta(self) -> float:
        return float(self.beta.value.data)

    def verify_semantics(self) -> None:
        super().verify_semantics()
        if not 0 <= self.get_beta() < 1:
            raise self.fail(f"beta must lie in [0, 1), got {self.get_beta():g}")


@irdl_op_definition
class AdamMoment1Op(_MomentOp):
    """AdamW's first moment `m + (1-β)·(g - m)` (torch's `exp_avg.lerp_(grad, 1 - beta1)`)."""

    name = "sbp.adam_moment1"
    traits = traits_def(Pure(), ElementwiseGradRule(), PerElement(3.0))


@irdl_op_definition
class AdamMoment2Op(_MomentOp):
    """AdamW's second moment `β·v + (1-β)·g·g` (torch's `exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)`)."""

    name = "sbp.adam_moment2"
    traits = traits_def(Pure(), ElementwiseGradRule(), PerElement(4.0))


ADAMW_DEFAULTS = {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01}
"""torch.optim.AdamW's defaults."""


@irdl_op_definition
class AdamwUpdateOp(_SameShapeOp):
    """torch.optim.AdamW's parameter update at step `step` (1-based) from the already updated moments
    m' and v': `w·(1 - lr·wd) - (lr / (1 - β1^step)) · m' / (√v' / √(1 - β2^step) + eps)`."""

    name = "sbp.adamw_update"
    w = operand_def(TensorT)
    m = operand_def(TensorT)
    v = operand_def(TensorT)
    lr = prop_def(FloatAttr)
    beta1 = opt_prop_def(FloatAttr)
    beta2 = opt_prop_def(FloatAttr)
    eps = opt_prop_def(FloatAttr)
    weight_decay = opt_prop_def(FloatAttr)
    step = opt_prop_def(IntegerAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), ElementwiseGradRule(), PerElement(8.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$w `,` $m `,` $v attr-dict `:` type($w) `,` type($m) `,` type($v) `->` type($result)"

    def get_step(self) -> int:
        return 1 if self.step is None else int(self.step.value.data)

    def hyper(self) -> tuple[float, float, float, float, float, int]:
        """(lr, beta1, beta2, eps, weight_decay, step)."""
        found = [_float_prop(self, k, d) for k, d in ADAMW_DEFAULTS.items()]
        return (_float_prop(self, "lr", 0.0), *found, self.get_step())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        super().verify_semantics()
        _, b1, b2, eps, _, step = self.hyper()
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise self.fail(f"betas must lie in [0, 1), got ({b1:g}, {b2:g})")
        if step < 1:
            raise self.fail(f"step must be >= 1 (1-based, as torch counts after its increment), got {step}")
        if eps < 0:
            raise self.fail(f"eps must be >= 0, got {eps:g}")


GRAD_OPS = [ReluGradOp, GeluGradOp, LayerNormGradOp, LayerNormGradGammaOp, ReduceSumGradOp, ReduceExtremumGradOp,
            OnesLikeOp,
            SgdUpdateOp, AdamMoment1Op, AdamMoment2Op, AdamwUpdateOp]
"""The ops of this module, for the dialect's op list (the SPEC §7 ops' gradients: `sbp_ops_grad_nn.NN_GRAD_OPS`)."""
