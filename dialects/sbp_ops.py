"""Compute and conversion ops of the `sbp` dialect (SPEC §2.4); the dialect object is `sbp_dialect.SBP`.

Every op takes and returns `!sbp.tensor` values and carries its SBP rule (`dialects/signatures.py`)
and FLOP count (`dialects/flops.py`) as traits. The checks every op shares, and the DTensor-style
messages they give, are `SbpOp`'s (`dialects/sbp_op_base.py`); each op adds its shape and
element-type rules (`verify_semantics`).
"""

from __future__ import annotations

import abc

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    i64,
)
from xdsl.ir import Operation
from xdsl.irdl import (
    ParsePropInAttrDict,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects.flops import MatmulFlops, PerElement
from sbpc.dialects.sbp import ReduceKind
from sbpc.dialects.sbp_op_base import SbpOp, TensorT, as_tensor_type
from sbpc.dialects.sharding import broadcast_shapes
from sbpc.dialects.signatures import (
    BinaryRule,
    CastRule,
    LayerNormRule,
    MatmulRule,
    ReduceRule,
    ReshapeRule,
    TransposeRule,
    UnaryRule,
)
from sbpc.dialects.tensor_type import GlobalTensorType

# ---------------------------------------------------------------------------
# Elementwise ops
# ---------------------------------------------------------------------------


class BinaryOp(SbpOp, abc.ABC):
    """Elementwise binary op with numpy broadcasting."""

    lhs = operand_def(TensorT)
    rhs = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: Operation | object, rhs: object, result_type: GlobalTensorType):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_semantics(self) -> None:
        a, b = as_tensor_type(self.lhs.type), as_tensor_type(self.rhs.type)
        if a.element_type != b.element_type:
            raise self.fail(f"operand element types {a.element_type} and {b.element_type} differ")
        shape = broadcast_shapes(a.get_shape(), b.get_shape())
        if shape is None:
            raise self.fail(f"shapes {list(a.get_shape())} and {list(b.get_shape())} are not broadcast-compatible")
        self.expect_result(shape, a.element_type)


@irdl_op_definition
class AddOp(BinaryOp):
    """Elementwise `lhs + rhs` (OneFlow add_n when shapes agree, broadcast_add otherwise)."""

    name = "sbp.add"
    traits = traits_def(Pure(), BinaryRule(partials=(("P", "P"),), add_n=True), PerElement(1.0))


@irdl_op_definition
class SubOp(BinaryOp):
    """Elementwise `lhs - rhs`."""

    name = "sbp.sub"
    traits = traits_def(Pure(), BinaryRule(partials=(("P", "P"),)), PerElement(1.0))


@irdl_op_definition
class MulOp(BinaryOp):
    """Elementwise `lhs * rhs`."""

    name = "sbp.mul"
    traits = traits_def(Pure(), BinaryRule(partials=(("B", "P"), ("P", "B"))), PerElement(1.0))


@irdl_op_definition
class DivOp(BinaryOp):
    """Elementwise `lhs / rhs`."""

    name = "sbp.div"
    traits = traits_def(Pure(), BinaryRule(partials=(("P", "B"),)), PerElement(1.0))


@irdl_op_definition
class MaximumOp(BinaryOp):
    """Elementwise maximum."""

    name = "sbp.maximum"
    traits = traits_def(Pure(), BinaryRule(extremum=ReduceKind.MAX), PerElement(1.0))


@irdl_op_definition
class MinimumOp(BinaryOp):
    """Elementwise minimum."""

    name = "sbp.minimum"
    traits = traits_def(Pure(), BinaryRule(extremum=ReduceKind.MIN), PerElement(1.0))


@irdl_op_definition
class FmodOp(SbpOp):
    """FmodTensor: `self - trunc(self / other) * other`; `other` broadcasts to `self`'s shape."""

    name = "sbp.fmod"
    self_ = operand_def(TensorT)
    other = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), BinaryRule(), PerElement(4.0))
    assembly_format = "$self_ `,` $other attr-dict `:` type($self_) `,` type($other) `->` type($result)"

    def verify_semantics(self) -> None:
        a, b = as_tensor_type(self.self_.type), as_tensor_type(self.other.type)
        if a.element_type != b.element_type:
            raise self.fail(f"operand element types {a.element_type} and {b.element_type} differ")
        if broadcast_shapes(a.get_shape(), b.get_shape()) != a.get_shape():
            raise self.fail(
                f"other's shape {list(b.get_shape())} does not broadcast to self's shape {list(a.get_shape())}"
            )
        self.expect_result(a.get_shape(), a.element_type)


ScalarAttr = FloatAttr[AnyFloat] | IntegerAttr[IntegerType]


