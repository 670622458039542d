"""Operations of the `sbp` dialect (SPEC §2.1, §2.4) and the `SBP` dialect object.

Every op takes and returns `!sbp.tensor` values. Verifiers name the op with DTensor-style
operand descriptions, e.g. `sbp.add(f32[4,4][S(0)] @p, f32[4,4][S(1)] @q): ...`, so that a user
sees which value is wrong without reading generic IR.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.irdl import (
    IRDLOperation,
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

from sbpc.dialects.collectives import COLLECTIVES, Invalid, axis_kind, check_step
from sbpc.dialects.layout import LayoutAttr
from sbpc.dialects.placement import PlacementOp, check_placed_type, lookup_placement, lookup_placement_named
from sbpc.dialects.sbp import (
    BroadcastAttr,
    GlobalTensorType,
    NdSbpAttr,
    PartialAttr,
    ReduceKind,
    SignatureAttr,
    SplitAttr,
)
from sbpc.dialects.sharding import broadcast_shapes
from sbpc.dialects.signatures import (
    BinaryRule,
    MatmulRule,
    ReduceRule,
    ReshapeRule,
    TransposeRule,
    UnaryRule,
)

TensorT = base(GlobalTensorType) | base(TensorType)
"""Global `!sbp.tensor` values; after `spmdize`, per-rank builtin `tensor<...>` values."""

# ---------------------------------------------------------------------------
# Shared verification
# ---------------------------------------------------------------------------


def describe_op(op: Operation) -> str:
    """`sbp.add(f32[4,4][S(0)] @p, f32[4,4][S(1)] @p)` for diagnostics."""
    args = ", ".join(
        v.type.describe() if isinstance(v.type, GlobalTensorType) else str(v.type) for v in op.operands
    )
    return f"{op.name}({args})"


def verify_global_type(op: Operation, ty: GlobalTensorType, what: str) -> PlacementOp:
    """`check_placed_type`, its message prefixed with the op's description."""
    try:
        return check_placed_type(op, ty, what)
    except VerifyException as error:
        raise VerifyException(f"{describe_op(op)}: {error}") from None


class SbpOp(IRDLOperation, abc.ABC):
    """Base of the ops on global tensors: common type/placement checks, then `verify_semantics`."""

    def verify_(self) -> None:
        types = [v.type for v in (*self.operands, *self.results)]
        if any(isinstance(t, TensorType) for t in types):
            if not all(isinstance(t, TensorType) for t in types):
                raise VerifyException(f"{self.name}: cannot mix per-rank tensor<...> and global !sbp.tensor types")
            self.verify_local()
            return
        placements: set[str] = set()
        for i, v in enumerate(self.operands):
            assert isinstance(v.type, GlobalTensorType)
            verify_global_type(self, v.type, f"operand {i}")
            placements.add(v.type.placement_name)
        for i, r in enumerate(self.results):
            assert isinstance(r.type, GlobalTensorType)
            verify_global_type(self, r.type, f"result {i}")
        if len(placements) > 1:
            names = ", ".join(f"@{p}" for p in sorted(placements))
            raise VerifyException(f"{describe_op(self)}: operands are on different placements {names}")
        if placements and not self.ALLOWS_PLACEMENT_CHANGE:
            for r in self.results:
                assert isinstance(r.type, GlobalTensorType)
                if r.type.placement_name not in placements:
                    raise VerifyException(
                        f"{describe_op(self)}: result placement @{r.type.placement_name} differs "
                        f"from the operands' @{next(iter(placements))}"
                    )
        self.verify_semantics()

    ALLOWS_PLACEMENT_CHANGE: ClassVar[bool] = False

    def verify_semantics(self) -> None:
        """Op-specific shape and element-type rules."""

    def verify_local(self) -> None:
        """Checks of the per-rank form produced by `spmdize` (shapes may be dynamic there)."""

    def fail(self, message: str) -> VerifyException:
        return VerifyException(f"{describe_op(self)}: {message}")

    def expect_result(self, shape: Sequence[int], element_type: Attribute | None = None) -> None:
        result = self.results[0].type
        assert isinstance(result, GlobalTensorType)
        if result.get_shape() != tuple(shape):
            raise self.fail(f"result shape {list(result.get_shape())} should be {list(shape)}")
        if element_type is not None and result.element_type != element_type:
            raise self.fail(f"result element type {result.element_type} should be {element_type}")


