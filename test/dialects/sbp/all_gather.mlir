// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.all_gather: S(i) -> B on each mesh axis in mesh_axes; other mesh axes unchanged.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @all_gather(
// CHECK-NEXT:    %{{.*}} = sbp.all_gather %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_gather %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [S(1)]> -> !sbp.tensor<4x8xf16, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_gather %{{.*}} {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xbf16, @q, [S(0), B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_gather %{{.*}} {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [S(1), S(1)]> -> !sbp.tensor<4x8xf32, @q, [B, B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_gather %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi32, @q, [S(1), P]> -> !sbp.tensor<4x8xi32, @q, [B, P]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_gather %{{.*}} {mesh_axes = array<i64: 1, 0>} : !sbp.tensor<4x8xi64, @q, [S(0), S(0)]> -> !sbp.tensor<4x8xi64, @q, [B, B]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "all_gather"
// GENERIC:       %{{.*}} = "sbp.all_gather"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_gather"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf16, @p, [S(1)]>) -> !sbp.tensor<4x8xf16, @p, [B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_gather"(%{{.*}}) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<4x8xbf16, @q, [S(0), S(1)]>) -> !sbp.tensor<4x8xbf16, @q, [S(0), B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_gather"(%{{.*}}) <{mesh_axes = array<i64: 0, 1>}> : (!sbp.tensor<4x8xf32, @q, [S(1), S(1)]>) -> !sbp.tensor<4x8xf32, @q, [B, B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_gather"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xi32, @q, [S(1), P]>) -> !sbp.tensor<4x8xi32, @q, [B, P]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_gather"(%{{.*}}) <{mesh_axes = array<i64: 1, 0>}> : (!sbp.tensor<4x8xi64, @q, [S(0), S(0)]>) -> !sbp.tensor<4x8xi64, @q, [B, B]>{{$}}
func.func @all_gather(%a0: !sbp.tensor<4x8xf32, @p, [S(0)]>, %a1: !sbp.tensor<4x8xf16, @p, [S(1)]>, %a2: !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]>, %a3: !sbp.tensor<4x8xf32, @q, [S(1), S(1)]>, %a4: !sbp.tensor<4x8xi32, @q, [S(1), P]>, %a5: !sbp.tensor<4x8xi64, @q, [S(0), S(0)]>) {
  %0 = sbp.all_gather %a0 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [B]>
  %1 = sbp.all_gather %a1 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [S(1)]> -> !sbp.tensor<4x8xf16, @p, [B]>
  %2 = sbp.all_gather %a2 {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xbf16, @q, [S(0), B]>
  %3 = sbp.all_gather %a3 {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [S(1), S(1)]> -> !sbp.tensor<4x8xf32, @q, [B, B]>
  %4 = sbp.all_gather %a4 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi32, @q, [S(1), P]> -> !sbp.tensor<4x8xi32, @q, [B, P]>
  %5 = sbp.all_gather %a5 {mesh_axes = array<i64: 1, 0>} : !sbp.tensor<4x8xi64, @q, [S(0), S(0)]> -> !sbp.tensor<4x8xi64, @q, [B, B]>
  func.return
}
