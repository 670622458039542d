// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.to_partial: B -> P(k) or S(i) -> P(k) on each mesh axis in mesh_axes (local).

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @to_partial(
// CHECK-NEXT:    %{{.*}} = sbp.to_partial %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [P]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_partial %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [B]> -> !sbp.tensor<4x8xf16, @p, [P(max)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_partial %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<i32, @p, [B]> -> !sbp.tensor<i32, @p, [P(min)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_partial %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xbf16, @p, [S(0)]> -> !sbp.tensor<4x8xbf16, @p, [P]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_partial %{{.*}} {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xf32, @q, [S(0), B]> -> !sbp.tensor<4x8xf32, @q, [S(0), P]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_partial %{{.*}} {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xi64, @q, [B, B]> -> !sbp.tensor<4x8xi64, @q, [P(max), P(max)]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "to_partial"
// GENERIC:       %{{.*}} = "sbp.to_partial"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [P]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.to_partial"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf16, @p, [B]>) -> !sbp.tensor<4x8xf16, @p, [P(max)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.to_partial"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<i32, @p, [B]>) -> !sbp.tensor<i32, @p, [P(min)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.to_partial"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xbf16, @p, [S(0)]>) -> !sbp.tensor<4x8xbf16, @p, [P]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.to_partial"(%{{.*}}) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<4x8xf32, @q, [S(0), B]>) -> !sbp.tensor<4x8xf32, @q, [S(0), P]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.to_partial"(%{{.*}}) <{mesh_axes = array<i64: 0, 1>}> : (!sbp.tensor<4x8xi64, @q, [B, B]>) -> !sbp.tensor<4x8xi64, @q, [P(max), P(max)]>{{$}}
func.func @to_partial(%a0: !sbp.tensor<4x8xf32, @p, [B]>, %a1: !sbp.tensor<4x8xf16, @p, [B]>, %a2: !sbp.tensor<i32, @p, [B]>, %a3: !sbp.tensor<4x8xbf16, @p, [S(0)]>, %a4: !sbp.tensor<4x8xf32, @q, [S(0), B]>, %a5: !sbp.tensor<4x8xi64, @q, [B, B]>) {
  %0 = sbp.to_partial %a0 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [P]>
  %1 = sbp.to_partial %a1 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [B]> -> !sbp.tensor<4x8xf16, @p, [P(max)]>
  %2 = sbp.to_partial %a2 {mesh_axes = array<i64: 0>} : !sbp.tensor<i32, @p, [B]> -> !sbp.tensor<i32, @p, [P(min)]>
  %3 = sbp.to_partial %a3 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xbf16, @p, [S(0)]> -> !sbp.tensor<4x8xbf16, @p, [P]>
  %4 = sbp.to_partial %a4 {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xf32, @q, [S(0), B]> -> !sbp.tensor<4x8xf32, @q, [S(0), P]>
  %5 = sbp.to_partial %a5 {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xi64, @q, [B, B]> -> !sbp.tensor<4x8xi64, @q, [P(max), P(max)]>
  func.return
}
