// CPU shim: DataCopy and DataCopyPad (GM <-> UB, UB <-> UB) with the A2 rules and traffic counters.
#ifndef SBP_SHIM_DATA_COPY_H
#define SBP_SHIM_DATA_COPY_H

#include "sbp_shim/tensor.h"

namespace AscendC {

// blockLen / strides in 32-byte blocks (DataCopy) or blockLen in bytes (legacy DataCopyPad).
struct DataCopyParams {
  DataCopyParams() {}
  DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;
  uint16_t srcStride = 0;
  uint16_t dstStride = 0;
};

// blockLen in bytes; GM-side stride in bytes, UB-side stride in 32-byte blocks (gap between blocks).
struct DataCopyExtParams {
  DataCopyExtParams() {}
  DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn, const uint32_t dstStrideIn,
                    const uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

struct DataCopyPadParams {
  DataCopyPadParams() {}
  DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                    const uint64_t padValue)
      : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;  // the shim uses its low sizeof(T) bytes as the element's bit pattern
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() {}
  DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue)
      : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T(0);
};

namespace shim {

constexpr uint32_t MAX_BLOCK_COUNT = 4095;
constexpr uint32_t MAX_BLOCK_LEN = 2097151;

// Counts one count-form DataCopy of `count` elements and returns the bytes the hardware moves:
// the length rounded down to whole 32-byte blocks.
template <typename T>
inline uint64_t CountCopy(uint32_t count) {
  uint64_t want = static_cast<uint64_t>(count) * sizeof(T);
  ++g_counters.dataCopyCalls;
  if (want % ONE_BLK_SIZE != 0) ++g_counters.dataCopyNon32;
  return want / ONE_BLK_SIZE * ONE_BLK_SIZE;
}

template <typename T>
inline void CheckUbRange(const LocalTensor<T>& t, uint64_t bytes, const char* api) {
  t.CheckOperand(api, "UB", 0);
  SBP_SHIM_CHECK(bytes <= static_cast<uint64_t>(t.GetSize()) * sizeof(T),
                 "%s: touches %llu UB bytes of a tensor of %llu bytes", api, static_cast<unsigned long long>(bytes),
                 static_cast<unsigned long long>(static_cast<uint64_t>(t.GetSize()) * sizeof(T)));
}

template <typename T>
inline void CheckGmRange(const GlobalTensor<T>& g, uint64_t bytes, const char* api) {
  g.CheckRange(api, 0, (bytes + sizeof(T) - 1) / sizeof(T));
}

// A GM block of `blockLen` bytes costs whole 32-byte bursts (the roofline model charges strided rows so).
inline uint64_t BurstBytes(uint32_t blockLen) {
  return (static_cast<uint64_t>(blockLen) + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
}

template <typename T>
inline void FillElems(uint8_t* dst, uint32_t n, T v) {
  for (uint32_t i = 0; i < n; ++i) Store<T>(dst + static_cast<size_t>(i) * sizeof(T), v);
}

// GM -> UB with padding: block b (blockLen bytes at GM byte b*(blockLen+srcStride)) lands at UB byte
// b*(blockUb + dstStride*32), where blockUb = round_up(left + blockLen + right, 32); left/right padding
// (elements) and the fill up to 32 bytes get paddingValue when isPad, else the poison value.
template <typename T>
inline void PadIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t blockCount, uint32_t blockLen,
                  uint64_t srcStrideBytes, uint64_t dstStrideBlocks, bool isPad, uint32_t left, uint32_t right,
                  T padValue, const char* api) {
  ++g_counters.dataCopyCalls;
  ++g_counters.dataCopyPadCalls;
  SBP_SHIM_CHECK(blockCount <= MAX_BLOCK_COUNT, "%s: blockCount %u > %u (A2)", api, blockCount, MAX_BLOCK_COUNT);
  SBP_SHIM_CHECK(blockLen <= MAX_BLOCK_LEN, "%s: blockLen %u > %u bytes (A2)", api, blockLen, MAX_BLOCK_LEN);
  SBP_SHIM_CHECK(blockLen % sizeof(T) == 0, "%s: blockLen %u bytes is not a multiple of sizeof(T) = %zu", api,
                 blockLen, sizeof(T));
  SBP_SHIM_CHECK(left * sizeof(T) <= ONE_BLK_SIZE && right * sizeof(T) <= ONE_BLK_SIZE,
                 "%s: left/right padding %u/%u elements exceed 32 bytes", api, left, right);
  dst.CheckOperand(api, "UB destination", 0);
  if (blockCount == 0 || blockLen == 0) return;
  uint64_t blockUb = (left * sizeof(T) + blockLen + right * sizeof(T) + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE *
                     ONE_BLK_SIZE;
  uint64_t ubPitch = blockUb + dstStrideBlocks * ONE_BLK_SIZE;
  uint64_t gmPitch = static_cast<uint64_t>(blockLen) + srcStrideBytes;
  CheckUbRange(dst, (blockCount - 1) * ubPitch + blockUb, api);
  CheckGmRange(src, (blockCount - 1) * gmPitch + blockLen, api);
  T fill = isPad ? padValue : PoisonValue<T>();
  T sidePad = isPad ? padValue : PoisonValue<T>();
  uint32_t elems = blockLen / static_cast<uint32_t>(sizeof(T));
  for (uint32_t b = 0; b < blockCount; ++b) {
    uint8_t* u = dst.Ptr() + b * ubPitch;
    const uint8_t* g = src.Ptr() + b * gmPitch;
    FillElems<T>(u, left, sidePad);
    std::memcpy(u + left * sizeof(T), g, blockLen);
    FillElems<T>(u + (left + elems) * sizeof(T), right, sidePad);
    uint64_t used = (left + elems + right) * sizeof(T);
    FillElems<T>(u + used, static_cast<uint32_t>((blockUb - used) / sizeof(T)), fill);
  }
  g_counters.gmToUbBytes += static_cast<uint64_t>(blockCount) * blockLen;
  g_counters.gmBurstPadBytes += static_cast<uint64_t>(blockCount) * (BurstBytes(blockLen) - blockLen);
}

// UB -> GM, exact bytes: block b read at UB byte b*(round_up(blockLen,32) + srcStride*32), written
// to GM byte b*(blockLen + dstStride).
template <typename T>
inline void PadOut(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t blockCount, uint32_t blockLen,
                   uint64_t srcStrideBlocks, uint64_t dstStrideBytes, const char* api) {
  ++g_counters.dataCopyCalls;
  ++g_counters.dataCopyPadCalls;
  SBP_SHIM_CHECK(blockCount <= MAX_BLOCK_COUNT, "%s: blockCount %u > %u (A2)", api, blockCount, MAX_BLOCK_COUNT);
  SBP_SHIM_CHECK(blockLen <= MAX_BLOCK_LEN, "%s: blockLen %u > %u bytes (A2)", api, blockLen, MAX_BLOCK_LEN);
  SBP_SHIM_CHECK(blockLen % sizeof(T) == 0, "%s: blockLen %u bytes is not a multiple of sizeof(T) = %zu", api,
                 blockLen, sizeof(T));
  src.CheckOperand(api, "UB source", 0);
  if (blockCount == 0 || blockLen == 0) return;
  uint64_t blockUb = (static_cast<uint64_t>(blockLen) + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
  uint64_t ubPitch = blockUb + srcStrideBlocks * ONE_BLK_SIZE;
  uint64_t gmPitch = static_cast<uint64_t>(blockLen) + dstStrideBytes;
  CheckUbRange(src, (blockCount - 1) * ubPitch + blockLen, api);
  CheckGmRange(dst, (blockCount - 1) * gmPitch + blockLen, api);
  for (uint32_t b = 0; b < blockCount; ++b) {
    std::memcpy(dst.Ptr() + b * gmPitch, src.Ptr() + b * ubPitch, blockLen);
  }
  g_counters.ubToGmBytes += static_cast<uint64_t>(blockCount) * blockLen;
  g_counters.gmBurstPadBytes += static_cast<uint64_t>(blockCount) * (BurstBytes(blockLen) - blockLen);
}

// DataCopy with DataCopyParams: blockCount blocks of blockLen*32 bytes, gaps of srcStride/dstStride
// 32-byte blocks on both sides.
template <typename D, typename S>
inline void BlockCopy(const D& dst, const S& src, const DataCopyParams& p, uint64_t& counter, const char* api) {
  ++g_counters.dataCopyCalls;
  if (p.blockCount == 0 || p.blockLen == 0) return;
  uint64_t blk = static_cast<uint64_t>(p.blockLen) * ONE_BLK_SIZE;
  uint64_t sp = blk + static_cast<uint64_t>(p.srcStride) * ONE_BLK_SIZE;
  uint64_t dp = blk + static_cast<uint64_t>(p.dstStride) * ONE_BLK_SIZE;
  uint64_t srcBytes = (p.blockCount - 1) * sp + blk;
  uint64_t dstBytes = (p.blockCount - 1) * dp + blk;
  if constexpr (std::is_same<D, GlobalTensor<typename D::PrimType>>::value) {
    CheckGmRange(dst, dstBytes, api);
  } else {
    CheckUbRange(dst, dstBytes, api);
  }
  if constexpr (std::is_same<S, GlobalTensor<typename S::PrimType>>::value) {
    CheckGmRange(src, srcBytes, api);
  } else {
    CheckUbRange(src, srcBytes, api);
  }
  for (uint32_t b = 0; b < p.blockCount; ++b) std::memmove(dst.Ptr() + b * dp, src.Ptr() + b * sp, blk);
  counter += static_cast<uint64_t>(p.blockCount) * blk;
}

}  // namespace shim

// ---------------------------------------------------------------------------------------------
// DataCopy, count form: copies floor(count*sizeof(T) / 32) * 32 bytes, like the hardware (a length
// that is not a multiple of 32 bytes is silently rounded down; dataCopyNon32 counts such calls).
// ---------------------------------------------------------------------------------------------
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  uint64_t bytes = shim::CountCopy<T>(count);
  dst.CheckOperand("DataCopy(GM->UB)", "UB destination", 0);
  if (bytes == 0) return;
  shim::CheckUbRange(dst, bytes, "DataCopy(GM->UB)");
  shim::CheckGmRange(src, bytes, "DataCopy(GM->UB)");
  std::memcpy(dst.Ptr(), src.Ptr(), bytes);
  shim::g_counters.gmToUbBytes += bytes;
}

template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  uint64_t bytes = shim::CountCopy<T>(count);
  src.CheckOperand("DataCopy(UB->GM)", "UB source", 0);
  if (bytes == 0) return;
  shim::CheckUbRange(src, bytes, "DataCopy(UB->GM)");
  shim::CheckGmRange(dst, bytes, "DataCopy(UB->GM)");
  std::memcpy(dst.Ptr(), src.Ptr(), bytes);
  shim::g_counters.ubToGmBytes += bytes;
}

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  uint64_t bytes = shim::CountCopy<T>(count);
  dst.CheckOperand("DataCopy(UB->UB)", "UB destination", 0);
  src.CheckOperand("DataCopy(UB->UB)", "UB source", 0);
  if (bytes == 0) return;
  shim::CheckUbRange(dst, bytes, "DataCopy(UB->UB)");
  shim::CheckUbRange(src, bytes, "DataCopy(UB->UB)");
  std::memmove(dst.Ptr(), src.Ptr(), bytes);
  shim::g_counters.ubToUbBytes += bytes;
}

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
  shim::BlockCopy(dst, src, p, shim::g_counters.gmToUbBytes, "DataCopy(GM->UB, DataCopyParams)");
}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  shim::BlockCopy(dst, src, p, shim::g_counters.ubToGmBytes, "DataCopy(UB->GM, DataCopyParams)");
}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  shim::BlockCopy(dst, src, p, shim::g_counters.ubToUbBytes, "DataCopy(UB->UB, DataCopyParams)");
}

// ---------------------------------------------------------------------------------------------
// DataCopyPad (A2/A3): exact byte lengths, blocks padded to 32 bytes in UB.
// ---------------------------------------------------------------------------------------------
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad) {
  shim::PadIn(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding,
              pad.rightPadding, pad.paddingValue, "DataCopyPad(GM->UB)");
}

template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyExtParams& p) {
  shim::PadOut(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, "DataCopyPad(UB->GM)");
}

template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                                   const DataCopyPadParams& pad) {
  T v;
  uint64_t bits = pad.paddingValue;
  std::memcpy(&v, &bits, sizeof(T));  // little endian: the low sizeof(T) bytes
  shim::PadIn(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding,
              pad.rightPadding, v, "DataCopyPad(GM->UB, legacy)");
}

template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  shim::PadOut(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, "DataCopyPad(UB->GM, legacy)");
}

}  // namespace AscendC

#endif  // SBP_SHIM_DATA_COPY_H
