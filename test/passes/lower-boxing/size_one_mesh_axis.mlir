// RUN: sbp-opt %s -p "materialize-boxing,lower-boxing{planner=oneflow}" | filecheck %s --check-prefix=ONEFLOW
// RUN: sbp-opt %s -p "materialize-boxing,lower-boxing{planner=oneflow}" > %t.mlir && sbp-run %t.mlir --pipeline "" --check | filecheck %s --check-prefix=SIM
// RUN: sbp-opt %s -p "materialize-boxing,lower-boxing" | filecheck %s
// RUN: sbp-run %s --check | filecheck %s --check-prefix=SIM

// A mesh axis of size 1 ([[0, 1]] is 1x2) holds no split, replica or partial of its own: OneFlow's
// dimension reduction drops it, and its entry is set by a local step that moves no data (issue 11:
// the OneFlow planner left mesh axis 0 at B, so the last collective "changed mesh axis 0").

sbp.placement @m "cpu" [[0, 1]]
func.func @main(%x: !sbp.tensor<4x6xf32, @m, [B, S(0)]>) -> !sbp.tensor<4x6xf32, @m, [S(0), B]> {
  %0 = sbp.to_global %x : !sbp.tensor<4x6xf32, @m, [B, S(0)]> -> !sbp.tensor<4x6xf32, @m, [S(0), B]>
  func.return %0 : !sbp.tensor<4x6xf32, @m, [S(0), B]>
}

// ONEFLOW:      %[[G:.*]] = sbp.all_gather %x {mesh_axes = array<i64: 1>} : !sbp.tensor<4x6xf32, @m, [B, S(0)]> -> !sbp.tensor<4x6xf32, @m, [B, B]>{{$}}
// ONEFLOW-NEXT: %{{.*}} = sbp.all_slice %[[G]] {mesh_axes = array<i64: 0>} : !sbp.tensor<4x6xf32, @m, [B, B]> -> !sbp.tensor<4x6xf32, @m, [S(0), B]>{{$}}

// CHECK:      %[[S:.*]] = sbp.all_slice %x {mesh_axes = array<i64: 0>} : !sbp.tensor<4x6xf32, @m, [B, S(0)]> -> !sbp.tensor<4x6xf32, @m, [S(0), S(0)]>{{$}}
// CHECK-NEXT: %{{.*}} = sbp.all_gather %[[S]] {mesh_axes = array<i64: 1>} : !sbp.tensor<4x6xf32, @m, [S(0), S(0)]> -> !sbp.tensor<4x6xf32, @m, [S(0), B]>{{$}}

// SIM: total bytes sent: 96 (all ranks); cost model: 96
// SIM: check: OK
