// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// Elementwise ops on a 2x2 mesh. The ND path: candidates are the direct product of the per-axis
// 1-D lists (add_n: S(0)S(0), S(1)S(1), PP, BB -> 16 candidates), shape-filtered, then scanned in
// list order with the eager ND copy cost; a candidate whose inputs all match is taken at once.

sbp.placement @q "cpu" [[0, 1], [2, 3]]

// x (S(0), B) + y (B, S(1)): no candidate matches both. (S(0), S(1)) only slices: x's mesh axis 1
// B -> S(1) and y's mesh axis 0 B -> S(0), each priced 1 + 1 (ND base 1 + B->S 1): total 4.
// CHECK-LABEL: func.func @mixed(
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)]>} : !sbp.tensor<8x8xf32, @q, [S(0), B]>, !sbp.tensor<8x8xf32, @q, [B, S(1)]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>
// COST-LABEL: func.func @mixed(
// COST:         sbp.signature = #sbp.sig<[S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)]>
// REPORT:       chosen: [S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)] (lowest eager ND copy cost 4)
// REPORT-NEXT:  boxing: operand 0: [S(0), B] -> [S(0), S(1)]; operand 1: [B, S(1)] -> [S(0), S(1)]
func.func @mixed(%x: !sbp.tensor<8x8xf32, @q, [S(0), B]>, %y: !sbp.tensor<8x8xf32, @q, [B, S(1)]>) -> !sbp.tensor<8x8xf32, @q> {
  %0 = sbp.add %x, %y : !sbp.tensor<8x8xf32, @q, [S(0), B]>, !sbp.tensor<8x8xf32, @q, [B, S(1)]> -> !sbp.tensor<8x8xf32, @q>
  func.return %0 : !sbp.tensor<8x8xf32, @q>
}

// Matching inputs: kAllMatch takes the first candidate equal to both producers.
// CHECK-LABEL: func.func @matching(
// CHECK:         sbp.mul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[P, S(1)], [B, S(1)] -> [P, S(1)]>}
// CHECK:         sbp.relu %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>} : !sbp.tensor<8x8xf32, @q, [P, S(1)]>
// REPORT:       chosen: [P, S(1)], [B, S(1)] -> [P, S(1)] (first candidate whose inputs all match (kAllMatch))
// REPORT-NEXT:  boxing: none
func.func @matching(%x: !sbp.tensor<8x8xf32, @q, [P, S(1)]>, %y: !sbp.tensor<8x8xf32, @q, [B, S(1)]>) -> !sbp.tensor<8x8xf32, @q> {
  %0 = sbp.mul %x, %y : !sbp.tensor<8x8xf32, @q, [P, S(1)]>, !sbp.tensor<8x8xf32, @q, [B, S(1)]> -> !sbp.tensor<8x8xf32, @q>
  // relu has no P signature: the partial mesh axis is reduce-scattered (P -> S(0): 1 + 3*256 = 769)
  // rather than all-reduced (P -> B: 1 + 2*3*256 = 1537).
  %1 = sbp.relu %0 : !sbp.tensor<8x8xf32, @q> -> !sbp.tensor<8x8xf32, @q>
  func.return %1 : !sbp.tensor<8x8xf32, @q>
}

// Shape filter (floor division): a (2, 6) tensor cannot be (S(0), S(0)) on 2x2 (2/2 = 1 < 2); the
// candidate is removed by swap-with-last. u and v are transposed splits of each other: (S(0), S(1))
// and (S(1), S(0)) tie at 73 (one all-to-all per mesh axis of v, resp. u); the earlier one wins.
// CHECK-LABEL: func.func @transposed_splits(
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)]>}
// REPORT-LABEL: op sbp.add(f32[2,6][S(0), S(1)] @q, f32[2,6][S(1), S(0)] @q)
// REPORT-NEXT:     [B, B], [B, B] -> [B, B] {{ *}}order=0 oneflow_cost=578
// REPORT-NEXT:   * [S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)] {{ *}}order=0 oneflow_cost=73
// REPORT-NOT:      [S(0), S(0)], [S(0), S(0)]
// REPORT:          [S(1), S(0)], [S(1), S(0)] -> [S(1), S(0)] {{ *}}order=0 oneflow_cost=73
// REPORT:        chosen: [S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)] (lowest eager ND copy cost 73)
func.func @transposed_splits(%u: !sbp.tensor<2x6xf32, @q, [S(0), S(1)]>, %v: !sbp.tensor<2x6xf32, @q, [S(1), S(0)]>) -> !sbp.tensor<2x6xf32, @q> {
  %0 = sbp.add %u, %v : !sbp.tensor<2x6xf32, @q, [S(0), S(1)]>, !sbp.tensor<2x6xf32, @q, [S(1), S(0)]> -> !sbp.tensor<2x6xf32, @q>
  func.return %0 : !sbp.tensor<2x6xf32, @q>
}
