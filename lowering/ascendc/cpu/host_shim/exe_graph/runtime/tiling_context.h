// Host-side CANN shim (sbpc): gert::TilingContext and the runtime types it hands out (Shape, StorageShape,
// TypedContinuousVector, RuntimeAttrs, CompileTimeTensorDesc, TilingData), following the public
// exe_graph/runtime/*.h getters. The real context is filled by the framework; this one is filled by the
// Shim*() setters of a test driver and read back with the real getters (GetTilingKey, GetBlockDim,
// GetRawTilingData()->GetData()/GetDataSize(), GetWorkspaceNum) plus ShimWorkspaceSizes().
// Like the real context it holds shapes, dtypes, attributes and the platform, and no strides.
#ifndef SBPC_HOST_SHIM_TILING_CONTEXT_H_
#define SBPC_HOST_SHIM_TILING_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/types.h"
#include "platform/platform_infos_def.h"

namespace gert {

class Shape {
 public:
  static constexpr size_t kMaxDimNum = 25;
  static constexpr int64_t kInvalidDimValue = std::numeric_limits<int64_t>::min();

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) {
    for (int64_t d : dims) {
      AppendDim(d);
    }
  }
  size_t GetDimNum() const { return dimNum_; }
  void SetDimNum(size_t n) {
    if (n > kMaxDimNum) {
      std::fprintf(stderr, "host shim: Shape supports at most %zu dims\n", kMaxDimNum);
      std::abort();
    }
    dimNum_ = n;
  }
  int64_t GetDim(size_t idx) const { return idx < dimNum_ ? dims_[idx] : kInvalidDimValue; }
  void SetDim(size_t idx, int64_t v) {
    if (idx < dimNum_) {
      dims_[idx] = v;
    }
  }
  Shape& AppendDim(int64_t v) {
    SetDimNum(dimNum_ + 1);
    dims_[dimNum_ - 1] = v;
    return *this;
  }
  bool IsScalar() const { return dimNum_ == 0; }
  // Product of the dims (1 for a scalar); -1 on a negative dim or int64 overflow.
  int64_t GetShapeSize() const {
    int64_t n = 1;
    for (size_t i = 0; i < dimNum_; ++i) {
      if (dims_[i] < 0 || __builtin_mul_overflow(n, dims_[i], &n)) {
        return -1;
      }
    }
    return n;
  }
  bool operator==(const Shape& o) const {
    if (dimNum_ != o.dimNum_) {
      return false;
    }
    for (size_t i = 0; i < dimNum_; ++i) {
      if (dims_[i] != o.dims_[i]) {
        return false;
      }
    }
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  size_t dimNum_ = 0;
  int64_t dims_[kMaxDimNum] = {};
};

class StorageShape {
 public:
  StorageShape() = default;
  StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
      : origin_(origin), storage_(storage) {}
  const Shape& GetOriginShape() const { return origin_; }
  const Shape& GetStorageShape() const { return storage_; }
  Shape& MutableOriginShape() { return origin_; }
  Shape& MutableStorageShape() { return storage_; }

 private:
  Shape origin_;
  Shape storage_;
};

template <typename T>
class TypedContinuousVector {
 public:
  size_t GetSize() const { return data_.size(); }
  size_t GetCapacity() const { return data_.capacity(); }
  const T* GetData() const { return data_.data(); }
  T* MutableData() { return data_.data(); }
  ge::Status SetSize(size_t size) {
    data_.resize(size);
    return ge::SUCCESS;
  }
  void ShimAssign(const std::vector<T>& v) { data_ = v; }

 private:
  std::vector<T> data_;
};

// Attributes by index (the OpDef's Attr() order). A getter returns nullptr for an attribute that was not set
// or was set with another kind (the real RuntimeAttrs would reinterpret the bytes).
class RuntimeAttrs {
 public:
  template <typename T>
  const T* GetAttrPointer(size_t index) const {
    const Attr* a = Find(index, KindOf<T>());
    return a == nullptr ? nullptr : reinterpret_cast<const T*>(Ptr(*a));
  }
  const int64_t* GetInt(size_t index) const { return GetAttrPointer<int64_t>(index); }
  const float* GetFloat(size_t index) const { return GetAttrPointer<float>(index); }
  const bool* GetBool(size_t index) const { return GetAttrPointer<bool>(index); }
  const char* GetStr(size_t index) const { return GetAttrPointer<char>(index); }
  const TypedContinuousVector<int64_t>* GetListInt(size_t index) const {
    return GetAttrPointer<TypedContinuousVector<int64_t>>(index);
  }
  const TypedContinuousVector<float>* GetListFloat(size_t index) const {
    return GetAttrPointer<TypedContinuousVector<float>>(index);
  }
  size_t GetAttrNum() const { return attrs_.size(); }

