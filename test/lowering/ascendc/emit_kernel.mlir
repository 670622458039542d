// RUN: rm -rf %t
// RUN: sbp-translate %s --emit-ascendc -o %t | filecheck %s --check-prefix=FILES
// RUN: filecheck %s --check-prefix=TENSOR --input-file=%t/fmod_tensor/op_kernel/fmod_tensor.cpp
// RUN: filecheck %s --check-prefix=SCALAR --input-file=%t/fmod_scalar/op_kernel/fmod_scalar.cpp
// RUN: filecheck %s --check-prefix=NOKEY --input-file=%t/fmod_scalar/op_kernel/fmod_scalar.cpp

// The kernel source of both fmod ops, one templated kernel per op kind for all four dtypes (SPEC §5).

sbp.placement @p "npu" [0, 1]

func.func @main(%a: !sbp.tensor<8x16xf32, @p, [S(0)]>, %b: !sbp.tensor<16xf32, @p, [B]>,
                %c: !sbp.tensor<8x16xf16, @p, [S(0)]>, %d: !sbp.tensor<8x16xbf16, @p, [S(1)]>,
                %e: !sbp.tensor<8x16xi16, @p, [B]>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<8x16xf32, @p, [S(0)]>, !sbp.tensor<16xf32, @p, [B]> -> !sbp.tensor<8x16xf32, @p>
  %1 = sbp.fmod %c, %c : !sbp.tensor<8x16xf16, @p, [S(0)]>, !sbp.tensor<8x16xf16, @p, [S(0)]> -> !sbp.tensor<8x16xf16, @p>
  %2 = sbp.fmod_scalar %d, 2.5 : bf16 : !sbp.tensor<8x16xbf16, @p, [S(1)]> -> !sbp.tensor<8x16xbf16, @p>
  %3 = sbp.fmod_scalar %e, 3 : i16 : !sbp.tensor<8x16xi16, @p, [B]> -> !sbp.tensor<8x16xi16, @p>
  func.return
}

// FILES-DAG: fmod_tensor/op_kernel/fmod_tensor.cpp
// FILES-DAG: fmod_tensor/op_host/fmod_tensor_tiling.h
// FILES-DAG: fmod_tensor/op_host/fmod_tensor.cpp
// FILES-DAG: fmod_tensor/op_host/aclnn_fmod_tensor.h
// FILES-DAG: fmod_tensor/tiling.json
// FILES-DAG: fmod_tensor/CMakeLists.txt
// FILES-DAG: fmod_tensor/CMakePresets.json
// FILES-DAG: fmod_tensor/build.sh
// FILES-DAG: fmod_tensor/fmod_tensor.json
// FILES-DAG: fmod_tensor/framework/CMakeLists.txt
// FILES-DAG: fmod_tensor/op_host/CMakeLists.txt
// FILES-DAG: fmod_tensor/op_kernel/CMakeLists.txt
// FILES-DAG: fmod_scalar/op_kernel/fmod_scalar.cpp
// FILES-DAG: fmod_scalar/tiling.json
// FILES-DAG: fmod_scalar/fmod_scalar.json
// FILES-DAG: fmod_scalar/CMakePresets.json

// An msOpGen kernel includes only kernel_operator.h: the CANN build (and the shim) compiles in the
// FmodTilingData struct of op_host/fmod_tensor_tiling.h, which GET_TILING_DATA declares.
// TENSOR:      #include "kernel_operator.h"
// TENSOR-NOT:  #include
// TENSOR:      template <typename T>
// TENSOR-NEXT: class KernelFmodTensor {
// TENSOR:      __aicore__ inline void Init(GM_ADDR self, GM_ADDR other, GM_ADDR out, const FmodTilingData& td, uint64_t key) {
// TENSOR:      pipe_.InitBuffer(inX_, td.bufferNum, tileBytes);
// TENSOR:      pipe_.InitBuffer(outZ_, td.bufferNum, tileBytes);
// TENSOR:      pipe_.InitBuffer(q32Buf_, td.tileLength * sizeof(float));

// GM -> UB of a run: DataCopyPad with the exact byte count (tails included); UB -> GM likewise.
// TENSOR:      __aicore__ inline void LoadRun(
// TENSOR:      DataCopyExtParams ext{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
// TENSOR-NEXT: DataCopyPadExtParams<T> pad{false, 0, 0, T(0)};
// TENSOR-NEXT: DataCopyPad(dst[slot], gm[off], ext, pad);
// TENSOR:      __aicore__ inline void StoreRun(
// TENSOR:      DataCopyExtParams ext{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
// TENSOR-NEXT: DataCopyPad(gm[off], src[slot], ext);

