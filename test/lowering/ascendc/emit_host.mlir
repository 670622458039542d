// RUN: rm -rf %t
// RUN: sbp-translate %s --emit-ascendc -o %t
// RUN: filecheck %s --check-prefix=HDR --input-file=%t/fmod_tensor/op_host/fmod_tensor_tiling.h
// RUN: filecheck %s --check-prefix=SHDR --input-file=%t/fmod_scalar/op_host/fmod_scalar_tiling.h
// RUN: filecheck %s --check-prefix=HOST --input-file=%t/fmod_tensor/op_host/fmod_tensor.cpp
// RUN: filecheck %s --check-prefix=SHOST --input-file=%t/fmod_scalar/op_host/fmod_scalar.cpp
// RUN: filecheck %s --check-prefix=ACLNN --input-file=%t/fmod_tensor/op_host/aclnn_fmod_tensor.h
// RUN: filecheck %s --check-prefix=SACLNN --input-file=%t/fmod_scalar/op_host/aclnn_fmod_scalar.h

// The host side of both CANN projects: tiling data header, TilingFunc + InferShape + OpDef, aclnn API.

sbp.placement @p "npu" [0, 1]

func.func @main(%a: !sbp.tensor<8x16xf16, @p, [S(0)]>, %b: !sbp.tensor<16xf16, @p, [B]>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<8x16xf16, @p, [S(0)]>, !sbp.tensor<16xf16, @p, [B]> -> !sbp.tensor<8x16xf16, @p>
  %1 = sbp.fmod_scalar %a, -1.5 : f16 : !sbp.tensor<8x16xf16, @p, [S(0)]> -> !sbp.tensor<8x16xf16, @p>
  func.return
}

// HDR:      #ifndef FMOD_TENSOR_TILING_H
// HDR:      #include "register/tilingdata_base.h"
// HDR:      namespace optiling {
// HDR-NEXT: BEGIN_TILING_DATA_DEF(FmodTilingData)
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint64_t, totalLength);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, blockDim);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint64_t, blockLength);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint64_t, lastBlockLength);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, tileLength);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, tileNum);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, lastTileLength);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, lastCoreTileNum);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, lastCoreLastTileLength);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, bufferNum);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(float, scalarOther);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, dimNum);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint64_t, innerRun);
// HDR-NEXT:   TILING_DATA_FIELD_DEF_ARR(int64_t, 8, shape);
// HDR-NEXT:   TILING_DATA_FIELD_DEF_ARR(int64_t, 8, selfStride);
// HDR-NEXT:   TILING_DATA_FIELD_DEF_ARR(int64_t, 8, otherStride);
// HDR-NEXT:   TILING_DATA_FIELD_DEF_ARR(int64_t, 8, outStride);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(int64_t, selfOffset);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(int64_t, otherOffset);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(int64_t, outOffset);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, colBlock);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, gatherDim);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, tileRows);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, tileCols);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, bandRows);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint32_t, bandCols);
// HDR-NEXT:   TILING_DATA_FIELD_DEF(uint64_t, bandBatch);
// HDR-NEXT: END_TILING_DATA_DEF;
// HDR:      REGISTER_TILING_DATA_CLASS(FmodTensor, FmodTilingData)

// SHDR:     BEGIN_TILING_DATA_DEF(FmodTilingData)
// SHDR:     TILING_DATA_FIELD_DEF(float, scalarOther);
// SHDR:     REGISTER_TILING_DATA_CLASS(FmodScalar, FmodTilingData)

