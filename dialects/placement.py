"""`sbp.placement` (a device mesh: ranks and hierarchy) and the one lookup of a placement by name.

Every consumer (verifiers, passes, the simulator, the lowering) finds a tensor's placement through
`lookup_placement` / `lookup_placement_named`, so "which mesh does this value live on" has one answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, StringAttr, SymbolRefAttr, f64, i64
from xdsl.ir import Attribute, Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition, opt_prop_def, prop_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects.errors import OpError
from sbpc.dialects.layout import LayoutAttr
from sbpc.dialects.sharding import max_local_shape
from sbpc.dialects.tensor_type import GlobalTensorType

LINK_RANGES: dict[str, tuple[float, float, str]] = {
    "bandwidth": (1e-6, 1e12, "GB/s"),
    "latency": (1e-6, 1e9, "µs"),
}
"""The link figures the α-β cost model prices (1 KB/s to 1 ZB/s, 1 ps to 1000 s per hop): a sum of
hops and bytes over them stays finite, so the planners' searches compare real numbers, never inf."""


@irdl_op_definition
class PlacementOp(IRDLOperation):
    """`sbp.placement @p "cpu" [[0, 1], [2, 3]]`: a device mesh (OneFlow `flow.placement`).

    The hierarchy is the shape of the nested rank list; ranks are stored flat, row-major. An
    optional `links [(GB/s, µs), ...]` gives each mesh axis's bandwidth and per-hop latency
    (properties `link_bandwidth`, `link_latency`); absent, the cost model's defaults apply.
    """

    name = "sbp.placement"
    sym_name = prop_def(StringAttr)
    device_type = prop_def(StringAttr)
    hierarchy = prop_def(DenseArrayBase.constr(i64))
    ranks = prop_def(DenseArrayBase.constr(i64))
    link_bandwidth = opt_prop_def(DenseArrayBase.constr(f64))
    link_latency = opt_prop_def(DenseArrayBase.constr(f64))
    traits = traits_def(SymbolOpInterface())

    def __init__(
        self, sym_name: str, device_type: str, hierarchy: Sequence[int], ranks: Sequence[int],
        links: Sequence[tuple[float, float]] | None = None,
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "device_type": StringAttr(device_type),
            "hierarchy": DenseArrayBase.from_list(i64, hierarchy),
            "ranks": DenseArrayBase.from_list(i64, ranks),
        }
        if links is not None:
            properties["link_bandwidth"] = DenseArrayBase.from_list(f64, [float(b) for b, _ in links])
            properties["link_latency"] = DenseArrayBase.from_list(f64, [float(lat) for _, lat in links])
        super().__init__(properties=properties)

    def get_hierarchy(self) -> tuple[int, ...]:
        return tuple(self.hierarchy.get_values())  # type: ignore[return-value]

    def get_ranks(self) -> tuple[int, ...]:
        return tuple(self.ranks.get_values())  # type: ignore[return-value]

    def get_links(self) -> tuple[tuple[float, float], ...] | None:
        """Per mesh axis (bandwidth GB/s, latency µs per hop), or None when not given."""
        if self.link_bandwidth is None or self.link_latency is None:
            return None
        bandwidth, latency = self.link_bandwidth.get_values(), self.link_latency.get_values()
        return tuple((float(b), float(lat)) for b, lat in zip(bandwidth, latency, strict=True))

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
            seen: set[int] = set()
            dups: set[int] = set()
            for r in ranks:  # one pass: a list.count per rank is quadratic (minutes for 10^5 ranks)
                (dups if r in seen else seen).add(r)
            raise VerifyException(f"{where}: duplicate ranks {sorted(dups)}")
        self._verify_links(where, len(hierarchy))

    def _verify_links(self, where: str, mesh_rank: int) -> None:
        bandwidth, latency = self.link_bandwidth, self.link_latency
        if bandwidth is None and latency is None:
            return
        if bandwidth is None or latency is None:
            raise VerifyException(f"{where}: link_bandwidth and link_latency must be given together")
        for what, values in (("bandwidth", bandwidth.get_values()), ("latency", latency.get_values())):
            if len(values) != mesh_rank:
                raise VerifyException(
                    f"{where}: {len(values)} link {what} value(s) for a hierarchy of rank {mesh_rank} "
                    "(links need one (bandwidth, latency) pair per mesh axis)"
                )
            bad = [v for v in values if not (v > 0 and math.isfinite(v))]
            if bad:
                raise VerifyException(f"{where}: link {what} must be positive and finite, got {bad[0]:g}")
            low, high, unit = LINK_RANGES[what]
            bad = [v for v in values if not low <= v <= high]
            if bad:
                raise VerifyException(
                    f"{where}: link {what} {bad[0]:g} {unit} is out of the range the cost model prices "
                    f"({low:g} to {high:g} {unit})"
                )

    @classmethod
    def parse(cls, parser: Parser) -> PlacementOp:
        sym = parser.parse_symbol_name().data
        device = parser.parse_str_literal(" (device type, e.g. \"cpu\" or \"npu\")")
        start = parser.pos
        nested = _parse_nested_ranks(parser)
        hierarchy, flat = _flatten_rectangular(nested)
        if hierarchy is None:
            parser.raise_error("placement ranks must form a rectangular nested list", start, parser.pos)
        links = _parse_links(parser) if parser.parse_optional_keyword("links") is not None else None
        op = cls(sym, device, hierarchy, flat, links)
        attrs = parser.parse_optional_attr_dict()
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data} ")
        printer.print_string_literal(self.device_type.data)
        printer.print_string(" " + _nested_text(self.get_ranks(), self.get_hierarchy()))
        links = self.get_links()
        if links is not None:
            printer.print_string(" links [" + ", ".join(f"({b!r}, {lat!r})" for b, lat in links) + "]")
        printer.print_op_attributes(self.attributes)


