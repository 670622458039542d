// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.reduce_scatter: P(k) -> S(i) on each mesh axis in mesh_axes.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @reduce_scatter(
// CHECK-NEXT:    %{{.*}} = sbp.reduce_scatter %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_scatter %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [P(max)]> -> !sbp.tensor<4x8xf16, @p, [S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_scatter %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<8xi16, @p, [P(min)]> -> !sbp.tensor<8xi16, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_scatter %{{.*}} {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [B, P]> -> !sbp.tensor<4x8xbf16, @q, [B, S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_scatter %{{.*}} {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [P, P]> -> !sbp.tensor<4x8xf32, @q, [S(0), S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.reduce_scatter %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi64, @q, [P, S(1)]> -> !sbp.tensor<4x8xi64, @q, [S(0), S(1)]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "reduce_scatter"
// GENERIC:       %{{.*}} = "sbp.reduce_scatter"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf32, @p, [P]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.reduce_scatter"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf16, @p, [P(max)]>) -> !sbp.tensor<4x8xf16, @p, [S(1)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.reduce_scatter"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<8xi16, @p, [P(min)]>) -> !sbp.tensor<8xi16, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.reduce_scatter"(%{{.*}}) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<4x8xbf16, @q, [B, P]>) -> !sbp.tensor<4x8xbf16, @q, [B, S(1)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.reduce_scatter"(%{{.*}}) <{mesh_axes = array<i64: 0, 1>}> : (!sbp.tensor<4x8xf32, @q, [P, P]>) -> !sbp.tensor<4x8xf32, @q, [S(0), S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.reduce_scatter"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xi64, @q, [P, S(1)]>) -> !sbp.tensor<4x8xi64, @q, [S(0), S(1)]>{{$}}
func.func @reduce_scatter(%a0: !sbp.tensor<4x8xf32, @p, [P]>, %a1: !sbp.tensor<4x8xf16, @p, [P(max)]>, %a2: !sbp.tensor<8xi16, @p, [P(min)]>, %a3: !sbp.tensor<4x8xbf16, @q, [B, P]>, %a4: !sbp.tensor<4x8xf32, @q, [P, P]>, %a5: !sbp.tensor<4x8xi64, @q, [P, S(1)]>) {
  %0 = sbp.reduce_scatter %a0 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  %1 = sbp.reduce_scatter %a1 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [P(max)]> -> !sbp.tensor<4x8xf16, @p, [S(1)]>
  %2 = sbp.reduce_scatter %a2 {mesh_axes = array<i64: 0>} : !sbp.tensor<8xi16, @p, [P(min)]> -> !sbp.tensor<8xi16, @p, [S(0)]>
  %3 = sbp.reduce_scatter %a3 {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [B, P]> -> !sbp.tensor<4x8xbf16, @q, [B, S(1)]>
  %4 = sbp.reduce_scatter %a4 {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [P, P]> -> !sbp.tensor<4x8xf32, @q, [S(0), S(0)]>
  %5 = sbp.reduce_scatter %a5 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi64, @q, [P, S(1)]> -> !sbp.tensor<4x8xi64, @q, [S(0), S(1)]>
  func.return
}
