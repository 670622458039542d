"""C++ text of the host TilingFunc's blocked keys 3/4 (`lowering/ascendc/tiling.py` rule 8), mirrored line by line.

`BLOCKED_TILING` goes into `host_tiling_cpp`'s `fmod_host` namespace after the shared helpers (`CeilDiv`,
`AlignUp`, `Result`, the constants); `ComputeTiling` calls `BlockedTiling` for keys 3/4 before the flat
split. A separate module only to keep host_tiling_cpp.py readable; `test_host_tiling.py` cross-checks it.
"""

from __future__ import annotations

from sbpc.lowering.ascendc.tiling import GATHER_TABLE_BYTES

BLOCKED_TILING = r"""
inline uint64_t AlignDown(uint64_t a, uint64_t b) { return a / b * b; }
inline uint64_t Min3(uint64_t a, uint64_t b, uint64_t c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }

// tiling_blocked.block_mode: 0 rows, 1 columns, 2 broadcast row, 3 broadcast column, 4 one element; -1 not by blocks.
inline int BlockMode(int64_t sp, int64_t sc, int64_t rows, int64_t cols) {
  if (sc == 1 && sp >= cols) {
    return 0;
  }
  if (sp == 1 && sc >= rows) {
    return 1;
  }
  if (sp == 0 && sc == 1) {
    return 2;
  }
  if (sc == 0 && sp == 1) {
    return 3;
  }
  return sp == 0 && sc == 0 ? 4 : -1;
}

// tiling_blocked.gather_dim: the dim blocks are cut along (false: the problem does not move by blocks).
inline bool GatherDim(const int64_t* cs, const int64_t* cSelf, const int64_t* cOther, const int64_t* cOut,
                      uint32_t k, uint32_t& p) {
  if (k < 2) {
    return false;
  }
  const int64_t* inputs[2] = {cSelf, cOther};
  const uint32_t nin = cOther != nullptr ? 2 : 1;
  const int64_t* strided = nullptr;
  for (uint32_t o = 0; o < nin && strided == nullptr; ++o) {
    if (inputs[o][k - 1] != 0 && inputs[o][k - 1] != 1) {
      strided = inputs[o];
    }
  }
  if (strided == nullptr && cOut[k - 1] != 1) {
    strided = cOut;  // only out is strided: cut along its unit-stride dim
  }
  if (strided == nullptr) {
    return false;  // every innermost stride is 0 or 1: the row-group path moves them by DMA already
  }
  bool found = false;
  for (uint32_t d = 0; d + 1 < k && !found; ++d) {
    if (strided[d] == 1) {
      p = d;
      found = true;
    }
  }
  const int outMode = found ? BlockMode(cOut[p], cOut[k - 1], cs[p], cs[k - 1]) : -1;
  if (outMode != 0 && outMode != 1) {
    return false;  // out leaves by rows or by columns
  }
  for (uint32_t o = 0; o < nin; ++o) {
    if (BlockMode(inputs[o][p], inputs[o][k - 1], cs[p], cs[k - 1]) < 0) {
      return false;
    }
  }
  return true;
}

// tiling_blocked._tile_counts: elements, tiles and elements of the last tile of a band.
inline void TileCounts(uint64_t bb, uint64_t rb, uint64_t cb, uint64_t tr, uint64_t tc, uint64_t out[3]) {
  const uint64_t nr = CeilDiv(rb, tr);
  const uint64_t nc = CeilDiv(cb, tc);
  out[0] = bb * rb * cb;
  out[1] = bb * nr * nc;
  out[2] = (rb - (nr - 1) * tr) * (cb - (nc - 1) * tc);
}

// tiling_blocked.blocked_tiling: rule 8's fields; false when the problem does not move by blocks.
inline bool BlockedTiling(const int64_t* cs, const int64_t* cSelf, const int64_t* cOther, const int64_t* cOut,
                          uint32_t k, uint64_t n, uint64_t typeSize, bool isF32, uint64_t coreNum,
                          uint64_t ubSize, Result& r) {
  uint32_t p = 0;
  if (!GatherDim(cs, cSelf, cOther, cOut, k, p)) {
    return false;
  }
  const int64_t* strides[3] = {cSelf, cOut, cOther};
  for (uint32_t o = 0; o < (cOther != nullptr ? 3u : 2u); ++o) {
    const uint64_t s = static_cast<uint64_t>(strides[o][p] > strides[o][k - 1] ? strides[o][p] : strides[o][k - 1]);
    if (s > kU32Max / typeSize) {
      return false;  // DataCopyExtParams strides are uint32 bytes
    }
  }
  const uint64_t rows = static_cast<uint64_t>(cs[p]);
  const uint64_t cols = static_cast<uint64_t>(cs[k - 1]);
  const uint64_t batch = n / (rows * cols);
  const uint64_t align = kAlignBytes / typeSize;
  uint64_t cores = n / (kMinBytesPerCore / typeSize);
  cores = cores < 1 ? 1 : (cores < coreNum ? cores : coreNum);
  // tiling_blocked._band_grid: the fewest elements on the busiest core, then the fewest cores.
  uint64_t best[5] = {0, 0, 0, 0, 0};
  bool have = false;
  for (uint64_t gb = 1; gb <= (batch < cores ? batch : cores); ++gb) {
    const uint64_t bb = CeilDiv(batch, gb);
    for (uint64_t gr = 1; gr <= cores / gb; ++gr) {
      uint64_t rb = AlignUp(CeilDiv(rows, gr), align);
      rb = rb < rows ? rb : rows;
      uint64_t cb = AlignUp(CeilDiv(cols, cores / (gb * gr)), align);
      cb = cb < cols ? cb : cols;
      const uint64_t cand[5] = {bb * rb * cb, CeilDiv(batch, bb) * CeilDiv(rows, rb) * CeilDiv(cols, cb), bb, rb, cb};
      bool better = !have;
      for (uint32_t i = 0; i < 5 && !better; ++i) {
        if (cand[i] != best[i]) {
          better = cand[i] < best[i];
          break;
        }
      }
      if (better) {
        for (uint32_t i = 0; i < 5; ++i) {
          best[i] = cand[i];
        }
        have = true;
      }
    }
  }
  const uint64_t bb = best[2];
  const uint64_t rb = best[3];
  const uint64_t cb = best[4];
  const bool outByCols = BlockMode(cOut[p], cOut[k - 1], cs[p], cs[k - 1]) == 1;
  const uint64_t gathered = (cOther != nullptr ? 2 : 1) + (outByCols ? 1 : 0);  // tiling_blocked.blocked_gathers
  const uint64_t perElem = 2 * 3 * typeSize + (isF32 ? @FT@ : @CT@) + gathered * (typeSize + @TABLE@);
  const uint64_t cap = (ubSize - kUbReservedBytes) / perElem;
  uint64_t root = 0;
  while ((root + 1) * (root + 1) <= cap) {
    ++root;
  }
  const uint64_t rootAligned = AlignDown(root, align);
  uint64_t tr = Min3(rb, rootAligned > align ? rootAligned : align, kMaxBlockCount);
  const uint64_t tc = Min3(cb, AlignDown(cap / AlignUp(tr, align), align), kMaxBlockCount);
  tr = tc == 0 ? 0 : Min3(rb, AlignDown(cap / AlignUp(tc, align), align), kMaxBlockCount);
  if (tr == 0) {
    return false;  // a UB too small for one aligned block
  }
  const uint64_t nb = CeilDiv(batch, bb);
  const uint64_t nr = CeilDiv(rows, rb);
  const uint64_t nc = CeilDiv(cols, cb);
  uint64_t full[3];
  uint64_t last[3];
  TileCounts(bb, rb, cb, tr, tc, full);
  TileCounts(batch - (nb - 1) * bb, rows - (nr - 1) * rb, cols - (nc - 1) * cb, tr, tc, last);
  r.blockDim = static_cast<uint32_t>(nb * nr * nc);
  r.blockLength = full[0];
  r.lastBlockLength = last[0];
  r.tileLength = static_cast<uint32_t>(AlignUp(AlignUp(tr, align) * AlignUp(tc, align), kTileAlignElems));
  r.tileNum = static_cast<uint32_t>(full[1]);
  r.lastTileLength = static_cast<uint32_t>(full[2]);
  r.lastCoreTileNum = static_cast<uint32_t>(last[1]);
  r.lastCoreLastTileLength = static_cast<uint32_t>(last[2]);
  r.bufferNum = full[1] == 1 ? 1 : 2;
  r.gatherDim = p;
  r.tileRows = static_cast<uint32_t>(tr);
  r.tileCols = static_cast<uint32_t>(tc);
  r.bandRows = static_cast<uint32_t>(rb);
  r.bandCols = static_cast<uint32_t>(cb);
  r.bandBatch = bb;
  return true;
}
""".replace("@TABLE@", str(GATHER_TABLE_BYTES))
