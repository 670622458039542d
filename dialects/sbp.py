"""The SBP attributes of the `sbp` dialect (SPEC §2.2, §2.5).

An SBP entry says how one mesh axis holds a global tensor: split along a tensor axis
(`S(k)`), broadcast (`B`) or partial (`P`, `P(max)`, `P(min)`). An ND-SBP holds one entry per
placement-hierarchy axis; one with `?` entries (`[S(0), ?]`, an `NdSbpPatternAttr`) leaves them for
`infer-sbp{rule=global}` to decide (SPEC §2.5). `#sbp.sig` is an op's signature: one ND-SBP per
operand and per result (`?` = unconstrained in hints).

The type that carries them, `!sbp.tensor`, lives in `dialects/tensor_type.py`; the ops in
`dialects/sbp_ops.py` and its siblings; the `Dialect` object in `dialects/sbp_dialect.py`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from enum import StrEnum
from functools import lru_cache

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntAttr,
    NoneAttr,
    StringAttr,
)
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


def memo_text(attr: Attribute, build: Callable[[], str]) -> str:
    """`build()`, kept in the attribute's own `__dict__` (as `functools.cached_property` would;
    xDSL's attribute definitions take no descriptors but properties). It is no parameter, so
    equality, hashing and printing of the attribute are unchanged."""
    found = attr.__dict__.get("_printed")
    if found is None:
        found = attr.__dict__["_printed"] = build()
    return found


def memo_hash(attr: ParametrizedAttribute) -> int:
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
        found = self.__dict__.get("_hash")  # `memo_hash`, its hit inlined (hashed per table use)
        return memo_hash(self) if found is None else found

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
        return memo_hash(self)

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
    parser = Parser(Context(), text.strip() if text.strip().startswith("[") else f"[{text.strip()}]")
    result = parse_nd_sbp(parser)
    if parser.pos < len(parser.lexer.input.content):
        parser.raise_error("unexpected text after the ND-SBP")
    return result


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
        found = self.__dict__.get("_hash")  # `memo_hash`, its hit inlined (hashed per table use)
        return memo_hash(self) if found is None else found

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
        return memo_text(self, self._parameters_text)

    def _parameters_text(self) -> str:
        def text(entries: ArrayAttr[NdSbpAttr | NoneAttr]) -> str:
            return ", ".join(e.short_str() if isinstance(e, NdSbpAttr) else "?" for e in entries.data)

        ins, outs = text(self.inputs), text(self.outputs)
        return f"<{ins}{' ' if ins else ''}-> {outs}>"

    def short_str(self) -> str:
        def text(entries: ArrayAttr[NdSbpAttr | NoneAttr]) -> str:
            return ", ".join(e.short_str() if isinstance(e, NdSbpAttr) else "?" for e in entries.data)

        return f"{text(self.inputs)} -> {text(self.outputs)}"
