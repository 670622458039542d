"""C++ text of the host side of the fmod ops: TilingFunc (same numbers as `ascendc/tiling.py`), tiling header, OpDef.

`host_tiling_source(op)` is the TilingFunc the printer embeds, inside `namespace optiling { ... }`, into
`op_host/fmod_tensor.cpp` (or `fmod_scalar.cpp`) after the includes of the op's tiling header
(`FmodTilingData`), `register/op_def_registry.h` and `tiling/platform/platform_ascendc.h`
(`host_includes(op)`). It needs no standard header beyond <cstdint> (no libm: the scalar is rounded
with integer bit operations) and uses GCC/Clang builtins (`__builtin_mul_overflow`, `__builtin_memcpy`).
`host_opdef_source(op)` is InferShape / InferDataType / the OpDef with the attributes in the order the
TilingFunc reads them (`HOST_ATTRS`). Both compile with g++ against `lowering/ascendc/cpu/host_shim/`.

What the TilingFunc reads (gert::TilingContext has no strides, reference/ascendc.md §2.2, so the aclnn
layer passes the views as attributes):
- platform: `PlatformAscendC(context->GetPlatformInfo())`: `GetCoreNumAiv()`, `GetCoreMemSize(UB, ub)`;
- dtype: `GetInputDesc(0)->GetDataType()` (other and out must have the same dtype);
- shapes: `GetInputShape(i)->GetStorageShape()` (self, other), `GetOutputShape(0)` (out);
- attributes (`HOST_ATTRS`): FmodScalar attr 0 `other` (Float, required) is the scalar as the aclnn
  layer's `.Scalar().To("self")` produced it; the TilingFunc rounds it to self's dtype again (a no-op
  for a value already representable, and the NEP 50 rounding of `tiling.round_scalar` for a direct
  caller whose value is a float32) and stores it widened to float. `<x>_strides` (ListInt, element
  strides, one per dim; absent or empty = row-major) and `<x>_offset` (Int, elements; absent = 0).
Writes: FmodTilingData via `set_<field>()`, `SaveToBuffer` + `SetDataSize`, `SetBlockDim(blockDim)`,
`SetTilingKey(key)`, workspace size 0. Any invalid input returns `ge::GRAPH_FAILED` (where
`compute_tiling` raises ValueError).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.host_tiling_blocked_cpp import BLOCKED_TILING
from sbpc.lowering.ascendc.soc import ALIGN_BYTES, OPDEF_SOCS
from sbpc.lowering.ascendc.tiling import (
    CAST_TEMP_BYTES,
    F32_TEMP_BYTES,
    MAX_BLOCK_COUNT,
    MIN_BYTES_PER_CORE,
    OTHER_TRAFFIC_SHARE,
    STRIDED_RUN_UB_BYTES,
    TILE_ALIGN_ELEMS,
    UB_RESERVED_BYTES,
)
from sbpc.lowering.ascendc.tiling_data import MAX_DIMS, cpp_members, cpp_setters, tiling_header

OPS = ("FmodTensor", "FmodScalar")

# Attribute order = index for GetAttrs()->Get*(i). (name, kind) with kind Float / ListInt / Int.
HOST_ATTRS: dict[str, tuple[tuple[str, str], ...]] = {
    "FmodTensor": (
        ("self_strides", "ListInt"),
        ("other_strides", "ListInt"),
        ("out_strides", "ListInt"),
        ("self_offset", "Int"),
        ("other_offset", "Int"),
        ("out_offset", "Int"),
    ),
    "FmodScalar": (
        ("other", "Float"),
        ("self_strides", "ListInt"),
        ("out_strides", "ListInt"),
        ("self_offset", "Int"),
        ("out_offset", "Int"),
    ),
}


def _check_op(op: str) -> None:
    if op not in OPS:
        raise ValueError(f"unknown fmod op {op!r}; expected one of {', '.join(OPS)}")


def attr_index(op: str, name: str) -> int:
    _check_op(op)
    return [n for n, _ in HOST_ATTRS[op]].index(name)


def snake_name(op: str) -> str:
    """`FmodTensor` -> `fmod_tensor` (kernel and file names)."""
    _check_op(op)
    return "".join("_" + c.lower() if c.isupper() else c for c in op).lstrip("_")


def tiling_data_header(op: str) -> str:
    """`op_host/<op>_tiling.h`: the FmodTilingData definition (BEGIN_TILING_DATA_DEF ...)."""
    _check_op(op)
    return tiling_header(op, f"{snake_name(op).upper()}_TILING_H")


# Shared helpers: the C++ mirror of lowering/ascendc/tiling.py, in the same order and with the same names.
_COMMON = r"""
namespace fmod_host {

constexpr uint32_t kMaxDims = @MAX_DIMS@;
constexpr uint64_t kMinBytesPerCore = @MIN_BYTES@;
constexpr uint64_t kUbReservedBytes = @UB_RESERVED@;
constexpr uint64_t kAlignBytes = @ALIGN_BYTES@;
constexpr uint64_t kTileAlignElems = @TILE_ALIGN@;
constexpr uint64_t kMaxBlockCount = @MAX_BLOCK_COUNT@;
constexpr uint64_t kStridedRunUbBytes = @RUN_UB@;
constexpr uint64_t kU32Max = 0xFFFFFFFFull;

// A strided view of an operand's storage (elements).
struct View {
  uint32_t dimNum = 0;
  int64_t shape[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};
  int64_t offset = 0;
};

// Every FmodTilingData field plus the tiling key.
struct Result {
  uint64_t tilingKey = 0;
@RESULT_FIELDS@
};

inline uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
inline uint64_t AlignUp(uint64_t a, uint64_t b) { return CeilDiv(a, b) * b; }

// Element count; false if it does not fit int64 (a zero dim makes it 0 whatever the others are).
inline bool Numel(const View& v, uint64_t& n) {
  n = 1;
  for (uint32_t i = 0; i < v.dimNum; ++i) {
    if (v.shape[i] == 0) {
      n = 0;
      return true;
    }
  }
  int64_t acc = 1;
  for (uint32_t i = 0; i < v.dimNum; ++i) {
    if (__builtin_mul_overflow(acc, v.shape[i], &acc)) {
      return false;
    }
  }
  n = static_cast<uint64_t>(acc);
  return true;
}

// Dims from the storage shape; strides from a ListInt attribute (absent or empty: row-major, size-0/1 dims
// counting as 1); offset from an Int attribute (absent: 0). False on > 8 dims or negative entries.
inline bool ReadView(const gert::StorageShape* storage, const gert::RuntimeAttrs* attrs, size_t strideAttr,
                     size_t offsetAttr, View& v) {
  if (storage == nullptr) {
    return false;
  }
  const gert::Shape& shape = storage->GetStorageShape();
  if (shape.GetDimNum() > kMaxDims) {
    return false;
  }
  v.dimNum = static_cast<uint32_t>(shape.GetDimNum());
  for (uint32_t i = 0; i < v.dimNum; ++i) {
    v.shape[i] = shape.GetDim(i);
    if (v.shape[i] < 0) {
      return false;
    }
  }
  const gert::TypedContinuousVector<int64_t>* strides = attrs == nullptr ? nullptr : attrs->GetListInt(strideAttr);
  if (strides == nullptr || strides->GetSize() == 0) {
    int64_t acc = 1;
    for (int32_t i = static_cast<int32_t>(v.dimNum) - 1; i >= 0; --i) {
      v.stride[i] = acc;
      if (__builtin_mul_overflow(acc, v.shape[i] > 1 ? v.shape[i] : int64_t{1}, &acc) && i > 0) {
        return false;
      }
    }
  } else {
    if (strides->GetSize() != v.dimNum) {
      return false;
    }
    for (uint32_t i = 0; i < v.dimNum; ++i) {
      v.stride[i] = strides->GetData()[i];
      if (v.stride[i] < 0) {
        return false;
      }
    }
  }
  const int64_t* offset = attrs == nullptr ? nullptr : attrs->GetInt(offsetAttr);
  v.offset = offset == nullptr ? 0 : *offset;
  return v.offset >= 0;
}

// tiling.round_scalar: the scalar as self's dtype stores it, widened to float (integer bit operations only,
// so the source needs no <cmath>). False if int16 cannot hold it.
inline uint32_t FloatBits(float v) {
  uint32_t b = 0;
  __builtin_memcpy(&b, &v, sizeof(b));
  return b;
}

inline float BitsFloat(uint32_t b) {
  float v = 0.0f;
  __builtin_memcpy(&v, &b, sizeof(v));
  return v;
}

inline float RoundToHalf(float v) {
  const uint32_t bits = FloatBits(v);
  const uint32_t sign = bits & 0x80000000u;
  const uint32_t mag = bits ^ sign;
  if (mag >= 0x7F800000u) {
    return v;                                      // inf, NaN
  }
  if (mag >= 0x477FF000u) {
    return BitsFloat(sign | 0x7F800000u);          // >= 65520 rounds past 65504: inf
  }
  if (mag >= 0x38800000u) {                        // half normal range: keep 10 of 23 mantissa bits, ties to even
    return BitsFloat(sign | ((mag + 0xFFFu + ((mag >> 13) & 1u)) & ~0x1FFFu));
  }
  // Half subnormal range (|v| < 2^-14): multiples of 2^-24. |v| * 2^24 < 1024 is exact; adding and
  // subtracting 2^23 rounds it to an integer, ties to even.
  const float scaled = BitsFloat(mag) * 16777216.0f;
  const float rounded = (scaled + 8388608.0f) - 8388608.0f;
  return BitsFloat(sign | FloatBits(rounded * 5.9604644775390625e-08f));
}

inline float RoundToBf16(float v) {
  uint32_t bits = FloatBits(v);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return v;                                      // NaN stays NaN
  }
  bits += 0x7FFFu + ((bits >> 16) & 1u);           // keep the upper 16 bits, ties to even
  return BitsFloat(bits & 0xFFFF0000u);
}