  // Shim-only setters.
  void ShimSetInt(size_t index, int64_t v) { At(index, kInt).i = v; }
  void ShimSetFloat(size_t index, float v) { At(index, kFloat).f = v; }
  void ShimSetBool(size_t index, bool v) { At(index, kBool).b = v; }
  void ShimSetStr(size_t index, const std::string& v) { At(index, kStr).s = v; }
  void ShimSetListInt(size_t index, const std::vector<int64_t>& v) { At(index, kListInt).li.ShimAssign(v); }
  void ShimSetListFloat(size_t index, const std::vector<float>& v) { At(index, kListFloat).lf.ShimAssign(v); }
  void ShimClear() { attrs_.clear(); }

 private:
  enum Kind { kUnset, kInt, kFloat, kBool, kStr, kListInt, kListFloat };
  struct Attr {
    Kind kind = kUnset;
    int64_t i = 0;
    float f = 0.0f;
    bool b = false;
    std::string s;
    TypedContinuousVector<int64_t> li;
    TypedContinuousVector<float> lf;
  };
  template <typename T>
  static constexpr Kind KindOf() {
    static_assert(std::is_same<T, int64_t>::value || std::is_same<T, float>::value || std::is_same<T, bool>::value ||
                      std::is_same<T, char>::value || std::is_same<T, TypedContinuousVector<int64_t>>::value ||
                      std::is_same<T, TypedContinuousVector<float>>::value,
                  "host shim: unsupported attribute type");
    return std::is_same<T, int64_t>::value                          ? kInt
           : std::is_same<T, float>::value                          ? kFloat
           : std::is_same<T, bool>::value                           ? kBool
           : std::is_same<T, char>::value                           ? kStr
           : std::is_same<T, TypedContinuousVector<int64_t>>::value ? kListInt
                                                                    : kListFloat;
  }
  const Attr* Find(size_t index, Kind kind) const {
    return index < attrs_.size() && attrs_[index].kind == kind ? &attrs_[index] : nullptr;
  }
  static const void* Ptr(const Attr& a) {
    switch (a.kind) {
      case kInt: return &a.i;
      case kFloat: return &a.f;
      case kBool: return &a.b;
      case kStr: return a.s.c_str();
      case kListInt: return &a.li;
      case kListFloat: return &a.lf;
      default: return nullptr;
    }
  }
  Attr& At(size_t index, Kind kind) {
    if (attrs_.size() <= index) {
      attrs_.resize(index + 1);
    }
    attrs_[index] = Attr();
    attrs_[index].kind = kind;
    return attrs_[index];
  }
  std::vector<Attr> attrs_;
};

class CompileTimeTensorDesc {
 public:
  ge::DataType GetDataType() const { return dataType_; }
  void SetDataType(ge::DataType dt) { dataType_ = dt; }
  ge::Format GetOriginFormat() const { return format_; }
  ge::Format GetStorageFormat() const { return format_; }
  void SetFormat(ge::Format f) { format_ = f; }

 private:
  ge::DataType dataType_ = ge::DT_UNDEFINED;
  ge::Format format_ = ge::FORMAT_ND;
};

// The raw tiling buffer: capacity fixed by the framework, data size set by the TilingFunc.
class TilingData {
 public:
  explicit TilingData(size_t capacity = 0) : buf_(capacity, 0) {}
  size_t GetCapacity() const { return buf_.size(); }
  size_t GetDataSize() const { return dataSize_; }
  void SetDataSize(size_t size) {
    if (size > buf_.size()) {
      std::fprintf(stderr, "host shim: tiling data size %zu exceeds the capacity %zu\n", size, buf_.size());
      std::abort();
    }
    dataSize_ = size;
  }
  void* GetData() { return buf_.data(); }
  const void* GetData() const { return buf_.data(); }

 private:
  std::vector<uint8_t> buf_;
  size_t dataSize_ = 0;
};

class TilingContext {
 public:
  static constexpr size_t kDefaultTilingCapacity = 64 * 1024;

  TilingContext(const char* nodeType, size_t inputNum, size_t outputNum)
      : nodeType_(nodeType), inputShapes_(inputNum), outputShapes_(outputNum), inputDescs_(inputNum),
        outputDescs_(outputNum), tilingData_(kDefaultTilingCapacity) {}

