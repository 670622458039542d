// CPU shim of CANN's register/tilingdata_base.h: the tiling-data definition macros.
//
//   namespace optiling {
//   BEGIN_TILING_DATA_DEF(FmodTilingData)
//     TILING_DATA_FIELD_DEF(uint64_t, totalLength);
//     TILING_DATA_FIELD_DEF_ARR(int64_t, 8, shape);
//   END_TILING_DATA_DEF;
//   REGISTER_TILING_DATA_CLASS(FmodTensor, FmodTilingData)
//   }
//
// One definition serves both sides, so host and kernel cannot disagree on the byte layout:
// * kernel side: a plain standard-layout struct with public fields in declaration order, natural
//   alignment (tail padded to the largest field alignment) - GET_TILING_DATA memcpy's into it;
// * host side: the same type also has set_<f>(v) / get_<f>() (arrays: set_<f>(const T*), copying
//   all N elements), GetDataSize() and SaveToBuffer(void*, size_t).
// Fields are int8..int64, uint8..uint64 or float (static_assert), zero-initialised.
// REGISTER_TILING_DATA_CLASS(Op, S) makes S the type GET_TILING_DATA declares and exports
// `extern "C" uint64_t sbp_tiling_size_<Op>()` (weak) so the Python runtime can check sizes.
// The header declares `namespace optiling` and brings it into the global namespace (using-directive),
// as the kernel sees the struct unqualified while msOpGen headers define it inside optiling.
#ifndef SBP_SHIM_REGISTER_TILINGDATA_BASE_H
#define SBP_SHIM_REGISTER_TILINGDATA_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace sbp_tiling_detail {
template <typename T>
struct FieldTypeOk
    : std::integral_constant<bool, std::is_same<T, int8_t>::value || std::is_same<T, int16_t>::value ||
                                       std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value ||
                                       std::is_same<T, uint8_t>::value || std::is_same<T, uint16_t>::value ||
                                       std::is_same<T, uint32_t>::value || std::is_same<T, uint64_t>::value ||
                                       std::is_same<T, float>::value> {};
}  // namespace sbp_tiling_detail

namespace optiling {}
using namespace optiling;  // NOLINT: the kernel names the tiling struct unqualified

#define BEGIN_TILING_DATA_DEF(class_name)                                                            \
  struct class_name {                                                                                \
    size_t GetDataSize() const { return sizeof(class_name); }                                        \
    void SaveToBuffer(void* pData, size_t capacity) const {                                          \
      if (pData == nullptr || capacity < sizeof(class_name)) {                                       \
        throw std::length_error(#class_name "::SaveToBuffer: buffer smaller than the tiling struct"); \
      }                                                                                              \
      std::memcpy(pData, this, sizeof(class_name));                                                 \
    }                                                                                                \
    void InitData() { *this = class_name(); }

#define TILING_DATA_FIELD_DEF(data_type, field_name)                                                  \
  static_assert(::sbp_tiling_detail::FieldTypeOk<data_type>::value,                                    \
                "TILING_DATA_FIELD_DEF(" #data_type ", " #field_name                                   \
                "): tiling fields are int8..int64, uint8..uint64 or float");                           \
  data_type field_name{};                                                                              \
  void set_##field_name(data_type v) { field_name = v; }                                               \
  data_type get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_ARR(data_type, arr_size, field_name)                                    \
  static_assert(::sbp_tiling_detail::FieldTypeOk<data_type>::value,                                    \
                "TILING_DATA_FIELD_DEF_ARR(" #data_type ", " #arr_size ", " #field_name                \
                "): tiling fields are int8..int64, uint8..uint64 or float");                           \
  data_type field_name[arr_size]{};                                                                    \
  void set_##field_name(const data_type* v) { std::memcpy(field_name, v, sizeof(field_name)); }        \
  const data_type* get_##field_name() const { return field_name; }                                     \
  data_type* get_##field_name() { return field_name; }

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name)                                         \
  struct_type field_name{};                                                                            \
  void set_##field_name(const struct_type& v) { field_name = v; }                                      \
  const struct_type& get_##field_name() const { return field_name; }                                   \
  struct_type& get_##field_name() { return field_name; }

#define END_TILING_DATA_DEF }

#define REGISTER_TILING_DATA_CLASS(op_type, class_name)                                              \
  static_assert(std::is_standard_layout<class_name>::value && std::is_trivially_copyable<class_name>::value, \
                #class_name " must be a standard-layout, trivially copyable struct");                 \
  using SbpRegisteredTilingData = class_name;                                                          \
  extern "C" __attribute__((weak, visibility("default"))) uint64_t sbp_tiling_size_##op_type() {       \
    return sizeof(class_name);                                                                         \
  }

#endif  // SBP_SHIM_REGISTER_TILINGDATA_BASE_H
