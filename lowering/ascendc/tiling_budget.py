"""The core-split and UB-budget figures of the fmod tiling (`lowering/ascendc/tiling.py` rules 3, 4, 8, 9).

The constants every tiling rule reads and `ub_bytes_per_elem`, the UB one tile element costs. Both the
flat split (`tiling.py`) and the blocked split (`tiling_blocked.py`) build on them, so they live below both.
"""

from __future__ import annotations

from sbpc.lowering.ascendc.soc import ALIGN_BYTES
from sbpc.lowering.ascendc.tiling_views import kernel_dtype

MIN_BYTES_PER_CORE = 4096
"""Every launched core gets at least this much work (below it the launch costs more than the work)."""
TILE_ALIGN_ELEMS = 64
"""Tiles are multiples of 64 elements: one 256-byte fp32 repeat."""
F32_TEMP_BYTES = 4
"""fp32 temporaries per tile element when T is f32: q."""
CAST_TEMP_BYTES = 12
"""fp32 temporaries per tile element when T is cast to fp32: x32, y32, q."""
OTHER_TRAFFIC_SHARE = 40
"""Key 2, split by flat ranges: every core may read all of `other` (up to two runs of it), so cores are
capped at about 2N / (40 |other|): that extra traffic stays under 5% of N. A row broadcast whose cap
leaves cores idle is split by columns instead (`colBlock`): each core reads its slice of `other` once."""
MAX_BLOCK_COUNT = 4095
"""A2: the most blocks (rows) one DataCopyPad moves; a column-split tile holds at most this many rows."""
U32_MAX = (1 << 32) - 1
GATHER_TABLE_BYTES = 4
"""A uint32 byte offset per tile element: the Gather offset table of a blocked operand."""
STRIDED_RUN_CHUNK = 256
"""Rule 9: elements of a strided run one DataCopyPad moves (a multiple of every dtype's 32-byte block)."""
STRIDED_RUN_UB_BYTES = STRIDED_RUN_CHUNK * (ALIGN_BYTES + GATHER_TABLE_BYTES)
"""Rule 9's UB: the chunk (each element may land in its own 32-byte block) and its Gather offsets."""


def ub_bytes_per_elem(dtype: str, buffer_num: int, key: int = 0, gathered: int = 0) -> int:
    """UB bytes per tile element: x, y, out queues in T x bufferNum, the fp32 temporaries, for key 2
    the cache of the last `other` run, and per gathered (blocked) input its reordered tile and table."""
    t = kernel_dtype(dtype)
    temporaries = F32_TEMP_BYTES if t.cast_up is None else CAST_TEMP_BYTES
    return (buffer_num * 3 * t.size + temporaries + (t.size if key == 2 else 0)
            + gathered * (t.size + GATHER_TABLE_BYTES))  # fmt: skip
