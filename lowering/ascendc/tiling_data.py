"""The FmodTilingData struct, defined once: its fields, their C layout, and every C++ text made of them.

`FMOD_TILING_FIELDS` is the one list of the struct's fields (docs/ascendc_design.md "TilingData").
From it come the byte layout (C's natural alignment, declaration order, tail padding to the largest
alignment, which is what `register/tilingdata_base.h` produces on both sides), packing and unpacking
(what SaveToBuffer writes and GET_TILING_DATA reads), and the `BEGIN_TILING_DATA_DEF` header shared by
the host TilingFunc and the kernel (the TilingFunc's table rows and `set_<field>()` calls are
`lowering/ascendc/host_table.py`'s). The numbers that fill the fields are `lowering/ascendc/tiling.py`'s.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

MAX_DIMS = 8
"""Length of the shape / stride arrays: the most input dims an fmod call may have."""


class TilingField(NamedTuple):
    name: str
    ctype: str
    length: int = 0
    """Array length, 0 for a scalar field."""


FMOD_TILING_FIELDS: tuple[TilingField, ...] = (
    TilingField("totalLength", "uint64_t"),
    TilingField("blockDim", "uint32_t"),
    TilingField("blockLength", "uint64_t"),
    TilingField("lastBlockLength", "uint64_t"),
    TilingField("tileLength", "uint32_t"),
    TilingField("tileNum", "uint32_t"),
    TilingField("lastTileLength", "uint32_t"),
    TilingField("lastCoreTileNum", "uint32_t"),
    TilingField("lastCoreLastTileLength", "uint32_t"),
    TilingField("bufferNum", "uint32_t"),
    TilingField("scalarOther", "float"),
    TilingField("dimNum", "uint32_t"),
    TilingField("innerRun", "uint64_t"),
    TilingField("shape", "int64_t", MAX_DIMS),
    TilingField("selfStride", "int64_t", MAX_DIMS),
    TilingField("otherStride", "int64_t", MAX_DIMS),
    TilingField("outStride", "int64_t", MAX_DIMS),
    TilingField("selfOffset", "int64_t"),
    TilingField("otherOffset", "int64_t"),
    TilingField("outOffset", "int64_t"),
    TilingField("colBlock", "uint32_t"),
    # Keys 3/4 with a strided innermost dim, moved as 2-d blocks (tileRows != 0; lowering/ascendc/tiling.py rule 8):
    TilingField("gatherDim", "uint32_t"),
    TilingField("tileRows", "uint32_t"),
    TilingField("tileCols", "uint32_t"),
    TilingField("bandRows", "uint32_t"),
    TilingField("bandCols", "uint32_t"),
    TilingField("bandBatch", "uint64_t"),
)

# The field types tilingdata_base.h allows -> struct format character (little-endian, standard sizes).
_STRUCT_CODES = {
    "int8_t": "b",
    "uint8_t": "B",
    "int16_t": "h",
    "uint16_t": "H",
    "int32_t": "i",
    "uint32_t": "I",
    "int64_t": "q",
    "uint64_t": "Q",
    "float": "f",
}

Fields = Sequence[tuple[str, str, int]]


def struct_layout(fields: Fields = FMOD_TILING_FIELDS) -> tuple[list[tuple[str, str, int, int]], int]:
    """[(name, ctype, length, byte offset)] and sizeof the struct, with C's natural alignment."""
    out = []
    offset = 0
    max_align = 1
    for name, ctype, length in fields:
        if ctype not in _STRUCT_CODES:
            raise ValueError(f"tiling field {name}: type {ctype} is not allowed (int8..64, uint8..64, float)")
        size = struct.calcsize("<" + _STRUCT_CODES[ctype])
        max_align = max(max_align, size)
        offset = (offset + size - 1) // size * size
        out.append((name, ctype, length, offset))
        offset += size * max(length, 1)
    total = (offset + max_align - 1) // max_align * max_align
    return out, total


def tiling_field_offsets(fields: Fields = FMOD_TILING_FIELDS) -> dict[str, int]:
    return {name: off for name, _, _, off in struct_layout(fields)[0]}


