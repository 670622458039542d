"""Operations of the `sbp` dialect (SPEC §2.1, §2.4) and the `SBP` dialect object.

Every op takes and returns `!sbp.tensor` values. Verifiers name the op with DTensor-style
operand descriptions, e.g. `sbp.add(f32[4,4][S(0)] @p, f32[4,4][S(1)] @q): ...`, so that a user
sees which value is wrong without reading generic IR.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
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
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects.layout import LayoutAttr
from sbpc.dialects.sbp import (
    BroadcastAttr,
    GlobalTensorType,
    NdSbpAttr,
    PartialAttr,
    ReduceKind,
    SbpAttr,
    SignatureAttr,
    SplitAttr,
)
from sbpc.dialects.sharding import broadcast_shapes, max_local_shape
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
# Placement
# ---------------------------------------------------------------------------


@irdl_op_definition
class PlacementOp(IRDLOperation):
    """`sbp.placement @p "cpu" [[0, 1], [2, 3]]`: a device mesh (OneFlow `flow.placement`).

    The hierarchy is the shape of the nested rank list; ranks are stored flat, row-major.
    """

    name = "sbp.placement"
    sym_name = prop_def(StringAttr)
    device_type = prop_def(StringAttr)
    hierarchy = prop_def(DenseArrayBase.constr(i64))
    ranks = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(SymbolOpInterface())

    def __init__(self, sym_name: str, device_type: str, hierarchy: Sequence[int], ranks: Sequence[int]):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "device_type": StringAttr(device_type),
                "hierarchy": DenseArrayBase.from_list(i64, hierarchy),
                "ranks": DenseArrayBase.from_list(i64, ranks),
            }
        )

    def get_hierarchy(self) -> tuple[int, ...]:
        return tuple(self.hierarchy.get_values())  # type: ignore[return-value]

    def get_ranks(self) -> tuple[int, ...]:
        return tuple(self.ranks.get_values())  # type: ignore[return-value]

    def verify_(self) -> None:
        hierarchy, ranks = self.get_hierarchy(), self.get_ranks()
        where = f"sbp.placement @{self.sym_name.data}"
        parent = self.parent_op()
        if parent is not None and not isinstance(parent, ModuleOp):
            raise VerifyException(f"{where}: must be at module level, not inside {parent.name}")
        if not hierarchy or any(h <= 0 for h in hierarchy):
            raise VerifyException(f"{where}: hierarchy {list(hierarchy)} must be non-empty and positive")
        if math.prod(hierarchy) != len(ranks):
            raise VerifyException(
                f"{where}: {len(ranks)} ranks do not fill hierarchy {list(hierarchy)} (ranks must be rectangular)"
            )
        if any(r < 0 for r in ranks):
            raise VerifyException(f"{where}: ranks must be non-negative, got {list(ranks)}")
        if len(set(ranks)) != len(ranks):
            dup = sorted({r for r in ranks if ranks.count(r) > 1})
            raise VerifyException(f"{where}: duplicate ranks {dup}")

    @classmethod
    def parse(cls, parser: Parser) -> PlacementOp:
        sym = parser.parse_symbol_name().data
        device = parser.parse_str_literal(" (device type, e.g. \"cpu\" or \"npu\")")
        start = parser.pos
        nested = _parse_nested_ranks(parser)
        hierarchy, flat = _flatten_rectangular(nested)
        if hierarchy is None:
            parser.raise_error("placement ranks must form a rectangular nested list", start, parser.pos)
        op = cls(sym, device, hierarchy, flat)
        attrs = parser.parse_optional_attr_dict()
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data} ")
        printer.print_string_literal(self.device_type.data)
        printer.print_string(" " + _nested_text(self.get_ranks(), self.get_hierarchy()))
        printer.print_op_attributes(self.attributes)


_Nested = int | list["_Nested"]


def _parse_nested_ranks(parser: Parser) -> _Nested:
    if parser.parse_optional_punctuation("[") is None:
        start = parser.pos
        rank = parser.parse_integer(allow_boolean=False, context_msg=" (a rank or a nested list of ranks)")
        if not -(2**63) <= rank < 2**63:  # ranks are stored as array<i64>, which would raise ValueError
            parser.raise_error(f"rank {rank} does not fit in a 64-bit integer", start, parser.pos)
        return rank
    items: list[_Nested] = []
    if parser.parse_optional_punctuation("]") is not None:
        return items
    items.append(_parse_nested_ranks(parser))
    while parser.parse_optional_punctuation(",") is not None:
        items.append(_parse_nested_ranks(parser))
    parser.parse_punctuation("]")
    return items


def _flatten_rectangular(nested: _Nested) -> tuple[list[int] | None, list[int]]:
    """(hierarchy, flat ranks) of a rectangular nested list, or (None, []) if ragged."""
    if isinstance(nested, int) or not nested:
        return None, []
    if all(isinstance(x, int) for x in nested):
        return [len(nested)], list(nested)  # type: ignore[arg-type]
    if any(isinstance(x, int) for x in nested):
        return None, []
    subs = [_flatten_rectangular(x) for x in nested]
    first = subs[0][0]
    if first is None or any(h != first for h, _ in subs):
        return None, []
    return [len(nested), *first], [r for _, flat in subs for r in flat]


def _nested_text(ranks: Sequence[int], hierarchy: Sequence[int]) -> str:
    if len(hierarchy) == 1:
        return "[" + ", ".join(str(r) for r in ranks) + "]"
    step = len(ranks) // hierarchy[0]
    return "[" + ", ".join(_nested_text(ranks[i : i + step], hierarchy[1:]) for i in range(0, len(ranks), step)) + "]"


def lookup_placement(op: Operation, ty: GlobalTensorType) -> PlacementOp | None:
    """The `sbp.placement` a tensor type refers to, seen from `op` (top-level ops are few). The
    type's own symbol reference is passed on: the lookup would otherwise build one per call."""
    return lookup_placement_named(op, ty.placement)


