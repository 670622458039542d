// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.all_to_all: S(i) -> S(j), i != j, on each mesh axis in mesh_axes.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @all_to_all(
// CHECK-NEXT:    %{{.*}} = sbp.all_to_all %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_to_all %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [S(1)]> -> !sbp.tensor<4x8xf16, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_to_all %{{.*}} {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xbf16, @q, [S(0), S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_to_all %{{.*}} {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q, [S(1), S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_to_all %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<2x4x8xi32, @q, [S(2), B]> -> !sbp.tensor<2x4x8xi32, @q, [S(0), B]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "all_to_all"
// GENERIC:       %{{.*}} = "sbp.all_to_all"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [S(1)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_to_all"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf16, @p, [S(1)]>) -> !sbp.tensor<4x8xf16, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_to_all"(%{{.*}}) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<4x8xbf16, @q, [S(0), S(1)]>) -> !sbp.tensor<4x8xbf16, @q, [S(0), S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_to_all"(%{{.*}}) <{mesh_axes = array<i64: 0, 1>}> : (!sbp.tensor<4x8xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<4x8xf32, @q, [S(1), S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_to_all"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<2x4x8xi32, @q, [S(2), B]>) -> !sbp.tensor<2x4x8xi32, @q, [S(0), B]>{{$}}
func.func @all_to_all(%a0: !sbp.tensor<4x8xf32, @p, [S(0)]>, %a1: !sbp.tensor<4x8xf16, @p, [S(1)]>, %a2: !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]>, %a3: !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>, %a4: !sbp.tensor<2x4x8xi32, @q, [S(2), B]>) {
  %0 = sbp.all_to_all %a0 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>
  %1 = sbp.all_to_all %a1 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf16, @p, [S(1)]> -> !sbp.tensor<4x8xf16, @p, [S(0)]>
  %2 = sbp.all_to_all %a2 {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xbf16, @q, [S(0), S(0)]>
  %3 = sbp.all_to_all %a3 {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q, [S(1), S(0)]>
  %4 = sbp.all_to_all %a4 {mesh_axes = array<i64: 0>} : !sbp.tensor<2x4x8xi32, @q, [S(2), B]> -> !sbp.tensor<2x4x8xi32, @q, [S(0), B]>
  func.return
}
