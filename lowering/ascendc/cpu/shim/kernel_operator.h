// CPU shim of the Ascend C device API (Atlas A2/A3 rules) for compiling kernels with g++ and running
// them on the host. See lowering/shim/README.md for the API list, the checks and the launcher ABI.
//
// Written from the API facts in shared/reference/ascendc.md (§1 kernel API, §5 shim subset); no CANN
// code. Build with `g++ -std=c++17 -Wall -Werror -O1` (also -Wextra clean).
#ifndef SBP_SHIM_KERNEL_OPERATOR_H
#define SBP_SHIM_KERNEL_OPERATOR_H

#include "sbp_shim/core.h"
#include "sbp_shim/tensor.h"
#include "sbp_shim/data_copy.h"
#include "sbp_shim/vector.h"
#include "register/tilingdata_base.h"
#include "sbp_shim/op_tiling.h"  // the op's tiling struct, as the CANN build provides it

// ---------------------------------------------------------------------------------------------
// Tiling: GET_TILING_DATA(var, tiling) declares `var` of the type registered with
// REGISTER_TILING_DATA_CLASS and memcpy's sizeof(var) bytes from `tiling`.
// TILING_KEY_IS(k) compares with the key the launcher set (sbp_launch's tilingKey).
// ---------------------------------------------------------------------------------------------
namespace AscendC {
namespace shim {
template <typename S>
inline void LoadTiling(S* dst, const uint8_t* tiling) {
  static_assert(std::is_trivially_copyable<S>::value, "tiling struct must be trivially copyable");
  SBP_SHIM_CHECK(tiling != nullptr, "GET_TILING_DATA: null tiling pointer");
  std::memcpy(static_cast<void*>(dst), tiling, sizeof(S));
}
}  // namespace shim
}  // namespace AscendC

#define GET_TILING_DATA(var, tiling) \
  SbpRegisteredTilingData var;       \
  ::AscendC::shim::LoadTiling(&var, reinterpret_cast<const uint8_t*>(tiling))

#define GET_TILING_DATA_WITH_STRUCT(struct_type, var, tiling) \
  struct_type var;                                            \
  ::AscendC::shim::LoadTiling(&var, reinterpret_cast<const uint8_t*>(tiling))

#define GET_TILING_DATA_MEMBER(struct_type, member, var, tiling)                                    \
  decltype(struct_type::member) var;                                                                  \
  std::memcpy(static_cast<void*>(&var), reinterpret_cast<const uint8_t*>(tiling) + offsetof(struct_type, member), \
              sizeof(var))

#define REGISTER_TILING_DEFAULT(struct_type) using SbpRegisteredDefault_##struct_type = struct_type

#define TILING_KEY_IS(k) (::AscendC::shim::g_core.tilingKey == static_cast<uint64_t>(k))

#define KERNEL_TASK_TYPE_DEFAULT(type) ((void)(type))
#define KERNEL_TASK_TYPE(key, type) ((void)(key), (void)(type))
#define ASCEND_IS_AIV (true)
#define ASCEND_IS_AIC (false)

#endif  // SBP_SHIM_KERNEL_OPERATOR_H