def lookup_placement_named(op: Operation, name: str | SymbolRefAttr) -> PlacementOp | None:
    """The `sbp.placement` named `name`, seen from `op`."""
    try:
        found = SymbolTable.lookup_symbol(op, name)
    except ValueError:  # no symbol table above `op`
        return None
    return found if isinstance(found, PlacementOp) else None


# ---------------------------------------------------------------------------
# Shared verification
# ---------------------------------------------------------------------------


def describe_op(op: Operation) -> str:
    """`sbp.add(f32[4,4][S(0)] @p, f32[4,4][S(1)] @p)` for diagnostics."""
    args = ", ".join(
        v.type.describe() if isinstance(v.type, GlobalTensorType) else str(v.type) for v in op.operands
    )
    return f"{op.name}({args})"


def verify_global_type(
    op: Operation, ty: GlobalTensorType, what: str, placement: PlacementOp | None = None,
    hierarchy: tuple[int, ...] | None = None,
) -> PlacementOp:
    """Checks of a tensor type that need its placement: existence, ND-SBP length, layout extents.
    A caller checking several types may pass the placement and its hierarchy, looked up once.
    The placement-independent checks (`GlobalTensorType.problem`) are not repeated here: xDSL
    verifies every attribute when it is built, parsed or not, and attributes are immutable."""
    if placement is None:
        placement = lookup_placement(op, ty)
        if placement is None:
            raise VerifyException(f"{describe_op(op)}: {what} refers to unknown placement @{ty.placement_name}")
    if hierarchy is None:
        hierarchy = placement.get_hierarchy()
    sbp = ty.nd_sbp
    if sbp is not None and len(sbp) != len(hierarchy):
        raise VerifyException(
            f"{describe_op(op)}: {what} has ND-SBP {sbp.short_str()} of length {len(sbp)}, "
            f"but placement @{ty.placement_name} has hierarchy {list(hierarchy)} of rank {len(hierarchy)}"
        )
    layout = ty.layout
    if type(layout) is LayoutAttr and sbp is not None:
        expected = max_local_shape(ty.get_shape(), sbp, hierarchy)
        if tuple(layout.layout.mode_sizes()) != expected:
            raise VerifyException(
                f"{describe_op(op)}: {what} layout {layout.layout} has extents "
                f"{list(layout.layout.mode_sizes())}, but the largest local shard is {list(expected)}"
            )
    return placement


