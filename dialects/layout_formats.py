"""The named Ascend matrix formats of seed 004's table ("Layout分形结构数据表"), one spec per format.

ND, DN, NDExt, DNExt, NZ, ZN, ZZ, NN, ScaleAND, ScaleADN, ScaleBND, ScaleBDN, each a `FormatSpec`:
the table row that `make_format` builds for a row x column matrix, the fixed inner values and the
alignment and non-overlap rules that `verify_format` checks, and which dtypes it is defined for.
`detect_format` names the first format a layout satisfies. The layouts themselves are
`dialects.layout.Layout`s; the dtype sizes are `dialects.dtypes`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from sbpc.dialects import dtypes
from sbpc.dialects.layout import Layout, LayoutError, ceil_align, ceil_div, flatten

LAYOUT_DTYPES = ("f16", "bf16", "f32", "i8", "i16", "i32", "fp8_e8m0", "fp4x2_e2m1", "fp4x2_e1m2")
"""The dtypes the seed's table knows (its T column)."""

FIELDS = (
    "ShapeRow0", "ShapeRow1", "ShapeColumn0", "ShapeColumn1",
    "StrideRow0", "StrideRow1", "StrideColumn0", "StrideColumn1",
)  # fmt: skip
"""The table's columns; a hierarchical format layout flattens to these eight values in this order."""

_FIXED_KEYS = ("ShapeRow0", "ShapeColumn0", "StrideRow0", "StrideRow1", "StrideColumn0", "StrideColumn1")

Row = tuple[int, int, int, int, int, int, int, int]
"""A table row: ShapeRow0, ShapeRow1, ShapeColumn0, ShapeColumn1, StrideRow0, ... StrideColumn1."""


class Fp8(Enum):
    """Whether a format is defined for fp8_e8m0 (the table's T column)."""

    NEVER = "never"
    ALSO = "also"
    ONLY = "only"


@dataclass(frozen=True)
class FormatSpec:
    """One row of the seed's table."""

    name: str
    row: Callable[[int, int, int, str], Row] | None
    """(row, column, C0, dtype) -> the contiguous layout's table row; None for the flat ND / DN."""
    fixed: Callable[[int], tuple[int | None, ...]] = lambda c0: ()
    """C0 -> the fixed values of `_FIXED_KEYS` (None: free)."""
    align: tuple[str, tuple[str, ...]] | None = None
    """Field that must be a multiple of the product of the named (fixed) inner fields."""
    no_overlap: tuple[str, str, str, int] | None = None
    """(stride field, own extent, other extent, inner): stride >= inner * other extent when own extent > 1."""
    fp8: Fp8 = Fp8.NEVER


def _exact_div(a: int, b: int, what: str) -> int:
    if a % b:
        raise LayoutError(f"{what} ({a}) must be divisible by {b}")
    return a // b


def _zz_row(r: int, c: int, c0: int, dt: str) -> Row:
    if dt == "fp8_e8m0":
        return (16, ceil_div(r, 16), 2, _exact_div(c, 2, "ZZ column"), 2, c * 16, 1, 32)
    return (16, ceil_div(r, 16), c0, ceil_div(c, c0), c0, 16 * ceil_align(c, c0), 1, c0 * 16)


_FRACTAL_ALIGN = ("ShapeRow0", "ShapeColumn0")

FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (  # `detect_format` order (ZZ before NZ: NZ leaves StrideRow1 free, so every ZZ fits NZ)
        FormatSpec("ND", None),
        FormatSpec("DN", None),
        FormatSpec(
            "NDExt", lambda r, c, c0, dt: (1, r, 1, c, 0, c, 0, 1), lambda c0: (1, 1, 0, None, 0, 1),
            no_overlap=("StrideRow1", "ShapeRow1", "ShapeColumn1", 1),
        ),
        FormatSpec(
            "DNExt", lambda r, c, c0, dt: (1, r, 1, c, 0, 1, 0, r), lambda c0: (1, 1, 0, 1, 0, None),
            no_overlap=("StrideColumn1", "ShapeColumn1", "ShapeRow1", 1),
        ),
        FormatSpec(
            "ZZ", _zz_row, lambda c0: (16, c0, c0, None, 1, c0 * 16),
            align=("StrideRow1", _FRACTAL_ALIGN), fp8=Fp8.ALSO,
        ),
        FormatSpec(
            "NZ",
            lambda r, c, c0, dt: (16, ceil_div(r, 16), c0, ceil_div(c, c0), c0, c0 * 16, 1, c0 * ceil_align(r, 16)),
            lambda c0: (16, c0, c0, None, 1, None),
            align=("StrideColumn1", _FRACTAL_ALIGN),
        ),
        FormatSpec(
            "ZN",
            lambda r, c, c0, dt: (c0, ceil_div(r, c0), 16, ceil_div(c, 16), 1, c0 * ceil_align(c, 16), c0, c0 * 16),
            lambda c0: (c0, 16, 1, None, c0, None),
            align=("StrideRow1", _FRACTAL_ALIGN),
        ),
        FormatSpec(
            "NN", lambda r, c, c0, dt: (2, _exact_div(r, 2, "NN row"), 16, ceil_div(c, 16), 1, 32, 2, r * 16),
            lambda c0: (2, 16, 1, 32, 2, None),
            align=("StrideColumn1", _FRACTAL_ALIGN), fp8=Fp8.ONLY,
        ),
        FormatSpec(
            "ScaleAND", lambda r, c, c0, dt: (1, r, 1, c, 0, c, 0, 1), lambda c0: (1, 1, 0, None, 0, 1),
            no_overlap=("StrideRow1", "ShapeRow1", "ShapeColumn1", 1), fp8=Fp8.ONLY,
        ),
        FormatSpec(
            "ScaleADN", lambda r, c, c0, dt: (1, r, 2, _exact_div(c, 2, "ScaleADN column"), 0, 2, 1, 2 * r),
            lambda c0: (1, 2, 0, 2, 1, None),
            align=("StrideColumn1", ("ShapeColumn0",)),
            no_overlap=("StrideColumn1", "ShapeColumn1", "ShapeRow1", 2), fp8=Fp8.ONLY,
        ),
        FormatSpec(
            "ScaleBND", lambda r, c, c0, dt: (2, _exact_div(r, 2, "ScaleBND row"), 1, c, 1, 2 * c, 0, 2),
            lambda c0: (2, 1, 1, None, 0, 2),
            align=("StrideRow1", ("ShapeRow0",)),
            no_overlap=("StrideRow1", "ShapeRow1", "ShapeColumn1", 2), fp8=Fp8.ONLY,
        ),
        FormatSpec(
            "ScaleBDN", lambda r, c, c0, dt: (1, r, 1, c, 0, 1, 0, r), lambda c0: (1, 1, 0, 1, 0, None),
            no_overlap=("StrideColumn1", "ShapeColumn1", "ShapeRow1", 1), fp8=Fp8.ONLY,
        ),
    )
}  # fmt: skip

FORMAT_NAMES = tuple(FORMATS)
"""All formats in `detect_format` order."""
FP8_ONLY_FORMATS = tuple(name for name, spec in FORMATS.items() if spec.fp8 is Fp8.ONLY)


def _dtype(dtype: str) -> str:
    name = dtype.removesuffix("_t")
    if name not in LAYOUT_DTYPES:
        raise LayoutError(f"unknown layout dtype {dtype!r} (expected one of {', '.join(LAYOUT_DTYPES)})")
    return name


def c0_element(dtype: str) -> int:
    """C0_ELEMENT: 32 bytes / sizeof(T); 64 for the fp4x2 types; 2 for fp8_e8m0 (its ZZ/NN/Scale rows)."""
    name = _dtype(dtype)
    if name == "fp8_e8m0":
        return 2
    if name.startswith("fp4x2"):
        return 64
    row = dtypes.lookup(name)
    assert row is not None, name  # every LAYOUT_DTYPES entry is a row of the table
    return 32 // row.size


def _spec(name: str, dtype: str) -> tuple[FormatSpec, str]:
    spec = FORMATS.get(name)
    if spec is None:
        raise LayoutError(f"unknown layout format {name!r} (expected one of {', '.join(FORMAT_NAMES)})")
    dt = _dtype(dtype)
    if spec.fp8 is Fp8.ONLY and dt != "fp8_e8m0":
        raise LayoutError(f"{name} layout is only defined for fp8_e8m0, not {dt}")
    if spec.fp8 is Fp8.NEVER and dt == "fp8_e8m0":
        raise LayoutError(f"{name} layout is not defined for fp8_e8m0 (the table's T excludes it)")
    return spec, dt


