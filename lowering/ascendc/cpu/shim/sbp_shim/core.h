// CPU shim of the Ascend C device API: basic types, enums, checks and per-core state.
// Written from the API facts in shared/reference/ascendc.md; no CANN code.
#ifndef SBP_SHIM_CORE_H
#define SBP_SHIM_CORE_H

#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "sbp_shim/soc.h"

// ---------------------------------------------------------------------------------------------
// Function qualifiers and address spaces: empty on the CPU (as in the real CPU debug mode).
// ---------------------------------------------------------------------------------------------
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef GM_ADDR
#define GM_ADDR uint8_t*
#endif
#ifndef __CCE_AICORE__
#define __CCE_AICORE__ 220
#endif
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif
#ifndef SBP_SHIM
#define SBP_SHIM 1
#endif

// ---------------------------------------------------------------------------------------------
// half and bfloat16_t (global names, as on the device)
// ---------------------------------------------------------------------------------------------
using half = _Float16;

// 16-bit brain float stored as its bit pattern. float -> bf16 rounds to nearest even; NaN stays NaN
// (quiet, sign kept). All arithmetic goes through float (on A2 only Cast/Duplicate/DataCopy take bf16).
struct bfloat16_t {
  uint16_t bits;

  bfloat16_t() = default;
  template <typename A, typename std::enable_if<std::is_arithmetic<A>::value, int>::type = 0>
  constexpr bfloat16_t(A v) : bits(FromFloatRne(static_cast<float>(v))) {}  // NOLINT: implicit like the device
  bfloat16_t(half v) : bits(FromFloatRne(static_cast<float>(v))) {}         // NOLINT
  operator float() const { return ToFloat(bits); }                          // NOLINT

  static constexpr bfloat16_t FromBits(uint16_t b) {
    bfloat16_t r{};
    r.bits = b;
    return r;
  }
  static float ToFloat(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  static constexpr uint16_t FromFloatRne(float f) {
    uint32_t u = __builtin_bit_cast(uint32_t, f);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0) {
      return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN, sign and top payload kept
    }
    uint32_t lsb = (u >> 16) & 1u;
    return static_cast<uint16_t>((u + 0x7FFFu + lsb) >> 16);
  }
};
static_assert(sizeof(bfloat16_t) == 2, "bfloat16_t must be 16 bits");
static_assert(std::is_trivially_copyable<bfloat16_t>::value, "bfloat16_t must be trivially copyable");

// ---------------------------------------------------------------------------------------------
// Global enums of the device toolchain
// ---------------------------------------------------------------------------------------------
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5,
              PIPE_V2, PIPE_FIX };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace AscendC {

enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC,
                                 SPM, SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX };
using QuePosition = TPosition;

enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD,
                                 CAST_HYBRID };

enum class HardEvent : uint8_t { MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M,
                                 V_V, MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M,
                                 MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX, FIX_MTE2,
                                 FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX };

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
enum KernelMetaType { KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_1,
                      KERNEL_TYPE_MIX_AIC_1_2 };
using TEventID = int8_t;

// TOTAL_UB_SIZE, ONE_BLK_SIZE, ONE_REPEAT_BYTE_SIZE: sbp_shim/soc.h (generated from lowering/soc.py).
constexpr uint32_t MAX_QUE_BUFFERS_PER_POSITION = 8;

