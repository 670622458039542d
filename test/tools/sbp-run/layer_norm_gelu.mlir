// RUN: sbp-run %s --check | filecheck %s
// RUN: %if torch %{ sbp-run %s --check --backend torch | filecheck %s --check-prefix=TORCH %}
// RUN: sbp-run %s --check --entry half | filecheck %s --check-prefix=HALF
// RUN: sbp-opt %s -p infer-sbp | filecheck %s --check-prefix=INFER

// sbp.layer_norm and sbp.gelu (SPEC §2.4) on a 2x2 mesh: x [S(0), S(1)] must be gathered on the
// last axis before layer_norm (split legal on every axis but the last), gelu keeps the split.

// INFER: sbp.layer_norm %x, %g, %b {sbp.signature = #sbp.sig<[S(0), S(0)], [B, B], [B, B] -> [S(0), S(0)]>, epsilon = 1.000000e-03 : f32}
// INFER: sbp.gelu %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(0)] -> [S(0), S(0)]>}

// CHECK: all_to_all mesh_axes=[1] [S(0), S(1)]->[S(0), S(0)]
// CHECK: check: OK
// TORCH: all_to_all mesh_axes=[1] [S(0), S(1)]->[S(0), S(0)]
// TORCH: check: OK
// HALF: bf16[4,3,6]
// HALF: check: OK

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<8x6xf32, @q, [S(0), S(1)]>, %g: !sbp.tensor<6xf32, @q, [B, B]>, %b: !sbp.tensor<6xf32, @q, [B, B]>) -> !sbp.tensor<8x6xf32, @q> {
  %0 = sbp.layer_norm %x, %g, %b {epsilon = 1.0e-03 : f32} : !sbp.tensor<8x6xf32, @q, [S(0), S(1)]>, !sbp.tensor<6xf32, @q, [B, B]>, !sbp.tensor<6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q>
  %1 = sbp.gelu %0 : !sbp.tensor<8x6xf32, @q> -> !sbp.tensor<8x6xf32, @q>
  func.return %1 : !sbp.tensor<8x6xf32, @q>
}

// bf16, default epsilon: computed in f32 and rounded back, on every rank and in the reference.
func.func @half(%x: !sbp.tensor<4x3x6xbf16, @q, [S(0), S(2)]>, %g: !sbp.tensor<6xbf16, @q, [B, B]>, %b: !sbp.tensor<6xbf16, @q, [B, B]>) -> !sbp.tensor<4x3x6xbf16, @q> {
  %0 = sbp.gelu %x : !sbp.tensor<4x3x6xbf16, @q, [S(0), S(2)]> -> !sbp.tensor<4x3x6xbf16, @q>
  %1 = sbp.layer_norm %0, %g, %b : !sbp.tensor<4x3x6xbf16, @q>, !sbp.tensor<6xbf16, @q, [B, B]>, !sbp.tensor<6xbf16, @q, [B, B]> -> !sbp.tensor<4x3x6xbf16, @q>
  func.return %1 : !sbp.tensor<4x3x6xbf16, @q>
}