def _tensor(v: object) -> GlobalTensorType:
    assert isinstance(v, GlobalTensorType)
    return v


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
        a, b = _tensor(self.lhs.type), _tensor(self.rhs.type)
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
    traits = traits_def(Pure(), BinaryRule(partials=(("P", "P"),), add_n=True))


@irdl_op_definition
class SubOp(BinaryOp):
    """Elementwise `lhs - rhs`."""

    name = "sbp.sub"
    traits = traits_def(Pure(), BinaryRule(partials=(("P", "P"),)))


@irdl_op_definition
class MulOp(BinaryOp):
    """Elementwise `lhs * rhs`."""

    name = "sbp.mul"
    traits = traits_def(Pure(), BinaryRule(partials=(("B", "P"), ("P", "B"))))


@irdl_op_definition
class DivOp(BinaryOp):
    """Elementwise `lhs / rhs`."""

    name = "sbp.div"
    traits = traits_def(Pure(), BinaryRule(partials=(("P", "B"),)))


@irdl_op_definition
class MaximumOp(BinaryOp):
    """Elementwise maximum."""

    name = "sbp.maximum"
    traits = traits_def(Pure(), BinaryRule(extremum=ReduceKind.MAX))


@irdl_op_definition
class MinimumOp(BinaryOp):
    """Elementwise minimum."""

    name = "sbp.minimum"
    traits = traits_def(Pure(), BinaryRule(extremum=ReduceKind.MIN))


@irdl_op_definition
class FmodOp(SbpOp):
    """FmodTensor: `self - trunc(self / other) * other`; `other` broadcasts to `self`'s shape."""

    name = "sbp.fmod"
    self_ = operand_def(TensorT)
    other = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), BinaryRule())
    assembly_format = "$self_ `,` $other attr-dict `:` type($self_) `,` type($other) `->` type($result)"

    def verify_semantics(self) -> None:
        a, b = _tensor(self.self_.type), _tensor(self.other.type)
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
        t = _tensor(self.x.type)
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class FmodScalarOp(SbpOp):
    """FmodScalar: `self - trunc(self / other) * other` with a scalar `other`."""

    name = "sbp.fmod_scalar"
    self_ = operand_def(TensorT)
    other = prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(TensorT)
    traits = traits_def(Pure(), UnaryRule())
    assembly_format = "$self_ `,` $other attr-dict `:` type($self_) `->` type($result)"

    def verify_semantics(self) -> None:
        t = _tensor(self.self_.type)
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class AddScalarOp(SbpOp):
    """`x + scalar`."""

    name = "sbp.add_scalar"
    x = operand_def(TensorT)
    scalar = prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(TensorT)
    traits = traits_def(Pure(), UnaryRule(monotone=1, wraps_on_integers=True))
    assembly_format = "$x `,` $scalar attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        t = _tensor(self.x.type)
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class MulScalarOp(SbpOp):
    """`x * scalar`."""

    name = "sbp.mul_scalar"
    x = operand_def(TensorT)
    scalar = prop_def(base(FloatAttr) | base(IntegerAttr))
    result = result_def(TensorT)
    traits = traits_def(Pure(), UnaryRule(partial_sum=True))
    assembly_format = "$x `,` $scalar attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        t = _tensor(self.x.type)
        self.expect_result(t.get_shape(), t.element_type)


@irdl_op_definition
class ReluOp(UnaryOp):
    """`max(x, 0)`."""

    name = "sbp.relu"
    traits = traits_def(Pure(), UnaryRule(monotone=1))


@irdl_op_definition
class NegOp(UnaryOp):
    """`-x`."""

    name = "sbp.neg"
    traits = traits_def(Pure(), UnaryRule(partial_sum=True, monotone=-1, wraps_on_integers=True))


