// Host-side CANN shim (sbpc): fe::PlatFormInfos. The real class is an opaque bag of the SoC's ini file;
// here it is a settable struct read by platform_ascendc::PlatformAscendC. Its figures are the rows of
// platform/soc_table.h, generated from lowering/soc.py (the first row, ascend910b, is the default).
#ifndef SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_
#define SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_

#include <cstdint>
#include <string>

#include "platform/soc_table.h"

namespace fe {
class PlatFormInfos {
 public:
  PlatFormInfos() { Fill(kSocTable[0]); }

  std::string socVersion;  // short SoC name as AddConfig spells it: ascend910b, ascend910_93 ...
  std::string shortSocVersion;
  uint32_t coreNumAiv = 0;
  uint32_t coreNumAic = 0;
  uint64_t ubSize = 0;
  uint64_t l1Size = 0;
  uint64_t l0aSize = 0;
  uint64_t l0bSize = 0;
  uint64_t l0cSize = 0;
  uint64_t l2Size = 0;
  uint64_t hbmSize = 0;

  // The platform of a short SoC name (a row of soc_table.h); unknown names keep the defaults.
  static PlatFormInfos ForSoc(const std::string& shortSoc) {
    PlatFormInfos p;
    for (size_t i = 0; i < kSocTableSize; ++i) {
      if (shortSoc == kSocTable[i].shortSocVersion) {
        p.Fill(kSocTable[i]);
      }
    }
    p.shortSocVersion = shortSoc;
    return p;
  }

 private:
  void Fill(const SocFigures& s) {
    shortSocVersion = s.shortSocVersion;
    socVersion = s.socVersion;
    coreNumAiv = s.coreNumAiv;
    coreNumAic = s.coreNumAic;
    ubSize = s.ubSize;
    l1Size = s.l1Size;
    l0aSize = s.l0aSize;
    l0bSize = s.l0bSize;
    l0cSize = s.l0cSize;
    l2Size = s.l2Size;
    hbmSize = s.hbmSize;
  }
};
}  // namespace fe

#endif  // SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_