_Nested = int | list["_Nested"]


def _parse_links(parser: Parser) -> list[tuple[float, float]]:
    """`[(bandwidth, latency), ...]` after the `links` keyword; the verifier checks the values."""

    def pair() -> tuple[float, float]:
        parser.parse_punctuation("(")
        bandwidth = float(parser.parse_number(context_msg=" (link bandwidth in GB/s)"))
        parser.parse_punctuation(",")
        latency = float(parser.parse_number(context_msg=" (link latency in µs per hop)"))
        parser.parse_punctuation(")")
        return bandwidth, latency

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, pair, " (one (bandwidth, latency) per mesh axis)")


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
    """The `sbp.placement` named `name`, seen from `op`: `SymbolTable.lookup_symbol` (the first
    symbol of that name in the nearest symbol table around `op`), if it is a placement. A flat name
    is looked up here without building a `SymbolRefAttr` (building one runs its verifier)."""
    if isinstance(name, SymbolRefAttr):
        if name.nested_references.data:
            try:
                found = SymbolTable.lookup_symbol(op, name)
            except ValueError:  # no symbol table above `op`
                return None
            return found if isinstance(found, PlacementOp) else None
        name = name.root_reference.data
    table: Operation | None = op
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    if table is None:
        return None
    for o in table.regions[0].block.ops:
        if type(o) is PlacementOp:  # the common case, without the trait query
            if o.sym_name.data == name:
                return o
            continue
        symbol = o.get_trait(SymbolOpInterface)
        if symbol is not None and (sym_name := symbol.get_sym_attr_name(o)) is not None and sym_name.data == name:
            return o if isinstance(o, PlacementOp) else None
    return None


def _unknown(anchor: Operation, name: str) -> str:
    """Why `@name` names no placement: it is undefined, or it is another kind of symbol."""
    table: Operation | None = anchor
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    other = SymbolTable.lookup_symbol(table, name) if table is not None else None
    if other is None:
        return f"unknown placement @{name}"
    return f"@{name}, which is a {other.name}, not an sbp.placement"


def check_placed_type(
    anchor: Operation, ty: GlobalTensorType, what: str, placement: PlacementOp | None = None,
    hierarchy: tuple[int, ...] | None = None,
) -> PlacementOp:
    """The placement of `ty` seen from `anchor`, after the checks that need it: it exists, the ND-SBP
    has one entry per mesh axis, the layout's extents are the largest shard's. Raises VerifyException
    with a message starting with `what` (e.g. "operand 0"). A caller checking several types may pass
    the placement and its hierarchy, looked up once. The placement-independent checks
    (`GlobalTensorType.problem`) are not repeated: xDSL verifies every attribute when it is built,
    parsed or not, and attributes are immutable."""
    if placement is None:
        placement = lookup_placement(anchor, ty)
        if placement is None:
            raise VerifyException(f"{what} refers to {_unknown(anchor, ty.placement_name)}")
    if hierarchy is None:
        hierarchy = placement.get_hierarchy()
    sbp = ty.nd_sbp
    pattern = sbp if sbp is not None else ty.sbp_pattern
    if pattern is not None and len(pattern) != len(hierarchy):
        sbp = pattern  # type: ignore[assignment]
    if sbp is not None and len(sbp) != len(hierarchy):
        raise VerifyException(
            f"{what} has ND-SBP {sbp.short_str()} of length {len(sbp)}, "
            f"but placement @{ty.placement_name} has hierarchy {list(hierarchy)} of rank {len(hierarchy)}"
        )
    layout = ty.layout
    if type(layout) is LayoutAttr and sbp is not None:
        expected = max_local_shape(ty.get_shape(), sbp, hierarchy)
        if tuple(layout.layout.mode_sizes()) != expected:
            raise VerifyException(
                f"{what} layout {layout.layout} has extents "
                f"{list(layout.layout.mode_sizes())}, but the largest local shard is {list(expected)}"
            )
    return placement


def verify_signatures(module: ModuleOp) -> None:
    """Check every `!sbp.tensor` of every function signature against its placement, as op verifiers
    check operand and result types. xDSL's `func.func` verifier knows nothing of placements, so a type
    that appears only in a signature (an unused argument, a `private` declaration) is checked here;
    raises OpError at the function."""
    for op in module.ops:  # functions live at module level; their bodies need no walk (10k ops: 8 ms)
        if isinstance(op, ModuleOp):
            verify_signatures(op)
        if not isinstance(op, func.FuncOp):
            continue
        kinds = (("argument", op.function_type.inputs.data), ("result", op.function_type.outputs.data))
        for kind, types in kinds:
            for i, ty in enumerate(types):
                if isinstance(ty, GlobalTensorType):
                    try:
                        check_placed_type(op, ty, f"{kind} {i}")
                    except VerifyException as error:
                        raise OpError(op, f"func.func @{op.sym_name.data}: {error}") from None
