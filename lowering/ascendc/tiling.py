"""Host tiling of the Ascend C fmod kernels (FmodTensor / FmodScalar), pure Python, no IR.

`compute_tiling(self, other, out, dtype, soc)` returns the `FmodTiling` of one fmod call: the one
implementation of the tiling. The host TilingFunc of an emitted project looks its inputs up in a table of
these results (`lowering/ascendc/host_table.py`); `test/unit/test_host_tiling.py` checks it gives them field
by field. The figures are `tiling_budget.py`'s, rule 8 is `tiling_blocked.py`. The rules (docs/ascendc_design.md
"Tiling"), and why:

1. Coalesce (in `lowering/ascendc/tiling_views.py`, with rule 2 and rule 7's rounding). `other` is broadcast
   to self's rank (stride 0 on broadcast dims), size-1 dims are dropped and adjacent dims i, i+1 are
   merged when *every* operand has stride[i] == stride[i+1] * shape[i+1]. A view that is contiguous
   in disguise (transposed then transposed back, a slice that keeps whole rows, an inner size-1 dim)
   then looks contiguous, so it takes a fast path, and the general paths walk as few, as long runs
   as possible.
2. tilingKey. Scalar: 0 if self and out are one stride-1 dim (or 0-d) after coalescing, else 3.
   Tensor: 1 if self, other and out are all one stride-1 dim; 2 if self and out are row-major over
   the coalesced shape and other is a row-major tensor broadcast over the dims where its stride is
   0; else 4. Storage offsets never change the key (they are in the tiling for every key).
3. Cores. Every core gets >= 4 KiB (below that the launch costs more than the work) and a block
   start aligned to 32 bytes (whole UB blocks; no two cores share a 32-byte GM block of a contiguous
   out): blockLength = max(align_up(ceil(N / cores), 32 / sizeof(T)), 4096 / sizeof(T));
   blockDim = ceil(N / blockLength), so no launched core is idle (pitfall 2: ceil(N / cores) alone
   can leave cores without work); the last core takes lastBlockLength = N - (blockDim-1)*blockLength.
4. UB. Every buffer x bufferNum counts (pitfall 3): x, y and out queues in T, plus fp32 temporaries
   (x32, y32, q when T != f32; q only for f32): bytesPerElem = bufferNum*3*sizeof(T) + (12 or 4).
   budget = UB - 2048 reserved (tiling struct, alignment slack); tileLength = floor(budget /
   bytesPerElem) aligned down to 64 elements (one 256-byte fp32 repeat, Compare/Select granularity).
   Double buffering only pays when a core has more than one tile: if blockLength fits one tile,
   bufferNum = 1 and tileLength = align_up(blockLength, 64) (still within the budget).
5. Shapes. dimNum / shape / strides (elements, padded to 8 with 0) describe the coalesced problem
   for every key; otherStride 0 = broadcast. Offsets: keys 3/4 get the storage offsets (the kernel
   receives the storage base); for keys 0-2 the GM address already points at the view's first element
   (the offset is part of the address, as for a contiguous aclTensor), so the offset fields are 0.
   innerRun = length of the innermost run that moves as one DataCopyPad (or one Duplicate for a
   constant other): N for keys 0/1, shape[dimNum-1] for key 2, and for keys 3/4 shape[dimNum-1] when
   self and out have inner stride 1 and other 0 or 1, else 1.
6. N = 0: blockDim 1 and every other count, shape and stride 0 (the kernel returns at once).
7. Scalar: rounded to self's dtype on the host (aclnn `.Scalar().To("self")`, NEP 50) by
   `lowering.fmod_reference.round_scalar_to_dtype` (float types: correctly rounded, ties to even, from
   the exact Python value; int16: an int must fit, a float must be finite and is truncated toward zero
   and must fit), then widened to float (`scalarOther`).

8. Strided innermost dim (keys 3/4): when an input's innermost coalesced stride is not 0 or 1 but it has a
   unit-stride dim p (`gatherDim`; a transposed or permuted view), the problem is cut into 2-d blocks of
   tileRows (along p) x tileCols (along the innermost dim c), one index of the remaining (batch) dims
   each. Every input moves a block by one strided DataCopyPad: rows (inner stride 1: blockCount = rows,
   srcStride = the row gap), columns (stride 1 along p: blockCount = cols, srcStride = the column gap,
   then a UB `Gather` with a per-core offset table reorders it row-major), or a broadcast row, column or
   element (one block, then Gather); out leaves by rows (inner stride 1) or, reordered by one more Gather,
   by columns (stride 1 along p; p is out's unit dim when no input is strided). Cores take bands of
   bandBatch x bandRows x bandCols (rows and cols multiples of 32 bytes), the grid that minimises the
   busiest core's elements (>= 4 KiB per core); tiles hold tileRows x tileCols with both padded to 32
   bytes and their product <= the UB budget (tileRows ~ tileCols: long bursts on both sides).
   blockLength / lastBlockLength are a full / the last core's band elements, tileNum / lastCoreTileNum
   their tile counts, lastTileLength / lastCoreLastTileLength the elements of their last tile.

9. Strided runs (keys 3/4 off rule 8): a run of self (or of key 4's other) whose innermost stride s is not
   1 (nor 0 for other, which is Duplicated) moves in chunks of STRIDED_RUN_CHUNK elements, one DataCopyPad
   each -- its contiguous span when s * sizeof(T) < 32 bytes (several elements share a sector; s x the
   bytes), else one element per block -- into a chunk buffer, and a UB Gather packs them; a run of out with
   an innermost stride other than 1 is spread one element a 32-byte block by Brcb and written by one
   DataCopyPad of one-element blocks a chunk. The UB budget reserves STRIDED_RUN_UB_BYTES (the chunk at 32
   bytes an element and its uint32 offset table).

Inputs are validated with ValueError: > 8 input dims, bad shapes/strides/offsets, other not
broadcastable to self, out shape != self shape, out with a stride-0 dim of size > 1 (overlapping
writes), unknown dtype or soc, int16 scalar out of range, sizes beyond the u32/i64 tiling fields.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sbpc.lowering.ascendc.soc import DEFAULT_SOC, SocInfo
from sbpc.lowering.ascendc.tiling_blocked import blocked_gathers, blocked_tiling
from sbpc.lowering.ascendc.tiling_budget import (  # noqa: F401 (re-exported: the tiling's figures)
    CAST_TEMP_BYTES,
    F32_TEMP_BYTES,
    GATHER_TABLE_BYTES,
    MAX_BLOCK_COUNT,
    MIN_BYTES_PER_CORE,
    OTHER_TRAFFIC_SHARE,
    STRIDED_RUN_CHUNK,
    STRIDED_RUN_UB_BYTES,
    TILE_ALIGN_ELEMS,
    U32_MAX,
    ub_bytes_per_elem,
)
from sbpc.lowering.ascendc.tiling_data import FMOD_TILING_FIELDS, MAX_DIMS, pack_tiling
from sbpc.lowering.ascendc.tiling_views import (  # noqa: F401 (re-exported: the tiling's names)
    UB_RESERVED_BYTES,
    Coalesced,
    TensorView,
    align_down,
    align_up,
    broadcast_other,
    ceil_div,
    coalesce,
    get_soc,
    kernel_dtype,
    round_scalar,
    row_major_strides,
    select_tiling_key,
)

_I64_MAX = (1 << 63) - 1

# --- the tiling ------------------------------------------------------------------------------------------


def strided_runs(key: int, c: Coalesced) -> bool:
    """Rule 9: whether a key 3/4 problem off the blocked path moves strided runs (reserving their UB)."""
    if key < 3 or not c.dim_num:
        return False
    other_inner = c.other_strides[-1] if key == 4 and c.other_strides is not None else 0
    return c.self_strides[-1] != 1 or other_inner not in (0, 1) or c.out_strides[-1] != 1


def _pad8(vals: Sequence[int]) -> tuple[int, ...]:
    return tuple(vals) + (0,) * (MAX_DIMS - len(vals))


@dataclass(frozen=True)
class FmodTiling:
    """The tiling of one fmod call; attribute names of the TilingData fields are the struct's."""

    tilingKey: int
    dtype: str
    soc: SocInfo
    totalLength: int
    blockDim: int
    blockLength: int
    lastBlockLength: int
    tileLength: int
    tileNum: int
    lastTileLength: int
    lastCoreTileNum: int
    lastCoreLastTileLength: int
    bufferNum: int
    scalarOther: float
    dimNum: int
    innerRun: int
    shape: tuple[int, ...]
    selfStride: tuple[int, ...]
    otherStride: tuple[int, ...]
    outStride: tuple[int, ...]
    selfOffset: int
    otherOffset: int
    outOffset: int
    colBlock: int
    """Key 2 split by columns: columns per core (a multiple of 32 bytes); 0 for a split by flat ranges."""
    gatherDim: int
    tileRows: int
    """Keys 3/4 moved as 2-d blocks (rule 8): rows of a tile along gatherDim; 0 when not blocked."""
    tileCols: int
    bandRows: int
    bandCols: int
    bandBatch: int
    self_view: TensorView = field(compare=False)
    other_view: TensorView | None = field(compare=False)
    out_view: TensorView = field(compare=False)

    @property
    def is_scalar(self) -> bool:
        return self.tilingKey in (0, 3)

    @property
    def elem_bytes(self) -> int:
        return kernel_dtype(self.dtype).size

    @property
    def bytes_per_elem(self) -> int:
        if not self.bufferNum:
            return 0
        k = self.dimNum
        scalar = self.is_scalar
        gathered = blocked_gathers(self.shape[:k], self.outStride[:k], self.gatherDim, scalar) if self.tileRows else 0
        return ub_bytes_per_elem(self.dtype, self.bufferNum, self.tilingKey, gathered)

    @property
    def ub_bytes(self) -> int:
        """UB the kernel allocates: tileLength x bytesPerElem (every buffer x bufferNum)."""
        return self.tileLength * self.bytes_per_elem

    @property
    def ub_budget(self) -> int:
        return self.soc.ub_bytes - UB_RESERVED_BYTES

    def fields(self) -> dict[str, int | float | list[int]]:
        """Exactly the FmodTilingData fields, in struct order (arrays as lists of 8)."""
        return {name: (list(getattr(self, name)) if n else getattr(self, name)) for name, _, n in FMOD_TILING_FIELDS}

    def to_bytes(self) -> bytes:
        """The raw tiling bytes (natural alignment, little endian) that SaveToBuffer writes."""
        return pack_tiling(self.fields())

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict for tiling.json: key, core split, tiles, buffers, views, coalesced dims."""
        k = self.dimNum

        def view(v: TensorView | None) -> dict[str, Any] | None:
            return None if v is None else {"shape": list(v.shape), "strides": list(v.strides), "offset": v.offset}

        scalar: float | str = self.scalarOther if math.isfinite(self.scalarOther) else repr(self.scalarOther)
        return {
            "tilingKey": self.tilingKey,
            "dtype": self.dtype,
            "soc": self.soc.name,
            "coreNum": self.soc.aiv_cores,
            "totalLength": self.totalLength,
            "blockDim": self.blockDim,
            "blockLength": self.blockLength,
            "lastBlockLength": self.lastBlockLength,
            "tileLength": self.tileLength,
            "tileNum": self.tileNum,
            "lastTileLength": self.lastTileLength,
            "lastCoreTileNum": self.lastCoreTileNum,
            "lastCoreLastTileLength": self.lastCoreLastTileLength,
            "bufferNum": self.bufferNum,
            "ubBytes": self.ub_bytes,
            "scalarOther": scalar if self.is_scalar else None,
            "dimNum": k,
            "innerRun": self.innerRun,
            "shape": list(self.shape[:k]),
            "selfStride": list(self.selfStride[:k]),
            "otherStride": list(self.otherStride[:k]),
            "outStride": list(self.outStride[:k]),
            "selfOffset": self.selfOffset,
            "otherOffset": self.otherOffset,
            "outOffset": self.outOffset,
            "colBlock": self.colBlock,
            "gatherDim": self.gatherDim,
            "tileRows": self.tileRows,
            "tileCols": self.tileCols,
            "bandRows": self.bandRows,
            "bandCols": self.bandCols,
            "bandBatch": self.bandBatch,
            "self": view(self.self_view),
            "other": view(self.other_view),
            "out": view(self.out_view),
        }


def _validate(self: TensorView, other: TensorView | None, out: TensorView) -> None:
    for name, v in (("self", self), ("other", other), ("out", out)):
        if v is None:
            continue
        if not isinstance(v, TensorView):
            raise ValueError(f"{name} must be a TensorView, got {type(v).__name__}")
        if len(v.shape) > MAX_DIMS:
            raise ValueError(f"{name} has {len(v.shape)} dims; fmod supports at most {MAX_DIMS}")
        if v.numel > _I64_MAX or v.offset > _I64_MAX or any(s > _I64_MAX for s in v.strides):
            raise ValueError(f"{name} is too large for the int64 tiling fields")
    if out.shape != self.shape:
        raise ValueError(f"out shape {out.shape} must equal self shape {self.shape}")
    if any(n > 1 and s == 0 for n, s in zip(out.shape, out.strides, strict=True)):
        raise ValueError(f"out strides {out.strides} make several elements share one location")


def compute_tiling(
    self: TensorView,
    other: TensorView | float | int,
    out: TensorView | None,
    dtype: str,
    soc: str | SocInfo = DEFAULT_SOC,
) -> FmodTiling:
    """The tiling of `out = fmod(self, other)` (other a TensorView: FmodTensor; a number: FmodScalar).

    `out` None means a row-major out of self's shape. Raises ValueError on invalid inputs.
    """
    dtype = kernel_dtype(dtype).name
    info = get_soc(soc)
    if out is None:
        out = TensorView.row_major(self.shape)
    other_view = other if isinstance(other, TensorView) else None
    _validate(self, other_view, out)
    scalar = 0.0 if other_view is not None else round_scalar(other, dtype)  # type: ignore[arg-type]
    c = coalesce(self, other_view, out)
    size = kernel_dtype(dtype).size
    n_total = self.numel
    common: dict[str, Any] = {
        "dtype": dtype,
        "soc": info,
        "totalLength": n_total,
        "scalarOther": scalar,
        "self_view": self,
        "other_view": other_view,
        "out_view": out,
    }
    if n_total == 0:
        zeros = (0,) * MAX_DIMS
        return FmodTiling(
            tilingKey=0 if other_view is None else 1, blockDim=1, blockLength=0, lastBlockLength=0,
            tileLength=0, tileNum=0, lastTileLength=0, lastCoreTileNum=0, lastCoreLastTileLength=0,
            bufferNum=0, dimNum=0, innerRun=0, shape=zeros, selfStride=zeros, otherStride=zeros,
            outStride=zeros, selfOffset=0, otherOffset=0, outOffset=0, colBlock=0, **_NOT_BLOCKED, **common,
        )  # fmt: skip
    key = select_tiling_key(c)
    k = c.dim_num
    other_strides = c.other_strides if c.other_strides is not None else (0,) * k
    if key in (0, 1):
        inner_run = n_total
    elif key == 2:
        inner_run = c.shape[-1]
    else:
        inner_ok = c.self_strides[-1] == 1 and c.out_strides[-1] == 1 and other_strides[-1] in (0, 1)
        inner_run = c.shape[-1] if inner_ok else 1

    views: dict[str, Any] = {
        "dimNum": k,
        "innerRun": inner_run,
        "shape": _pad8(c.shape),
        "selfStride": _pad8(c.self_strides),
        "otherStride": _pad8(other_strides),
        "outStride": _pad8(c.out_strides),
        "selfOffset": self.offset if key >= 3 else 0,
        "otherOffset": other_view.offset if other_view is not None and key >= 3 else 0,
        "outOffset": out.offset if key >= 3 else 0,
    }
    if key >= 3:
        blocked = blocked_tiling(c, other_view is None, dtype, info)
        if blocked is not None:
            return FmodTiling(tilingKey=key, colBlock=0, **blocked, **views, **common)
    # Cores: >= 4 KiB per core, 32-byte-aligned block starts, no idle core.
    align = info.align_bytes // size
    min_elems = MIN_BYTES_PER_CORE // size
    cores = info.aiv_cores
    # UB: every buffer x bufferNum, fp32 temporaries included; tiles aligned to 64 elements.
    budget = info.ub_bytes - UB_RESERVED_BYTES
    if strided_runs(key, c):
        budget -= STRIDED_RUN_UB_BYTES
    tile_double = align_down(budget // ub_bytes_per_elem(dtype, 2, key), TILE_ALIGN_ELEMS)
    if tile_double <= 0:
        raise ValueError(f"UB of {info.ub_bytes} bytes cannot hold one 64-element tile")
    col_block = 0
    if key == 2:  # every core may read all of `other`: keep that extra traffic under 5%
        other_n = math.prod(d for d, s in zip(c.shape, other_strides, strict=True) if s != 0)
        cores = min(cores, 1 + (2 * n_total + other_n) // (OTHER_TRAFFIC_SHARE * other_n))  # up to two runs a core
        col_block = _column_block(c.shape, other_strides, cores, info.aiv_cores, align, min_elems, tile_double)
    if col_block:
        # Split by columns: core i takes columns [i*colBlock, (i+1)*colBlock) of every row; a tile holds
        # whole rows of that slice, each at a 32-byte-aligned slot (colBlock is a multiple of 32 bytes).
        cols = c.shape[-1]
        rows = n_total // cols
        block_dim = ceil_div(cols, col_block)
        block_length, last_block_length = rows * col_block, rows * (cols - (block_dim - 1) * col_block)
        buffer_num = 1 if block_length <= tile_double else 2
        tile_length = align_up(block_length, TILE_ALIGN_ELEMS) if buffer_num == 1 else tile_double
        tile_rows = min(tile_length // col_block, MAX_BLOCK_COUNT)
        tile_num = last_core_tile_num = ceil_div(rows, tile_rows)
        last_rows = rows - (tile_num - 1) * tile_rows
        last_tile_length = last_rows * col_block
        last_core_last_tile_length = last_rows * (cols - (block_dim - 1) * col_block)
    else:
        block_length = max(align_up(ceil_div(n_total, cores), align), min_elems)
        block_dim = ceil_div(n_total, block_length)
        last_block_length = n_total - (block_dim - 1) * block_length
        if block_length <= tile_double:
            buffer_num, tile_length = 1, align_up(block_length, TILE_ALIGN_ELEMS)
        else:
            buffer_num, tile_length = 2, tile_double
        tile_num = ceil_div(block_length, tile_length)
        last_core_tile_num = ceil_div(last_block_length, tile_length)
        last_tile_length = block_length - (tile_num - 1) * tile_length
        last_core_last_tile_length = last_block_length - (last_core_tile_num - 1) * tile_length
    if tile_num > U32_MAX:
        raise ValueError(f"{n_total} elements need {tile_num} tiles per core, more than a uint32 holds")
    return FmodTiling(
        tilingKey=key,
        blockDim=block_dim,
        blockLength=block_length,
        lastBlockLength=last_block_length,
        tileLength=tile_length,
        tileNum=tile_num,
        lastTileLength=last_tile_length,
        lastCoreTileNum=last_core_tile_num,
        lastCoreLastTileLength=last_core_last_tile_length,
        bufferNum=buffer_num,
        colBlock=col_block,
        **_NOT_BLOCKED,
        **views,
        **common,
    )


def _column_block(
    shape: Sequence[int], other_strides: Sequence[int], capped: int, cores: int, align: int, min_elems: int,
    tile_double: int,
) -> int:
    """Key 2: columns per core when a row broadcast (`other` one compact row) is better split by columns,
    else 0: more cores than the flat split's cap, >= 4 KiB per core, one aligned row slice fits a tile."""
    if len(shape) < 2 or other_strides[-1] != 1 or any(s != 0 for s in other_strides[:-1]):
        return 0
    cols = shape[-1]
    rows = math.prod(shape[:-1])
    block = max(align_up(ceil_div(cols, cores), align), align_up(ceil_div(min_elems, rows), align))
    if ceil_div(cols, block) <= capped or block > tile_double:
        return 0
    return block


_NOT_BLOCKED = {"gatherDim": 0, "tileRows": 0, "tileCols": 0, "bandRows": 0, "bandCols": 0, "bandBatch": 0}