inline bool RoundScalar(float v, ge::DataType dtype, float& out) {
  switch (dtype) {
    case ge::DT_FLOAT:
      out = v;
      return true;
    case ge::DT_FLOAT16:
      out = RoundToHalf(v);
      return true;
    case ge::DT_BF16:
      out = RoundToBf16(v);
      return true;
    case ge::DT_INT16:
      if (!(v > -32769.0f && v < 32768.0f)) {
        return false;                              // NaN, inf, or truncates outside int16
      }
      out = static_cast<float>(static_cast<int32_t>(v));  // truncation toward zero
      return true;
    default:
      return false;
  }
}

// stride[i] == stride[i+1] * shape[i+1] without overflow (an overflowing product never equals a stride).
inline bool MergeStride(int64_t outerStride, int64_t innerStride, int64_t innerShape) {
  int64_t p = 0;
  return !__builtin_mul_overflow(innerStride, innerShape, &p) && p == outerStride;
}

inline bool RowMajorOver(const int64_t* shape, const int64_t* stride, uint32_t k) {
  int64_t expect = 1;
  for (int32_t i = static_cast<int32_t>(k) - 1; i >= 0; --i) {
    if (stride[i] != expect) {
      return false;
    }
    expect *= shape[i];
  }
  return true;
}