def make_format(name: str, row: int, column: int, dtype: str = "f16") -> Layout:
    """The contiguous layout of format `name` for a `row` x `column` matrix of `dtype`, as in the table.

    Hierarchical formats have shape ((ShapeRow0, ShapeRow1), (ShapeColumn0, ShapeColumn1)) and stride
    ((StrideRow0, StrideRow1), (StrideColumn0, StrideColumn1)); fractal formats pad to whole fractals,
    so `mode_sizes()` is the padded extent. `row / _2{}` in the table requires divisibility.
    """
    spec, dt = _spec(name, dtype)
    if row < 0 or column < 0:
        raise LayoutError(f"{name} layout: row and column must be non-negative, got {row}x{column}")
    r, c = row, column
    if spec.row is None:
        return Layout((r, c), (c, 1)) if name == "ND" else Layout((r, c), (1, r))
    v = spec.row(r, c, c0_element(dt), dt)
    return Layout(((v[0], v[1]), (v[2], v[3])), ((v[4], v[5]), (v[6], v[7])))


def _verify_flat(name: str, layout: Layout) -> None:
    flat = layout.strides_for_flat_modes()
    if flat is None or len(flat) != 2:
        raise LayoutError(f"{name} layout: expected a flat 2-mode layout (row,column):(..), got {layout}")
    (rows, row_stride), (cols, col_stride) = flat
    if name == "ND":
        if col_stride != 1:
            raise LayoutError(f"ND layout: column stride ({col_stride}) must be 1")
        if rows > 1 and row_stride < cols:
            raise LayoutError(f"ND layout: row stride ({row_stride}) must be >= the column extent ({cols})")
    else:
        if row_stride != 1:
            raise LayoutError(f"DN layout: row stride ({row_stride}) must be 1")
        if cols > 1 and col_stride < rows:
            raise LayoutError(f"DN layout: column stride ({col_stride}) must be >= the row extent ({rows})")


def verify_format(name: str, layout: Layout, dtype: str) -> None:
    """Raise LayoutError naming the broken rule if `layout` is not a valid `name` layout of `dtype`.

    Checks the dtype, the structure, the table's fixed inner shapes/strides, the seed's alignment
    rules (NZ: StrideColumn1 % (ShapeRow0*ShapeColumn0) == 0; ZN, ZZ: StrideRow1 ...; NN:
    StrideColumn1 ...), the non-overlap of outer strides (ND: row stride >= column extent; NDExt:
    StrideRow1 >= ShapeColumn1; ScaleADN: StrideColumn1 even and >= 2*ShapeRow1; ...) and injectivity.
    The storage offset is not constrained.
    """
    spec, dt = _spec(name, dtype)
    if spec.row is None:
        _verify_flat(name, layout)
        return
    where = f"{name} layout"
    shape = layout.shape
    if not (
        isinstance(shape, tuple)
        and len(shape) == 2
        and all(isinstance(m, tuple) and len(m) == 2 and all(isinstance(x, int) for x in m) for m in shape)
    ):
        raise LayoutError(
            f"{where}: expected shape ((ShapeRow0,ShapeRow1),(ShapeColumn0,ShapeColumn1)), got {layout}"
        )
    values = dict(zip(FIELDS, flatten(shape) + flatten(layout.stride), strict=True))
    for field_name, want in zip(_FIXED_KEYS, spec.fixed(c0_element(dt)), strict=True):
        if want is not None and values[field_name] != want:
            raise LayoutError(f"{where}: {field_name} ({values[field_name]}) must be {want} for {dt}")
    if spec.align is not None:
        field_name, factors = spec.align
        div = math.prod(values[f] for f in factors)
        if values[field_name] % div:
            got, what = values[field_name], "*".join(factors)
            raise LayoutError(f"{where}: {field_name} ({got}) must be a multiple of {what} ({div})")
    if spec.no_overlap is not None:
        sfield, own, other, inner = spec.no_overlap
        need = inner * values[other]
        if values[own] > 1 and values[sfield] < need:
            other_text = f"{inner}*{other}" if inner > 1 else other
            raise LayoutError(f"{where}: {sfield} ({values[sfield]}) must be >= {other_text} ({need})")
    if not layout.is_injective():
        raise LayoutError(f"{where}: the outer strides make fractal blocks overlap in {layout}")


def detect_format(layout: Layout, dtype: str) -> str | None:
    """The first format (in FORMAT_NAMES order) that `layout` satisfies for `dtype`, or None."""
    for name in FORMAT_NAMES:
        try:
            verify_format(name, layout, dtype)
        except LayoutError:
            continue
        return name
    return None
