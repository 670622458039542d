"""Backward ops of the SPEC §7 ops whose gradients are not forward ops (SPEC §8), made by `autodiff`:

* `sbp.rms_norm_grad(dy, x, gamma)` / `sbp.rms_norm_grad_gamma(dy, x)`: rms_norm's input and gamma
  gradients (rows whole, as layer_norm's);
* `sbp.embedding_grad(dy, indices)`: the table's gradient, a scatter-add of dy's rows at the indices
  (`[V, H]`, V from the result type; an index outside [0, V) adds nothing);
* `sbp.cross_entropy_grad(logits, targets, dloss, row_max, row_sum)`: `dloss · (softmax - onehot)` from
  the rows' maximum and sum of exponentials (computed by forward ops, so that vocab-split logits get
  them all-reduced as Megatron's vocab-parallel cross-entropy does);
* `sbp.slice_grad(dy)`: dy written back at the slice's positions of a zero tensor of x's shape;
* `sbp.maximum_grad(dy, x, other)` / `sbp.minimum_grad`: dy where x wins, half of it on a tie (torch's
  rule), 0 where `other` wins — the gradient with respect to x (swap the operands for `other`'s).

SBP rules are `dialects/signatures_grad.py`'s; semantics `runtime/ops_grad_nn.py`'s.
"""

from __future__ import annotations

import abc

from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from sbpc.dialects.flops import PerElement
from sbpc.dialects.sbp_op_base import SbpOp, TensorT, as_tensor_type
from sbpc.dialects.sbp_ops_grad import NormGradGamma, NormGradInput
from sbpc.dialects.sbp_ops_nn import INDEX_TYPES, RMS_NORM_EPSILON, VocabParallelOp, _logits_and_targets
from sbpc.dialects.signatures_grad import (
    CrossEntropyGradRule,
    ElementwiseGradRule,
    EmbeddingGradRule,
    LayerNormGradRule,
    SliceGradRule,
)


@irdl_op_definition
class RmsNormGradOp(NormGradInput):
    """rms_norm's input gradient: with `r = 1/√(mean(x²) + eps)` and `ĝ = dy·gamma` per row,
    `dx = r·(ĝ - x·r²·mean(ĝ·x))`; `epsilon` defaults to rms_norm's 1e-6."""

    name = "sbp.rms_norm_grad"
    traits = traits_def(Pure(), LayerNormGradRule(), PerElement(8.0))

    def default_epsilon(self) -> float:
        return RMS_NORM_EPSILON


@irdl_op_definition
class RmsNormGradGammaOp(NormGradGamma):
    """rms_norm's gamma gradient `Σ_rows dy · x · r` (1-D of the last axis)."""

    name = "sbp.rms_norm_grad_gamma"
    traits = traits_def(Pure(), LayerNormGradRule(reduces_rows=True), PerElement(5.0, "operand"))

    def default_epsilon(self) -> float:
        return RMS_NORM_EPSILON


@irdl_op_definition
class EmbeddingGradOp(SbpOp):
    """embedding's table gradient: `out[v] = Σ_{i: indices[i] = v} dy[i]` over [V, H] (V the result
    type's), dy [..., H] float, integer indices [...]; an index outside [0, V) adds nothing
    (the forward gave a zero row there)."""

    name = "sbp.embedding_grad"
    dy = operand_def(TensorT)
    indices = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), EmbeddingGradRule(), PerElement(1.0, "operand"))
    assembly_format = "$dy `,` $indices attr-dict `:` type($dy) `,` type($indices) `->` type($result)"

    def verify_semantics(self) -> None:
        dy, indices, out = (as_tensor_type(v.type) for v in (self.dy, self.indices, self.result))
        self.expect_float(dy)
        if indices.element_type not in INDEX_TYPES:
            raise self.fail(f"indices must be i32 or i64, got {indices.element_type}")
        if dy.rank < 1 or dy.get_shape() != (*indices.get_shape(), dy.get_shape()[-1]):
            raise self.fail(f"dy has shape {list(dy.get_shape())}, expected the indices' "
                            f"{list(indices.get_shape())} and a hidden axis")
        if out.rank != 2:
            raise self.fail(f"the table gradient must be 2-D [vocabulary, hidden], got rank {out.rank}")
        self.expect_result((out.get_shape()[0], dy.get_shape()[-1]), dy.element_type)