class SbpOp(IRDLOperation, abc.ABC):
    """Base of the ops on global tensors: common type/placement checks, then `verify_semantics`."""

    def verify_(self) -> None:
        operand_types = [v.type for v in self.operands]
        result_types = [r.type for r in self.results]
        types = operand_types + result_types
        # Exact-type test first (isinstance against an attribute class goes through ABCMeta, and
        # every op is verified after parsing and after each pass); xDSL's operand and result
        # constraints have already admitted only !sbp.tensor and tensor<...> here.
        if not all(type(t) is GlobalTensorType for t in types):
            if any(isinstance(t, TensorType) for t in types):
                if not all(isinstance(t, TensorType) for t in types):
                    raise VerifyException(
                        f"{self.name}: cannot mix per-rank tensor<...> and global !sbp.tensor types")
                self.verify_local()
                return
        # Operands and results mostly share one placement, and after inference often one type
        # object: the placement is looked up once per op (a symbol lookup walks up to the
        # module), each type object checked once.
        if not types:
            self.verify_semantics()
            return
        first = types[0]
        n_operands = len(operand_types)
        placement = verify_global_type(self, first, "operand 0" if n_operands else "result 0")
        name, hierarchy = first.placement_name, placement.get_hierarchy()
        names_differ = False
        for j in range(1, len(types)):
            ty = types[j]
            same_name = ty.placement_name == name
            names_differ = names_differ or not same_name
            if any(ty is seen for seen in types[:j]):
                continue
            what = f"operand {j}" if j < n_operands else f"result {j - n_operands}"
            if same_name:
                verify_global_type(self, ty, what, placement, hierarchy)
            else:
                verify_global_type(self, ty, what)
        if names_differ:
            self._verify_placement_names(operand_types, result_types)  # type: ignore[arg-type]
        self.verify_semantics()

    ALLOWS_PLACEMENT_CHANGE: ClassVar[bool] = False

    def _verify_placement_names(
        self, operand_types: list[GlobalTensorType], result_types: list[GlobalTensorType]
    ) -> None:
        """The operands share one placement, and the results keep it unless the op may move them."""
        placements = {t.placement_name for t in operand_types}
        if len(placements) > 1:
            names = ", ".join(f"@{p}" for p in sorted(placements))
            raise VerifyException(f"{describe_op(self)}: operands are on different placements {names}")
        if placements and not self.ALLOWS_PLACEMENT_CHANGE:
            for t in result_types:
                if t.placement_name not in placements:
                    raise VerifyException(
                        f"{describe_op(self)}: result placement @{t.placement_name} differs "
                        f"from the operands' @{next(iter(placements))}"
                    )

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


def _is_split(s: SbpAttr) -> bool:
    return isinstance(s, SplitAttr)


def _is_b(s: SbpAttr) -> bool:
    return isinstance(s, BroadcastAttr)


def _is_p(s: SbpAttr) -> bool:
    return isinstance(s, PartialAttr)


