"""Hierarchical Shape:Stride layouts (seed 004, CANN "Layout hierarchical notation") and `#sbp.layout`.

Two parts (the seed's named formats are `dialects/layout_formats.py`):

1. A pure-Python, CuTe-style layout algebra. A `Layout` maps a logical coordinate to a storage
   offset: `offset = layout.offset + sum(coord_leaf * stride_leaf)`. Shape and stride are congruent
   nested tuples of non-negative integers (`IntTuple`). A coordinate entry for a hierarchical mode
   may be a flat index, decomposed colexicographically (first sub-mode fastest), exactly as CuTe does.
   Text form: `(2,4):(4,1)`, `((2,3),(2,4)):((1,4),(2,12))`, optionally followed by `, offset = N`.
2. The xDSL attribute `LayoutAttr` (`#sbp.layout<(2,4):(4,1)>`, `#sbp.layout<(2,4):(4,1), offset = 3>`).
   The dialect object (dialects/sbp_dialect.py) registers it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TypeAlias

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

IntTuple: TypeAlias = int | tuple["IntTuple", ...]
"""An integer or a (possibly empty) tuple of IntTuples."""


class LayoutError(ValueError):
    """An ill-formed layout, an out-of-range coordinate, or a broken format rule."""


# --- IntTuple helpers ------------------------------------------------------------------------------------


def _normalize(t: object, what: str) -> IntTuple:
    """Lists become tuples; leaves must be non-negative ints (bools are rejected)."""
    if isinstance(t, bool) or not isinstance(t, int | tuple | list):
        raise LayoutError(f"{what} entries must be integers or tuples, got {t!r}")
    if isinstance(t, int):
        if t < 0:
            raise LayoutError(f"{what} entries must be non-negative, got {t}")
        return t
    return tuple(_normalize(x, what) for x in t)


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """True if `a` and `b` have the same nesting profile (ints in the same places)."""
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int)
    return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b, strict=True))


def flatten(t: IntTuple) -> tuple[int, ...]:
    """The leaves of `t`, left to right."""
    if isinstance(t, int):
        return (t,)
    return tuple(leaf for x in t for leaf in flatten(x))


def product(t: IntTuple) -> int:
    """Product of all leaves (1 for an empty tuple)."""
    return math.prod(flatten(t))


def format_int_tuple(t: IntTuple) -> str:
    """`8`, `(8)`, `(2,4)`, `((2,3),(2,4))` — no spaces."""
    if isinstance(t, int):
        return str(t)
    return "(" + ",".join(format_int_tuple(x) for x in t) + ")"


def idx2crd(idx: int, shape: IntTuple) -> IntTuple:
    """Colexicographic decomposition of a flat index into a coordinate congruent with `shape`."""
    if isinstance(shape, int):
        return idx
    crd: list[IntTuple] = []
    for s in shape:
        n = product(s)
        crd.append(idx2crd(idx % n if n else 0, s))
        idx = idx // n if n else 0
    return tuple(crd)


def ceil_div(a: int, b: int) -> int:
    """ceil(a / b) for non-negative a, positive b."""
    return -(-a // b)


def ceil_align(a: int, b: int) -> int:
    """The smallest multiple of b that is >= a."""
    return ceil_div(a, b) * b


def _crd2offset(crd: IntTuple, shape: IntTuple, stride: IntTuple) -> int:
    if isinstance(crd, int):
        n = product(shape)
        if not 0 <= crd < n:
            raise LayoutError(f"coordinate {crd} out of range for a mode of extent {n}")
        if isinstance(shape, int):
            assert isinstance(stride, int)
            return crd * stride
        crd = idx2crd(crd, shape)
    if isinstance(shape, int) or len(crd) != len(shape):
        raise LayoutError(f"coordinate {crd!r} does not match the shape {format_int_tuple(shape)}")
    assert isinstance(stride, tuple)
    return sum(_crd2offset(c, s, d) for c, s, d in zip(crd, shape, stride, strict=True))


# --- Layout ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """A Shape:Stride layout with a storage offset. Lists given as shape/stride become tuples."""

    shape: IntTuple
    stride: IntTuple
    offset: int = 0

    def __post_init__(self) -> None:
        shape = _normalize(self.shape, "shape")
        stride = _normalize(self.stride, "stride")
        if not congruent(shape, stride):
            raise LayoutError(
                f"shape {format_int_tuple(shape)} and stride {format_int_tuple(stride)} are not congruent"
            )
        if isinstance(self.offset, bool) or not isinstance(self.offset, int) or self.offset < 0:
            raise LayoutError(f"layout offset must be a non-negative integer, got {self.offset!r}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)

    def __str__(self) -> str:
        return format_layout(self)

    # -- sizes ---------------------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of logical coordinates (product of all shape leaves)."""
        return product(self.shape)

    @property
    def cosize(self) -> int:
        """1 + the largest offset reached, not counting `offset` (0 for an empty layout)."""
        if self.size == 0:
            return 0
        return 1 + sum((s - 1) * d for s, d in self.leaves())

    @property
    def rank(self) -> int:
        """Number of top-level modes (a plain int shape is rank 1)."""
        return 1 if isinstance(self.shape, int) else len(self.shape)

    def leaves(self) -> list[tuple[int, int]]:
        """(extent, stride) of every leaf mode, in colexicographic order (first leaf fastest)."""
        return list(zip(flatten(self.shape), flatten(self.stride), strict=True))

    def mode_sizes(self) -> tuple[int, ...]:
        """The logical extent of each top-level mode."""
        if isinstance(self.shape, int):
            return (self.shape,)
        return tuple(product(s) for s in self.shape)

    def strides_for_flat_modes(self) -> tuple[tuple[int, int], ...] | None:
        """(extent, stride) per top-level mode if every mode is a plain int, else None."""
        if isinstance(self.shape, int):
            assert isinstance(self.stride, int)
            return ((self.shape, self.stride),)
        assert isinstance(self.stride, tuple)
        pairs: list[tuple[int, int]] = []
        for s, d in zip(self.shape, self.stride, strict=True):
            if not isinstance(s, int) or not isinstance(d, int):
                return None
            pairs.append((s, d))
        return tuple(pairs)

    # -- mapping -------------------------------------------------------------------------------------------
    def offset_of(self, coord: IntTuple) -> int:
        """Storage offset (including `offset`) of a coordinate.

        `coord` has one entry per top-level mode; each entry is a nested tuple congruent with its mode
        or a flat (colexicographic) index into it. A bare int is a flat index into the whole layout.
        """
        return self.offset + _crd2offset(coord, self.shape, self.stride)

    def __call__(self, *coord: IntTuple) -> int:
        """`layout(1, 0)` is `layout.offset_of((1, 0))`; `layout(5)` is `layout.offset_of(5)`."""
        return self.offset_of(coord[0] if len(coord) == 1 else coord)

    def coords(self) -> Iterator[IntTuple]:
        """All natural (hierarchical) coordinates, in colexicographic order."""
        for i in range(self.size):
            yield idx2crd(i, self.shape)

    @cached_property
    def _rel_offsets(self) -> list[int]:
        """Offsets (without `offset`) of flat indices 0..size-1."""
        offs = [0]
        for extent, d in self.leaves():
            offs = [o + c * d for c in range(extent) for o in offs]
        return offs

    @cached_property
    def _inverse(self) -> dict[int, int] | None:
        inv = {o: i for i, o in enumerate(self._rel_offsets)}
        return inv if len(inv) == self.size else None

    def coord_of(self, off: int) -> IntTuple:
        """The natural coordinate mapping to storage offset `off` (inverse of `offset_of`).

        Requires an injective layout (raises LayoutError otherwise) and an offset in the image.
        The inverse table is built on first use and cached.
        """
        inv = self._inverse
        if inv is None:
            raise LayoutError(f"coord_of needs an injective layout; {self} is not injective")
        idx = inv.get(off - self.offset)
        if idx is None:
            raise LayoutError(f"offset {off} is not in the image of layout {self}")
        return idx2crd(idx, self.shape)

    # -- properties ----------------------------------------------------------------------------------------
    def is_injective(self) -> bool:
        """No two coordinates share an offset."""
        if self.size == 0:
            return True
        reach = 0  # fast sufficient test: each stride exceeds everything reachable by smaller ones
        for d, s in sorted((d, s) for s, d in self.leaves() if s > 1):
            if d == 0:
                return False
            if d <= reach:
                break
            reach += (s - 1) * d
        else:
            return True
        return self._inverse is not None

    def is_bijective(self) -> bool:
        """The image (minus `offset`) is exactly 0..size-1."""
        return self.size == 0 or (self.cosize == self.size and self.is_injective())

    def is_row_major_contiguous(self, logical_shape: Sequence[int]) -> bool:
        """True if the layout is the compact row-major layout of `logical_shape` with offset 0.

        Top-level modes are the logical dimensions; each (possibly hierarchical) mode must map its
        flat index i to i times the product of the later logical extents. Extent-1 leaves may have
        any stride.
        """
        if self.offset != 0 or self.mode_sizes() != tuple(logical_shape):
            return False
        if self.size == 0:
            return True
        shape = (self.shape,) if isinstance(self.shape, int) else self.shape
        stride = (self.stride,) if isinstance(self.stride, int) else self.stride
        row = 1
        for s, d in reversed(list(zip(shape, stride, strict=True))):
            step = row
            for extent, leaf_stride in zip(flatten(s), flatten(d), strict=True):
                if extent > 1 and leaf_stride != step:
                    return False
                step *= extent
            row *= product(s)
        return True