@irdl_op_definition
class CrossEntropyGradOp(VocabParallelOp):
    """cross_entropy's logits gradient `dloss · (exp(logits - row_max) / row_sum - onehot(target))` per
    row ([..., V]); 0 on a row whose target is outside [0, V) (its loss was the constant 0). row_max,
    row_sum ([..., 1], whole on every rank) are the rows' maximum and Σ exp(logits - max): a rank
    holding the vocabulary range [lo, hi) of vocab-split logits subtracts the one-hot where it holds
    the target (Megatron's vocab-parallel backward)."""

    name = "sbp.cross_entropy_grad"
    logits = operand_def(TensorT)
    targets = operand_def(TensorT)
    dloss = operand_def(TensorT)
    row_max = operand_def(TensorT)
    row_sum = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), CrossEntropyGradRule(), PerElement(4.0))
    assembly_format = (
        "$logits `,` $targets `,` $dloss `,` $row_max `,` $row_sum attr-dict `:` type($logits) `,` "
        "type($targets) `,` type($dloss) `,` type($row_max) `,` type($row_sum) `->` type($result)"
    )

    def vocab_axis(self) -> int:
        return len(self.logits.type.get_shape()) - 1  # type: ignore[attr-defined]

    def verify_semantics(self) -> None:
        logits, _ = _logits_and_targets(self, self.logits, self.targets)
        rows = logits.get_shape()[:-1]
        for what, value, shape in (("dloss", self.dloss, rows), ("row_max", self.row_max, (*rows, 1)),
                                   ("row_sum", self.row_sum, (*rows, 1))):
            t = as_tensor_type(value.type)
            if t.get_shape() != shape or t.element_type != logits.element_type:
                raise self.fail(f"{what} is {t.describe()}, expected {list(shape)} of {logits.element_type}")
        self.expect_result(logits.get_shape(), logits.element_type)


@irdl_op_definition
class SliceGradOp(SbpOp):
    """slice's gradient: dy (the slice's shape) at the positions `start:stop:step` of a zero tensor of
    the result type's shape (the sliced x's)."""

    name = "sbp.slice_grad"
    dy = operand_def(TensorT)
    start = prop_def(DenseArrayBase.constr(i64))
    stop = prop_def(DenseArrayBase.constr(i64))
    step = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorT)
    traits = traits_def(Pure(), SliceGradRule(), PerElement(0.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$dy attr-dict `:` type($dy) `->` type($result)"

    def get_bounds(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        return tuple(self.start.get_values()), tuple(self.stop.get_values()), tuple(self.step.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        dy, out = as_tensor_type(self.dy.type), as_tensor_type(self.result.type)
        start, stop, step = self.get_bounds()
        if not len(start) == len(stop) == len(step) == out.rank == dy.rank:
            raise self.fail(f"start/stop/step need {out.rank} entries each, and dy rank {out.rank}")
        want = []
        for axis, (a, b, s, n) in enumerate(zip(start, stop, step, out.get_shape(), strict=True)):
            if s < 1 or not 0 <= a <= b <= n:
                raise self.fail(f"slice {a}:{b}:{s} on axis {axis} is not within 0 <= start <= stop <= {n}, step >= 1")
            want.append(max(0, -(-(b - a) // s)))
        if list(dy.get_shape()) != want:
            raise self.fail(f"dy has shape {list(dy.get_shape())}, but the slice of {list(out.get_shape())} is {want}")
        if dy.element_type != out.element_type:
            raise self.fail(f"result element type {out.element_type} should be {dy.element_type}")


class _ExtremumGrad(SbpOp, abc.ABC):
    """dy, x and other of one float shape; the result is alike."""

    dy = operand_def(TensorT)
    x = operand_def(TensorT)
    other = operand_def(TensorT)
    result = result_def(TensorT)
    assembly_format = "$dy `,` $x `,` $other attr-dict `:` type($dy) `,` type($x) `,` type($other) `->` type($result)"

    def verify_semantics(self) -> None:
        first = as_tensor_type(self.operands[0].type)
        self.expect_float(first)
        for k, value in enumerate(self.operands[1:], start=1):
            t = as_tensor_type(value.type)
            if t.get_shape() != first.get_shape() or t.element_type != first.element_type:
                raise self.fail(f"operand {k} is {t.element_type}{list(t.get_shape())}, expected "
                                f"{first.element_type}{list(first.get_shape())} as dy")
        self.expect_result(first.get_shape(), first.element_type)


@irdl_op_definition
class MaximumGradOp(_ExtremumGrad):
    """`maximum(x, other)`'s gradient with respect to x: dy where x > other, dy/2 where x == other."""

    name = "sbp.maximum_grad"
    traits = traits_def(Pure(), ElementwiseGradRule(linear_in=(0,)), PerElement(2.0))


@irdl_op_definition
class MinimumGradOp(_ExtremumGrad):
    """`minimum(x, other)`'s gradient with respect to x: dy where x < other, dy/2 where x == other."""

    name = "sbp.minimum_grad"
    traits = traits_def(Pure(), ElementwiseGradRule(linear_in=(0,)), PerElement(2.0))


NN_GRAD_OPS = [RmsNormGradOp, RmsNormGradGammaOp, EmbeddingGradOp, CrossEntropyGradOp, SliceGradOp, MaximumGradOp,
               MinimumGradOp]
"""The ops of this module (the dialect lists them after `sbp_ops_grad.GRAD_OPS`)."""