namespace shim {

// ---------------------------------------------------------------------------------------------
// Checks. A failed check formats "shim check failed: <message> [<condition>] at <file>:<line> (core i/n)"
// and, by default, THROWS AscendC::shim::ShimError; the launcher (sbp_launch) catches it, prints the
// message to stderr and returns nonzero. Compile with -DSBP_SHIM_ABORT=1 to print and std::abort()
// instead (useful under a debugger).
// ---------------------------------------------------------------------------------------------
class ShimError : public std::runtime_error {
 public:
  explicit ShimError(const std::string& what) : std::runtime_error(what) {}
};

struct Counters {
  uint64_t gmToUbBytes = 0;      // GM -> UB bytes (DataCopy/DataCopyPad) + GlobalTensor::GetValue bytes
  uint64_t ubToGmBytes = 0;      // UB -> GM bytes (DataCopy/DataCopyPad) + GlobalTensor::SetValue bytes
  uint64_t ubHighWater = 0;      // max bytes handed out by TPipe::InitBuffer on any core
  uint64_t dataCopyCalls = 0;    // DataCopy + DataCopyPad calls (all directions)
  uint64_t dataCopyNon32 = 0;    // DataCopy calls whose count*sizeof(T) was not a multiple of 32 bytes
  uint64_t gmScalarReadBytes = 0;   // part of gmToUbBytes done by GlobalTensor::GetValue
  uint64_t gmScalarWriteBytes = 0;  // part of ubToGmBytes done by GlobalTensor::SetValue
  uint64_t dataCopyPadCalls = 0;
  uint64_t ubToUbBytes = 0;
  uint64_t gmBurstPadBytes = 0;  // DataCopyPad: bytes a block's 32-byte GM bursts move beyond its blockLen
  uint64_t ubGatherBytes = 0;    // bytes Gather wrote (UB reorder of strided tiles)
  uint64_t ubGatherBusiest = 0;  // the most Gather bytes of one core
};

struct CoreState {
  int64_t blockIdx = 0;
  int64_t blockNum = 1;
  uint64_t tilingKey = 0;
  uint32_t ubTop = 0;          // bytes of UB currently handed out (stack of live TPipes)
  uint32_t ubCoreHigh = 0;     // high-water of ubTop on this core
  void* currentPipe = nullptr;
};

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

inline thread_local Counters g_counters;
inline thread_local CoreState g_core;
inline thread_local std::unique_ptr<uint8_t, FreeDeleter> g_ub;

constexpr uint8_t UB_POISON_BYTE = 0xFF;  // fresh UB reads as NaN (float/half/bf16) or -1 (ints)

inline uint8_t* UbBase() {
  if (!g_ub) {
    void* p = std::aligned_alloc(64, TOTAL_UB_SIZE);
    if (p == nullptr) {
      std::fprintf(stderr, "sbp shim: cannot allocate the UB arena\n");
      std::abort();
    }
    std::memset(p, UB_POISON_BYTE, TOTAL_UB_SIZE);
    g_ub.reset(static_cast<uint8_t*>(p));
  }
  return g_ub.get();
}

[[noreturn]] inline void Fail(const char* file, int line, const char* cond, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

[[noreturn]] inline void Fail(const char* file, int line, const char* cond, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char* base = std::strrchr(file, '/');
  char full[1400];
  std::snprintf(full, sizeof full, "shim check failed: %s [%s] at %s:%d (core %lld/%lld)", msg, cond,
                base ? base + 1 : file, line, static_cast<long long>(g_core.blockIdx),
                static_cast<long long>(g_core.blockNum));
#if defined(SBP_SHIM_ABORT) && SBP_SHIM_ABORT
  std::fprintf(stderr, "%s\n", full);
  std::fflush(stderr);
  std::abort();
#else
  throw ShimError(full);
#endif
}

// Memory access through memcpy: UB is a byte arena viewed with several types (ReinterpretCast,
// Cast between widths), so loads and stores never rely on type-based aliasing.
template <typename T>
inline T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
inline void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

template <typename T, typename... Ts>
struct OneOf : std::disjunction<std::is_same<T, Ts>...> {};

// Poison written where hardware leaves garbage (DataCopyPad padding, fresh AllocTensor):
// a quiet NaN with a recognisable payload for float types, the 0x7F.. pattern for integers.
template <typename T>
inline T PoisonValue() {
  if constexpr (std::is_same<T, float>::value) {
    uint32_t u = 0x7FC0DEADu;
    return __builtin_bit_cast(float, u);
  } else if constexpr (std::is_same<T, half>::value) {
    uint16_t u = 0x7E5Au;
    return __builtin_bit_cast(half, u);
  } else if constexpr (std::is_same<T, bfloat16_t>::value) {
    return bfloat16_t::FromBits(0x7FDEu);
  } else if constexpr (std::is_same<T, double>::value) {
    uint64_t u = 0x7FF8DEADDEADDEADull;
    return __builtin_bit_cast(double, u);
  } else {
    static_assert(std::is_integral<T>::value, "no poison value for this type");
    T v;
    std::memset(&v, 0x7F, sizeof v);
    return v;
  }
}

}  // namespace shim
}  // namespace AscendC

#define SBP_SHIM_CHECK(cond, ...)                                                 \
  do {                                                                            \
    if (!(cond)) {                                                                \
      ::AscendC::shim::Fail(__FILE__, __LINE__, #cond, __VA_ARGS__);             \
    }                                                                             \
  } while (0)

#endif  // SBP_SHIM_CORE_H
