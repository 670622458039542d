// Hand-written FmodTensor / FmodScalar kernel (keys 0 and 1) following docs/ascendc_design.md.
// Used only by test/unit/test_shim.py to check the CPU shim and the numpy reference against each other.
//
//   out = Cast<T>(x - trunc(x / y) * y), computed in fp32 (x = Cast<float>(self), y = Cast<float>(other)):
//   Cast up CAST_NONE; Div; Cast<float,float> CAST_TRUNC; Mul; Sub; Cast down (half NONE, bf16/int16 RINT).
//
// Per core: a contiguous slice [start, start + blockLen) of the flat tensor, split in tiles of tileLength
// elements (bufferNum 1 or 2 queue buffers). Whole-32-byte tiles move with DataCopy, the rest with
// DataCopyPad (exact bytes).
#include "kernel_operator.h"
#include "fmod_tensor_tiling.h"

using namespace AscendC;

namespace {

template <typename T>
class KernelFmodHandwritten {
 public:
  __aicore__ inline KernelFmodHandwritten() {}

  __aicore__ inline void Init(GM_ADDR self, GM_ADDR other, GM_ADDR out, const FmodTilingData& td, bool scalar) {
    scalar_ = scalar;
    uint32_t core = static_cast<uint32_t>(GetBlockIdx());
    bool last = core + 1 == td.blockDim;
    uint64_t start = static_cast<uint64_t>(core) * td.blockLength;
    length_ = last ? td.lastBlockLength : td.blockLength;
    tileLength_ = td.tileLength;
    tileNum_ = last ? td.lastCoreTileNum : td.tileNum;
    lastTile_ = last ? td.lastCoreLastTileLength : td.lastTileLength;
    if (td.totalLength == 0 || length_ == 0) {
      length_ = 0;
      return;
    }
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(self) + start, length_);
    if (!scalar_) {
      yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(other) + start, length_);
    }
    zGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out) + start, length_);

    uint32_t tileBytes = tileLength_ * sizeof(T);
    uint8_t num = static_cast<uint8_t>(td.bufferNum);
    pipe_.InitBuffer(inX_, num, tileBytes);
    if (!scalar_) {
      pipe_.InitBuffer(inY_, num, tileBytes);
    }
    pipe_.InitBuffer(outZ_, num, tileBytes);
    pipe_.InitBuffer(q32_, tileLength_ * sizeof(float));
    if constexpr (!std::is_same_v<T, float>) {
      pipe_.InitBuffer(x32_, tileLength_ * sizeof(float));
      pipe_.InitBuffer(y32_, tileLength_ * sizeof(float));
    } else {
      if (scalar_) {
        pipe_.InitBuffer(y32_, tileLength_ * sizeof(float));
      }
    }
    if (scalar_) {
      LocalTensor<float> y = y32_.template Get<float>();
      Duplicate(y, td.scalarOther, static_cast<int32_t>(tileLength_));
    }
  }

  __aicore__ inline void Process() {
    if (length_ == 0) {
      return;
    }
    for (uint32_t i = 0; i < tileNum_; ++i) {
      uint32_t n = (i + 1 == tileNum_) ? lastTile_ : tileLength_;
      uint64_t off = static_cast<uint64_t>(i) * tileLength_;
      CopyIn(off, n);
      Compute(n);
      CopyOut(off, n);
    }
  }

 private:
  __aicore__ inline void Load(LocalTensor<T>& dst, GlobalTensor<T>& src, uint64_t off, uint32_t n) {
    if ((n * sizeof(T)) % 32 == 0) {
      DataCopy(dst, src[off], n);
    } else {
      DataCopyExtParams ext{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
      DataCopyPadExtParams<T> pad{false, 0, 0, T(0)};
      DataCopyPad(dst, src[off], ext, pad);
    }
  }

  __aicore__ inline void CopyIn(uint64_t off, uint32_t n) {
    LocalTensor<T> x = inX_.template AllocTensor<T>();
    Load(x, xGm_, off, n);
    inX_.EnQue(x);
    if (!scalar_) {
      LocalTensor<T> y = inY_.template AllocTensor<T>();
      Load(y, yGm_, off, n);
      inY_.EnQue(y);
    }
  }

  __aicore__ inline void Compute(uint32_t n) {
    LocalTensor<T> x = inX_.template DeQue<T>();
    LocalTensor<T> y;
    if (!scalar_) {
      y = inY_.template DeQue<T>();
    }
    LocalTensor<T> z = outZ_.template AllocTensor<T>();
    LocalTensor<float> q = q32_.template Get<float>();
    int32_t cnt = static_cast<int32_t>(n);
    if constexpr (std::is_same_v<T, float>) {
      LocalTensor<float> yf = scalar_ ? y32_.template Get<float>() : y;
      Div(q, x, yf, cnt);
      Cast(q, q, RoundMode::CAST_TRUNC, n);
      Mul(q, q, yf, cnt);
      Sub(z, x, q, cnt);
    } else {
      LocalTensor<float> xf = x32_.template Get<float>();
      LocalTensor<float> yf = y32_.template Get<float>();
      Cast(xf, x, RoundMode::CAST_NONE, n);
      if (!scalar_) {
        Cast(yf, y, RoundMode::CAST_NONE, n);
      }
      Div(q, xf, yf, cnt);
      Cast(q, q, RoundMode::CAST_TRUNC, n);
      Mul(q, q, yf, cnt);
      Sub(q, xf, q, cnt);
      constexpr RoundMode down = std::is_same_v<T, half> ? RoundMode::CAST_NONE : RoundMode::CAST_RINT;
      Cast(z, q, down, n);
    }
    outZ_.EnQue(z);
    inX_.FreeTensor(x);
    if (!scalar_) {
      inY_.FreeTensor(y);
    }
  }

  __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
    LocalTensor<T> z = outZ_.template DeQue<T>();
    if ((n * sizeof(T)) % 32 == 0) {
      DataCopy(zGm_[off], z, n);
    } else {
      DataCopyExtParams ext{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
      DataCopyPad(zGm_[off], z, ext);
    }
    outZ_.FreeTensor(z);
  }

  bool scalar_ = false;
  uint64_t length_ = 0;
  uint32_t tileLength_ = 0;
  uint32_t tileNum_ = 0;
  uint32_t lastTile_ = 0;
  TPipe pipe_;
  TQue<QuePosition::VECIN, 1> inX_;
  TQue<QuePosition::VECIN, 1> inY_;
  TQue<QuePosition::VECOUT, 1> outZ_;
  TBuf<TPosition::VECCALC> x32_;
  TBuf<TPosition::VECCALC> y32_;
  TBuf<TPosition::VECCALC> q32_;
  GlobalTensor<T> xGm_;
  GlobalTensor<T> yGm_;
  GlobalTensor<T> zGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void fmod_tensor(GM_ADDR self, GM_ADDR other, GM_ADDR out, GM_ADDR workspace,
                                                  GM_ADDR tiling) {
  (void)workspace;
  GET_TILING_DATA(tilingData, tiling);
  if (TILING_KEY_IS(1)) {
    KernelFmodHandwritten<DTYPE_SELF> op;
    op.Init(self, other, out, tilingData, false);
    op.Process();
  }
}

extern "C" __global__ __aicore__ void fmod_scalar(GM_ADDR self, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;
  GET_TILING_DATA(tilingData, tiling);
  if (TILING_KEY_IS(0)) {
    KernelFmodHandwritten<DTYPE_SELF> op;
    op.Init(self, nullptr, out, tilingData, true);
    op.Process();
  }
}