inline bool BroadcastContiguous(const int64_t* shape, const int64_t* stride, uint32_t k) {
  int64_t expect = 1;
  for (int32_t i = static_cast<int32_t>(k) - 1; i >= 0; --i) {
    if (stride[i] == 0) {
      continue;
    }
    if (stride[i] != expect) {
      return false;
    }
    expect *= shape[i];
  }
  return true;
}

@BLOCKED@
// tiling.compute_tiling after the inputs are read: validate, coalesce, pick the key, split cores and UB.
inline bool ComputeTiling(const View& self, const View* other, const View& out, uint64_t typeSize, bool isF32,
                          uint64_t coreNum, uint64_t ubSize, Result& r) {
  if (coreNum == 0 || ubSize <= kUbReservedBytes) {
    return false;
  }
  if (out.dimNum != self.dimNum) {
    return false;
  }
  for (uint32_t i = 0; i < self.dimNum; ++i) {
    if (out.shape[i] != self.shape[i] || (out.shape[i] > 1 && out.stride[i] == 0)) {
      return false;  // out shape must equal self's; a stride-0 out dim would write one location twice
    }
  }
  uint64_t n = 0;
  uint64_t otherN = 0;
  if (!Numel(self, n) || (other != nullptr && !Numel(*other, otherN))) {
    return false;
  }
  // Broadcast other to self's dims: stride 0 where other has extent 1 (or is missing).
  int64_t otherB[kMaxDims] = {};
  if (other != nullptr) {
    if (other->dimNum > self.dimNum) {
      return false;
    }
    for (uint32_t k = 0; k < other->dimNum; ++k) {
      const uint32_t d = self.dimNum - other->dimNum + k;
      if (other->shape[k] == self.shape[d]) {
        otherB[d] = self.shape[d] != 1 ? other->stride[k] : 0;
      } else if (other->shape[k] != 1) {
        return false;
      }
    }
  }
  r.totalLength = n;
  if (n == 0) {
    r.tilingKey = other == nullptr ? 0 : 1;
    r.blockDim = 1;
    return true;
  }
  // Coalesce: drop size-1 dims; merge into the previous dim when contiguous in every operand.
  const int64_t* ops[3] = {self.stride, other != nullptr ? otherB : out.stride, out.stride};
  const uint32_t nops = other != nullptr ? 3 : 2;
  int64_t cs[kMaxDims] = {};
  int64_t cst[3][kMaxDims] = {};
  uint32_t k = 0;
  for (uint32_t d = 0; d < self.dimNum; ++d) {
    const int64_t ext = self.shape[d];
    if (ext == 1) {
      continue;
    }
    bool merge = k > 0;
    for (uint32_t o = 0; merge && o < nops; ++o) {
      merge = MergeStride(cst[o][k - 1], ops[o][d], ext);
    }
    if (merge) {
      cs[k - 1] *= ext;
      for (uint32_t o = 0; o < nops; ++o) {
        cst[o][k - 1] = ops[o][d];
      }
      continue;
    }
    cs[k] = ext;
    for (uint32_t o = 0; o < nops; ++o) {
      cst[o][k] = ops[o][d];
    }
    ++k;
  }
  const int64_t* cSelf = cst[0];
  const int64_t* cOther = other != nullptr ? cst[1] : nullptr;
  const int64_t* cOut = other != nullptr ? cst[2] : cst[1];
  // tilingKey.
  const bool flat = k == 0 || (k == 1 && cSelf[0] == 1 && cOut[0] == 1);
  bool otherSingle = cOther != nullptr && k > 0;  // a 1-element other broadcast everywhere: scalar-like
  for (uint32_t i = 0; otherSingle && i < k; ++i) {
    otherSingle = cOther[i] == 0;
  }
  if (cOther == nullptr || otherSingle) {
    r.tilingKey = flat ? 0 : 3;
  } else if (flat && (k == 0 || cOther[0] == 1)) {
    r.tilingKey = 1;
  } else if (RowMajorOver(cs, cSelf, k) && RowMajorOver(cs, cOut, k) && BroadcastContiguous(cs, cOther, k)) {
    r.tilingKey = 2;
  } else {
    r.tilingKey = other == nullptr ? 3 : 4;
  }
  if (r.tilingKey <= 1) {
    r.innerRun = n;
  } else if (r.tilingKey == 2) {
    r.innerRun = static_cast<uint64_t>(cs[k - 1]);
  } else {
    const int64_t oInner = cOther == nullptr ? 0 : cOther[k - 1];
    const bool innerOk = cSelf[k - 1] == 1 && cOut[k - 1] == 1 && (oInner == 0 || oInner == 1);
    r.innerRun = innerOk ? static_cast<uint64_t>(cs[k - 1]) : 1;
  }
  r.dimNum = k;
  for (uint32_t i = 0; i < k; ++i) {
    r.shape[i] = cs[i];
    r.selfStride[i] = cSelf[i];
    r.otherStride[i] = cOther == nullptr ? 0 : cOther[i];
    r.outStride[i] = cOut[i];
  }
  if (r.tilingKey >= 3) {  // keys 0-2: the GM address carries the view offset
    r.selfOffset = self.offset;
    r.otherOffset = other == nullptr ? 0 : other->offset;
    r.outOffset = out.offset;
  }
  if (r.tilingKey >= 3 && BlockedTiling(cs, cSelf, cOther, cOut, k, n, typeSize, isF32, coreNum, ubSize, r)) {
    return true;
  }
  // Cores: >= 4 KiB per core, 32-byte-aligned block starts, no idle core.
  const uint64_t align = kAlignBytes / typeSize;
  const uint64_t minElems = kMinBytesPerCore / typeSize;
  uint64_t cores = coreNum;
  // UB: x, y, out queues in T x bufferNum + fp32 temporaries; tiles aligned to 64 elements.
  // tiling.strided_runs: a strided run's chunk buffer and Gather table (rule 9).
  const int64_t runOther = r.tilingKey == 4 ? cOther[k - 1] : 0;  // keys 3/4 have k >= 1
  const bool runs = r.tilingKey >= 3 && (cSelf[k - 1] != 1 || (runOther != 0 && runOther != 1) || cOut[k - 1] != 1);
  const uint64_t reserved = kUbReservedBytes + (runs ? kStridedRunUbBytes : 0);
  if (ubSize <= reserved) {
    return false;
  }
  const uint64_t budget = ubSize - reserved;
  const uint64_t tempBytes = (isF32 ? @FT@ : @CT@) + (r.tilingKey == 2 ? typeSize : 0);  // key 2: the run cache
  const uint64_t tileDouble = budget / (2 * 3 * typeSize + tempBytes) / kTileAlignElems * kTileAlignElems;
  if (tileDouble == 0 || tileDouble > kU32Max) {
    return false;
  }
  uint64_t colBlock = 0;
  if (r.tilingKey == 2) {  // every core may read all of `other`: keep that under 5% of the traffic
    uint64_t otherN = 1;
    for (uint32_t i = 0; i < k; ++i) {
      otherN *= cOther[i] == 0 ? 1 : static_cast<uint64_t>(cs[i]);
    }
    const uint64_t cap = 1 + (2 * n + otherN) / (@OTHER_SHARE@ * otherN);  // a core reads up to two runs
    cores = cores < cap ? cores : cap;
    // A row broadcast (other one compact row) whose cap idles cores is split by columns instead.
    bool rowBroadcast = k >= 2 && cOther[k - 1] == 1;
    for (uint32_t i = 0; rowBroadcast && i + 1 < k; ++i) {
      rowBroadcast = cOther[i] == 0;
    }
    if (rowBroadcast) {
      const uint64_t cols = static_cast<uint64_t>(cs[k - 1]);
      const uint64_t rows = n / cols;
      const uint64_t byCores = AlignUp(CeilDiv(cols, coreNum), align);
      const uint64_t byBytes = AlignUp(CeilDiv(minElems, rows), align);
      const uint64_t block = byCores > byBytes ? byCores : byBytes;
      if (CeilDiv(cols, block) > cores && block <= tileDouble) {
        colBlock = block;
      }
    }
  }
  r.colBlock = static_cast<uint32_t>(colBlock);
  if (colBlock != 0) {  // core i: columns [i*colBlock, (i+1)*colBlock) of every row
    const uint64_t cols = static_cast<uint64_t>(cs[k - 1]);
    const uint64_t rows = n / cols;
    const uint64_t blockDim = CeilDiv(cols, colBlock);
    const uint64_t lastWidth = cols - (blockDim - 1) * colBlock;
    r.blockDim = static_cast<uint32_t>(blockDim);
    r.blockLength = rows * colBlock;
    r.lastBlockLength = rows * lastWidth;
    r.bufferNum = r.blockLength <= tileDouble ? 1 : 2;
    const uint64_t tileLength = r.bufferNum == 1 ? AlignUp(r.blockLength, kTileAlignElems) : tileDouble;
    uint64_t tileRows = tileLength / colBlock;
    tileRows = tileRows < kMaxBlockCount ? tileRows : kMaxBlockCount;
    const uint64_t tileNum = CeilDiv(rows, tileRows);
    const uint64_t lastRows = rows - (tileNum - 1) * tileRows;
    r.tileLength = static_cast<uint32_t>(tileLength);
    r.tileNum = static_cast<uint32_t>(tileNum);
    r.lastTileLength = static_cast<uint32_t>(lastRows * colBlock);
    r.lastCoreTileNum = static_cast<uint32_t>(tileNum);
    r.lastCoreLastTileLength = static_cast<uint32_t>(lastRows * lastWidth);
    return true;
  }
  uint64_t blockLength = AlignUp(CeilDiv(n, cores), align);
  blockLength = blockLength > minElems ? blockLength : minElems;
  const uint64_t blockDim = CeilDiv(n, blockLength);
  r.blockDim = static_cast<uint32_t>(blockDim);
  r.blockLength = blockLength;
  r.lastBlockLength = n - (blockDim - 1) * blockLength;
  uint64_t tileLength = tileDouble;
  r.bufferNum = 2;
  if (blockLength <= tileDouble) {
    r.bufferNum = 1;
    tileLength = AlignUp(blockLength, kTileAlignElems);
  }
  const uint64_t tileNum = CeilDiv(blockLength, tileLength);
  const uint64_t lastCoreTileNum = CeilDiv(r.lastBlockLength, tileLength);
  if (tileNum > kU32Max) {
    return false;
  }
  r.tileLength = static_cast<uint32_t>(tileLength);
  r.tileNum = static_cast<uint32_t>(tileNum);
  r.lastTileLength = static_cast<uint32_t>(blockLength - (tileNum - 1) * tileLength);
  r.lastCoreTileNum = static_cast<uint32_t>(lastCoreTileNum);
  r.lastCoreLastTileLength = static_cast<uint32_t>(r.lastBlockLength - (lastCoreTileNum - 1) * tileLength);
  return true;
}