class CollectiveOp(ConversionOp, abc.ABC):
    """Changes the SBP on the mesh axes `mesh_axes` only; the transition is read from the types."""

    irdl_options = (ParsePropInAttrDict(),)
    mesh_axes = prop_def(DenseArrayBase.constr(i64))
    # After `spmdize` the types are per-rank tensors, so the step is spelled out:
    placement = opt_prop_def(SymbolRefAttr)
    src_sbp = opt_prop_def(NdSbpAttr)
    dst_sbp = opt_prop_def(NdSbpAttr)
    global_shape = opt_prop_def(DenseArrayBase.constr(i64))
    TRANSITION: ClassVar[str]

    def get_mesh_axes(self) -> tuple[int, ...]:
        return tuple(self.mesh_axes.get_values())  # type: ignore[return-value]

    @abc.abstractmethod
    def valid_step(self, src: SbpAttr, dst: SbpAttr) -> bool:
        """Whether `src -> dst` on one listed mesh axis is this collective's transition."""

    def verify_semantics(self) -> None:
        super().verify_semantics()
        src, dst = _tensor(self.x.type).nd_sbp, _tensor(self.result.type).nd_sbp
        if src is None or dst is None:
            raise self.fail("collective operand and result types must carry an ND-SBP")
        self.verify_transition(src, dst)

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
        self.verify_transition(self.src_sbp, self.dst_sbp)

    def verify_transition(self, src: NdSbpAttr, dst: NdSbpAttr) -> None:
        axes = self.get_mesh_axes()
        if not axes or len(set(axes)) != len(axes) or any(not 0 <= a < len(src) for a in axes):
            raise self.fail(f"mesh_axes {list(axes)} must be one or more distinct mesh axes in 0..{len(src) - 1}")
        for d in range(len(src)):
            if d not in axes and src[d] != dst[d]:
                raise self.fail(
                    f"{src.short_str()} -> {dst.short_str()} changes mesh axis {d}, "
                    f"which is not in mesh_axes {list(axes)}"
                )
        for d in axes:
            if not self.valid_step(src[d], dst[d]):
                raise self.fail(
                    f"{src.short_str()} -> {dst.short_str()} on mesh axis {d} is "
                    f"{src[d].short_str()} -> {dst[d].short_str()}, not the {self.TRANSITION} of {self.name}"
                )


@irdl_op_definition
class AllGatherOp(CollectiveOp):
    """S(i) -> B (all-gather)."""

    name = "sbp.all_gather"
    TRANSITION: ClassVar[str] = "S(i) -> B"

    def valid_step(self, src: SbpAttr, dst: SbpAttr) -> bool:
        return _is_split(src) and _is_b(dst)


@irdl_op_definition
class AllReduceOp(CollectiveOp):
    """P(k) -> B (all-reduce with k)."""

    name = "sbp.all_reduce"
    TRANSITION: ClassVar[str] = "P(k) -> B"

    def valid_step(self, src: SbpAttr, dst: SbpAttr) -> bool:
        return _is_p(src) and _is_b(dst)


@irdl_op_definition
class ReduceScatterOp(CollectiveOp):
    """P(k) -> S(i) (reduce-scatter)."""

    name = "sbp.reduce_scatter"
    TRANSITION: ClassVar[str] = "P(k) -> S(i)"

    def valid_step(self, src: SbpAttr, dst: SbpAttr) -> bool:
        return _is_p(src) and _is_split(dst)


@irdl_op_definition
class AllToAllOp(CollectiveOp):
    """S(i) -> S(j), i != j (all-to-all)."""

    name = "sbp.all_to_all"
    TRANSITION: ClassVar[str] = "S(i) -> S(j)"

    def valid_step(self, src: SbpAttr, dst: SbpAttr) -> bool:
        return _is_split(src) and _is_split(dst) and src != dst


@irdl_op_definition
class AllSliceOp(CollectiveOp):
    """B -> S(i): a local slice, no communication."""

    name = "sbp.all_slice"
    TRANSITION: ClassVar[str] = "B -> S(i)"

    def valid_step(self, src: SbpAttr, dst: SbpAttr) -> bool:
        return _is_b(src) and _is_split(dst)


@irdl_op_definition
class ToPartialOp(CollectiveOp):
    """B -> P(k) or S(i) -> P(k): local (one rank keeps / zero fill; identity for max/min from B)."""

    name = "sbp.to_partial"
    TRANSITION: ClassVar[str] = "B -> P(k) or S(i) -> P(k)"

    def valid_step(self, src: SbpAttr, dst: SbpAttr) -> bool:
        return (_is_b(src) or _is_split(src)) and _is_p(dst)


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
