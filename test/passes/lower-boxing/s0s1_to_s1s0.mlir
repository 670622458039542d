// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sbp-opt %s -p "lower-boxing{planner=oneflow}" | filecheck %s --check-prefix=ONEFLOW
// RUN: sbp-run %s --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM

// (S(0), S(1)) -> (S(1), S(0)) on a 2x2 mesh, 8x8 f32. Both tensor axes are split, each on a
// different mesh axis, and each must move to the other: the per-axis dependencies form a cycle
// (OneFlow reference §4: a dst axis splitting tensor axis a waits for the src axis splitting a).
//
// optimal (1 step, 8.401 us modelled, 128 bytes): a single all-to-all over the merged mesh axes
// [0, 1] (4 ranks). Rank (i, j) holds rows block i, columns block j before and columns block i,
// rows block j after: ranks (0, 0) and (1, 1) already hold their target block and send nothing,
// ranks (0, 1) and (1, 0) swap theirs.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[T:.*]] = sbp.all_to_all %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<8x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
// CHECK-NEXT:    func.return %[[T]] : !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
// SIM:      all_to_all mesh_axes=[0, 1] [S(0), S(1)]->[S(1), S(0)] f32[8,8]: bytes sent per rank [0, 64, 64, 0]
// SIM-NEXT: total bytes sent: 128 (all ranks); cost model: 128
// SIM-NEXT: check: OK
//
// oneflow (5 steps, 21.603 us, 1024 bytes): the acyclic order fails and so does the detour through
// (S(0), S(0)) (its second leg would re-split mesh axis 0 under a nested split), so it goes through
// all-B: S(0) -> B on axis 0; S(1) -> B on axis 1 by the eager table (all-to-all to S(0), then
// all-gather); then two slices.
// ONEFLOW-LABEL: func.func @main(
// ONEFLOW-NEXT:    %[[G:.*]] = sbp.all_gather %a {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x8xf32, @q, [B, S(1)]>
// ONEFLOW-NEXT:    %[[T:.*]] = sbp.all_to_all %[[G]] {mesh_axes = array<i64: 1>} : !sbp.tensor<8x8xf32, @q, [B, S(1)]> -> !sbp.tensor<8x8xf32, @q, [B, S(0)]>
// ONEFLOW-NEXT:    %[[G2:.*]] = sbp.all_gather %[[T]] {mesh_axes = array<i64: 1>} : !sbp.tensor<8x8xf32, @q, [B, S(0)]> -> !sbp.tensor<8x8xf32, @q, [B, B]>
// ONEFLOW-NEXT:    %[[S1:.*]] = sbp.all_slice %[[G2]] {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @q, [B, B]> -> !sbp.tensor<8x8xf32, @q, [S(1), B]>
// ONEFLOW-NEXT:    %[[S2:.*]] = sbp.all_slice %[[S1]] {mesh_axes = array<i64: 1>} : !sbp.tensor<8x8xf32, @q, [S(1), B]> -> !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
// ONEFLOW-NEXT:    func.return %[[S2]] : !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%a: !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<8x8xf32, @q, [S(1), S(0)]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
  func.return %0 : !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
}
