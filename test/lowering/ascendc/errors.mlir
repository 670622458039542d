// RUN: not sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize,lower-to-ascendc 2>&1 | filecheck %s
// RUN: not sbp-translate %s --emit-ascendc -o %t 2>&1 | filecheck %s

// fmod kernels exist for bf16, f16, f32 and i16 only: an i32 fmod is a located error naming the op
// (f64 is not a tensor element type at all), never a traceback.

sbp.placement @p "npu" [0, 1]

func.func @main(%a: !sbp.tensor<8x16xi32, @p, [S(0)]>) -> !sbp.tensor<8x16xi32, @p> {
  // CHECK: errors.mlir:[[# @LINE + 1]]:3: error: sbp.fmod(tensor<4x16xi32>, tensor<4x16xi32>): fmod kernels support bf16, f16, f32 and i16
  %0 = sbp.fmod %a, %a : !sbp.tensor<8x16xi32, @p, [S(0)]>, !sbp.tensor<8x16xi32, @p, [S(0)]> -> !sbp.tensor<8x16xi32, @p>
  func.return %0 : !sbp.tensor<8x16xi32, @p>
}
// CHECK-NOT: Traceback
