// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.reduce_sum / reduce_max / reduce_min: properties `axes` (array<i64>) and `keepdims` (unit).
// The custom form holds them in the attribute dictionary, in their written order.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @reduce(
// CHECK-NEXT:    %{{.*}} = sbp.reduce_sum %{{.*}} {axes = array<i64: 1>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_sum %{{.*}} {axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<8xf32, @p, [P]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_max %{{.*}} {axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<f32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_min %{{.*}} {axes = array<i64: 1>, keepdims} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x1xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_sum %{{.*}} {keepdims, axes = array<i64: 2, 0>} : !sbp.tensor<2x4x8xf16, @q, [S(0), S(2)]> -> !sbp.tensor<1x4x1xf16, @q>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_max %{{.*}} {axes = array<i64: 1>} : !sbp.tensor<2x4x8xi32, @q, [B, S(1)]> -> !sbp.tensor<2x8xi32, @q, [B, P(max)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_min %{{.*}} {axes = array<i64>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_sum %{{.*}} {sbp.hint = #sbp.sig<[S(0)] -> ?>, axes = array<i64: 0>} : !sbp.tensor<6xi64, @p, [S(0)]> -> !sbp.tensor<i64, @p>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "reduce"
// GENERIC:       "sbp.reduce_sum"(%{{.*}}) <{axes = array<i64: 1>}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.reduce_sum"(%{{.*}}) <{axes = array<i64: 0>}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<8xf32, @p, [P]>{{$}}
// GENERIC-NEXT:  "sbp.reduce_max"(%{{.*}}) <{axes = array<i64: 0, 1>}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<f32, @p>{{$}}
// GENERIC-NEXT:  "sbp.reduce_min"(%{{.*}}) <{axes = array<i64: 1>, keepdims}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x1xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.reduce_sum"(%{{.*}}) <{keepdims, axes = array<i64: 2, 0>}> : (!sbp.tensor<2x4x8xf16, @q, [S(0), S(2)]>) -> !sbp.tensor<1x4x1xf16, @q>{{$}}
// GENERIC-NEXT:  "sbp.reduce_max"(%{{.*}}) <{axes = array<i64: 1>}> : (!sbp.tensor<2x4x8xi32, @q, [B, S(1)]>) -> !sbp.tensor<2x8xi32, @q, [B, P(max)]>{{$}}
// GENERIC-NEXT:  "sbp.reduce_min"(%{{.*}}) <{axes = array<i64>}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.reduce_sum"(%{{.*}}) <{axes = array<i64: 0>}> {sbp.hint = #sbp.sig<[S(0)] -> ?>} : (!sbp.tensor<6xi64, @p, [S(0)]>) -> !sbp.tensor<i64, @p>{{$}}
func.func @reduce(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<2x4x8xf16, @q, [S(0), S(2)]>, %c: !sbp.tensor<2x4x8xi32, @q, [B, S(1)]>, %d: !sbp.tensor<6xi64, @p, [S(0)]>) {
  %0 = sbp.reduce_sum %a {axes = array<i64: 1>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  %1 = sbp.reduce_sum %a {axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<8xf32, @p, [P]>
  %2 = sbp.reduce_max %a {axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<f32, @p>
  %3 = sbp.reduce_min %a {axes = array<i64: 1>, keepdims} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x1xf32, @p>
  %4 = sbp.reduce_sum %b {keepdims, axes = array<i64: 2, 0>} : !sbp.tensor<2x4x8xf16, @q, [S(0), S(2)]> -> !sbp.tensor<1x4x1xf16, @q>
  %5 = sbp.reduce_max %c {axes = array<i64: 1>} : !sbp.tensor<2x4x8xi32, @q, [B, S(1)]> -> !sbp.tensor<2x8xi32, @q, [B, P(max)]>
  %6 = sbp.reduce_min %a {axes = array<i64>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %7 = sbp.reduce_sum %d {sbp.hint = #sbp.sig<[S(0)] -> ?>, axes = array<i64: 0>} : !sbp.tensor<6xi64, @p, [S(0)]> -> !sbp.tensor<i64, @p>
  func.return
}

// Generic input.
// CHECK-LABEL: func.func @reduce_generic_input(
// CHECK-NEXT:    sbp.reduce_max %{{.*}} {axes = array<i64: 0>, keepdims} : !sbp.tensor<4x8xbf16, @p, [S(1)]> -> !sbp.tensor<1x8xbf16, @p>{{$}}
// GENERIC-LABEL: sym_name = "reduce_generic_input"
// GENERIC:       "sbp.reduce_max"(%{{.*}}) <{axes = array<i64: 0>, keepdims}> : (!sbp.tensor<4x8xbf16, @p, [S(1)]>) -> !sbp.tensor<1x8xbf16, @p>{{$}}
func.func @reduce_generic_input(%a: !sbp.tensor<4x8xbf16, @p, [S(1)]>) {
  %0 = "sbp.reduce_max"(%a) <{axes = array<i64: 0>, keepdims}> : (!sbp.tensor<4x8xbf16, @p, [S(1)]>) -> !sbp.tensor<1x8xbf16, @p>
  func.return
}
