// Host-side CANN shim (sbpc): fe::PlatFormInfos. The real class is an opaque bag of the SoC's ini file;
// here it is a settable struct read by platform_ascendc::PlatformAscendC. ForSoc() fills the A2/A3 values
// of reference/ascendc.md §3 (AIV cores 48 on 910B/910B1/910B2/910_93, 40 on 910B3/910B4; UB 196608 B).
#ifndef SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_
#define SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_

#include <cstdint>
#include <string>

namespace fe {
class PlatFormInfos {
 public:
  std::string socVersion = "Ascend910B2";  // short SoC name as AddConfig spells it: ascend910b, ascend910_93 ...
  std::string shortSocVersion = "ascend910b";
  uint32_t coreNumAiv = 48;
  uint32_t coreNumAic = 24;
  uint64_t ubSize = 196608;
  uint64_t l1Size = 524288;
  uint64_t l0aSize = 65536;
  uint64_t l0bSize = 65536;
  uint64_t l0cSize = 131072;
  uint64_t l2Size = 201326592;
  uint64_t hbmSize = 68719476736ULL;

  // The platform of a short SoC name (ascend910b, ascend910b1..b4, ascend910_93); unknown names keep the defaults.
  static PlatFormInfos ForSoc(const std::string& shortSoc) {
    PlatFormInfos p;
    p.shortSocVersion = shortSoc;
    if (shortSoc == "ascend910b3" || shortSoc == "ascend910b4") {
      p.coreNumAiv = 40;
      p.coreNumAic = 20;
      p.socVersion = shortSoc == "ascend910b3" ? "Ascend910B3" : "Ascend910B4";
    } else if (shortSoc == "ascend910_93") {
      p.socVersion = "Ascend910_9392";
    } else if (shortSoc == "ascend910b1") {
      p.socVersion = "Ascend910B1";
    }
    return p;
  }
};
}  // namespace fe

#endif  // SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_
