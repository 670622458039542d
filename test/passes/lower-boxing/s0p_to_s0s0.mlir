// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sbp-opt %s -p "lower-boxing{planner=oneflow}" | filecheck %s --check-prefix=ONEFLOW
// RUN: sbp-opt %s -p lower-boxing,spmdize | filecheck %s --check-prefix=LOCAL
// RUN: sbp-run %s --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM

// (S(0), P) -> (S(0), S(0)) on a 2x2 mesh, 8x8 f32: one reduce-scatter inside each row (mesh axis 1)
// of the row block mesh axis 0 already holds: 4x8 partial sums become 2x8 reduced rows. 7.201 us
// modelled, 64 bytes per rank.
//
// planner=oneflow gives the same single reduce-scatter, i.e. OneFlow's *lazy* intra-group boxing.
// Real eager OneFlow rejects this pair in its acyclic path (tensor axis 0 split on mesh sizes [2]
// in src but [2, 2] in dst, reference/oneflow.md §4) and detours through (B, B): all-gather on
// axis 0, all-reduce on axis 1, slices. lower_boxing._acyclic does not model that split-count
// check, so this planner is slightly better than eager OneFlow here.

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[R:.*]] = sbp.reduce_scatter %a {mesh_axes = array<i64: 1>} : !sbp.tensor<8x8xf32, @q, [S(0), P]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(0)]>
// CHECK-NEXT:    func.return %[[R]] : !sbp.tensor<8x8xf32, @q, [S(0), S(0)]>
// ONEFLOW-LABEL: func.func @main(
// ONEFLOW-NEXT:    %[[R:.*]] = sbp.reduce_scatter %a {mesh_axes = array<i64: 1>} : !sbp.tensor<8x8xf32, @q, [S(0), P]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(0)]>
// ONEFLOW-NEXT:    func.return %[[R]]

// LOCAL:      %[[R:.*]] = sbp.reduce_scatter %a {mesh_axes = array<i64: 1>, placement = @q, src_sbp = #sbp.nd<[S(0), P]>, dst_sbp = #sbp.nd<[S(0), S(0)]>, global_shape = array<i64: 8, 8>} : tensor<4x8xf32> -> tensor<2x8xf32>

// SIM:      reduce_scatter mesh_axes=[1] [S(0), P]->[S(0), S(0)] f32[8,8]: bytes sent per rank [64, 64, 64, 64]
// SIM-NEXT: total bytes sent: 256 (all ranks); cost model: 256
// SIM-NEXT: check: OK

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%a: !sbp.tensor<8x8xf32, @q, [S(0), P]>) -> !sbp.tensor<8x8xf32, @q, [S(0), S(0)]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x8xf32, @q, [S(0), P]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(0)]>
  func.return %0 : !sbp.tensor<8x8xf32, @q, [S(0), S(0)]>
}
