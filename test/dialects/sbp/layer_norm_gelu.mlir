// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.layer_norm (x, gamma, beta; `epsilon` f32, default 1e-5, omitted when not written) and
// sbp.gelu (SPEC §2.4): the result has x's shape and element type.

sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @ops(
// CHECK-NEXT:    %[[L:.*]] = sbp.layer_norm %x, %g, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %[[E:.*]] = sbp.layer_norm %[[L]], %g, %b {epsilon = 1.000000e-06 : f32} : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %[[G:.*]] = sbp.gelu %[[E]] : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.gelu %h : !sbp.tensor<2x3x4xbf16, @p, [S(2)]> -> !sbp.tensor<2x3x4xbf16, @p>{{$}}
// GENERIC-LABEL: sym_name = "ops"
// GENERIC:       "sbp.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-06 : f32}> : (!sbp.tensor<4x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.gelu"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p>{{$}}
func.func @ops(%x: !sbp.tensor<4x8xf32, @p, [S(0)]>, %g: !sbp.tensor<8xf32, @p, [B]>, %b: !sbp.tensor<8xf32, @p, [B]>, %h: !sbp.tensor<2x3x4xbf16, @p, [S(2)]>) -> !sbp.tensor<4x8xf32, @p> {
  %0 = sbp.layer_norm %x, %g, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.layer_norm %0, %g, %b {epsilon = 1.0e-6 : f32} : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.gelu %1 : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %3 = sbp.gelu %h : !sbp.tensor<2x3x4xbf16, @p, [S(2)]> -> !sbp.tensor<2x3x4xbf16, @p>
  func.return %2 : !sbp.tensor<4x8xf32, @p>
}
