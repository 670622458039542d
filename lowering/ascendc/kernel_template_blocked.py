"""The fmod kernel's blocked copy path (keys 3/4 with a strided innermost dim, `lowering/ascendc/tiling.py` rule 8).

`BLOCKED_METHODS` is the kernel class's text for it, inserted by the printer at `{blocked_methods}` of
`kernel_template.KERNEL` (plain C++: no format braces). A module of its own to keep kernel_template.py
readable; the modes are `lowering/tiling_blocked.block_mode`'s.
"""

from __future__ import annotations

# Keys 3/4 with a strided innermost dim (tileRows != 0, lowering/ascendc/tiling.py rule 8): the core's band of
# (batch, rows along gatherDim, innermost cols) is cut into tiles of tileRows x tileCols. Each input moves
# a tile with one DataCopyPad by rows or by columns (or one block of a broadcast row / column / element);
# in Compute a Gather with the core's offset table reorders a non-row tile into rows of pitch
# AlignUp(tileCols), so the vector program sees a row-major tile; `out` leaves by rows, or (stride 1 along
# gatherDim) is reordered into columns by one more Gather and leaves by columns.
BLOCKED_METHODS = """
  __aicore__ inline uint32_t BlockMode(const int64_t* stride) const {
    const int64_t sp = stride[td_.gatherDim];
    const int64_t sc = stride[td_.dimNum - 1];
    if (sc == 1 && sp >= td_.shape[td_.dimNum - 1]) {
      return kRowMode;
    }
    if (sp == 1 && sc >= td_.shape[td_.gatherDim]) {
      return kColMode;
    }
    if (sp == 0 && sc == 1) {
      return kBroadcastRowMode;
    }
    return sp == 1 ? kBroadcastColMode : kConstMode;
  }

  __aicore__ inline void InitBlocked(uint32_t tileBytes) {
    selfMode_ = BlockMode(td_.selfStride);
    pipe_.InitBuffer(xGatherBuf_, tileBytes);
    pipe_.InitBuffer(xTableBuf_, td_.tileLength * sizeof(uint32_t));
    BuildTable(xTableBuf_, selfMode_);
    if (!ScalarLike()) {
      otherMode_ = BlockMode(td_.otherStride);
      pipe_.InitBuffer(yGatherBuf_, tileBytes);
      pipe_.InitBuffer(yTableBuf_, td_.tileLength * sizeof(uint32_t));
      BuildTable(yTableBuf_, otherMode_);
    }
    outMode_ = BlockMode(td_.outStride);
    if (outMode_ == kColMode) {  // out entry j * AlignUp(tileRows) + i takes row-major element i * Cp + j
      pipe_.InitBuffer(zGatherBuf_, tileBytes);
      pipe_.InitBuffer(zTableBuf_, td_.tileLength * sizeof(uint32_t));
      const uint32_t rp = AlignUp(td_.tileRows);
      LocalTensor<int32_t> table = zTableBuf_.template Get<int32_t>();
      CreateVecIndex(table, static_cast<int32_t>(0), rp);
      Muls(table, table, static_cast<int32_t>(AlignUp(td_.tileCols) * sizeof(T)), static_cast<int32_t>(rp));
      for (uint32_t j = 1; j < td_.tileCols; ++j) {
        Adds(table[j * rp], table, static_cast<int32_t>(j * sizeof(T)), static_cast<int32_t>(rp));
      }
    }
  }

  // Gather byte offsets of a tile in `mode`: entry i * AlignUp(tileCols) + j reads the raw tile at element
  // i * a + j * b (columns land at pitch AlignUp(tileRows)); built with vector ops, once per core.
  __aicore__ inline void BuildTable(TBuf<TPosition::VECCALC>& buf, uint32_t mode) {
    if (mode == kRowMode) {
      return;
    }
    const uint32_t cp = AlignUp(td_.tileCols);
    const int32_t a = (mode == kColMode || mode == kBroadcastColMode) ? 1 : 0;
    const int32_t b = mode == kColMode ? static_cast<int32_t>(AlignUp(td_.tileRows))
                                       : (mode == kBroadcastRowMode ? 1 : 0);
    LocalTensor<int32_t> table = buf.template Get<int32_t>();
    CreateVecIndex(table, static_cast<int32_t>(0), cp);
    Muls(table, table, static_cast<int32_t>(b * sizeof(T)), static_cast<int32_t>(cp));
    for (uint32_t i = 1; i < td_.tileRows; ++i) {
      Adds(table[i * cp], table, static_cast<int32_t>(i * a * sizeof(T)), static_cast<int32_t>(cp));
    }
  }

  __aicore__ inline LocalTensor<T> Arranged(LocalTensor<T>& raw, uint32_t mode, TBuf<TPosition::VECCALC>& dst,
                                            TBuf<TPosition::VECCALC>& table, uint32_t count) {
    if (td_.tileRows == 0 || mode == kRowMode) {
      return raw;
    }
    LocalTensor<T> out = dst.template Get<T>();
    Gather(out, raw, table.template Get<uint32_t>(), 0, count);
    return out;
  }

  // Element offset of the first element of batch index `b` (row-major over the dims other than
  // gatherDim and the innermost one).
  __aicore__ inline int64_t BatchOffset(uint64_t b, const int64_t* stride, int64_t base) const {
    int64_t off = base;
    for (int32_t d = static_cast<int32_t>(td_.dimNum) - 2; d >= 0; --d) {
      if (static_cast<uint32_t>(d) == td_.gatherDim) {
        continue;
      }
      uint64_t extent = static_cast<uint64_t>(td_.shape[d]);
      off += static_cast<int64_t>(b % extent) * stride[d];
      b /= extent;
    }
    return off;
  }

  __aicore__ inline void LoadBlock(LocalTensor<T>& dst, GlobalTensor<T>& gm, int64_t off, uint32_t mode,
                                   const int64_t* stride, uint32_t rows, uint32_t cols) {
    const int64_t sp = stride[td_.gatherDim];
    const int64_t sc = stride[td_.dimNum - 1];
    uint32_t count = 1;
    uint32_t len = 1;
    uint32_t gap = 0;
    uint32_t pad = 0;
    if (mode == kRowMode) {
      count = rows;
      len = cols;
      gap = static_cast<uint32_t>((sp - cols) * sizeof(T));
      pad = (AlignUp(td_.tileCols) - AlignUp(cols)) / align_;
    } else if (mode == kColMode) {
      count = cols;
      len = rows;
      gap = static_cast<uint32_t>((sc - rows) * sizeof(T));
      pad = (AlignUp(td_.tileRows) - AlignUp(rows)) / align_;
    } else if (mode == kBroadcastRowMode) {
      len = cols;
    } else if (mode == kBroadcastColMode) {
      len = rows;
    }
    DataCopyExtParams ext{static_cast<uint16_t>(count), static_cast<uint32_t>(len * sizeof(T)), gap, pad, 0};
    DataCopyPadExtParams<T> fill{false, 0, 0, T(0)};
    DataCopyPad(dst, gm[off], ext, fill);
  }

  __aicore__ inline void BlockTile(uint64_t b, uint64_t row, uint32_t rows, uint64_t col, uint32_t cols) {
    const uint32_t p = td_.gatherDim;
    const uint32_t c = td_.dimNum - 1;
    auto at = [&](const int64_t* stride, int64_t base) {
      return BatchOffset(b, stride, base) + static_cast<int64_t>(row) * stride[p] +
             static_cast<int64_t>(col) * stride[c];
    };
    LocalTensor<T> x = inX_.template AllocTensor<T>();
    LoadBlock(x, selfGm_, at(td_.selfStride, td_.selfOffset), selfMode_, td_.selfStride, rows, cols);
    inX_.EnQue(x);
    if (!ScalarLike()) {
      LocalTensor<T> y = inY_.template AllocTensor<T>();
      LoadBlock(y, otherGm_, at(td_.otherStride, td_.otherOffset), otherMode_, td_.otherStride, rows, cols);
      inY_.EnQue(y);
    }
    const uint32_t pitch = AlignUp(td_.tileCols);
    blockRows_ = rows;
    blockCols_ = cols;
    Compute((rows - 1) * pitch + cols);
    LocalTensor<T> z = outZ_.template DeQue<T>();
    const bool byCols = outMode_ == kColMode;  // out has stride 1 along gatherDim: Compute left columns
    const uint32_t count = byCols ? cols : rows;
    const uint32_t len = byCols ? rows : cols;
    const uint32_t slack = byCols ? AlignUp(td_.tileRows) - AlignUp(rows) : pitch - AlignUp(cols);
    const int64_t stride = byCols ? td_.outStride[c] : td_.outStride[p];
    DataCopyExtParams ext{static_cast<uint16_t>(count), static_cast<uint32_t>(len * sizeof(T)), slack / align_,
                          static_cast<uint32_t>((stride - len) * sizeof(T)), 0};
    DataCopyPad(outGm_[at(td_.outStride, td_.outOffset)], z, ext);
    outZ_.FreeTensor(z);
  }

  // This core's band: bandBatch x bandRows x bandCols of (batch, gatherDim, innermost), cores in row-major
  // order over the band grid; tiles walk it batch by batch, rows by tileRows, cols by tileCols.
  __aicore__ inline void BlockedProcess() {
    const uint64_t rowsAll = static_cast<uint64_t>(td_.shape[td_.gatherDim]);
    const uint64_t colsAll = innerExtent_;
    const uint64_t batchAll = td_.totalLength / (rowsAll * colsAll);
    const uint64_t nr = (rowsAll + td_.bandRows - 1) / td_.bandRows;
    const uint64_t nc = (colsAll + td_.bandCols - 1) / td_.bandCols;
    const uint64_t core = static_cast<uint64_t>(GetBlockIdx());
    const uint64_t b0 = core / (nr * nc) * td_.bandBatch;
    const uint64_t r0 = core / nc % nr * td_.bandRows;
    const uint64_t c0 = core % nc * td_.bandCols;
    const uint64_t b1 = b0 + td_.bandBatch < batchAll ? b0 + td_.bandBatch : batchAll;
    const uint64_t r1 = r0 + td_.bandRows < rowsAll ? r0 + td_.bandRows : rowsAll;
    const uint64_t c1 = c0 + td_.bandCols < colsAll ? c0 + td_.bandCols : colsAll;
    for (uint64_t b = b0; b < b1; ++b) {
      for (uint64_t row = r0; row < r1; row += td_.tileRows) {
        const uint32_t rows = static_cast<uint32_t>(r1 - row < td_.tileRows ? r1 - row : td_.tileRows);
        for (uint64_t col = c0; col < c1; col += td_.tileCols) {
          const uint32_t cols = static_cast<uint32_t>(c1 - col < td_.tileCols ? c1 - col : td_.tileCols);
          BlockTile(b, row, rows, col, cols);
        }
      }
    }
  }
"""
