// Host-side CANN shim (sbpc): platform_ascendc::PlatformAscendC over the settable fe::PlatFormInfos.
// Signatures follow the public tiling/platform/platform_ascendc.h (GetCoreNumAiv, GetCoreMemSize(type, size&)).
#ifndef SBPC_HOST_SHIM_PLATFORM_ASCENDC_H_
#define SBPC_HOST_SHIM_PLATFORM_ASCENDC_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "platform/platform_infos_def.h"

namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };

enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND910_93, ASCEND310P, ASCEND310B, RESERVED_VERSION = 99999 };

class PlatformAscendC {
 public:
  PlatformAscendC() = delete;
  explicit PlatformAscendC(fe::PlatFormInfos* platformInfo) : platformInfo_(platformInfo) {
    if (platformInfo_ == nullptr) {
      std::fprintf(stderr, "host shim: PlatformAscendC constructed from a null fe::PlatFormInfos\n");
      std::abort();
    }
  }
  uint32_t GetCoreNum() const { return platformInfo_->coreNumAiv; }  // vector cores on separated A2/A3
  uint32_t GetCoreNumAic() const { return platformInfo_->coreNumAic; }
  uint32_t GetCoreNumAiv() const { return platformInfo_->coreNumAiv; }
  uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const {
    if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) {
      return sliceNum;
    }
    const uint32_t ratio = aivCoreNum / aicCoreNum;
    return (sliceNum + ratio - 1) / ratio;
  }
  uint32_t GetLibApiWorkSpaceSize() const { return 16U * 1024U * 1024U; }
  void GetCoreMemSize(const CoreMemType& memType, uint64_t& size) const {
    switch (memType) {
      case CoreMemType::UB: size = platformInfo_->ubSize; return;
      case CoreMemType::L1: size = platformInfo_->l1Size; return;
      case CoreMemType::L0_A: size = platformInfo_->l0aSize; return;
      case CoreMemType::L0_B: size = platformInfo_->l0bSize; return;
      case CoreMemType::L0_C: size = platformInfo_->l0cSize; return;
      case CoreMemType::L2: size = platformInfo_->l2Size; return;
      case CoreMemType::HBM: size = platformInfo_->hbmSize; return;
      default: size = 0; return;
    }
  }
  SocVersion GetSocVersion() const {
    const std::string& s = platformInfo_->shortSocVersion;
    if (s == "ascend910_93") {
      return SocVersion::ASCEND910_93;
    }
    if (s.rfind("ascend910b", 0) == 0) {
      return SocVersion::ASCEND910B;
    }
    return SocVersion::RESERVED_VERSION;
  }

 private:
  fe::PlatFormInfos* platformInfo_;
};
}  // namespace platform_ascendc

#endif  // SBPC_HOST_SHIM_PLATFORM_ASCENDC_H_
