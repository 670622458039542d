// Host-side CANN shim (sbpc): the op prototype API (ops::OpDef, OpParamDef, OpAttrDef, OpAICoreDef, OP_ADD) and,
// through it, gert::TilingContext / InferShapeContext / InferDataTypeContext, ge::DataType, ge::graphStatus.
// Signatures follow reference/ascendc.md §2.3 and the public register/op_def.h; OP_ADD records the OpDef in a
// process-wide registry a test driver reads back (ops::ShimFindOpDef("FmodTensor")->AICore().GetTiling()).
#ifndef SBPC_HOST_SHIM_OP_DEF_REGISTRY_H_
#define SBPC_HOST_SHIM_OP_DEF_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"
#include "graph/types.h"

namespace ops {
enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };

using TilingKernelFunc = ge::graphStatus (*)(gert::TilingContext*);
using InferShapeKernelFunc = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeKernelFunc = ge::graphStatus (*)(gert::InferDataTypeContext*);

class OpParamDef {
 public:
  explicit OpParamDef(const char* name) : name_(name) {}
  OpParamDef& ParamType(Option type) {
    paramType_ = type;
    return *this;
  }
  OpParamDef& DataType(std::vector<ge::DataType> types) {
    dataTypes_ = std::move(types);
    return *this;
  }
  OpParamDef& Format(std::vector<ge::Format> formats) {
    formats_ = std::move(formats);
    return *this;
  }
  OpParamDef& UnknownShapeFormat(std::vector<ge::Format> formats) {
    unknownShapeFormats_ = std::move(formats);
    return *this;
  }
  OpParamDef& ValueDepend(Option value) {
    valueDepend_ = value;
    return *this;
  }
  OpParamDef& IgnoreContiguous() {
    ignoreContiguous_ = true;
    return *this;
  }
  OpParamDef& AutoContiguous() {
    autoContiguous_ = true;
    return *this;
  }
  OpParamDef& Scalar() {
    scalar_ = true;
    return *this;
  }
  OpParamDef& ScalarList() {
    scalarList_ = true;
    return *this;
  }
  OpParamDef& To(ge::DataType type) {
    toType_ = type;
    return *this;
  }
  OpParamDef& To(const char* name) {
    toName_ = name;
    return *this;
  }
  OpParamDef& Follow(const char* name) {
    follow_ = name;
    return *this;
  }
  // Shim-only readback.
  const std::string& GetName() const { return name_; }
  Option GetParamType() const { return paramType_; }
  const std::vector<ge::DataType>& GetDataTypes() const { return dataTypes_; }
  const std::vector<ge::Format>& GetFormats() const { return formats_; }
  bool IsIgnoreContiguous() const { return ignoreContiguous_; }
  bool IsScalar() const { return scalar_; }

 private:
  std::string name_;
  Option paramType_ = REQUIRED;
  std::vector<ge::DataType> dataTypes_;
  std::vector<ge::Format> formats_;
  std::vector<ge::Format> unknownShapeFormats_;
  Option valueDepend_ = IGNORE;
  bool ignoreContiguous_ = false;
  bool autoContiguous_ = false;
  bool scalar_ = false;
  bool scalarList_ = false;
  ge::DataType toType_ = ge::DT_UNDEFINED;
  std::string toName_;
  std::string follow_;
};

class OpAttrDef {
 public:
  enum Kind { kUnset, kBool, kFloat, kInt, kString, kListBool, kListFloat, kListInt };
  explicit OpAttrDef(const char* name) : name_(name) {}
  OpAttrDef& AttrType(Option type) {
    attrType_ = type;
    return *this;
  }
  OpAttrDef& Bool() { return Set(kBool); }
  OpAttrDef& Bool(bool v) {
    boolValue_ = v;
    return Set(kBool);
  }
  OpAttrDef& Float() { return Set(kFloat); }
  OpAttrDef& Float(float v) {
    floatValue_ = v;
    return Set(kFloat);
  }
  OpAttrDef& Int() { return Set(kInt); }
  OpAttrDef& Int(int64_t v) {
    intValue_ = v;
    return Set(kInt);
  }
  OpAttrDef& String() { return Set(kString); }
  OpAttrDef& String(const char* v) {
    stringValue_ = v;
    return Set(kString);
  }
  OpAttrDef& ListBool() { return Set(kListBool); }
  OpAttrDef& ListFloat() { return Set(kListFloat); }
  OpAttrDef& ListFloat(std::vector<float> v) {
    listFloatValue_ = std::move(v);
    return Set(kListFloat);
  }
  OpAttrDef& ListInt() { return Set(kListInt); }
  OpAttrDef& ListInt(std::vector<int64_t> v) {
    listIntValue_ = std::move(v);
    return Set(kListInt);
  }
  // Shim-only readback.
  const std::string& GetName() const { return name_; }
  Option GetAttrType() const { return attrType_; }
  Kind GetKind() const { return kind_; }