  // ---- the real getters -------------------------------------------------------------------------------
  const StorageShape* GetInputShape(size_t index) const {
    return index < inputShapes_.size() ? &inputShapes_[index] : nullptr;
  }
  const StorageShape* GetOutputShape(size_t index) const {
    return index < outputShapes_.size() ? &outputShapes_[index] : nullptr;
  }
  const CompileTimeTensorDesc* GetInputDesc(size_t index) const {
    return index < inputDescs_.size() ? &inputDescs_[index] : nullptr;
  }
  const CompileTimeTensorDesc* GetOutputDesc(size_t index) const {
    return index < outputDescs_.size() ? &outputDescs_[index] : nullptr;
  }
  size_t GetComputeNodeInputNum() const { return inputShapes_.size(); }
  size_t GetComputeNodeOutputNum() const { return outputShapes_.size(); }
  const RuntimeAttrs* GetAttrs() const { return &attrs_; }
  const ge::char_t* GetNodeType() const { return nodeType_.c_str(); }
  const ge::char_t* GetNodeName() const { return nodeType_.c_str(); }
  fe::PlatFormInfos* GetPlatformInfo() const { return platform_; }

  ge::graphStatus SetTilingKey(uint64_t key) {
    tilingKey_ = key;
    return ge::GRAPH_SUCCESS;
  }
  uint64_t GetTilingKey() const { return tilingKey_; }
  ge::graphStatus SetBlockDim(uint32_t blockDim) { return SetSimdNumBlocks(blockDim); }
  ge::graphStatus SetSimdNumBlocks(uint32_t n) {
    if (n == 0 || n > 65535) {
      std::fprintf(stderr, "host shim: block dim %u outside 1..65535\n", n);
      std::abort();
    }
    blockDim_ = n;
    return ge::GRAPH_SUCCESS;
  }
  uint32_t GetBlockDim() const { return blockDim_; }
  uint32_t GetSimdNumBlocks() const { return blockDim_; }
  ge::graphStatus SetNeedAtomic(bool atomic) {
    needAtomic_ = atomic;
    return ge::GRAPH_SUCCESS;
  }
  bool NeedAtomic() const { return needAtomic_; }
  ge::graphStatus SetScheduleMode(uint32_t mode) {
    scheduleMode_ = mode;
    return ge::GRAPH_SUCCESS;
  }
  uint32_t GetScheduleMode() const { return scheduleMode_; }
  TilingData* GetRawTilingData() { return &tilingData_; }
  template <typename T>
  T* GetTilingData() {
    if (tilingData_.GetCapacity() < sizeof(T)) {
      return nullptr;
    }
    tilingData_.SetDataSize(sizeof(T));
    return static_cast<T*>(tilingData_.GetData());
  }
  size_t* GetWorkspaceSizes(size_t count) {
    workspaces_.assign(count, 0);
    return workspaces_.data();
  }
  size_t GetWorkspaceNum() const { return workspaces_.size(); }

  // ---- shim-only setters and readback -------------------------------------------------------------------
  void ShimSetInput(size_t index, const std::vector<int64_t>& dims, ge::DataType dt,
                    ge::Format format = ge::FORMAT_ND) {
    SetShape(inputShapes_.at(index), dims);
    inputDescs_.at(index).SetDataType(dt);
    inputDescs_.at(index).SetFormat(format);
  }
  void ShimSetOutput(size_t index, const std::vector<int64_t>& dims, ge::DataType dt,
                     ge::Format format = ge::FORMAT_ND) {
    SetShape(outputShapes_.at(index), dims);
    outputDescs_.at(index).SetDataType(dt);
    outputDescs_.at(index).SetFormat(format);
  }
  RuntimeAttrs& ShimMutableAttrs() { return attrs_; }
  void ShimSetPlatformInfo(fe::PlatFormInfos* platform) { platform_ = platform; }
  void ShimSetTilingCapacity(size_t capacity) { tilingData_ = TilingData(capacity); }
  const std::vector<size_t>& ShimWorkspaceSizes() const { return workspaces_; }

 private:
  static void SetShape(StorageShape& s, const std::vector<int64_t>& dims) {
    s.MutableOriginShape().SetDimNum(0);
    s.MutableStorageShape().SetDimNum(0);
    for (int64_t d : dims) {
      s.MutableOriginShape().AppendDim(d);
      s.MutableStorageShape().AppendDim(d);
    }
  }

  std::string nodeType_;
  std::vector<StorageShape> inputShapes_;
  std::vector<StorageShape> outputShapes_;
  std::vector<CompileTimeTensorDesc> inputDescs_;
  std::vector<CompileTimeTensorDesc> outputDescs_;
  RuntimeAttrs attrs_;
  fe::PlatFormInfos* platform_ = nullptr;
  TilingData tilingData_;
  std::vector<size_t> workspaces_;
  uint64_t tilingKey_ = 0;
  uint32_t blockDim_ = 0;
  uint32_t scheduleMode_ = 0;
  bool needAtomic_ = false;
};

}  // namespace gert

#endif  // SBPC_HOST_SHIM_TILING_CONTEXT_H_