// The TilingFunc computes no tiling: it looks its operands up in a table of the Python tiling's results
// for the program's local operands (both ranks: 4x16, one row) on each platform of the SoCs (48, 40 cores).
// HOST:      #include "fmod_tensor_tiling.h"
// HOST:      #include "register/op_def_registry.h"
// HOST:      #include "tiling/platform/platform_ascendc.h"
// HOST:      namespace optiling {
// HOST:      namespace fmod_tensor_host {
// HOST:      static const Slot kSlots[kViews] = {
// HOST-NEXT:     {"self", false, 0, 0, 3},
// HOST-NEXT:     {"other", false, 1, 1, 4},
// HOST-NEXT:     {"out", true, 0, 2, 5},
// HOST:      static const Row kRows[] = {
// HOST-NEXT:     // 48 cores, 196608 B UB; f16 4x16, 16, 4x16: key 2
// HOST-NEXT:     {48, 196608, ge::DT_FLOAT16, {0, 0},
// HOST-NEXT:      {{[{][{]}}2, 1, 0, {4, 16, 0, 0, 0, 0, 0, 0}, {16, 1, 0, 0, 0, 0, 0, 0}},
// HOST-NEXT:       {1, 1, 0, {16, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0}},
// HOST-NEXT:       {2, 1, 0, {4, 16, 0, 0, 0, 0, 0, 0}, {16, 1, 0, 0, 0, 0, 0, 0}}},
// HOST-NEXT:      2, 64, 1,
// HOST-NEXT:     // 40 cores, 196608 B UB; f16 4x16, 16, 4x16: key 2
// HOST:      };
// HOST-NEXT: constexpr size_t kRowCount = sizeof(kRows) / sizeof(kRows[0]);
// HOST:      context->SetBlockDim(r.blockDim);
// HOST-NEXT: context->SetTilingKey(r.tilingKey);
// HOST:      static ge::graphStatus TilingFunc(gert::TilingContext* context) {
// HOST:      auto ascendcPlatform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
// HOST-NEXT: Query q = Query();
// HOST-NEXT: q.coreNum = ascendcPlatform.GetCoreNumAiv();
// HOST-NEXT: ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, q.ubSize);
// HOST:      const Row* row = FindRow(q);
// HOST-NEXT: if (row == nullptr) {
// HOST-NEXT:   ReportMissing(q);
// HOST-NEXT:   return ge::GRAPH_FAILED;
// HOST:      return WriteTiling(context, *row);
// HOST:      static graphStatus InferShape(gert::InferShapeContext* context) {
// HOST:      *outShape = *selfShape;
// HOST:      class FmodTensor : public OpDef {
// HOST:      this->Input("self").ParamType(REQUIRED).DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
// HOST-NEXT: this->Input("other").ParamType(REQUIRED).DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT16})
// HOST-NEXT: this->Output("out").ParamType(REQUIRED).DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT16})
// HOST:      this->SetInferShape(ge::InferShape)
// HOST-NEXT: this->AICore().SetTiling(optiling::TilingFunc);
// HOST-NEXT: this->AICore().AddConfig("ascend910b");
// HOST-NEXT: this->AICore().AddConfig("ascend910_93");
// HOST:      OP_ADD(FmodTensor);

// The scalar op: the scalar is an attribute, a part of the row's key (-1.5 as the program gave it and
// rounded to f16: the same bits), and scalarOther is the row's.
// SHOST:      namespace fmod_scalar_host {
// SHOST:      static const Slot kSlots[kViews] = {
// SHOST-NEXT:     {"self", false, 0, 1, 3},
// SHOST-NEXT:     {"out", true, 0, 2, 4},
// SHOST:      constexpr int32_t kScalarAttr = 0;
// SHOST:      static const Row kRows[] = {
// SHOST-NEXT:     // 48 cores, 196608 B UB; f16 4x16, 4x16: key 0
// SHOST-NEXT:     {48, 196608, ge::DT_FLOAT16, {0xbfc00000u, 0xbfc00000u},
// SHOST:          0, 64, 1, 2048, 64, 2048, 1, 2048, 1, 64, 1, 0xbfc00000u, 1, 64,
// SHOST:      tiling.set_scalarOther(BitsFloat(r.scalarOtherBits));
// SHOST:      static ge::graphStatus TilingFunc(gert::TilingContext* context) {
// SHOST:      GetCoreNumAiv()
// SHOST:      GetCoreMemSize(platform_ascendc::CoreMemType::UB, q.ubSize)
// SHOST:      attrs->GetFloat(static_cast<size_t>(kScalarAttr))
// SHOST:      q.scalarBits = FloatBits(*scalar);
// SHOST:      class FmodScalar : public OpDef {
// SHOST:      this->Input("self").ParamType(REQUIRED).DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT16})
// SHOST-NOT:  this->Input("other")
// SHOST:      this->Output("out").ParamType(REQUIRED).DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT16})
// SHOST-NEXT: this->Attr("other").AttrType(REQUIRED).Float();
// SHOST:      this->AICore().AddConfig("ascend910b");
// SHOST-NEXT: this->AICore().AddConfig("ascend910_93");
// SHOST:      OP_ADD(FmodScalar);

// ACLNN:      #ifndef ACLNN_FMOD_TENSOR_H
// ACLNN:      aclnnStatus aclnnFmodTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
// ACLNN-NEXT:   uint64_t* workspaceSize, aclOpExecutor** executor);
// ACLNN-NEXT: aclnnStatus aclnnFmodTensor(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
// ACLNN-NEXT:   aclrtStream stream);

// SACLNN:      aclnnStatus aclnnFmodScalarGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out,
// SACLNN-NEXT:   uint64_t* workspaceSize, aclOpExecutor** executor);
// SACLNN-NEXT: aclnnStatus aclnnFmodScalar(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
