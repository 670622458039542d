// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sbp-opt %s -p "lower-boxing{planner=oneflow}" | filecheck %s
// RUN: sbp-opt %s -p lower-boxing,spmdize | filecheck %s --check-prefix=LOCAL
// RUN: sbp-run %s --entry sum --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM-SUM
// RUN: sbp-run %s --entry two_d --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM-2D

// S -> P is sbp.to_partial: local, no communication (OneFlow's eager symmetric-s-to-p). Each rank
// puts its shard into a buffer of the full extent filled with the reduction's identity (0 for sum,
// -inf for max); reducing the buffers gives the global value back. Both planners agree. (Lazy
// OneFlow and DTensor have no S -> P: they go S -> B -> P, paying an all-gather.)

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// Uneven: 5 rows on 2 ranks are 3 + 2; each rank's 3x6 or 2x6 shard becomes a 5x6 buffer.
// CHECK-LABEL: func.func @sum(
// CHECK-NEXT:    %[[P:.*]] = sbp.to_partial %a {mesh_axes = array<i64: 0>} : !sbp.tensor<5x6xf32, @p, [S(0)]> -> !sbp.tensor<5x6xf32, @p, [P]>
// CHECK-NEXT:    func.return %[[P]]
// LOCAL-LABEL: func.func @sum(
// LOCAL-SAME:    %a: tensor<?x6xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 5, 6>, sbp.local_shapes = [array<i64: 3, 6>, array<i64: 2, 6>]}
// LOCAL-NEXT:    sbp.to_partial %a {mesh_axes = array<i64: 0>, placement = @p, src_sbp = #sbp.nd<[S(0)]>, dst_sbp = #sbp.nd<[P]>, global_shape = array<i64: 5, 6>} : tensor<?x6xf32> -> tensor<5x6xf32>
// SIM-SUM:      to_partial mesh_axes=[0] S(0)->P f32[5,6]: bytes sent per rank [0, 0]
// SIM-SUM-NEXT: total bytes sent: 0 (all ranks); cost model: 0
// SIM-SUM-NEXT: check: OK
func.func @sum(%a: !sbp.tensor<5x6xf32, @p, [S(0)]>) -> !sbp.tensor<5x6xf32, @p, [P]> {
  %0 = sbp.boxing %a : !sbp.tensor<5x6xf32, @p, [S(0)]> -> !sbp.tensor<5x6xf32, @p, [P]>
  func.return %0 : !sbp.tensor<5x6xf32, @p, [P]>
}

// CHECK-LABEL: func.func @max(
// CHECK-NEXT:    %[[P:.*]] = sbp.to_partial %a {mesh_axes = array<i64: 0>} : !sbp.tensor<5x6xf32, @p, [S(1)]> -> !sbp.tensor<5x6xf32, @p, [P(max)]>
// CHECK-NEXT:    func.return %[[P]]
// LOCAL-LABEL: func.func @max(
// LOCAL:         sbp.to_partial %a {{.*}} : tensor<5x3xf32> -> tensor<5x6xf32>
func.func @max(%a: !sbp.tensor<5x6xf32, @p, [S(1)]>) -> !sbp.tensor<5x6xf32, @p, [P(max)]> {
  %0 = sbp.boxing %a : !sbp.tensor<5x6xf32, @p, [S(1)]> -> !sbp.tensor<5x6xf32, @p, [P(max)]>
  func.return %0 : !sbp.tensor<5x6xf32, @p, [P(max)]>
}

// Different tensor axes on the two mesh axes: one to_partial per mesh axis (the outer one first,
// so that the remaining split S(1) stays the innermost).
// CHECK-LABEL: func.func @two_d(
// CHECK-NEXT:    %[[P0:.*]] = sbp.to_partial %a {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x8xf32, @q, [P, S(1)]>
// CHECK-NEXT:    %[[P1:.*]] = sbp.to_partial %[[P0]] {mesh_axes = array<i64: 1>} : !sbp.tensor<8x8xf32, @q, [P, S(1)]> -> !sbp.tensor<8x8xf32, @q, [P, P]>
// CHECK-NEXT:    func.return %[[P1]]
// LOCAL-LABEL: func.func @two_d(
// LOCAL:         sbp.to_partial %a {{.*}} : tensor<4x4xf32> -> tensor<8x4xf32>
// LOCAL-NEXT:    sbp.to_partial %{{.*}} : tensor<8x4xf32> -> tensor<8x8xf32>
// SIM-2D:      to_partial mesh_axes=[0] [S(0), S(1)]->[P, S(1)] f32[8,8]: bytes sent per rank [0, 0, 0, 0]
// SIM-2D-NEXT: to_partial mesh_axes=[1] [P, S(1)]->[P, P] f32[8,8]: bytes sent per rank [0, 0, 0, 0]
// SIM-2D-NEXT: total bytes sent: 0 (all ranks); cost model: 0
// SIM-2D-NEXT: check: OK
func.func @two_d(%a: !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<8x8xf32, @q, [P, P]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x8xf32, @q, [P, P]>
  func.return %0 : !sbp.tensor<8x8xf32, @q, [P, P]>
}

// The same tensor axis on both mesh axes: one to_partial over the merged axes.
// CHECK-LABEL: func.func @two_d_same(
// CHECK-NEXT:    %[[P:.*]] = sbp.to_partial %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<8x8xf32, @q, [S(0), S(0)]> -> !sbp.tensor<8x8xf32, @q, [P, P]>
// CHECK-NEXT:    func.return %[[P]]
// LOCAL-LABEL: func.func @two_d_same(
// LOCAL:         sbp.to_partial %a {{.*}} : tensor<2x8xf32> -> tensor<8x8xf32>
func.func @two_d_same(%a: !sbp.tensor<8x8xf32, @q, [S(0), S(0)]>) -> !sbp.tensor<8x8xf32, @q, [P, P]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x8xf32, @q, [S(0), S(0)]> -> !sbp.tensor<8x8xf32, @q, [P, P]>
  func.return %0 : !sbp.tensor<8x8xf32, @q, [P, P]>
}
