// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// A bias add: x (8,4) S(0) + bias (4,) B. The ranks differ, so OneFlow's broadcast_add rule
// applies: the leading axis gives (S(0), B) -> S(0), the aligned trailing axis (S(1), S(0)) -> S(1),
// then P,P -> P and the all-B. (S(0), B) matches both inputs: no boxing at all.

sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @bias(
// CHECK-SAME:    -> !sbp.tensor<8x4xf32, @p, [S(0)]>
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p, [S(0)]>

// REPORT:      total rule=oneflow: 14.401 us modelled, 192 bytes sent{{.*}}, 1 ops with boxing
// REPORT-NEXT: total rule=cost: 14.401 us modelled, 192 bytes sent{{.*}}, 1 ops with boxing
// REPORT:      op sbp.add(f32[8,4][S(0)] @p, f32[4][B] @p)
// REPORT-NEXT:   * [S(0)], [B] -> [S(0)] {{ *}}order=-20 oneflow_cost=0 modelled=0.000us
// REPORT-NEXT:     [S(1)], [S(0)] -> [S(1)] {{ *}}order=0
// REPORT-NEXT:     [P], [P] -> [P] {{ *}}order=0
// REPORT-NEXT:     [B], [B] -> [B] {{ *}}order=-10
// REPORT-NEXT:   chosen: [S(0)], [B] -> [S(0)] (lowest (OrderValue, IbnCopyCost) = (-20, 0))
// REPORT-NEXT:   boxing: none
func.func @bias(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>, %bias: !sbp.tensor<4xf32, @p, [B]>) -> !sbp.tensor<8x4xf32, @p> {
  %0 = sbp.add %x, %bias : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  func.return %0 : !sbp.tensor<8x4xf32, @p>
}

// Unequal ranks, tie-break by list order: OneFlow emits the aligned trailing axes from the last
// one backwards, so (S(2), S(1)) precedes (S(1), S(0)). (S(0), B) is removed by the shape filter
// (a's axis 0 has 1 row); the other three each reduce-scatter or all-reduce both inputs at 2 x 96
// bytes and tie on (0, 192): the first, S(2), wins.
// CHECK-LABEL: func.func @trailing_order(
// CHECK:         sbp.maximum %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(2)], [S(1)] -> [S(2)]>} : !sbp.tensor<1x4x6xf32, @p, [P]>, !sbp.tensor<4x6xf32, @p, [P]> -> !sbp.tensor<1x4x6xf32, @p, [S(2)]>
// REPORT-LABEL: op sbp.maximum(f32[1,4,6][P] @p, f32[4,6][P] @p)
// REPORT-NEXT:   * [S(2)], [S(1)] -> [S(2)] {{ *}}order=0 oneflow_cost=192
// REPORT-NEXT:     [S(1)], [S(0)] -> [S(1)] {{ *}}order=0 oneflow_cost=192
// REPORT-NEXT:     [B], [B] -> [B] {{ *}}order=0 oneflow_cost=192
// Only this op needs boxing in the whole program.
func.func @trailing_order(%a: !sbp.tensor<1x4x6xf32, @p, [P]>, %b: !sbp.tensor<4x6xf32, @p, [P]>) {
  %0 = sbp.maximum %a, %b : !sbp.tensor<1x4x6xf32, @p, [P]>, !sbp.tensor<4x6xf32, @p, [P]> -> !sbp.tensor<1x4x6xf32, @p>
  func.return
}
