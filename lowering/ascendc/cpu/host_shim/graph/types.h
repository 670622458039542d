// Host-side CANN shim (sbpc): ge::DataType, ge::Format, ge::graphStatus — the subset the fmod host code uses.
// Names and enumerator values follow the public CANN headers (graph/types.h, graph/ge_error_codes.h).
#ifndef SBPC_HOST_SHIM_GRAPH_TYPES_H_
#define SBPC_HOST_SHIM_GRAPH_TYPES_H_

#include <cstddef>
#include <cstdint>

namespace ge {
using char_t = char;
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0U;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFFU;
using Status = uint32_t;
constexpr Status SUCCESS = 0U;
constexpr Status FAILED = 0xFFFFFFFFU;

enum DataType {
  DT_FLOAT = 0,
  DT_FLOAT16 = 1,
  DT_INT8 = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 6,
  DT_UINT16 = 7,
  DT_UINT32 = 8,
  DT_INT64 = 9,
  DT_UINT64 = 10,
  DT_DOUBLE = 11,
  DT_BOOL = 12,
  DT_BF16 = 27,
  DT_UNDEFINED = 28,
  DT_MAX = 29
};

enum Format {
  FORMAT_NCHW = 0,
  FORMAT_NHWC = 1,
  FORMAT_ND = 2,
  FORMAT_NC1HWC0 = 3,
  FORMAT_FRACTAL_Z = 4,
  FORMAT_FRACTAL_NZ = 29,
  FORMAT_RESERVED = 40
};

// Bytes per element of the dtypes the shim knows (0 for the others).
inline size_t GetSizeByDataType(DataType dt) {
  switch (dt) {
    case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
    case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: return 2;
    case DT_INT8: case DT_UINT8: case DT_BOOL: return 1;
    case DT_INT64: case DT_UINT64: case DT_DOUBLE: return 8;
    default: return 0;
  }
}
}  // namespace ge

#endif  // SBPC_HOST_SHIM_GRAPH_TYPES_H_
