// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.all_slice: B -> S(i) on each mesh axis in mesh_axes (a local slice, no communication).

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @all_slice(
// CHECK-NEXT:    %{{.*}} = sbp.all_slice %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_slice %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi16, @p, [B]> -> !sbp.tensor<4x8xi16, @p, [S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_slice %{{.*}} {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [S(0), B]> -> !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_slice %{{.*}} {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf16, @q, [B, B]> -> !sbp.tensor<4x8xf16, @q, [S(1), S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.all_slice %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi64, @q, [B, P]> -> !sbp.tensor<4x8xi64, @q, [S(0), P]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "all_slice"
// GENERIC:       %{{.*}} = "sbp.all_slice"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_slice"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xi16, @p, [B]>) -> !sbp.tensor<4x8xi16, @p, [S(1)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_slice"(%{{.*}}) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<4x8xbf16, @q, [S(0), B]>) -> !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_slice"(%{{.*}}) <{mesh_axes = array<i64: 0, 1>}> : (!sbp.tensor<4x8xf16, @q, [B, B]>) -> !sbp.tensor<4x8xf16, @q, [S(1), S(1)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.all_slice"(%{{.*}}) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x8xi64, @q, [B, P]>) -> !sbp.tensor<4x8xi64, @q, [S(0), P]>{{$}}
func.func @all_slice(%a0: !sbp.tensor<4x8xf32, @p, [B]>, %a1: !sbp.tensor<4x8xi16, @p, [B]>, %a2: !sbp.tensor<4x8xbf16, @q, [S(0), B]>, %a3: !sbp.tensor<4x8xf16, @q, [B, B]>, %a4: !sbp.tensor<4x8xi64, @q, [B, P]>) {
  %0 = sbp.all_slice %a0 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  %1 = sbp.all_slice %a1 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi16, @p, [B]> -> !sbp.tensor<4x8xi16, @p, [S(1)]>
  %2 = sbp.all_slice %a2 {mesh_axes = array<i64: 1>} : !sbp.tensor<4x8xbf16, @q, [S(0), B]> -> !sbp.tensor<4x8xbf16, @q, [S(0), S(1)]>
  %3 = sbp.all_slice %a3 {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf16, @q, [B, B]> -> !sbp.tensor<4x8xf16, @q, [S(1), S(1)]>
  %4 = sbp.all_slice %a4 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi64, @q, [B, P]> -> !sbp.tensor<4x8xi64, @q, [S(0), P]>
  func.return
}
