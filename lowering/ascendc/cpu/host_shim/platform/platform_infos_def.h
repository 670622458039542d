// Host-side CANN shim (sbpc): fe::PlatFormInfos. The real class is an opaque bag of the SoC's ini file;
// here it is a settable struct read by platform_ascendc::PlatformAscendC. Its figures are a row of
// platform/soc_table.h, generated from lowering/soc.py (the first row, ascend910b, is the default).
#ifndef SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_
#define SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_

#include <cstdint>
#include <string>

#include "platform/soc_table.h"

namespace fe {
class PlatFormInfos : public SocFigures {
 public:
  PlatFormInfos() { Fill(kSocTable[0]); }

  std::string socVersion;       // Ascend910B2 ...
  std::string shortSocVersion;  // ascend910b, ascend910_93 ...

  // The platform of a short SoC name (a row of soc_table.h); unknown names keep the defaults.
  static PlatFormInfos ForSoc(const std::string& shortSoc) {
    PlatFormInfos p;
    for (size_t i = 0; i < kSocTableSize; ++i) {
      if (shortSoc == kSocTable[i].shortName) {
        p.Fill(kSocTable[i]);
      }
    }
    p.shortSocVersion = shortSoc;
    return p;
  }

 private:
  void Fill(const SocFigures& figures) {
    static_cast<SocFigures&>(*this) = figures;
    shortSocVersion = figures.shortName;
    socVersion = figures.version;
  }
};
}  // namespace fe

#endif  // SBPC_HOST_SHIM_PLATFORM_INFOS_DEF_H_
