// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.reshape: the target shape is the result's shape; the element count is kept.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @reshape(
// CHECK-NEXT:    %[[F:.*]] = sbp.reshape %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<32xf32, @p>{{$}}
// CHECK-NEXT:    %[[U:.*]] = sbp.reshape %[[F]] : !sbp.tensor<32xf32, @p> -> !sbp.tensor<2x2x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reshape %[[U]] : !sbp.tensor<2x2x8xf32, @p, [S(0)]> -> !sbp.tensor<4x1x8xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reshape %{{.*}} : !sbp.tensor<1xi32, @p, [B]> -> !sbp.tensor<i32, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reshape %{{.*}} : !sbp.tensor<i32, @p, [B]> -> !sbp.tensor<1x1xi32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reshape %{{.*}} : !sbp.tensor<6x4xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<3x8xbf16, @q>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reshape %{{.*}} : !sbp.tensor<0x4xf16, @p, [B]> -> !sbp.tensor<2x0xf16, @p>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "reshape"
// GENERIC:       "sbp.reshape"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<32xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.reshape"(%{{.*}}) : (!sbp.tensor<32xf32, @p>) -> !sbp.tensor<2x2x8xf32, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  "sbp.reshape"(%{{.*}}) : (!sbp.tensor<2x2x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x1x8xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.reshape"(%{{.*}}) : (!sbp.tensor<1xi32, @p, [B]>) -> !sbp.tensor<i32, @p, [B]>{{$}}
// GENERIC-NEXT:  "sbp.reshape"(%{{.*}}) : (!sbp.tensor<i32, @p, [B]>) -> !sbp.tensor<1x1xi32, @p>{{$}}
// GENERIC-NEXT:  "sbp.reshape"(%{{.*}}) : (!sbp.tensor<6x4xbf16, @q, [S(0), S(1)]>) -> !sbp.tensor<3x8xbf16, @q>{{$}}
// GENERIC-NEXT:  "sbp.reshape"(%{{.*}}) : (!sbp.tensor<0x4xf16, @p, [B]>) -> !sbp.tensor<2x0xf16, @p>{{$}}
func.func @reshape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<1xi32, @p, [B]>, %c: !sbp.tensor<i32, @p, [B]>, %d: !sbp.tensor<6x4xbf16, @q, [S(0), S(1)]>, %e: !sbp.tensor<0x4xf16, @p, [B]>) {
  %0 = sbp.reshape %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<32xf32, @p>
  %1 = sbp.reshape %0 : !sbp.tensor<32xf32, @p> -> !sbp.tensor<2x2x8xf32, @p, [S(0)]>
  %2 = sbp.reshape %1 : !sbp.tensor<2x2x8xf32, @p, [S(0)]> -> !sbp.tensor<4x1x8xf32, @p>
  %3 = sbp.reshape %b : !sbp.tensor<1xi32, @p, [B]> -> !sbp.tensor<i32, @p, [B]>
  %4 = sbp.reshape %c : !sbp.tensor<i32, @p, [B]> -> !sbp.tensor<1x1xi32, @p>
  %5 = sbp.reshape %d : !sbp.tensor<6x4xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<3x8xbf16, @q>
  %6 = sbp.reshape %e : !sbp.tensor<0x4xf16, @p, [B]> -> !sbp.tensor<2x0xf16, @p>
  func.return
}