inline bool TypeSize(ge::DataType dtype, uint64_t& size) {
  switch (dtype) {
@TYPE_SIZES@
    default:
      return false;
  }
}

// FmodTilingData via set_<field>(), serialised into the context; block dim, key, workspace 0.
inline ge::graphStatus WriteTiling(gert::TilingContext* context, Result& r) {
  FmodTilingData tiling;
@SETTERS@
  gert::TilingData* raw = context->GetRawTilingData();
  if (raw == nullptr || raw->GetCapacity() < tiling.GetDataSize()) {
    return ge::GRAPH_FAILED;
  }
  tiling.SaveToBuffer(raw->GetData(), raw->GetCapacity());
  raw->SetDataSize(tiling.GetDataSize());
  context->SetBlockDim(r.blockDim);
  context->SetTilingKey(r.tilingKey);
  size_t* workspaces = context->GetWorkspaceSizes(1);
  if (workspaces == nullptr) {
    return ge::GRAPH_FAILED;
  }
  workspaces[0] = 0;
  return ge::GRAPH_SUCCESS;
}

}  // namespace fmod_host
"""

_TILING_FUNC = r"""
// @OP@ TilingFunc. Attributes (set by the aclnn layer): @ATTRS@.
static ge::graphStatus TilingFunc(gert::TilingContext* context) {
  using namespace fmod_host;
  if (context == nullptr || context->GetPlatformInfo() == nullptr) {
    return ge::GRAPH_FAILED;
  }
  auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  const uint64_t coreNum = ascendcPlatform.GetCoreNumAiv();
  uint64_t ubSize = 0;
  ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);

  const gert::CompileTimeTensorDesc* selfDesc = context->GetInputDesc(0);
  const gert::CompileTimeTensorDesc* outDesc = context->GetOutputDesc(0);
  if (selfDesc == nullptr || outDesc == nullptr) {
    return ge::GRAPH_FAILED;
  }
  const ge::DataType dtype = selfDesc->GetDataType();
  uint64_t typeSize = 0;
  if (!TypeSize(dtype, typeSize) || outDesc->GetDataType() != dtype) {
    return ge::GRAPH_FAILED;
  }
  const gert::RuntimeAttrs* attrs = context->GetAttrs();
  View self;
  View out;
  if (!ReadView(context->GetInputShape(0), attrs, @SELF_STRIDES@, @SELF_OFFSET@, self) ||
      !ReadView(context->GetOutputShape(0), attrs, @OUT_STRIDES@, @OUT_OFFSET@, out)) {
    return ge::GRAPH_FAILED;
  }
  Result r;
