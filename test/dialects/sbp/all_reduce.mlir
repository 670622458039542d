// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.all_reduce: P(k) -> B (sum, max or min) on each mesh axis in mesh_axes.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @all_reduce(
// CHECK-NEXT:    %{{.*}} = sbp.all_reduce %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_reduce %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [P(max)]> -> !sbp.tensor<4x8xf16, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_reduce %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<8xi32, @p, [P(min)]> -> !sbp.tensor<8xi32, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_reduce %{{.*}} {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [S(0), P]> -> !sbp.tensor<4x8xbf16, @q, [S(0), B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_reduce %{{.*}} {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [P(max), P(max)]> -> !sbp.tensor<4x8xf32, @q, [B, B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_reduce %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<f32, @q, [P(min), B]> -> !sbp.tensor<f32, @q, [B, B]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "all_reduce"
// GENERIC:       %{{.*}} = "sbp.all_reduce"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf32, @p, [P]>) -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_reduce"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf16, @p, [P(max)]>) -> !sbp.tensor<4x8xf16, @p, [B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_reduce"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<8xi32, @p, [P(min)]>) -> !sbp.tensor<8xi32, @p, [B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_reduce"(%{{.*}}) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<4x8xbf16, @q, [S(0), P]>) -> !sbp.tensor<4x8xbf16, @q, [S(0), B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_reduce"(%{{.*}}) <{mesh_axes = array<i64: 0, 1>}> : (!sbp.tensor<4x8xf32, @q, [P(max), P(max)]>) -> !sbp.tensor<4x8xf32, @q, [B, B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_reduce"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<f32, @q, [P(min), B]>) -> !sbp.tensor<f32, @q, [B, B]>{{$}}
func.func @all_reduce(%a0: !sbp.tensor<4x8xf32, @p, [P]>, %a1: !sbp.tensor<4x8xf16, @p, [P(max)]>, %a2: !sbp.tensor<8xi32, @p, [P(min)]>, %a3: !sbp.tensor<4x8xbf16, @q, [S(0), P]>, %a4: !sbp.tensor<4x8xf32, @q, [P(max), P(max)]>, %a5: !sbp.tensor<f32, @q, [P(min), B]>) {
  %0 = sbp.all_reduce %a0 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p, [B]>
  %1 = sbp.all_reduce %a1 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [P(max)]> -> !sbp.tensor<4x8xf16, @p, [B]>
  %2 = sbp.all_reduce %a2 {mesh_axes = array<i64: 0>} : !sbp.tensor<8xi32, @p, [P(min)]> -> !sbp.tensor<8xi32, @p, [B]>
  %3 = sbp.all_reduce %a3 {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [S(0), P]> -> !sbp.tensor<4x8xbf16, @q, [S(0), B]>
  %4 = sbp.all_reduce %a4 {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [P(max), P(max)]> -> !sbp.tensor<4x8xf32, @q, [B, B]>
  %5 = sbp.all_reduce %a5 {mesh_axes = array<i64: 0>} : !sbp.tensor<f32, @q, [P(min), B]> -> !sbp.tensor<f32, @q, [B, B]>
  func.return
}