def tiling_size(fields: Fields = FMOD_TILING_FIELDS) -> int:
    """sizeof(FmodTilingData) (384 for FMOD_TILING_FIELDS)."""
    return struct_layout(fields)[1]


def pack_tiling(values: Mapping[str, Any], fields: Fields = FMOD_TILING_FIELDS) -> bytes:
    """Pack `values` like the C struct: declaration order, natural alignment, zero padding.

    Missing fields are 0; arrays may be shorter than their length (zero-filled); unknown names raise
    KeyError, values out of the field's range OverflowError.
    """
    entries, total = struct_layout(fields)
    known = {name for name, *_ in entries}
    unknown = sorted(set(values) - known)
    if unknown:
        raise KeyError(f"unknown tiling field(s) {unknown}; known: {sorted(known)}")
    buf = bytearray(total)
    for name, ctype, length, offset in entries:
        code = "<" + _STRUCT_CODES[ctype]
        value = values.get(name, [0] * length if length else 0)
        if length:
            items = list(value) if isinstance(value, list | tuple) else _flat_list(value)
            if len(items) > length:
                raise ValueError(f"tiling field {name}: {len(items)} values for an array of {length}")
            items += [0] * (length - len(items))
            for i, v in enumerate(items):
                struct.pack_into(code, buf, offset + i * struct.calcsize(code), _coerce(v, ctype, name))
        else:
            struct.pack_into(code, buf, offset, _coerce(value, ctype, name))
    return bytes(buf)


def unpack_tiling(data: bytes, fields: Fields = FMOD_TILING_FIELDS) -> dict[str, Any]:
    """The fields of raw little-endian tiling bytes (arrays as lists), as GET_TILING_DATA reads them."""
    entries, total = struct_layout(fields)
    if len(data) < total:
        raise ValueError(f"tiling buffer of {len(data)} bytes, struct needs {total}")
    out: dict[str, Any] = {}
    for name, ctype, length, offset in entries:
        code = _STRUCT_CODES[ctype]
        if length:
            out[name] = list(struct.unpack_from("<" + str(length) + code, data, offset))
        else:
            out[name] = struct.unpack_from("<" + code, data, offset)[0]
    return out


def _flat_list(value: Any) -> list[Any]:
    import numpy as np

    return np.asarray(value).reshape(-1).tolist()


def _coerce(value: Any, ctype: str, name: str) -> int | float:
    if ctype == "float":
        return float(value)
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"tiling field {name} ({ctype}) got non-integer {value!r}")
    v = int(value)
    bits = int(ctype.removeprefix("u").removeprefix("int").removesuffix("_t"))
    lo, hi = (0, 2**bits - 1) if ctype.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if not lo <= v <= hi:
        raise OverflowError(f"tiling field {name} ({ctype}) out of range: {v}")
    return v


# --- C++ ---------------------------------------------------------------------------------------------------


def tiling_data_def(struct_name: str, op_type: str, fields: Fields = FMOD_TILING_FIELDS) -> list[str]:
    """The lines `BEGIN_TILING_DATA_DEF(S)` ... `REGISTER_TILING_DATA_CLASS(op, S)` (no namespace)."""
    lines = [f"BEGIN_TILING_DATA_DEF({struct_name})"]
    for name, ctype, n in fields:
        if n:
            lines.append(f"  TILING_DATA_FIELD_DEF_ARR({ctype}, {n}, {name});")
        else:
            lines.append(f"  TILING_DATA_FIELD_DEF({ctype}, {name});")
    return [*lines, "END_TILING_DATA_DEF;", "", f"REGISTER_TILING_DATA_CLASS({op_type}, {struct_name})"]


def tiling_header(
    op_type: str, guard: str, struct_name: str = "FmodTilingData", fields: Fields = FMOD_TILING_FIELDS
) -> str:
    """A complete tiling header (`op_host/<op>_tiling.h`) defining `struct_name` from `fields`."""
    return "\n".join(
        [
            "// Generated by sbpc. Do not edit.",
            f"#ifndef {guard}",
            f"#define {guard}",
            '#include "register/tilingdata_base.h"',
            "",
            "namespace optiling {",
            *tiling_data_def(struct_name, op_type, fields),
            "}  // namespace optiling",
            f"#endif  // {guard}",
            "",
        ]
    )