def _compact(shape: Sequence[int], reverse: bool) -> Layout:
    strides, acc = [0] * len(shape), 1
    for k in reversed(range(len(shape))) if reverse else range(len(shape)):
        strides[k], acc = acc, acc * shape[k]
    return Layout(tuple(shape), tuple(strides))


def row_major(shape: Sequence[int]) -> Layout:
    """Compact row-major layout (last dimension fastest)."""
    return _compact(shape, reverse=True)


def column_major(shape: Sequence[int]) -> Layout:
    """Compact column-major layout (first dimension fastest)."""
    return _compact(shape, reverse=False)


def format_layout(layout: Layout) -> str:
    """`(2,4):(4,1)`, with `, offset = N` appended when the offset is not 0."""
    text = f"{format_int_tuple(layout.shape)}:{format_int_tuple(layout.stride)}"
    return text + (f", offset = {layout.offset}" if layout.offset else "")


_TOKEN = re.compile(r"\s*([0-9]+|[A-Za-z_]+|\S)")


def parse_layout_text(text: str) -> Layout:
    """Parse the `format_layout` text (whitespace allowed between tokens); raises LayoutError."""
    toks = [(m.start(1), m.group(1)) for m in _TOKEN.finditer(text)] + [(len(text), "end of text")]
    i = 0

    def fail(msg: str) -> LayoutError:
        return LayoutError(f"{msg} at column {toks[i][0] + 1} of {text!r}")

    def expect(tok: str) -> None:
        nonlocal i
        if toks[i][1] != tok:
            raise fail(f"expected '{tok}', got '{toks[i][1]}'")
        i += 1

    def integer(what: str) -> int:
        nonlocal i
        if toks[i][1] == "-":
            raise fail(f"layout {what} entries must be non-negative")
        if not toks[i][1].isdigit():
            raise fail(f"expected an integer or '(' in the layout {what}, got '{toks[i][1]}'")
        i += 1
        return int(toks[i - 1][1])

    def int_tuple(what: str) -> IntTuple:
        nonlocal i
        if toks[i][1] != "(":
            return integer(what)
        i += 1
        if toks[i][1] == ")":
            i += 1
            return ()
        items = [int_tuple(what)]
        while toks[i][1] == ",":
            i += 1
            items.append(int_tuple(what))
        expect(")")
        return tuple(items)

    shape = int_tuple("shape")
    expect(":")
    stride = int_tuple("stride")
    offset = 0
    if toks[i][1] == ",":
        i += 1
        expect("offset")
        expect("=")
        offset = integer("offset")
    if i != len(toks) - 1:
        raise fail(f"unexpected '{toks[i][1]}'")
    return Layout(shape, stride, offset)


