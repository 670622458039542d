"""Attributes and types of the `sbp` dialect (SPEC §2.2, §2.3, §2.5).

An SBP entry says how one mesh axis holds a global tensor: split along a tensor axis
(`S(k)`), broadcast (`B`) or partial (`P`, `P(max)`, `P(min)`). An ND-SBP holds one entry per
placement-hierarchy axis. `!sbp.tensor` is a global tensor type: logical shape, element type,
placement symbol, optional ND-SBP (absent = to be inferred) and optional local storage layout.
`#sbp.sig` is an op's signature: one ND-SBP per operand and per result (`?` = unconstrained in
hints). A type's ND-SBP may have `?` entries (`[S(0), ?]`, an `NdSbpPatternAttr`): entries left for
`infer-sbp{rule=global}` to decide (SPEC §2.5); such a type has no `nd_sbp` until they are.

The ops (and the `Dialect` object) live in `dialects/sbp_ops.py`.
"""

from __future__ import annotations

import abc
import io
from collections.abc import Callable, Sequence
from enum import StrEnum
from functools import lru_cache
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntAttr,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects import dtypes
from sbpc.dialects.layout import LayoutAttr


def _memo_text(attr: Attribute, build: Callable[[], str]) -> str:
    """`build()`, kept in the attribute's own `__dict__` (as `functools.cached_property` would;
    xDSL's attribute definitions take no descriptors but properties). It is no parameter, so
    equality, hashing and printing of the attribute are unchanged."""
    found = attr.__dict__.get("_printed")
    if found is None:
        found = attr.__dict__["_printed"] = build()
    return found


def _memo_hash(attr: ParametrizedAttribute) -> int:
    """The dataclass hash of `attr` (that of its parameter tuple), computed once and kept in the
    attribute's own `__dict__`: an attribute is immutable, and hashing one walks its parameters
    (types and ND-SBPs key the tables of `infer-sbp` and are hashed per use)."""
    found = attr.__dict__.get("_hash")
    if found is None:
        found = attr.__dict__["_hash"] = hash(attr.parameters)
    return found


# ---------------------------------------------------------------------------
# SBP entries
# ---------------------------------------------------------------------------


class ReduceKind(StrEnum):
    """How the pieces of a partial tensor combine."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"


class SbpAttr(ParametrizedAttribute, abc.ABC):
    """One mesh axis's distribution of a tensor: S(k), B or P(kind)."""

    @abc.abstractmethod
    def short_str(self) -> str: ...


def _parse_split_axis(parser: AttrParser) -> int:
    """A split axis: a non-negative integer (a negative one gets its own message)."""
    start = parser.pos
    axis = parser.parse_integer(allow_boolean=False, allow_negative=True, context_msg=" (split axis)")
    if axis < 0:
        parser.raise_error(f"split axis must be non-negative, got {axis}", start, parser.pos)
    return axis


@irdl_attr_definition
class SplitAttr(SbpAttr):
    """`S(k)`: each rank along the mesh axis holds a slice of tensor axis k."""

    name = "sbp.S"
    axis: IntAttr

    def __init__(self, axis: int | IntAttr):
        super().__init__(IntAttr(axis) if isinstance(axis, int) else axis)

    @property
    def dim(self) -> int:
        return self.axis.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(_parse_split_axis(parser)),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_int(self.axis.data)

    def short_str(self) -> str:
        return f"S({self.axis.data})"


@irdl_attr_definition
class BroadcastAttr(SbpAttr):
    """`B`: every rank along the mesh axis holds the whole tensor."""

    name = "sbp.B"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        # Without this, xDSL's generic parameter parser accepts `#sbp.B<1>` and then crashes.
        start = parser.pos
        if parser.parse_optional_punctuation("<") is not None:
            parser.raise_error("#sbp.B takes no parameters", start, parser.pos)
        return ()

    def short_str(self) -> str:
        return "B"


@irdl_attr_definition
class PartialAttr(SbpAttr):
    """`P(kind)`: the tensor is the elementwise `kind`-reduction of the ranks' pieces."""

    name = "sbp.P"
    kind: StringAttr

    def __init__(self, kind: ReduceKind | str = ReduceKind.SUM):
        super().__init__(StringAttr(str(kind)))

    @property
    def reduce_kind(self) -> ReduceKind:
        return ReduceKind(self.kind.data)

    def verify(self) -> None:
        if self.kind.data not in tuple(ReduceKind):
            raise VerifyException(f"partial kind must be sum, max or min, got '{self.kind.data}'")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_keyword_in(tuple(ReduceKind), " (partial kind sum, max or min)")
        return (StringAttr(kind),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.kind.data)

    def short_str(self) -> str:
        return "P" if self.kind.data == ReduceKind.SUM else f"P({self.kind.data})"


