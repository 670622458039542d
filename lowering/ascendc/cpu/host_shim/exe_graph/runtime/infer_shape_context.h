// Host-side CANN shim (sbpc): gert::InferShapeContext and gert::InferDataTypeContext (real headers:
// exe_graph/runtime/infer_shape_context.h, infer_datatype_context.h), settable by a test driver.
#ifndef SBPC_HOST_SHIM_INFER_SHAPE_CONTEXT_H_
#define SBPC_HOST_SHIM_INFER_SHAPE_CONTEXT_H_

#include <vector>

#include "exe_graph/runtime/tiling_context.h"

namespace gert {
class InferShapeContext {
 public:
  InferShapeContext(size_t inputNum, size_t outputNum) : inputs_(inputNum), outputs_(outputNum) {}
  const Shape* GetInputShape(size_t index) const { return index < inputs_.size() ? &inputs_[index] : nullptr; }
  Shape* GetOutputShape(size_t index) { return index < outputs_.size() ? &outputs_[index] : nullptr; }
  const RuntimeAttrs* GetAttrs() const { return &attrs_; }
  // Shim-only.
  Shape& ShimInput(size_t index) { return inputs_.at(index); }
  const Shape& ShimOutput(size_t index) const { return outputs_.at(index); }
  RuntimeAttrs& ShimMutableAttrs() { return attrs_; }

 private:
  std::vector<Shape> inputs_;
  std::vector<Shape> outputs_;
  RuntimeAttrs attrs_;
};

class InferDataTypeContext {
 public:
  InferDataTypeContext(size_t inputNum, size_t outputNum)
      : inputs_(inputNum, ge::DT_UNDEFINED), outputs_(outputNum, ge::DT_UNDEFINED) {}
  ge::DataType GetInputDataType(size_t index) const {
    return index < inputs_.size() ? inputs_[index] : ge::DT_UNDEFINED;
  }
  ge::DataType GetOutputDataType(size_t index) const {
    return index < outputs_.size() ? outputs_[index] : ge::DT_UNDEFINED;
  }
  ge::graphStatus SetOutputDataType(size_t index, ge::DataType dt) {
    if (index >= outputs_.size()) {
      return ge::GRAPH_FAILED;
    }
    outputs_[index] = dt;
    return ge::GRAPH_SUCCESS;
  }
  // Shim-only.
  void ShimSetInputDataType(size_t index, ge::DataType dt) { inputs_.at(index) = dt; }

 private:
  std::vector<ge::DataType> inputs_;
  std::vector<ge::DataType> outputs_;
};
}  // namespace gert

#endif  // SBPC_HOST_SHIM_INFER_SHAPE_CONTEXT_H_