# --- #sbp.layout attribute -------------------------------------------------------------------------------


def _to_attr(t: IntTuple) -> Attribute:
    return IntAttr(t) if isinstance(t, int) else ArrayAttr(tuple(_to_attr(x) for x in t))


def _from_attr(a: Attribute, what: str) -> IntTuple:
    if isinstance(a, IntAttr):
        return a.data
    if isinstance(a, ArrayAttr):
        return tuple(_from_attr(x, what) for x in a.data)
    raise VerifyException(f"#sbp.layout {what} must be nested arrays of integers, got {a}")


def _span_end(parser: AttrParser, start: int) -> int:
    """parser.pos with trailing whitespace before the next token trimmed (for error spans)."""
    end = parser.pos
    return start + len(parser.lexer.input.content[start:end].rstrip())


def _parse_int_tuple(parser: AttrParser, what: str) -> IntTuple:
    start = parser.pos
    if parser.parse_optional_punctuation("(") is not None:
        if parser.parse_optional_punctuation(")") is not None:
            return ()
        items = [_parse_int_tuple(parser, what)]
        while parser.parse_optional_punctuation(",") is not None:
            items.append(_parse_int_tuple(parser, what))
        if parser.parse_optional_punctuation(")") is None:
            parser.raise_error(f"expected ',' or ')' in the layout {what}")
        return tuple(items)
    if parser.parse_optional_punctuation("-") is not None:
        parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
        parser.raise_error(f"layout {what} entries must be non-negative", start, _span_end(parser, start))
    value = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
    if value is None:
        parser.raise_error(f"expected an integer or '(' in the layout {what}")
    return value