# Attribute construction runs the verifier (~10 µs), so the parser and the passes share entry and
# ND-SBP objects through the interning tables below. They are the only module-level tables left
# and cannot go stale: each maps a value to an immutable attribute equal to a freshly built one
# (so no result depends on what they hold), and each is bounded. Keys: split axes (tensor ranks
# are small), the three partial kinds, and ND-SBPs (one entry per mesh axis; the distinct ones a
# program uses are few).
@lru_cache(maxsize=64)
def split(axis: int) -> SplitAttr:
    """S(axis); one object per axis (attributes are immutable, and shared objects keep the
    inference's id-keyed caches small)."""
    return SplitAttr(axis)


BROADCAST = BroadcastAttr()


@lru_cache(maxsize=8)
def partial(kind: ReduceKind | str = ReduceKind.SUM) -> PartialAttr:
    return PartialAttr(kind)


def parse_sbp_entry(parser: AttrParser) -> SbpAttr:
    """Parse `S(k)`, `B`, `P`, `P(sum|max|min)`, or a full `#sbp.*` attribute."""
    start = parser.pos
    keyword = parser.parse_optional_keyword_in(("S", "B", "P"))
    if keyword == "B":
        return BROADCAST
    if keyword == "S":
        parser.parse_punctuation("(", " after S (write S(k) with k the split tensor axis)")
        axis = _parse_split_axis(parser)
        parser.parse_punctuation(")")
        return split(axis)
    if keyword == "P":
        if parser.parse_optional_punctuation("(") is None:
            return partial(ReduceKind.SUM)
        kind = parser.parse_keyword_in(tuple(ReduceKind), " (partial kind sum, max or min)")
        parser.parse_punctuation(")")
        return partial(kind)
    attr = parser.parse_optional_attribute()
    if not isinstance(attr, SbpAttr):
        parser.raise_error("expected an SBP entry: S(k), B, P, P(max) or P(min)", start, parser.pos)
    return attr


# ---------------------------------------------------------------------------
# ND-SBP
# ---------------------------------------------------------------------------


@irdl_attr_definition
class NdSbpAttr(ParametrizedAttribute):
    """One SBP entry per placement-hierarchy axis: `#sbp.nd<[S(0), B]>`."""

    name = "sbp.nd"
    sbps: ArrayAttr[SbpAttr]

    def __hash__(self) -> int:
        found = self.__dict__.get("_hash")  # `_memo_hash`, its hit inlined (hashed per table use)
        return _memo_hash(self) if found is None else found

    def __init__(self, sbps: Sequence[SbpAttr] | ArrayAttr[SbpAttr]):
        super().__init__(sbps if isinstance(sbps, ArrayAttr) else ArrayAttr(sbps))

    def __len__(self) -> int:
        return len(self.sbps.data)

    def __iter__(self):
        return iter(self.sbps.data)

    def __getitem__(self, i: int) -> SbpAttr:
        return self.sbps.data[i]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (parse_nd_sbp(parser).sbps,)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.short_str())

    def short_str(self) -> str:
        return "[" + ", ".join(s.short_str() for s in self.sbps.data) + "]"


@lru_cache(maxsize=4096)
def nd_sbp(*entries: SbpAttr) -> NdSbpAttr:
    return NdSbpAttr(entries)


def parse_nd_sbp(parser: AttrParser, allow_free: bool = False) -> NdSbpAttr:
    """Parse `[entry, ...]` (at least one entry); with `allow_free`, entries may be `?` and the
    result is an `NdSbpPatternAttr` if any is."""
    start = parser.pos

    def entry() -> SbpAttr | None:
        if allow_free and parser.parse_optional_punctuation("?") is not None:
            return None
        return parse_sbp_entry(parser)

    entries = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, entry)
    if not entries:
        parser.raise_error("an ND-SBP needs one entry per placement hierarchy axis, got []", start, parser.pos)
    if any(e is None for e in entries):
        return NdSbpPatternAttr(entries)  # type: ignore[return-value]
    return nd_sbp(*entries)  # type: ignore[arg-type]


