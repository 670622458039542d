// Launcher compiled together with one kernel source into a shared library (lowering/ascendc_runtime.py).
//
//   g++ -std=c++17 -Wall -Werror -O1 -fPIC -shared -I lowering/shim -I <tiling dir>
//       -DDTYPE_SELF=float -DSBP_KERNEL_ENTRY=fmod_tensor [-DSBP_KERNEL_SCALAR=1] kernel.cpp launcher.cpp
//
// ABI (extern "C"):
//   int sbp_launch(uint8_t* self, uint8_t* other, uint8_t* out, uint8_t* workspace, uint8_t* tiling,
//                  uint32_t blockDim, uint64_t tilingKey, uint64_t* counters);
//     Runs the entry for block index 0..blockDim-1 sequentially (like ICPU_RUN_KF). Each core starts
//     with an empty, poisoned UB. `other` is ignored by a scalar entry (SBP_KERNEL_SCALAR=1, signature
//     (self, out, workspace, tiling)). counters (may be null) receives 5 values: gmToUbBytes,
//     ubToGmBytes, ubHighWater (max over cores), dataCopyCalls, dataCopyNon32.
//     Returns 0; 1 when a shim check failed or the kernel threw (message on stderr and in
//     sbp_last_error()); 2 for bad launch arguments.
//   const char* sbp_last_error(void);            message of the last failure of this thread ("" if none)
//   uint32_t sbp_get_counters_ex(uint64_t*, uint32_t n);  the 5 counters + gmScalarReadBytes,
//            gmScalarWriteBytes, dataCopyPadCalls, ubToUbBytes, gmBurstPadBytes, ubGatherBytes, ubGatherBusiest
//            (the most Gather bytes of one core) of the last launch; returns how many
//   const char* sbp_kernel_entry_name(void);     the entry symbol compiled in
//   int sbp_kernel_is_scalar(void);
//   uint32_t sbp_ub_capacity(void);              TOTAL_UB_SIZE (sbp_shim/soc.h)
#include <cfenv>
#include <string>

#include "kernel_operator.h"

#ifndef SBP_KERNEL_ENTRY
#error "compile the launcher with -DSBP_KERNEL_ENTRY=<kernel entry symbol>"
#endif
#ifndef SBP_KERNEL_SCALAR
#define SBP_KERNEL_SCALAR 0
#endif

#define SBP_STR2(x) #x
#define SBP_STR(x) SBP_STR2(x)

#if SBP_KERNEL_SCALAR
extern "C" void SBP_KERNEL_ENTRY(GM_ADDR self, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling);
#else
extern "C" void SBP_KERNEL_ENTRY(GM_ADDR self, GM_ADDR other, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling);
#endif

namespace {
thread_local std::string g_lastError;
thread_local AscendC::shim::Counters g_lastCounters;

int Report(const std::string& msg, int rc) {
  g_lastError = msg;
  std::fprintf(stderr, "sbp_launch(%s): %s\n", SBP_STR(SBP_KERNEL_ENTRY), msg.c_str());
  std::fflush(stderr);
  return rc;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int sbp_launch(uint8_t* self, uint8_t* other, uint8_t* out,
                                                                 uint8_t* workspace, uint8_t* tiling,
                                                                 uint32_t blockDim, uint64_t tilingKey,
                                                                 uint64_t* counters) {
  using namespace AscendC::shim;
  g_lastError.clear();
  g_counters = Counters{};
  g_lastCounters = Counters{};
  if (blockDim == 0 || blockDim > 65535) {
    return Report("blockDim must be in [1, 65535], got " + std::to_string(blockDim), 2);
  }
#if SBP_KERNEL_SCALAR
  (void)other;
#endif
  int savedRound = std::fegetround();
  std::fesetround(FE_TONEAREST);
  int rc = 0;
  uint32_t high = 0;
  for (uint32_t b = 0; b < blockDim && rc == 0; ++b) {
    g_core = CoreState{};
    g_core.blockIdx = b;
    g_core.blockNum = blockDim;
    g_core.tilingKey = tilingKey;
    std::memset(UbBase(), UB_POISON_BYTE, AscendC::TOTAL_UB_SIZE);
    const uint64_t gatherBefore = g_counters.ubGatherBytes;
    try {
#if SBP_KERNEL_SCALAR
      SBP_KERNEL_ENTRY(self, out, workspace, tiling);
#else
      SBP_KERNEL_ENTRY(self, other, out, workspace, tiling);
#endif
    } catch (const std::exception& e) {
      rc = Report(e.what(), 1);
    } catch (...) {
      rc = Report("core " + std::to_string(b) + ": the kernel threw a non-standard exception", 1);
    }
    if (g_core.ubCoreHigh > high) high = g_core.ubCoreHigh;
    const uint64_t gathered = g_counters.ubGatherBytes - gatherBefore;
    if (gathered > g_counters.ubGatherBusiest) g_counters.ubGatherBusiest = gathered;
  }
  std::fesetround(savedRound);
  g_counters.ubHighWater = high;
  g_lastCounters = g_counters;
  if (counters != nullptr) {
    counters[0] = g_counters.gmToUbBytes;
    counters[1] = g_counters.ubToGmBytes;
    counters[2] = g_counters.ubHighWater;
    counters[3] = g_counters.dataCopyCalls;
    counters[4] = g_counters.dataCopyNon32;
  }
  g_core = CoreState{};
  return rc;
}

extern "C" __attribute__((visibility("default"))) const char* sbp_last_error(void) { return g_lastError.c_str(); }

extern "C" __attribute__((visibility("default"))) uint32_t sbp_get_counters_ex(uint64_t* out, uint32_t n) {
  const AscendC::shim::Counters& c = g_lastCounters;
  const uint64_t all[] = {c.gmToUbBytes,       c.ubToGmBytes,        c.ubHighWater,      c.dataCopyCalls,
                          c.dataCopyNon32,     c.gmScalarReadBytes,  c.gmScalarWriteBytes, c.dataCopyPadCalls,
                          c.ubToUbBytes,       c.gmBurstPadBytes,    c.ubGatherBytes,    c.ubGatherBusiest};
  uint32_t total = static_cast<uint32_t>(sizeof(all) / sizeof(all[0]));
  uint32_t k = n < total ? n : total;
  for (uint32_t i = 0; i < k && out != nullptr; ++i) out[i] = all[i];
  return k;
}

extern "C" __attribute__((visibility("default"))) const char* sbp_kernel_entry_name(void) {
  return SBP_STR(SBP_KERNEL_ENTRY);
}

extern "C" __attribute__((visibility("default"))) int sbp_kernel_is_scalar(void) { return SBP_KERNEL_SCALAR; }

extern "C" __attribute__((visibility("default"))) uint32_t sbp_ub_capacity(void) { return AscendC::TOTAL_UB_SIZE; }