@OTHER@
  return WriteTiling(context, r);
}
"""

_OTHER_TENSOR = """\
  const gert::CompileTimeTensorDesc* otherDesc = context->GetInputDesc(1);
  View other;
  if (otherDesc == nullptr || otherDesc->GetDataType() != dtype ||
      !ReadView(context->GetInputShape(1), attrs, @OTHER_STRIDES@, @OTHER_OFFSET@, other) ||
      !ComputeTiling(self, &other, out, typeSize, dtype == ge::DT_FLOAT, coreNum, ubSize, r)) {
    return ge::GRAPH_FAILED;
  }
  r.scalarOther = 0.0f;"""

_OTHER_SCALAR = """\
  const float* scalar = attrs == nullptr ? nullptr : attrs->GetFloat(@OTHER@);
  if (scalar == nullptr || !RoundScalar(*scalar, dtype, r.scalarOther) ||
      !ComputeTiling(self, nullptr, out, typeSize, dtype == ge::DT_FLOAT, coreNum, ubSize, r)) {
    return ge::GRAPH_FAILED;
  }"""


def _type_size_cases() -> str:
    """The cases of `TypeSize`: the kernel dtypes grouped by size, in the table's order."""
    lines: list[str] = []
    kernel_types = dtypes.FMOD_KERNEL_TYPES
    for i, t in enumerate(kernel_types):
        lines.append(f"    case ge::{t.ge}:")
        if i + 1 == len(kernel_types) or kernel_types[i + 1].size != t.size:
            lines += [f"      size = {t.size};", "      return true;"]
    return "\n".join(lines)