@irdl_attr_definition
class NdSbpPatternAttr(ParametrizedAttribute):
    """An ND-SBP with some entries free: `[S(0), ?]` (a `?` is a `NoneAttr`). Only a function
    argument's (or an op result's) type carries one before `infer-sbp{rule=global}` decides it;
    `GlobalTensorType.nd_sbp` is None for it, so every other pass sees a type without an SBP."""

    name = "sbp.nd_pattern"
    entries: ArrayAttr[SbpAttr | NoneAttr]

    def __hash__(self) -> int:
        return _memo_hash(self)

    def __init__(self, entries: Sequence[SbpAttr | None]):
        super().__init__(ArrayAttr(NoneAttr() if e is None else e for e in entries))

    def __len__(self) -> int:
        return len(self.entries.data)

    def fixed(self) -> tuple[SbpAttr | None, ...]:
        """The entries, None where free."""
        return tuple(e if isinstance(e, SbpAttr) else None for e in self.entries.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            found = parse_nd_sbp(parser, allow_free=True)
        return (found.entries if isinstance(found, NdSbpPatternAttr) else ArrayAttr(found.sbps.data),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.short_str())

    def short_str(self) -> str:
        return "[" + ", ".join(e.short_str() if isinstance(e, SbpAttr) else "?" for e in self.entries.data) + "]"


def parse_sbp_text(text: str) -> NdSbpAttr:
    """Parse `[S(0), B]` (or `S(0)` for 1-D) from a string; used by tools and tests."""
    from xdsl.context import Context
    from xdsl.parser import Parser

    parser = Parser(Context(), text.strip() if text.strip().startswith("[") else f"[{text.strip()}]")
    result = parse_nd_sbp(parser)
    if parser.pos < len(parser.lexer.input.content):
        parser.raise_error("unexpected text after the ND-SBP")
    return result


# ---------------------------------------------------------------------------
# Global tensor type
# ---------------------------------------------------------------------------

_ALLOWED_ELEMENT_TYPES = dtypes.names(dtypes.IR_TYPES)


@irdl_attr_definition
class GlobalTensorType(ParametrizedAttribute, TypeAttribute):
    """`!sbp.tensor<4x8xf32, @p[, [S(0), B]][, layout = #sbp.layout<...>]>`."""

    name = "sbp.tensor"
    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    placement: SymbolRefAttr
    sbp: NdSbpAttr | NdSbpPatternAttr | NoneAttr
    layout: LayoutAttr | NoneAttr

    _NONE: ClassVar[NoneAttr] = NoneAttr()

    def __hash__(self) -> int:
        found = self.__dict__.get("_hash")  # `_memo_hash`, its hit inlined (hashed per table use)
        if found is None:
            # xDSL hashes an attribute by its parameters alone, and the float types have none: f16
            # and f32 tensors of one shape and SBP would collide (and be compared in full at every
            # table lookup) without the element type's name.
            found = self.__dict__["_hash"] = hash((self.parameters, self.element_type.name))
        return found

    def __init__(
        self,
        shape: Sequence[int] | ArrayAttr[IntAttr],
        element_type: Attribute,
        placement: str | SymbolRefAttr,
        sbp: NdSbpAttr | NdSbpPatternAttr | Sequence[SbpAttr] | NoneAttr | None = None,
        layout: LayoutAttr | NoneAttr | None = None,
    ):
        if not isinstance(shape, ArrayAttr):
            shape = ArrayAttr(IntAttr(d) for d in shape)
        if isinstance(placement, str):
            placement = SymbolRefAttr(placement)
        if sbp is None:
            sbp = self._NONE
        elif not isinstance(sbp, NdSbpAttr | NdSbpPatternAttr | NoneAttr):
            sbp = nd_sbp(*sbp)
        super().__init__(shape, element_type, placement, sbp, self._NONE if layout is None else layout)

    # -- accessors ---------------------------------------------------------
    def get_shape(self) -> tuple[int, ...]:
        return tuple([d.data for d in self.shape.data])

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @property
    def placement_name(self) -> str:
        return self.placement.root_reference.data

    @property
    def nd_sbp(self) -> NdSbpAttr | None:
        sbp = self.sbp
        # Exact-type tests first: isinstance against an attribute class goes through ABCMeta.
        kind = type(sbp)
        if kind is NdSbpAttr:
            return sbp
        return None if kind is NoneAttr or not isinstance(sbp, NdSbpAttr) else sbp

    @property
    def sbp_pattern(self) -> NdSbpPatternAttr | None:
        """The ND-SBP with `?` entries this type was written with, if any."""
        return self.sbp if type(self.sbp) is NdSbpPatternAttr else None

    @property
    def local_layout(self) -> LayoutAttr | None:
        return self.layout if isinstance(self.layout, LayoutAttr) else None

    def element_count(self) -> int:
        n = 1
        for d in self.get_shape():
            n *= d
        return n

    def with_sbp(self, sbp: NdSbpAttr | NdSbpPatternAttr | None, keep_layout: bool = True) -> GlobalTensorType:
        """The same tensor with another ND-SBP. A layout describes the shards of one distribution, so
        boxing (which changes the shards) drops it with `keep_layout=False`."""
        layout = self.layout if keep_layout else None
        return GlobalTensorType(self.shape, self.element_type, self.placement, sbp, layout)

    def describe(self) -> str:
        """DTensor-style `f32[4,4][S(0)] @p`, used in diagnostics."""
        elt = dtypes.IR_NAMES.get(self.element_type) or str(self.element_type)
        dims = ",".join(str(d) for d in self.get_shape())
        sbp = self.sbp.short_str() if isinstance(self.sbp, NdSbpAttr | NdSbpPatternAttr) else "[?]"
        return f"{elt}[{dims}]{sbp} @{self.placement_name}"

    # -- verification ------------------------------------------------------
    def verify(self) -> None:
        if (problem := self.problem()) is not None:
            raise VerifyException(problem)

    def problem(self) -> str | None:
        """What is wrong with this type on its own (placement-independent checks)."""
        return type_problem(self.get_shape(), self.element_type, self.placement, self.sbp, self.layout)

    # -- syntax ------------------------------------------------------------
    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        parser.parse_punctuation("<")
        dims_start = parser.pos
        dims = parser.parse_dimension_list()
        if dims:
            parser.parse_shape_delimiter()
        if any(d < 0 for d in dims):
            parser.raise_error("!sbp.tensor dimensions must be static", dims_start, parser.pos)
        elt_start = parser.pos
        element_type = parser.parse_type()
        if element_type not in dtypes.IR_NAMES:
            parser.raise_error(f"element type must be one of {_ALLOWED_ELEMENT_TYPES}", elt_start, parser.pos)
        parser.parse_punctuation(",", " before the placement symbol")
        placement = parser.parse_symbol_name()
        sbp: Attribute = cls._NONE
        layout: Attribute = cls._NONE
        while parser.parse_optional_punctuation(",") is not None:
            if parser.parse_optional_keyword("layout") is not None:
                parser.parse_punctuation("=")
                layout_start = parser.pos
                layout = parser.parse_attribute()
                if not isinstance(layout, LayoutAttr):
                    parser.raise_error("expected #sbp.layout<...>", layout_start, parser.pos)
            elif isinstance(sbp, NoneAttr) and isinstance(layout, NoneAttr):
                sbp = parse_nd_sbp(parser, allow_free=True)
            else:
                parser.raise_error("expected `layout = #sbp.layout<...>` or `>`")
        parser.parse_punctuation(">")
        params = (ArrayAttr(IntAttr(d) for d in dims), element_type, SymbolRefAttr(placement), sbp, layout)
        problem = type_problem(tuple(dims), element_type, SymbolRefAttr(placement), sbp, layout)
        if problem is not None:
            parser.raise_error(problem, start, parser.pos)
        return params

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(self.parameters_text)

    @property
    def parameters_text(self) -> str:
        """What `print_parameters` prints, built once per type object (a printed module prints its
        types once per use; attributes are immutable, and the text lives and dies with the type)."""
        return _memo_text(self, self._parameters_text)

    def _parameters_text(self) -> str:
        out = io.StringIO()
        printer = Printer(stream=out)
        printer.print_string("<")
        for d in self.get_shape():
            printer.print_string(f"{d}x")
        printer.print_attribute(self.element_type)
        printer.print_string(f", @{self.placement_name}")
        if isinstance(self.sbp, NdSbpAttr | NdSbpPatternAttr):
            printer.print_string(", " + self.sbp.short_str())
        if isinstance(self.layout, LayoutAttr):
            printer.print_string(", layout = ")
            printer.print_attribute(self.layout)
        printer.print_string(">")
        return out.getvalue()


def type_problem(
    shape: tuple[int, ...], element_type: Attribute, placement: SymbolRefAttr, sbp: Attribute, layout: Attribute
) -> str | None:
    """Placement-independent problems of `!sbp.tensor` parameters (None if fine)."""
    if any(d < 0 for d in shape):
        return f"!sbp.tensor dimensions must be static and non-negative, got {list(shape)}"
    if element_type not in dtypes.IR_NAMES:
        return f"!sbp.tensor element type must be one of {_ALLOWED_ELEMENT_TYPES}, got {element_type}"
    if placement.nested_references.data:
        return "!sbp.tensor placement must be a flat symbol such as @p"
    # Exact-type tests (the classes have no subclasses): isinstance goes through ABCMeta, and
    # every `!sbp.tensor` built or parsed runs this.
    entries = sbp if type(sbp) is NdSbpAttr else sbp.fixed() if type(sbp) is NdSbpPatternAttr else ()
    if entries:
        for entry in entries:
            if type(entry) is not SplitAttr:
                continue
            if not shape:
                return f"a 0-d tensor cannot be split: {sbp.short_str()}"
            if entry.dim >= len(shape):
                return f"split axis {entry.dim} out of range for a rank-{len(shape)} tensor in {sbp.short_str()}"
    if type(layout) is LayoutAttr and layout.layout.rank != len(shape):
        modes = layout.layout.rank
        return f"layout {layout.layout} has {modes} mode{'' if modes == 1 else 's'} for a rank-{len(shape)} tensor"
    return None


# ---------------------------------------------------------------------------
# Signatures and hints
# ---------------------------------------------------------------------------


@irdl_attr_definition
class SignatureAttr(ParametrizedAttribute):
    """`#sbp.sig<[S(0)], [B] -> [S(0)]>`: one ND-SBP per operand, `->`, one per result.

    In a hint (`sbp.hint`) an entry may be `?`, stored as `NoneAttr`, meaning unconstrained.
    """

    name = "sbp.sig"
    inputs: ArrayAttr[NdSbpAttr | NoneAttr]
    outputs: ArrayAttr[NdSbpAttr | NoneAttr]

    def __hash__(self) -> int:
        found = self.__dict__.get("_hash")  # `_memo_hash`, its hit inlined (hashed per table use)
        return _memo_hash(self) if found is None else found

    def __init__(
        self,
        inputs: Sequence[NdSbpAttr | NoneAttr | None],
        outputs: Sequence[NdSbpAttr | NoneAttr | None],
    ):
        none = NoneAttr()
        super().__init__(
            ArrayAttr(none if x is None else x for x in inputs),
            ArrayAttr(none if x is None else x for x in outputs),
        )

    @staticmethod
    def _parse_entry(parser: AttrParser) -> NdSbpAttr | NoneAttr:
        if parser.parse_optional_punctuation("?") is not None:
            return NoneAttr()
        return parse_nd_sbp(parser)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def entries(until: str) -> list[NdSbpAttr | NoneAttr]:
            found: list[NdSbpAttr | NoneAttr] = []
            if parser.parse_optional_punctuation(until) is not None:  # type: ignore[arg-type]
                return found
            found.append(cls._parse_entry(parser))
            while parser.parse_optional_punctuation(",") is not None:
                found.append(cls._parse_entry(parser))
            parser.parse_punctuation(until, " in #sbp.sig<inputs -> outputs>")  # type: ignore[arg-type]
            return found

        parser.parse_punctuation("<")
        ins = entries("->")
        outs = entries(">")
        return (ArrayAttr(ins), ArrayAttr(outs))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(self.parameters_text)

    @property
    def parameters_text(self) -> str:
        """What `print_parameters` prints, built once per signature object (after `infer-sbp`
        ops with one signature share one attribute)."""
        return _memo_text(self, self._parameters_text)

    def _parameters_text(self) -> str:
        def text(entries: ArrayAttr[NdSbpAttr | NoneAttr]) -> str:
            return ", ".join(e.short_str() if isinstance(e, NdSbpAttr) else "?" for e in entries.data)

        ins, outs = text(self.inputs), text(self.outputs)
        return f"<{ins}{' ' if ins else ''}-> {outs}>"

    def short_str(self) -> str:
        def text(entries: ArrayAttr[NdSbpAttr | NoneAttr]) -> str:
            return ", ".join(e.short_str() if isinstance(e, NdSbpAttr) else "?" for e in entries.data)

        return f"{text(self.inputs)} -> {text(self.outputs)}"


class SbpPrinter(Printer):
    """xDSL's printer, writing `!sbp.tensor` types and `#sbp.sig` attributes from the text they keep
    (`parameters_text`) in one piece: the generic `print_attribute` tests every attribute against five
    abstract classes and writes it in three pieces, for the several types and the signature of every
    op. The text is the same (`test/unit/test_verifier.py` compares whole modules)."""

    def print_attribute(self, attribute: Attribute) -> None:
        kind = type(attribute)
        if kind is GlobalTensorType:
            self.print_string("!sbp.tensor" + attribute.parameters_text)  # type: ignore[attr-defined]
        elif kind is SignatureAttr:
            self.print_string("#sbp.sig" + attribute.parameters_text)  # type: ignore[attr-defined]
        else:
            super().print_attribute(attribute)
