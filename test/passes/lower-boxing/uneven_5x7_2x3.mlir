// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sbp-opt %s -p "lower-boxing{planner=oneflow}" | filecheck %s --check-prefix=ONEFLOW
// RUN: sbp-run %s --entry swap --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM-SWAP
// RUN: sbp-run %s --entry reduce --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM-REDUCE
// RUN: sbp-run %s --entry gather --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM-GATHER

// Uneven shapes: a 5x7 f32 tensor on a 2x3 mesh, where no split is even (5 rows on 2 or 3 ranks,
// 7 columns on 2 or 3 ranks). The balanced split gives the first n % k ranks one more element;
// every optimal plan below is executed on the simulated mesh (sbp-run --check) and reassembles to
// the global value, with the bytes measured equal to the cost model's count (the oneflow plans are
// executed for every pair by test/unit/test_boxing_exhaustive.py).

sbp.placement @r "cpu" [[0, 1, 2], [3, 4, 5]]

// (S(0), S(1)) -> (S(1), S(0)): optimal is one all-to-all over all 6 ranks (9.600 us, 100 bytes);
// oneflow takes 5 steps via all-B (22.802 us, 884 bytes).
// CHECK-LABEL: func.func @swap(
// CHECK-NEXT:    %[[T:.*]] = sbp.all_to_all %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<5x7xf32, @r, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>
// CHECK-NEXT:    func.return %[[T]]
// ONEFLOW-LABEL: func.func @swap(
// ONEFLOW-NEXT:    sbp.all_gather %a {mesh_axes = array<i64: 0>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [B, S(1)]>
// ONEFLOW-NEXT:    sbp.all_to_all {{.*}} {mesh_axes = array<i64: 1>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [B, S(0)]>
// ONEFLOW-NEXT:    sbp.all_gather {{.*}} {mesh_axes = array<i64: 1>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [B, B]>
// ONEFLOW-NEXT:    sbp.all_slice {{.*}} {mesh_axes = array<i64: 0>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [S(1), B]>
// ONEFLOW-NEXT:    sbp.all_slice {{.*}} {mesh_axes = array<i64: 1>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>
// ONEFLOW-NEXT:    func.return
// Rank (i, j) holds rows block i (3 or 2 rows) x columns block j (3, 2, 2 columns) and needs
// columns block i (4 or 3 columns) x rows block j (2, 2, 1 rows); it sends what it holds outside
// that (f32): 3, 5, 6, 6, 3, 2 elements.
// SIM-SWAP:      all_to_all mesh_axes=[0, 1] [S(0), S(1)]->[S(1), S(0)] f32[5,7]: bytes sent per rank [12, 20, 24, 24, 12, 8]
// SIM-SWAP-NEXT: total bytes sent: 100 (all ranks); cost model: 100
// SIM-SWAP-NEXT: check: OK
func.func @swap(%a: !sbp.tensor<5x7xf32, @r, [S(0), S(1)]>) -> !sbp.tensor<5x7xf32, @r, [S(1), S(0)]> {
  %0 = sbp.boxing %a : !sbp.tensor<5x7xf32, @r, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>
  func.return %0 : !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>
}

// (P, B) -> (S(1), S(0)): optimal slices the replicated axis first (free), then reduce-scatters the
// smaller rows (7.200 us, 140 bytes); oneflow reduce-scatters the full tensor to S(0) (its
// P -> S(i>0) table), all-to-alls to S(1), then slices (14.401 us, 624 bytes).
// CHECK-LABEL: func.func @reduce(
// CHECK-NEXT:    %[[S:.*]] = sbp.all_slice %a {mesh_axes = array<i64: 1>} : !sbp.tensor<5x7xf32, @r, [P, B]> -> !sbp.tensor<5x7xf32, @r, [P, S(0)]>
// CHECK-NEXT:    %[[R:.*]] = sbp.reduce_scatter %[[S]] {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @r, [P, S(0)]> -> !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>
// CHECK-NEXT:    func.return %[[R]]
// ONEFLOW-LABEL: func.func @reduce(
// ONEFLOW-NEXT:    sbp.reduce_scatter %a {mesh_axes = array<i64: 0>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [S(0), B]>
// ONEFLOW-NEXT:    sbp.all_to_all {{.*}} {mesh_axes = array<i64: 0>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [S(1), B]>
// ONEFLOW-NEXT:    sbp.all_slice {{.*}} {mesh_axes = array<i64: 1>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>
// ONEFLOW-NEXT:    func.return
// SIM-REDUCE:      all_slice mesh_axes=[1] [P, B]->[P, S(0)] f32[5,7]: bytes sent per rank [0, 0, 0, 0, 0, 0]
// SIM-REDUCE-NEXT: reduce_scatter mesh_axes=[0] [P, S(0)]->[S(1), S(0)] f32[5,7]: bytes sent per rank [24, 24, 12, 32, 32, 16]
// SIM-REDUCE-NEXT: total bytes sent: 140 (all ranks); cost model: 140
// SIM-REDUCE-NEXT: check: OK
func.func @reduce(%a: !sbp.tensor<5x7xf32, @r, [P, B]>) -> !sbp.tensor<5x7xf32, @r, [S(1), S(0)]> {
  %0 = sbp.boxing %a : !sbp.tensor<5x7xf32, @r, [P, B]> -> !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>
  func.return %0 : !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>
}

// (S(1), S(1)) -> (B, B): one all-gather over all 6 ranks (mesh axes [0, 1] merged; 9.602 us,
// 700 bytes); oneflow follows its S(i>0) -> B table, all-to-all to S(0) then all-gather, both on
// the merged axes (19.202 us, 816 bytes).
// CHECK-LABEL: func.func @gather(
// CHECK-NEXT:    %[[G:.*]] = sbp.all_gather %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<5x7xf32, @r, [S(1), S(1)]> -> !sbp.tensor<5x7xf32, @r, [B, B]>
// CHECK-NEXT:    func.return %[[G]]
// ONEFLOW-LABEL: func.func @gather(
// ONEFLOW-NEXT:    sbp.all_to_all %a {mesh_axes = array<i64: 0, 1>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [S(0), S(0)]>
// ONEFLOW-NEXT:    sbp.all_gather {{.*}} {mesh_axes = array<i64: 0, 1>} : {{.*}} -> !sbp.tensor<5x7xf32, @r, [B, B]>
// ONEFLOW-NEXT:    func.return
// SIM-GATHER:      all_gather mesh_axes=[0, 1] [S(1), S(1)]->[B, B] f32[5,7]: bytes sent per rank [200, 100, 100, 100, 100, 100]
// SIM-GATHER-NEXT: total bytes sent: 700 (all ranks); cost model: 700
// SIM-GATHER-NEXT: check: OK
func.func @gather(%a: !sbp.tensor<5x7xf32, @r, [S(1), S(1)]>) -> !sbp.tensor<5x7xf32, @r, [B, B]> {
  %0 = sbp.boxing %a : !sbp.tensor<5x7xf32, @r, [S(1), S(1)]> -> !sbp.tensor<5x7xf32, @r, [B, B]>
  func.return %0 : !sbp.tensor<5x7xf32, @r, [B, B]>
}