class UnaryOp(SbpOp, abc.ABC):
    """Elementwise unary op: result has the operand's shape and element type."""

    x = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class FmodScalarOp(SbpOp):
    """FmodScalar: `self - trunc(self / other) * other` with a scalar `other`."""

    name = "sbp.fmod_scalar"
    self_ = operand_def(TensorT)
    other = prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(TensorT)
    traits = traits_def(Pure(), UnaryRule(), PerElement(4.0))
    assembly_format = "$self_ `,` $other attr-dict `:` type($self_) `->` type($result)"

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.self_.type)
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class AddScalarOp(SbpOp):
    """`x + scalar`."""

    name = "sbp.add_scalar"
    x = operand_def(TensorT)
    scalar = prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(TensorT)
    traits = traits_def(Pure(), UnaryRule(monotone=1, wraps_on_integers=True), PerElement(1.0))
    assembly_format = "$x `,` $scalar attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class MulScalarOp(SbpOp):
    """`x * scalar`."""

    name = "sbp.mul_scalar"
    x = operand_def(TensorT)
    scalar = prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(TensorT)
    traits = traits_def(Pure(), UnaryRule(partial_sum=True), PerElement(1.0))
    assembly_format = "$x `,` $scalar attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class ReluOp(UnaryOp):
    """`max(x, 0)`."""

    name = "sbp.relu"
    traits = traits_def(Pure(), UnaryRule(monotone=1), PerElement(1.0))


@irdl_op_definition
class NegOp(UnaryOp):
    """`-x`."""

    name = "sbp.neg"
    traits = traits_def(Pure(), UnaryRule(partial_sum=True, monotone=-1, wraps_on_integers=True), PerElement(1.0))


@irdl_op_definition
class ExpOp(UnaryOp):
    """`exp(x)`."""

    name = "sbp.exp"
    traits = traits_def(Pure(), UnaryRule(monotone=1), PerElement(1.0))


@irdl_op_definition
class GeluOp(UnaryOp):
    """GeLU, tanh form: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`. Not monotone and not
    linear, so it keeps splits only (no partial of any kind)."""

    name = "sbp.gelu"
    traits = traits_def(Pure(), UnaryRule(), PerElement(9.0))

    def verify_semantics(self) -> None:
        super().verify_semantics()
        self.expect_float(as_tensor_type(self.x.type))


LAYER_NORM_EPSILON = 1e-5


def check_epsilon(op: SbpOp, epsilon: FloatAttr | None, value: float) -> None:
    """A normalisation's `epsilon`, if given, is a positive f32 attribute."""
    if epsilon is None:
        return
    if epsilon.type != Float32Type():
        raise op.fail(f"epsilon must be an f32 float attribute, got {epsilon.type}")
    if not value > 0:
        raise op.fail(f"epsilon must be positive, got {value:g}")


@irdl_op_definition
class LayerNormOp(SbpOp):
    """`(x - mean) / sqrt(var + epsilon) · gamma + beta` over the last axis of x (biased variance);
    gamma and beta are 1-D of the last axis's size. `epsilon` (f32) defaults to 1e-5."""

    name = "sbp.layer_norm"
    x = operand_def(TensorT)
    gamma = operand_def(TensorT)
    beta = operand_def(TensorT)
    epsilon = opt_prop_def(FloatAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), LayerNormRule(), PerElement(8.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$x `,` $gamma `,` $beta attr-dict `:` type($x) `,` type($gamma) `,` type($beta) `->` type($result)"
    )

    def get_epsilon(self) -> float:
        return LAYER_NORM_EPSILON if self.epsilon is None else float(self.epsilon.value.data)

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        self.expect_float(t)
        if t.rank < 1:
            raise self.fail("layer_norm needs a tensor of rank >= 1 (it normalises the last axis)")
        last = t.get_shape()[-1]
        for what, value in (("gamma", self.gamma), ("beta", self.beta)):
            p = as_tensor_type(value.type)
            if p.get_shape() != (last,):
                raise self.fail(f"{what} has shape {list(p.get_shape())}, expected [{last}] (the last axis of x)")
            if p.element_type != t.element_type:
                raise self.fail(f"{what} element type {p.element_type} differs from x's {t.element_type}")
        check_epsilon(self, self.epsilon, self.get_epsilon())
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class CastOp(SbpOp):
    """Element type conversion; the target type is the result's element type. A partial sum stays
    partial only through an additive cast (`signatures.cast_is_additive`): float -> int truncates
    each piece, so it is reduced first."""

    name = "sbp.cast"
    x = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), CastRule(), PerElement(1.0))
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        self.expect_result(as_tensor_type(self.x.type).get_shape())


# ---------------------------------------------------------------------------
# Contractions, reductions, data movement
# ---------------------------------------------------------------------------