def host_tiling_source(op: str) -> str:
    """C++ of `namespace fmod_host { helpers }` + `static ge::graphStatus TilingFunc(gert::TilingContext*)`.

    To be placed inside `namespace optiling { ... }` after `host_includes(op)`. Computes exactly
    `lowering.tiling.compute_tiling`.
    """
    _check_op(op)
    common = (
        _COMMON.replace("@BLOCKED@", BLOCKED_TILING)
        .replace("@MAX_DIMS@", str(MAX_DIMS))
        .replace("@MIN_BYTES@", str(MIN_BYTES_PER_CORE))
        .replace("@UB_RESERVED@", str(UB_RESERVED_BYTES))
        .replace("@TILE_ALIGN@", str(TILE_ALIGN_ELEMS))
        .replace("@ALIGN_BYTES@", str(ALIGN_BYTES))
        .replace("@OTHER_SHARE@", str(OTHER_TRAFFIC_SHARE))
        .replace("@MAX_BLOCK_COUNT@", str(MAX_BLOCK_COUNT))
        .replace("@RUN_UB@", str(STRIDED_RUN_UB_BYTES))
        .replace("@FT@", str(F32_TEMP_BYTES))
        .replace("@CT@", str(CAST_TEMP_BYTES))
        .replace("@RESULT_FIELDS@", cpp_members({"blockDim": "1"}, "kMaxDims"))
        .replace("@TYPE_SIZES@", _type_size_cases())
        .replace("@SETTERS@", cpp_setters("tiling", "r"))
    )
    idx = {name: str(i) for i, (name, _) in enumerate(HOST_ATTRS[op])}
    other = _OTHER_TENSOR if op == "FmodTensor" else _OTHER_SCALAR
    attrs_doc = ", ".join(f"{i} {name} ({kind})" for i, (name, kind) in enumerate(HOST_ATTRS[op]))
    func = (
        _TILING_FUNC.replace("@OTHER@\n", other + "\n")
        .replace("@OP@", op)
        .replace("@ATTRS@", attrs_doc)
        .replace("@SELF_STRIDES@", idx["self_strides"])
        .replace("@SELF_OFFSET@", idx["self_offset"])
        .replace("@OUT_STRIDES@", idx["out_strides"])
        .replace("@OUT_OFFSET@", idx["out_offset"])
    )
    if op == "FmodTensor":
        func = func.replace("@OTHER_STRIDES@", idx["other_strides"]).replace("@OTHER_OFFSET@", idx["other_offset"])
    else:
        func = func.replace("@OTHER@", idx["other"])
    return f"// ---- {op} host tiling (generated by sbpc; mirrors lowering/ascendc/tiling.py) ----" + common + func