// The per-tile program of the TBE formula: cast up (CAST_NONE), Div, CAST_TRUNC, Mul, Sub, cast down.
// TENSOR:      __aicore__ inline void Compute(uint32_t count) {
// TENSOR:      if constexpr (std::is_same_v<T, half>) {
// TENSOR-NEXT:   Cast(x32, x, RoundMode::CAST_NONE, count);
// TENSOR-NEXT: } else if constexpr (std::is_same_v<T, bfloat16_t>) {
// TENSOR-NEXT:   Cast(x32, x, RoundMode::CAST_NONE, count);
// TENSOR-NEXT: } else if constexpr (std::is_same_v<T, int16_t>) {
// TENSOR-NEXT:   Cast(x32, x, RoundMode::CAST_NONE, count);
// TENSOR-NEXT: }
// TENSOR-NEXT: if (!ScalarLike()) {
// TENSOR-NEXT:   if constexpr (std::is_same_v<T, half>) {
// TENSOR-NEXT:     Cast(y32, y, RoundMode::CAST_NONE, count);
// TENSOR:      if (ScalarLike()) {
// TENSOR-NEXT:   Duplicate(y32, scalar_, static_cast<int32_t>(count));
// TENSOR-NEXT: }
// TENSOR-NEXT: Div(q32, x32, y32, static_cast<int32_t>(count));
// TENSOR-NEXT: Cast(q32, q32, RoundMode::CAST_TRUNC, count);
// TENSOR-NEXT: Mul(q32, q32, y32, static_cast<int32_t>(count));
// TENSOR-NEXT: Sub(z32, x32, q32, static_cast<int32_t>(count));
// TENSOR-NEXT: if constexpr (std::is_same_v<T, half>) {
// TENSOR-NEXT:   Cast(z, z32, RoundMode::CAST_NONE, count);
// TENSOR-NEXT: } else if constexpr (std::is_same_v<T, bfloat16_t>) {
// TENSOR-NEXT:   Cast(z, z32, RoundMode::CAST_RINT, count);
// TENSOR-NEXT: } else if constexpr (std::is_same_v<T, int16_t>) {
// TENSOR-NEXT:   Cast(z, z32, RoundMode::CAST_RINT, count);
// TENSOR-NEXT: }

// The entry: one branch per tiling key, no `else`.
// TENSOR:      extern "C" __global__ __aicore__ void fmod_tensor(GM_ADDR self, GM_ADDR other, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling) {
// TENSOR-NEXT:   (void)workspace;
// TENSOR-NEXT:   GET_TILING_DATA(tilingData, tiling);
// TENSOR-NEXT:   if (TILING_KEY_IS(0)) {
// TENSOR-NEXT:     KernelFmodTensor<DTYPE_SELF> op;
// TENSOR-NEXT:     op.Init(self, other, out, tilingData, 0);
// TENSOR-NEXT:     op.Process();
// TENSOR-NEXT:   } else if (TILING_KEY_IS(1)) {
// TENSOR:        } else if (TILING_KEY_IS(2)) {
// TENSOR:          op.Init(self, other, out, tilingData, 2);
// TENSOR:        } else if (TILING_KEY_IS(3)) {
// TENSOR:        } else if (TILING_KEY_IS(4)) {
// TENSOR-NEXT:     KernelFmodTensor<DTYPE_SELF> op;
// TENSOR-NEXT:     op.Init(self, other, out, tilingData, 4);
// TENSOR-NEXT:     op.Process();
// TENSOR-NEXT:   }
// TENSOR-NEXT: }
// TENSOR-NOT:  else {

// SCALAR:      #include "kernel_operator.h"
// SCALAR-NOT:  #include
// SCALAR:      class KernelFmodScalar {
// SCALAR:      __aicore__ inline void Init(GM_ADDR self, GM_ADDR out, const FmodTilingData& td, uint64_t key) {
// SCALAR:      scalar_ = td.scalarOther;
// SCALAR:      DataCopyPad(dst[slot], gm[off], ext, pad);
// SCALAR:      DataCopyPad(gm[off], src[slot], ext);
// SCALAR:      Cast(x32, x, RoundMode::CAST_NONE, count);
// SCALAR:      Duplicate(y32, scalar_, static_cast<int32_t>(count));
// SCALAR-NEXT: }
// SCALAR-NEXT: Div(q32, x32, y32, static_cast<int32_t>(count));
// SCALAR-NEXT: Cast(q32, q32, RoundMode::CAST_TRUNC, count);
// SCALAR:      Cast(z, z32, RoundMode::CAST_NONE, count);
// SCALAR:      Cast(z, z32, RoundMode::CAST_RINT, count);
// SCALAR:      Cast(z, z32, RoundMode::CAST_RINT, count);
// SCALAR:      extern "C" __global__ __aicore__ void fmod_scalar(GM_ADDR self, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling) {
// SCALAR:        if (TILING_KEY_IS(0)) {
// SCALAR-NEXT:     KernelFmodScalar<DTYPE_SELF> op;
// SCALAR-NEXT:     op.Init(self, out, tilingData, 0);
// SCALAR-NEXT:     op.Process();
// SCALAR-NEXT:   } else if (TILING_KEY_IS(3)) {
// SCALAR-NEXT:     KernelFmodScalar<DTYPE_SELF> op;
// SCALAR-NEXT:     op.Init(self, out, tilingData, 3);
// SCALAR-NEXT:     op.Process();
// SCALAR-NEXT:   }
// SCALAR-NEXT: }

// The scalar kernel has no tensor `other`, and only keys 0 and 3.
// NOKEY-NOT: GM_ADDR other
// NOKEY-NOT: TILING_KEY_IS(1)
// NOKEY-NOT: TILING_KEY_IS(2)
// NOKEY-NOT: TILING_KEY_IS(4)