@irdl_op_definition
class MatmulOp(SbpOp):
    """Batched matmul `a @ b` (rank ≥ 2; leading dims are batch dims, broadcast as numpy)."""

    name = "sbp.matmul"
    a = operand_def(TensorT)
    b = operand_def(TensorT)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), MatmulRule(), MatmulFlops())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$a `,` $b attr-dict `:` type($a) `,` type($b) `->` type($result)"

    def verify_semantics(self) -> None:
        a, b = as_tensor_type(self.a.type), as_tensor_type(self.b.type)
        if a.rank < 2 or b.rank < 2:
            raise self.fail(f"matmul operands need rank >= 2, got ranks {a.rank} and {b.rank}")
        if a.element_type != b.element_type:
            raise self.fail(f"operand element types {a.element_type} and {b.element_type} differ")
        sa, sb = a.get_shape(), b.get_shape()
        m, ka = (sa[-1], sa[-2]) if self.transpose_a else (sa[-2], sa[-1])
        kb, n = (sb[-1], sb[-2]) if self.transpose_b else (sb[-2], sb[-1])
        if ka != kb:
            raise self.fail(f"contraction dimensions differ: {ka} (a) vs {kb} (b)")
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        if batch is None:
            raise self.fail(f"batch dimensions {list(sa[:-2])} and {list(sb[:-2])} are not broadcast-compatible")
        self.expect_result((*batch, m, n), a.element_type)


class ReduceOp(SbpOp, abc.ABC):
    """Reduction over `axes` (distinct, in range); `keepdims` keeps them as size 1."""

    x = operand_def(TensorT)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def get_axes(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        axes = self.get_axes()
        for a in axes:
            if not 0 <= a < t.rank:
                raise self.fail(f"reduction axis {a} out of range for rank {t.rank}")
        if len(set(axes)) != len(axes):
            raise self.fail(f"reduction axes {list(axes)} are repeated")
        shape = t.get_shape()
        out = [1 if i in axes else d for i, d in enumerate(shape)] if self.keepdims else [
            d for i, d in enumerate(shape) if i not in axes
        ]
        self.expect_result(out, t.element_type)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes`."""

    name = "sbp.reduce_sum"
    traits = traits_def(Pure(), ReduceRule(ReduceKind.SUM), PerElement(1.0, "operand"))


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes`."""

    name = "sbp.reduce_max"
    traits = traits_def(Pure(), ReduceRule(ReduceKind.MAX), PerElement(1.0, "operand"))


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over `axes`."""

    name = "sbp.reduce_min"
    traits = traits_def(Pure(), ReduceRule(ReduceKind.MIN), PerElement(1.0, "operand"))


@irdl_op_definition
class TransposeOp(SbpOp):
    """Permute dimensions: result dim i is operand dim `perm[i]`."""

    name = "sbp.transpose"
    x = operand_def(TensorT)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorT)
    traits = traits_def(Pure(), TransposeRule(), PerElement(0.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def get_perm(self) -> tuple[int, ...]:
        return tuple(self.perm.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        perm = self.get_perm()
        if sorted(perm) != list(range(t.rank)):
            raise self.fail(f"perm {list(perm)} is not a permutation of 0..{t.rank - 1}")
        shape = t.get_shape()
        self.expect_result([shape[p] for p in perm], t.element_type)


@irdl_op_definition
class ReshapeOp(SbpOp):
    """Reshape to the result's shape (same element count, row-major order)."""

    name = "sbp.reshape"
    x = operand_def(TensorT)
    result = result_def(TensorT)
    local_shapes = opt_prop_def(ArrayAttr)
    """After `spmdize`: each rank's output shape (flat rank order), since shards may differ."""
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure(), ReshapeRule(), PerElement(0.0, moves_bytes=False))
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        t, r = as_tensor_type(self.x.type), as_tensor_type(self.result.type)
        if t.element_count() != r.element_count():
            raise self.fail(
                f"reshape changes the element count: {list(t.get_shape())} ({t.element_count()}) "
                f"-> {list(r.get_shape())} ({r.element_count()})"
            )
        self.expect_result(r.get_shape(), t.element_type)


class ConversionOp(SbpOp, abc.ABC):
    """Same logical value, another distribution: shape and element type are kept."""

    x = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        self.expect_result(t.get_shape(), t.element_type)

    def verify_local(self) -> None:
        raise VerifyException(f"{self.name} converts global !sbp.tensor values, not per-rank tensor<...> values")


@irdl_op_definition
class ToGlobalOp(ConversionOp):
    """User-requested conversion to the result type's SBP (OneFlow `to_global`)."""

    name = "sbp.to_global"


@irdl_op_definition
class BoxingOp(ConversionOp):
    """A data-distribution change inserted by `--materialize-boxing`."""

    name = "sbp.boxing"