 private:
  OpAttrDef& Set(Kind k) {
    kind_ = k;
    return *this;
  }
  std::string name_;
  Option attrType_ = OPTIONAL;
  Kind kind_ = kUnset;
  bool boolValue_ = false;
  float floatValue_ = 0.0f;
  int64_t intValue_ = 0;
  std::string stringValue_;
  std::vector<float> listFloatValue_;
  std::vector<int64_t> listIntValue_;
};

class OpAICoreDef {
 public:
  OpAICoreDef& SetTiling(TilingKernelFunc func) {
    tiling_ = func;
    return *this;
  }
  OpAICoreDef& AddConfig(const char* soc) {
    configs_.emplace_back(soc);
    return *this;
  }
  // Shim-only readback.
  TilingKernelFunc GetTiling() const { return tiling_; }
  const std::vector<std::string>& GetConfigs() const { return configs_; }

 private:
  TilingKernelFunc tiling_ = nullptr;
  std::vector<std::string> configs_;
};

class OpDef {
 public:
  explicit OpDef(const char* type) : opType_(type) {}
  virtual ~OpDef() = default;
  OpDef(const OpDef&) = delete;
  OpDef& operator=(const OpDef&) = delete;

  OpParamDef& Input(const char* name) { return FindOrAdd(inputs_, name); }
  OpParamDef& Output(const char* name) { return FindOrAdd(outputs_, name); }
  OpAttrDef& Attr(const char* name) { return FindOrAdd(attrs_, name); }
  OpDef& SetInferShape(InferShapeKernelFunc func) {
    inferShape_ = func;
    return *this;
  }
  OpDef& SetInferDataType(InferDataTypeKernelFunc func) {
    inferDataType_ = func;
    return *this;
  }
  OpAICoreDef& AICore() { return aicore_; }

  // Shim-only readback.
  const std::string& GetOpType() const { return opType_; }
  const std::vector<std::unique_ptr<OpParamDef>>& GetInputs() const { return inputs_; }
  const std::vector<std::unique_ptr<OpParamDef>>& GetOutputs() const { return outputs_; }
  const std::vector<std::unique_ptr<OpAttrDef>>& GetAttrs() const { return attrs_; }
  InferShapeKernelFunc GetInferShape() const { return inferShape_; }
  InferDataTypeKernelFunc GetInferDataType() const { return inferDataType_; }

 private:
  template <typename T>
  static T& FindOrAdd(std::vector<std::unique_ptr<T>>& items, const char* name) {
    for (auto& item : items) {
      if (item->GetName() == name) {
        return *item;
      }
    }
    items.emplace_back(new T(name));
    return *items.back();
  }
  std::string opType_;
  std::vector<std::unique_ptr<OpParamDef>> inputs_;
  std::vector<std::unique_ptr<OpParamDef>> outputs_;
  std::vector<std::unique_ptr<OpAttrDef>> attrs_;
  InferShapeKernelFunc inferShape_ = nullptr;
  InferDataTypeKernelFunc inferDataType_ = nullptr;
  OpAICoreDef aicore_;
};

// Shim-only registry filled by OP_ADD.
inline std::map<std::string, OpDef*>& ShimOpDefRegistry() {
  static std::map<std::string, OpDef*> registry;
  return registry;
}
inline int ShimRegisterOpDef(OpDef* def) {
  ShimOpDefRegistry()[def->GetOpType()] = def;
  return 0;
}
inline OpDef* ShimFindOpDef(const std::string& type) {
  auto it = ShimOpDefRegistry().find(type);
  return it == ShimOpDefRegistry().end() ? nullptr : it->second;
}
}  // namespace ops

#define OP_ADD(opType, ...)                                       \
  static opType g_sbpcOpDef_##opType(#opType);                    \
  [[maybe_unused]] static const int g_sbpcOpDefRegistered_##opType = \
      ::ops::ShimRegisterOpDef(&g_sbpcOpDef_##opType)

#endif  // SBPC_HOST_SHIM_OP_DEF_REGISTRY_H_
