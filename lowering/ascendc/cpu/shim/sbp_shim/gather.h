// CPU shim: UB element gather and index vectors (Atlas A2 rules), what the fmod kernel's strided views
// use to reorder a tile moved by strided DMA (a transposed block) into the row-major order of `out`.
//
//   Gather(dst, src, srcOffset, srcBaseAddr, count)   dst[i] = element of src at byte
//                                                     srcBaseAddr + srcOffset[i] (uint32_t byte offsets)
//   CreateVecIndex(dst, firstValue, count)            dst[i] = firstValue + i
//   Brcb(dst, src, repeatTimes, {dstBlkStride, dstRepStride})   each src element fills a 32-byte dst block
//
// Checked: A2 dtypes (Gather: int16, uint16, half, bfloat16_t, int32, uint32, float; CreateVecIndex:
// int16, half, int32, float), every operand allocated, 32-byte aligned and holding `count` elements,
// each byte offset a multiple of sizeof(T) and inside src, dst not overlapping src or the offsets.
#ifndef SBP_SHIM_GATHER_H
#define SBP_SHIM_GATHER_H

#include "sbp_shim/tensor.h"

namespace AscendC {
namespace shim {
template <typename T>
struct A2Gather : OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float> {};
template <typename T>
struct A2VecIndex : OneOf<T, int16_t, half, int32_t, float> {};

inline bool Disjoint(uint64_t a, uint64_t aBytes, uint64_t b, uint64_t bBytes) {
  return a + aBytes <= b || b + bBytes <= a;
}
}  // namespace shim

template <typename T>
__aicore__ inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                              const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseAddr,
                              const uint32_t count) {
  static_assert(shim::A2Gather<T>::value, "Gather<T>: T is not supported on Atlas A2");
  dst.CheckOperand("Gather", "dst", count);
  src.CheckOperand("Gather", "src", 0);
  srcOffset.CheckOperand("Gather", "srcOffset", count);
  const uint64_t dBytes = static_cast<uint64_t>(count) * sizeof(T);
  const uint64_t srcBytes = static_cast<uint64_t>(src.GetSize()) * sizeof(T);
  SBP_SHIM_CHECK(shim::Disjoint(dst.ShimOffset(), dBytes, src.ShimOffset(), srcBytes),
                 "Gather: dst overlaps src");
  SBP_SHIM_CHECK(shim::Disjoint(dst.ShimOffset(), dBytes, srcOffset.ShimOffset(), count * 4ull),
                 "Gather: dst overlaps srcOffset");
  uint8_t* d = dst.Ptr();
  const uint8_t* s = src.Ptr();
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = static_cast<uint64_t>(srcBaseAddr) + srcOffset.GetValue(i);
    SBP_SHIM_CHECK(at % sizeof(T) == 0, "Gather: byte offset %llu of element %u is not a multiple of %zu",
                   static_cast<unsigned long long>(at), i, sizeof(T));
    SBP_SHIM_CHECK(at + sizeof(T) <= srcBytes, "Gather: byte offset %llu of element %u is outside src (%llu bytes)",
                   static_cast<unsigned long long>(at), i, static_cast<unsigned long long>(srcBytes));
    std::memcpy(d + static_cast<size_t>(i) * sizeof(T), s + at, sizeof(T));
  }
  shim::g_counters.ubGatherBytes += dBytes;
}

// Brcb: each of 8 * repeatTimes src elements fills one 32-byte block of dst (repeat r, element k -> block
// r * dstRepStride + k * dstBlkStride); b16 / b32 types; repeatTimes <= 255.
struct BrcbRepeatParams {
  uint16_t dstBlkStride = 1;
  uint16_t dstRepStride = 8;
  __aicore__ BrcbRepeatParams() {}
  __aicore__ BrcbRepeatParams(uint16_t blk, uint16_t rep) : dstBlkStride(blk), dstRepStride(rep) {}
};

template <typename T>
__aicore__ inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTimes,
                            const BrcbRepeatParams& params) {
  static_assert(shim::A2Gather<T>::value, "Brcb<T>: T is not supported on Atlas A2 (b16 / b32 only)");
  const uint32_t n = 8u * repeatTimes;
  src.CheckOperand("Brcb", "src", n);
  const uint64_t lastBlock = repeatTimes == 0 ? 0
      : static_cast<uint64_t>(repeatTimes - 1) * params.dstRepStride + 7ull * params.dstBlkStride + 1;
  dst.CheckOperand("Brcb", "dst", lastBlock * ONE_BLK_SIZE / sizeof(T));
  SBP_SHIM_CHECK(shim::Disjoint(dst.ShimOffset(), lastBlock * ONE_BLK_SIZE, src.ShimOffset(), n * sizeof(T)),
                 "Brcb: dst overlaps src");
  uint8_t* d = dst.Ptr();
  for (uint32_t r = 0; r < repeatTimes; ++r) {
    for (uint32_t k = 0; k < 8; ++k) {
      const T v = src.GetValue(r * 8 + k);
      uint8_t* block = d + (static_cast<size_t>(r) * params.dstRepStride + k * params.dstBlkStride) * ONE_BLK_SIZE;
      for (uint32_t e = 0; e < ONE_BLK_SIZE / sizeof(T); ++e) {
        std::memcpy(block + e * sizeof(T), &v, sizeof(T));
      }
    }
  }
}

template <typename T>
__aicore__ inline void CreateVecIndex(const LocalTensor<T>& dst, const T& firstValue, const uint32_t count) {
  static_assert(shim::A2VecIndex<T>::value, "CreateVecIndex<T>: T is not supported on Atlas A2");
  dst.CheckOperand("CreateVecIndex", "dst", count);
  for (uint32_t i = 0; i < count; ++i) {
    dst.SetValue(i, static_cast<T>(firstValue + static_cast<T>(i)));
  }
}

}  // namespace AscendC

#endif  // SBP_SHIM_GATHER_H