def host_includes(op: str) -> str:
    """The #include lines `host_tiling_source` + `host_opdef_source` need, for `op_host/<op>.cpp`."""
    return "\n".join(
        [
            "#include <cstdint>",
            f'#include "{snake_name(op)}_tiling.h"',
            '#include "register/op_def_registry.h"',
            '#include "tiling/platform/platform_ascendc.h"',
            "",
        ]
    )


OPDEF_TYPES: tuple[dtypes.ElementType, ...] = tuple(sorted(dtypes.FMOD_KERNEL_TYPES, key=lambda t: t.name))
"""The dtypes of every input and output, in the order the OpDef (and the op prototype JSON) lists them:
the lists pair 1:1 across arguments, one kernel instance per column."""
OPDEF_FORMAT = "ND"


class AttrKind(NamedTuple):
    """How an attribute kind of `HOST_ATTRS` is declared: in the OpDef and in msOpGen's prototype JSON."""

    required: bool
    opdef: str
    """`OpAttrDef` call after `.AttrType(...)` (`Float()`, `ListInt({})`, `Int(0)`)."""
    msopgen: str
    """The JSON's attr `type` (`float`, `list_int`, `int`)."""
    default: Any
    """The JSON's `default_value` of an optional attribute (None: required, no default)."""


ATTR_KINDS: dict[str, AttrKind] = {
    "Float": AttrKind(True, "Float()", "float", None),
    "ListInt": AttrKind(False, "ListInt({})", "list_int", []),
    "Int": AttrKind(False, "Int(0)", "int", 0),
}