@functools.lru_cache(maxsize=4096)
def _attr_layout(attr: LayoutAttr) -> Layout:
    return Layout(_from_attr(attr.shape, "shape"), _from_attr(attr.stride, "stride"), attr.offset.data)


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """`#sbp.layout<SHAPE:STRIDE>` or `#sbp.layout<SHAPE:STRIDE, offset = N>` (SPEC §2.6).

    SHAPE and STRIDE are congruent nested tuples of non-negative integers, e.g. `(2,4):(4,1)` or
    `((2,3),(2,4)):((1,4),(2,12))`. Stored as nested ArrayAttr/IntAttr, so it hashes structurally.
    """

    name = "sbp.layout"

    shape: Attribute
    stride: Attribute
    offset: IntAttr

    def __init__(self, shape: IntTuple, stride: IntTuple, offset: int = 0) -> None:
        super().__init__(_to_attr(shape), _to_attr(stride), IntAttr(offset))

    @staticmethod
    def from_layout(layout: Layout) -> LayoutAttr:
        """The attribute of a pure Layout."""
        return LayoutAttr(layout.shape, layout.stride, layout.offset)

    @property
    def layout(self) -> Layout:
        """The pure-Python Layout (cached per structurally-equal attribute)."""
        return _attr_layout(self)

    def verify(self) -> None:
        try:
            _attr_layout(self)
        except LayoutError as e:
            raise VerifyException(f"#sbp.layout: {e}") from e

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        start = parser.pos
        shape = _parse_int_tuple(parser, "shape")
        parser.parse_punctuation(":", " between the layout shape and stride")
        stride = _parse_int_tuple(parser, "stride")
        if not congruent(shape, stride):
            parser.raise_error(
                f"layout shape {format_int_tuple(shape)} and stride {format_int_tuple(stride)} "
                "are not congruent",
                start,
                _span_end(parser, start),
            )
        offset = 0
        if parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword("offset", " in #sbp.layout")
            parser.parse_punctuation("=")
            off_start = parser.pos
            if parser.parse_optional_punctuation("-") is not None:
                parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
                end = _span_end(parser, off_start)
                parser.raise_error("layout offset must be non-negative", off_start, end)
            offset = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(">", " at the end of #sbp.layout")
        return (_to_attr(shape), _to_attr(stride), IntAttr(offset))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{format_layout(self.layout)}>")
