"""The host TilingFunc's table: the Python tiling's decisions for a program's local operands, as C++ data.

The TilingFunc of an emitted project (`templates/tiling_func.cpp`) computes no tiling: sbpc knows every
local shape, stride, offset, dtype and scalar a kernel is launched on, so `tiling_rows` runs
`compute_tiling` (`tiling.py`, the one implementation) on each `TilingCase` and `rows_source` writes the
results as the initialisers of the template's `kRows`. A row's key is what the TilingFunc reads from its
context: the platform's AIV cores and UB bytes, the dtype, each operand's storage shape, strides and
offset, and for FmodScalar the Float attribute `other`, accepted both as the program's value (float32) and
as it rounded to the dtype (what the aclnn layer's `.Scalar().To("self")` passes). `program_cases` expands
one launch's operands over `PLATFORMS`, so the project runs on every SoC the OpDef registers.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.soc import SOCS, SocInfo
from sbpc.lowering.ascendc.tiling import FmodTiling, compute_tiling
from sbpc.lowering.ascendc.tiling_data import FMOD_TILING_FIELDS, MAX_DIMS
from sbpc.lowering.ascendc.tiling_views import TensorView, row_major_strides


def _platforms() -> tuple[SocInfo, ...]:
    seen: dict[tuple[int, int], SocInfo] = {}
    for soc in SOCS.values():
        seen.setdefault((soc.aiv_cores, soc.ub_bytes), soc)
    return tuple(seen.values())


PLATFORMS = _platforms()
"""One SoC per distinct (AIV cores, UB bytes) of `SOCS`: what the TilingFunc can tell platforms apart by."""


class TilingCase(NamedTuple):
    """One launch of a kernel on one platform: `compute_tiling`'s arguments."""

    self_view: TensorView
    other: TensorView | float | int
    out_view: TensorView
    dtype: str
    soc: SocInfo

    @property
    def views(self) -> tuple[TensorView, ...]:
        """The operands in the TilingFunc's slot order: self, other (a tensor), out."""
        if isinstance(self.other, TensorView):
            return (self.self_view, self.other, self.out_view)
        return (self.self_view, self.out_view)


class TableRow(NamedTuple):
    case: TilingCase
    tiling: FmodTiling


def program_cases(
    self_view: TensorView, other: TensorView | float | int, out_view: TensorView, dtype: str
) -> list[TilingCase]:
    """The cases of one launch's operands: one per platform of `PLATFORMS`."""
    return [TilingCase(self_view, other, out_view, dtype, soc) for soc in PLATFORMS]


def tiling_rows(cases: Iterable[TilingCase]) -> list[TableRow]:
    """The rows of the cases the tiling accepts (one per distinct key, first seen first); a case it
    rejects has no row, so the TilingFunc fails for it as `compute_tiling` raises."""
    rows: dict[str, TableRow] = {}
    for case in cases:
        try:
            tiling = compute_tiling(case.self_view, case.other, case.out_view, case.dtype, case.soc)
        except ValueError:
            continue
        row = TableRow(case, tiling)
        rows.setdefault(_key_source(row), row)
    return list(rows.values())


def f32_bits(value: float) -> int:
    """The bits of `value` as a float32 (C's conversion: beyond the float32 range, an infinity)."""
    try:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        return 0xFF800000 if value < 0 else 0x7F800000


def _ints(values: Sequence[int]) -> str:
    return "{" + ", ".join(str(v) for v in (*values, *[0] * (MAX_DIMS - len(values)))) + "}"


def _view_source(v: TensorView) -> str:
    row_major = int(v.strides == row_major_strides(v.shape))
    return f"{{{len(v.shape)}, {row_major}, {v.offset}, {_ints(v.shape)}, {_ints(v.strides)}}}"


def _key_source(row: TableRow) -> str:
    case = row.case
    t = dtypes.lookup(case.dtype)
    assert t is not None
    if isinstance(case.other, TensorView):
        scalar = "{0, 0}"
    else:
        scalar = f"{{{_bits(case.other)}, {_bits(row.tiling.scalarOther)}}}"
    views = ",\n      ".join(_view_source(v) for v in case.views)
    return f"{case.soc.aiv_cores}, {case.soc.ub_bytes}, ge::{t.ge}, {scalar},\n     {{{views}}}"


def _bits(value: float) -> str:
    return f"0x{f32_bits(value):08x}u"


def _fields_source(tiling: FmodTiling) -> str:
    values = [str(tiling.tilingKey)]
    for name, value in tiling.fields().items():
        if isinstance(value, list):
            values.append(_ints(value))
        elif isinstance(value, float):
            values.append(_bits(value))
        else:
            values.append(str(value))
    return ", ".join(values)


def row_members() -> str:
    """The Row members after the key: every FmodTilingData field in struct order, float fields as bits."""
    lines = []
    for name, ctype, n in FMOD_TILING_FIELDS:
        if n:
            lines.append(f"  {ctype} {name}[kMaxDims];")
        elif ctype == "float":
            lines.append(f"  uint32_t {name}Bits;")
        else:
            lines.append(f"  {ctype} {name};")
    return "\n".join(lines)


def row_setters() -> str:
    """`tiling.set_<field>(r.<field>)` for every field (a float field from its bits)."""
    return "\n".join(
        f"  tiling.set_{name}(BitsFloat(r.{name}Bits));" if ctype == "float" and not n else
        f"  tiling.set_{name}(r.{name});"
        for name, ctype, n in FMOD_TILING_FIELDS
    )  # fmt: skip


def rows_source(rows: Sequence[TableRow]) -> str:
    """`kRows` and `kRowCount`: one initialiser per row, a comment naming its platform and operands."""
    if not rows:
        return "static const Row* const kRows = nullptr;  // no launch of this kernel\nconstexpr size_t kRowCount = 0;"
    lines = ["static const Row kRows[] = {"]
    for row in rows:
        case = row.case
        shapes = ", ".join("x".join(map(str, v.shape)) or "0-d" for v in case.views)
        platform = f"{case.soc.aiv_cores} cores, {case.soc.ub_bytes} B UB"
        lines.append(f"    // {platform}; {case.dtype} {shapes}: key {row.tiling.tilingKey}")
        lines.append(f"    {{{_key_source(row)},")
        lines.append(f"     {_fields_source(row.tiling)}}},")
    lines += ["};", "constexpr size_t kRowCount = sizeof(kRows) / sizeof(kRows[0]);"]
    return "\n".join(lines)