@irdl_op_definition
class ExpOp(UnaryOp):
    """`exp(x)`."""

    name = "sbp.exp"
    traits = traits_def(Pure(), UnaryRule(monotone=1))


@irdl_op_definition
class CastOp(SbpOp):
    """Element type conversion; the target type is the result's element type."""

    name = "sbp.cast"
    x = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), UnaryRule(partial_sum=True))
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        self.expect_result(_tensor(self.x.type).get_shape())


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
    traits = traits_def(Pure(), MatmulRule())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$a `,` $b attr-dict `:` type($a) `,` type($b) `->` type($result)"

    def verify_semantics(self) -> None:
        a, b = _tensor(self.a.type), _tensor(self.b.type)
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
        t = _tensor(self.x.type)
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
    traits = traits_def(Pure(), ReduceRule(ReduceKind.SUM))


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes`."""

    name = "sbp.reduce_max"
    traits = traits_def(Pure(), ReduceRule(ReduceKind.MAX))


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over `axes`."""

    name = "sbp.reduce_min"
    traits = traits_def(Pure(), ReduceRule(ReduceKind.MIN))


@irdl_op_definition
class TransposeOp(SbpOp):
    """Permute dimensions: result dim i is operand dim `perm[i]`."""

    name = "sbp.transpose"
    x = operand_def(TensorT)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorT)
    traits = traits_def(Pure(), TransposeRule())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def get_perm(self) -> tuple[int, ...]:
        return tuple(self.perm.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        t = _tensor(self.x.type)
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
    traits = traits_def(Pure(), ReshapeRule())
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def verify_semantics(self) -> None:
        t, r = _tensor(self.x.type), _tensor(self.result.type)
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
        t = _tensor(self.x.type)
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


# ---------------------------------------------------------------------------
# Collective communication (single-step, produced by --lower-boxing)
# ---------------------------------------------------------------------------


class CollectiveOp(ConversionOp, abc.ABC):
    """Changes the SBP on the mesh axes `mesh_axes` only; the transition is read from the types and
    must be the step `dialects.collectives` defines for this op's `KIND` on the placement's mesh."""

    irdl_options = (ParsePropInAttrDict(),)
    mesh_axes = prop_def(DenseArrayBase.constr(i64))
    # After `spmdize` the types are per-rank tensors, so the step is spelled out:
    placement = opt_prop_def(SymbolRefAttr)
    src_sbp = opt_prop_def(NdSbpAttr)
    dst_sbp = opt_prop_def(NdSbpAttr)
    global_shape = opt_prop_def(DenseArrayBase.constr(i64))
    KIND: ClassVar[str]
    """The `dialects.collectives.COLLECTIVES` entry this op performs."""

    def get_mesh_axes(self) -> tuple[int, ...]:
        return tuple(self.mesh_axes.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        super().verify_semantics()
        src_t, dst_t = _tensor(self.x.type), _tensor(self.result.type)
        src, dst = src_t.nd_sbp, dst_t.nd_sbp
        if src is None or dst is None:
            raise self.fail("collective operand and result types must carry an ND-SBP")
        placement = lookup_placement(self, src_t)
        assert placement is not None  # SbpOp.verify_ checked it
        self.verify_transition(src, dst, placement.get_hierarchy())

    def verify_local(self) -> None:
        if self.src_sbp is None or self.dst_sbp is None or self.placement is None or self.global_shape is None:
            raise VerifyException(
                f"{self.name} on per-rank tensors needs the properties placement, src_sbp, dst_sbp and global_shape"
            )
        if len(self.src_sbp) != len(self.dst_sbp):  # verify_transition indexes both per mesh axis
            raise VerifyException(
                f"{self.name}: src_sbp {self.src_sbp.short_str()} and dst_sbp {self.dst_sbp.short_str()} "
                "have different lengths"
            )
        placement = lookup_placement_named(self, self.placement.root_reference.data)
        if placement is None:
            raise VerifyException(f"{self.name}: unknown placement {self.placement}")
        hierarchy = placement.get_hierarchy()
        if len(hierarchy) != len(self.src_sbp):
            raise VerifyException(
                f"{self.name}: src_sbp {self.src_sbp.short_str()} has length {len(self.src_sbp)}, but placement "
                f"{self.placement} has hierarchy {list(hierarchy)} of rank {len(hierarchy)}"
            )
        self.verify_transition(self.src_sbp, self.dst_sbp, hierarchy)

    def verify_transition(self, src: NdSbpAttr, dst: NdSbpAttr, hierarchy: Sequence[int]) -> None:
        axes = self.get_mesh_axes()
        found = check_step(tuple(src), tuple(dst), axes, hierarchy)
        if found == self.KIND:
            return
        change = f"{src.short_str()} -> {dst.short_str()}"
        if isinstance(found, Invalid) and found.stage == "mesh_axes":
            raise self.fail(found.reason)
        if isinstance(found, Invalid) and found.stage == "unlisted":
            raise self.fail(f"{change} {found.reason}")
        # A listed axis that is not this op's transition is the likeliest mistake: name it first.
        for d in axes:
            if axis_kind(src[d], dst[d]) != self.KIND:
                raise self.fail(
                    f"{change} on mesh axis {d} is {src[d].short_str()} -> {dst[d].short_str()}, "
                    f"not the {COLLECTIVES[self.KIND].transition} of {self.name}"
                )
        assert isinstance(found, Invalid)
        raise self.fail(f"{change} on mesh axes {list(axes)} of the mesh {list(hierarchy)} {found.reason}")


@irdl_op_definition
class AllGatherOp(CollectiveOp):
    """S(i) -> B (all-gather)."""

    name = "sbp.all_gather"
    KIND: ClassVar[str] = "all_gather"


@irdl_op_definition
class AllReduceOp(CollectiveOp):
    """P(k) -> B (all-reduce with k)."""

    name = "sbp.all_reduce"
    KIND: ClassVar[str] = "all_reduce"


@irdl_op_definition
class ReduceScatterOp(CollectiveOp):
    """P(k) -> S(i) (reduce-scatter)."""

    name = "sbp.reduce_scatter"
    KIND: ClassVar[str] = "reduce_scatter"


@irdl_op_definition
class AllToAllOp(CollectiveOp):
    """S(i) -> S(j), i != j (all-to-all)."""

    name = "sbp.all_to_all"
    KIND: ClassVar[str] = "all_to_all"


@irdl_op_definition
class AllSliceOp(CollectiveOp):
    """B -> S(i): a local slice, no communication."""

    name = "sbp.all_slice"
    KIND: ClassVar[str] = "all_slice"


@irdl_op_definition
class ToPartialOp(CollectiveOp):
    """B -> P(k) or S(i) -> P(k): local (one rank keeps / zero fill; identity for max/min from B)."""

    name = "sbp.to_partial"
    KIND: ClassVar[str] = "to_partial"


COLLECTIVE_OPS: dict[str, type[CollectiveOp]] = {
    op.KIND: op for op in (AllGatherOp, AllReduceOp, ReduceScatterOp, AllToAllOp, AllSliceOp, ToPartialOp)
}
"""The op performing each `COLLECTIVES` kind."""


SBP_OPS: list[type[Operation]] = [
    PlacementOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaximumOp,
    MinimumOp,
    FmodOp,
    FmodScalarOp,
    AddScalarOp,
    MulScalarOp,
    ReluOp,
    NegOp,
    ExpOp,
    CastOp,
    MatmulOp,
    ReduceSumOp,
    ReduceMaxOp,
    ReduceMinOp,
    TransposeOp,
    ReshapeOp,
    ToGlobalOp,
    BoxingOp,
    AllGatherOp,
    AllReduceOp,
    ReduceScatterOp,
    AllToAllOp,
    AllSliceOp,
    ToPartialOp,
]

SBP = Dialect(
    "sbp",
    SBP_OPS,
    [SplitAttr, BroadcastAttr, PartialAttr, NdSbpAttr, GlobalTensorType, SignatureAttr, LayoutAttr],
)
