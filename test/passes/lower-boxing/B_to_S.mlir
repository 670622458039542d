// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sbp-opt %s -p "lower-boxing{planner=oneflow}" | filecheck %s --check-prefix=ONEFLOW
// RUN: sbp-run %s --entry two_d --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM2

// B -> S(i) is a local slice (sbp.all_slice, OneFlow's symmetric-b-to-s): no communication, with
// either planner. On a 2-D mesh, B -> S on several mesh axes are slices too; the optimal planner
// merges (B, B) -> (S(0), S(0)) into one slice over mesh axes [0, 1].

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @one_d(
// CHECK-NOT:     sbp.{{all_gather|all_reduce|reduce_scatter|all_to_all|to_partial}}
// CHECK:         %[[S0:.*]] = sbp.all_slice %a {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @p, [B]> -> !sbp.tensor<8x6xf32, @p, [S(0)]>
// CHECK-NEXT:    %[[S1:.*]] = sbp.all_slice %a {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @p, [B]> -> !sbp.tensor<8x6xf32, @p, [S(1)]>
// CHECK-NEXT:    func.return %[[S0]], %[[S1]]
// ONEFLOW-LABEL: func.func @one_d(
// ONEFLOW-NEXT:    %[[S0:.*]] = sbp.all_slice %a {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @p, [B]> -> !sbp.tensor<8x6xf32, @p, [S(0)]>
// ONEFLOW-NEXT:    %[[S1:.*]] = sbp.all_slice %a {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @p, [B]> -> !sbp.tensor<8x6xf32, @p, [S(1)]>
// ONEFLOW-NEXT:    func.return %[[S0]], %[[S1]]
func.func @one_d(%a: !sbp.tensor<8x6xf32, @p, [B]>) -> (!sbp.tensor<8x6xf32, @p, [S(0)]>, !sbp.tensor<8x6xf32, @p, [S(1)]>) {
  %0 = sbp.boxing %a : !sbp.tensor<8x6xf32, @p, [B]> -> !sbp.tensor<8x6xf32, @p, [S(0)]>
  %1 = sbp.boxing %a : !sbp.tensor<8x6xf32, @p, [B]> -> !sbp.tensor<8x6xf32, @p, [S(1)]>
  func.return %0, %1 : !sbp.tensor<8x6xf32, @p, [S(0)]>, !sbp.tensor<8x6xf32, @p, [S(1)]>
}

// CHECK-LABEL: func.func @two_d(
// CHECK-NOT:     sbp.{{all_gather|all_reduce|reduce_scatter|all_to_all|to_partial}}
// CHECK:         %[[A:.*]] = sbp.all_slice %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<8x6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q, [S(0), S(0)]>
// CHECK-NEXT:    %[[B0:.*]] = sbp.all_slice %a {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q, [S(0), B]>
// CHECK-NEXT:    %[[B1:.*]] = sbp.all_slice %[[B0]] {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [S(0), B]> -> !sbp.tensor<8x6xf32, @q, [S(0), S(1)]>
// CHECK-NEXT:    %[[C:.*]] = sbp.all_slice %a {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q, [B, S(1)]>
// CHECK-NEXT:    func.return %[[A]], %[[B1]], %[[C]]
// ONEFLOW-LABEL: func.func @two_d(
// ONEFLOW-NOT:     sbp.{{all_gather|all_reduce|reduce_scatter|all_to_all|to_partial}}
// ONEFLOW:         sbp.all_slice %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<8x6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q, [S(0), S(0)]>
// ONEFLOW-COUNT-3: sbp.all_slice
// ONEFLOW-NEXT:    func.return
// SIM2-COUNT-4: all_slice {{.*}}: bytes sent per rank [0, 0, 0, 0]
// SIM2:         total bytes sent: 0 (all ranks); cost model: 0
// SIM2-NEXT:    check: OK
func.func @two_d(%a: !sbp.tensor<8x6xf32, @q, [B, B]>) -> (!sbp.tensor<8x6xf32, @q, [S(0), S(0)]>, !sbp.tensor<8x6xf32, @q, [S(0), S(1)]>, !sbp.tensor<8x6xf32, @q, [B, S(1)]>) {
  %0 = sbp.boxing %a : !sbp.tensor<8x6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q, [S(0), S(0)]>
  %1 = sbp.boxing %a : !sbp.tensor<8x6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q, [S(0), S(1)]>
  %2 = sbp.boxing %a : !sbp.tensor<8x6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q, [B, S(1)]>
  func.return %0, %1, %2 : !sbp.tensor<8x6xf32, @q, [S(0), S(0)]>, !sbp.tensor<8x6xf32, @q, [S(0), S(1)]>, !sbp.tensor<8x6xf32, @q, [B, S(1)]>
}
