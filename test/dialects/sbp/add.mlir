// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.add: elementwise with numpy broadcasting; result SBP may be omitted or given.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "npu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @add_same_shape(
// CHECK-NEXT:    %[[R:.*]] = sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    func.return %[[R]] : !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-LABEL: sym_name = "add_same_shape"
// GENERIC:       %{{.*}} = "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
func.func @add_same_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p> {
  %0 = sbp.add %a, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  func.return %0 : !sbp.tensor<4x8xf32, @p>
}

// Broadcasting: a lower-rank operand, a size-1 dim on either side, two size-1 dims, a 0-d operand.
// CHECK-LABEL: func.func @add_broadcast(
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x1xf32, @p, [S(0)]>, !sbp.tensor<1x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<1x8xf32, @p, [B]>, !sbp.tensor<4x1xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<f32, @p, [B]>, !sbp.tensor<f32, @p, [P]> -> !sbp.tensor<f32, @p>{{$}}
// GENERIC-LABEL: sym_name = "add_broadcast"
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x1xf32, @p, [S(0)]>, !sbp.tensor<1x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<1x8xf32, @p, [B]>, !sbp.tensor<4x1xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<f32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<f32, @p, [B]>, !sbp.tensor<f32, @p, [P]>) -> !sbp.tensor<f32, @p>{{$}}
func.func @add_broadcast(%a: !sbp.tensor<4x8xf32, @p, [B]>, %b: !sbp.tensor<8xf32, @p, [B]>, %c: !sbp.tensor<4x1xf32, @p, [S(0)]>, %d: !sbp.tensor<1x8xf32, @p, [B]>, %e: !sbp.tensor<f32, @p, [B]>, %f: !sbp.tensor<f32, @p, [P]>) {
  %0 = sbp.add %a, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [B]>
  %1 = sbp.add %c, %d : !sbp.tensor<4x1xf32, @p, [S(0)]>, !sbp.tensor<1x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.add %d, %c : !sbp.tensor<1x8xf32, @p, [B]>, !sbp.tensor<4x1xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %3 = sbp.add %a, %e : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %4 = sbp.add %e, %f : !sbp.tensor<f32, @p, [B]>, !sbp.tensor<f32, @p, [P]> -> !sbp.tensor<f32, @p>
  func.return
}

// On a 2-D mesh, each element type, operands without SBP, result with an explicit SBP.
// CHECK-LABEL: func.func @add_2d_and_types(
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf16, @q, [S(0), S(1)]>, !sbp.tensor<4x8xf16, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf16, @q, [S(0), S(1)]>{{$}}
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x8xbf16, @q, [P, B]>, !sbp.tensor<4x8xbf16, @q, [B, P]> -> !sbp.tensor<4x8xbf16, @q>{{$}}
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x8xi16, @q>, !sbp.tensor<4x8xi16, @q> -> !sbp.tensor<4x8xi16, @q>{{$}}
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x8xi32, @q, [B, B]>, !sbp.tensor<4x8xi32, @q, [B, B]> -> !sbp.tensor<4x8xi32, @q>{{$}}
// CHECK-NEXT:    sbp.add %{{.*}}, %{{.*}} : !sbp.tensor<4x8xi64, @q, [S(1), B]>, !sbp.tensor<8xi64, @q, [S(0), B]> -> !sbp.tensor<4x8xi64, @q>{{$}}
// GENERIC-LABEL: sym_name = "add_2d_and_types"
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf16, @q, [S(0), S(1)]>, !sbp.tensor<4x8xf16, @q, [S(0), S(1)]>) -> !sbp.tensor<4x8xf16, @q, [S(0), S(1)]>{{$}}
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xbf16, @q, [P, B]>, !sbp.tensor<4x8xbf16, @q, [B, P]>) -> !sbp.tensor<4x8xbf16, @q>{{$}}
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xi16, @q>, !sbp.tensor<4x8xi16, @q>) -> !sbp.tensor<4x8xi16, @q>{{$}}
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xi32, @q, [B, B]>, !sbp.tensor<4x8xi32, @q, [B, B]>) -> !sbp.tensor<4x8xi32, @q>{{$}}
// GENERIC:       "sbp.add"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xi64, @q, [S(1), B]>, !sbp.tensor<8xi64, @q, [S(0), B]>) -> !sbp.tensor<4x8xi64, @q>{{$}}
func.func @add_2d_and_types(%a: !sbp.tensor<4x8xf16, @q, [S(0), S(1)]>, %b: !sbp.tensor<4x8xbf16, @q, [P, B]>, %c: !sbp.tensor<4x8xbf16, @q, [B, P]>, %d: !sbp.tensor<4x8xi16, @q>, %e: !sbp.tensor<4x8xi32, @q, [B, B]>, %f: !sbp.tensor<4x8xi64, @q, [S(1), B]>, %g: !sbp.tensor<8xi64, @q, [S(0), B]>) {
  %0 = sbp.add %a, %a : !sbp.tensor<4x8xf16, @q, [S(0), S(1)]>, !sbp.tensor<4x8xf16, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf16, @q, [S(0), S(1)]>
  %1 = sbp.add %b, %c : !sbp.tensor<4x8xbf16, @q, [P, B]>, !sbp.tensor<4x8xbf16, @q, [B, P]> -> !sbp.tensor<4x8xbf16, @q>
  %2 = sbp.add %d, %d : !sbp.tensor<4x8xi16, @q>, !sbp.tensor<4x8xi16, @q> -> !sbp.tensor<4x8xi16, @q>
  %3 = sbp.add %e, %e : !sbp.tensor<4x8xi32, @q, [B, B]>, !sbp.tensor<4x8xi32, @q, [B, B]> -> !sbp.tensor<4x8xi32, @q>
  %4 = sbp.add %f, %g : !sbp.tensor<4x8xi64, @q, [S(1), B]>, !sbp.tensor<8xi64, @q, [S(0), B]> -> !sbp.tensor<4x8xi64, @q>
  func.return
}