def op_inputs(op: str) -> tuple[str, ...]:
    """The op's tensor inputs in kernel-argument order (its one output is `out`)."""
    _check_op(op)
    return ("self", "other") if op == "FmodTensor" else ("self",)


_DTYPES = "{" + ", ".join(f"ge::{t.ge}" for t in OPDEF_TYPES) + "}"
_FORMATS = "{" + ", ".join(f"ge::FORMAT_{OPDEF_FORMAT}" for _ in OPDEF_TYPES) + "}"


def host_opdef_source(op: str, socs: tuple[str, ...] = OPDEF_SOCS) -> str:
    """InferShape (out = self's shape), InferDataType (out = self's dtype) and the OpDef registering TilingFunc."""
    _check_op(op)
    body = []
    for name in op_inputs(op):
        body.append(
            f'    this->Input("{name}").ParamType(REQUIRED).DataType({_DTYPES}).Format({_FORMATS})'
            f".UnknownShapeFormat({_FORMATS}).IgnoreContiguous();"
        )
    body.append(
        f'    this->Output("out").ParamType(REQUIRED).DataType({_DTYPES}).Format({_FORMATS})'
        f".UnknownShapeFormat({_FORMATS});"
    )
    for name, kind in HOST_ATTRS[op]:
        spec = ATTR_KINDS[kind]
        body.append(f'    this->Attr("{name}").AttrType({"REQUIRED" if spec.required else "OPTIONAL"}).{spec.opdef};')
    body.append("    this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);")
    body.append("    this->AICore().SetTiling(optiling::TilingFunc);")
    body += [f'    this->AICore().AddConfig("{s}");' for s in socs]
    return (
        "\nnamespace ge {\n"
        "static graphStatus InferShape(gert::InferShapeContext* context) {\n"
        "  const gert::Shape* selfShape = context->GetInputShape(0);\n"
        "  gert::Shape* outShape = context->GetOutputShape(0);\n"
        "  if (selfShape == nullptr || outShape == nullptr) {\n"
        "    return GRAPH_FAILED;\n"
        "  }\n"
        "  *outShape = *selfShape;\n"
        "  return GRAPH_SUCCESS;\n"
        "}\n\n"
        "static graphStatus InferDataType(gert::InferDataTypeContext* context) {\n"
        "  return context->SetOutputDataType(0, context->GetInputDataType(0));\n"
        "}\n"
        "}  // namespace ge\n\n"
        "namespace ops {\n"
        f"class {op} : public OpDef {{\n"
        " public:\n"
        f"  explicit {op}(const char* name) : OpDef(name) {{\n" + "\n".join(body) + "\n  }\n};\n\n"
        f"OP_ADD({op});\n"
        "}  // namespace ops\n"
    )
