// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.boxing (inserted by --materialize-boxing): a data-distribution change between two
// global types of the same shape and element type, possibly multi-step.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @boxing(
// CHECK-NEXT:    %[[A:.*]] = sbp.boxing %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.boxing %{{.*}} : !sbp.tensor<4x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.boxing %{{.*}} : !sbp.tensor<2x4x8xf16, @q, [S(0), P]> -> !sbp.tensor<2x4x8xf16, @q, [B, S(2)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.boxing %{{.*}} : !sbp.tensor<2x4x8xf16, @q, [S(0), P]> -> !sbp.tensor<2x4x8xf16, @q, [S(1), S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.boxing %{{.*}} : !sbp.tensor<i32, @p, [P(min)]> -> !sbp.tensor<i32, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.boxing %[[A]] : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "boxing"
// GENERIC:       "sbp.boxing"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// GENERIC-NEXT:  "sbp.boxing"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [P]>) -> !sbp.tensor<4x8xf32, @p, [S(1)]>{{$}}
// GENERIC-NEXT:  "sbp.boxing"(%{{.*}}) : (!sbp.tensor<2x4x8xf16, @q, [S(0), P]>) -> !sbp.tensor<2x4x8xf16, @q, [B, S(2)]>{{$}}
// GENERIC-NEXT:  "sbp.boxing"(%{{.*}}) : (!sbp.tensor<2x4x8xf16, @q, [S(0), P]>) -> !sbp.tensor<2x4x8xf16, @q, [S(1), S(1)]>{{$}}
// GENERIC-NEXT:  "sbp.boxing"(%{{.*}}) : (!sbp.tensor<i32, @p, [P(min)]>) -> !sbp.tensor<i32, @p, [B]>{{$}}
// GENERIC-NEXT:  "sbp.boxing"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>{{$}}
func.func @boxing(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<4x8xf32, @p, [P]>, %c: !sbp.tensor<2x4x8xf16, @q, [S(0), P]>, %d: !sbp.tensor<i32, @p, [P(min)]>) {
  %0 = sbp.boxing %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [B]>
  %1 = sbp.boxing %b : !sbp.tensor<4x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>
  %2 = sbp.boxing %c : !sbp.tensor<2x4x8xf16, @q, [S(0), P]> -> !sbp.tensor<2x4x8xf16, @q, [B, S(2)]>
  %3 = sbp.boxing %c : !sbp.tensor<2x4x8xf16, @q, [S(0), P]> -> !sbp.tensor<2x4x8xf16, @q, [S(1), S(1)]>
  %4 = sbp.boxing %d : !sbp.tensor<i32, @p, [P(min)]> -> !sbp.tensor<i32, @p, [B]>
  %5 = sbp.boxing %0 : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>
  func.return
}
