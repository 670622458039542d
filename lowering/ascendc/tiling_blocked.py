"""Tiling rule 8 of `lowering/ascendc/tiling.py`: keys 3/4 whose innermost stride is not 0/1 move as 2-d blocks.

`blocked_tiling(c, scalar, dtype, soc)` returns the FmodTiling fields of a coalesced problem that moves by
blocks (None otherwise); `block_mode` is how one operand moves a block, as the kernel (`BlockMode`,
`lowering/ascendc/kernel_template_blocked.py`) classifies it. A module of its own to keep tiling.py readable
(the rule is documented there); it builds on `tiling_views` and `tiling_budget`, below tiling.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sbpc.lowering.ascendc.soc import SocInfo
from sbpc.lowering.ascendc.tiling_budget import (
    MAX_BLOCK_COUNT,
    MIN_BYTES_PER_CORE,
    TILE_ALIGN_ELEMS,
    U32_MAX,
    ub_bytes_per_elem,
)
from sbpc.lowering.ascendc.tiling_views import (
    UB_RESERVED_BYTES,
    Coalesced,
    align_down,
    align_up,
    ceil_div,
    kernel_dtype,
)


def block_mode(sp: int, sc: int, rows: int, cols: int) -> str | None:
    """How an operand with stride `sp` along gatherDim and `sc` along the innermost dim moves a block
    (rule 8): "row" (one strided DMA of rows), "col" (of columns, then Gather), "brow" / "bcol" (a row or
    column broadcast: one block, then Gather), "const" (one element, then Gather); None: not by blocks.
    The kernel (`BlockMode`) classifies the same way."""
    if sc == 1 and sp >= cols:
        return "row"
    if sp == 1 and sc >= rows:
        return "col"
    if sp == 0 and sc == 1:
        return "brow"
    if sc == 0 and sp == 1:
        return "bcol"
    if sp == 0 and sc == 0:
        return "const"
    return None


def gather_dim(c: Coalesced) -> int | None:
    """Rule 8: the dim p blocks are cut along, or None when the problem does not move by blocks."""
    k = c.dim_num
    if k < 2:
        return None
    inputs = [c.self_strides] + ([c.other_strides] if c.other_strides is not None else [])
    strided = [s for s in inputs if s[-1] not in (0, 1)] or ([c.out_strides] if c.out_strides[-1] != 1 else [])
    if not strided:
        return None  # every innermost stride is 0 or 1: the row-group path moves them by DMA already
    p = next((d for d in range(k - 1) if strided[0][d] == 1), None)
    if p is None:
        return None
    rows, cols = c.shape[p], c.shape[-1]
    if block_mode(c.out_strides[p], c.out_strides[-1], rows, cols) not in ("row", "col"):
        return None
    if any(block_mode(s[p], s[-1], rows, cols) is None for s in inputs):
        return None
    return p


def _band_grid(batch: int, rows: int, cols: int, cores: int, align: int) -> tuple[int, int, int]:
    """(bandBatch, bandRows, bandCols) minimising the busiest core's elements, then the cores used."""
    best: tuple[int, int, int, int, int] | None = None
    for gb in range(1, min(batch, cores) + 1):
        bb = ceil_div(batch, gb)
        for gr in range(1, cores // gb + 1):
            rb = min(rows, align_up(ceil_div(rows, gr), align))
            cb = min(cols, align_up(ceil_div(cols, cores // (gb * gr)), align))
            used = ceil_div(batch, bb) * ceil_div(rows, rb) * ceil_div(cols, cb)
            cand = (bb * rb * cb, used, bb, rb, cb)
            if best is None or cand < best:
                best = cand
    assert best is not None
    return best[2], best[3], best[4]


def _tile_counts(bb: int, rb: int, cb: int, tr: int, tc: int) -> tuple[int, int, int]:
    """(elements, tiles, elements of the last tile) of a band of bb x rb x cb."""
    nr, nc = ceil_div(rb, tr), ceil_div(cb, tc)
    return bb * rb * cb, bb * nr * nc, (rb - (nr - 1) * tr) * (cb - (nc - 1) * tc)


def blocked_gathers(shape: Sequence[int], out_strides: Sequence[int], p: int, scalar: bool) -> int:
    """Reordered tiles (with offset tables) a blocked kernel keeps: one per input, one more when `out`
    leaves by columns."""
    by_cols = block_mode(out_strides[p], out_strides[len(shape) - 1], shape[p], shape[len(shape) - 1]) == "col"
    return (1 if scalar else 2) + (1 if by_cols else 0)


def blocked_tiling(c: Coalesced, scalar: bool, dtype: str, info: SocInfo) -> dict[str, int] | None:
    """Rule 8's fields, or None when the problem does not move by blocks."""
    p = gather_dim(c)
    if p is None:
        return None
    size = kernel_dtype(dtype).size
    strides = [c.self_strides, c.out_strides] + ([] if c.other_strides is None else [c.other_strides])
    if max(max(s[p], s[-1]) for s in strides) * size > U32_MAX:
        return None  # DataCopyExtParams strides are uint32 bytes
    n = math.prod(c.shape)
    rows, cols = c.shape[p], c.shape[-1]
    batch = n // (rows * cols)
    align = info.align_bytes // size
    cores = min(info.aiv_cores, max(1, n // (MIN_BYTES_PER_CORE // size)))
    bb, rb, cb = _band_grid(batch, rows, cols, cores, align)
    per_elem = ub_bytes_per_elem(dtype, 2, 4, blocked_gathers(c.shape, c.out_strides, p, scalar))
    cap = (info.ub_bytes - UB_RESERVED_BYTES) // per_elem
    tr = min(rb, max(align, align_down(math.isqrt(cap), align)), MAX_BLOCK_COUNT)
    tc = min(cb, align_down(cap // align_up(tr, align), align), MAX_BLOCK_COUNT)
    tr = min(rb, align_down(cap // align_up(tc, align), align), MAX_BLOCK_COUNT) if tc else 0
    if tr == 0:
        return None  # a UB too small for one aligned block
    nb, nr, nc = ceil_div(batch, bb), ceil_div(rows, rb), ceil_div(cols, cb)
    full = _tile_counts(bb, rb, cb, tr, tc)
    last = _tile_counts(batch - (nb - 1) * bb, rows - (nr - 1) * rb, cols - (nc - 1) * cb, tr, tc)
    return {
        "blockDim": nb * nr * nc,
        "blockLength": full[0],
        "lastBlockLength": last[0],
        "tileLength": align_up(align_up(tr, align) * align_up(tc, align), TILE_ALIGN_ELEMS),
        "tileNum": full[1],
        "lastTileLength": full[2],
        "lastCoreTileNum": last[1],
        "lastCoreLastTileLength": last[2],
        "bufferNum": 1 if full[1] == 1 else 2,
        "gatherDim": p,
        "tileRows": tr,
        "tileCols": tc,
        "bandRows": rb,
        "bandCols": cb,
        "bandBatch": bb,
    }
