// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: sbp-opt %s --infer-sbp="rule=cost" --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=COSTREPORT

// x: S(0) + y: B, equal shapes, 1-D mesh of 2.
// rule=oneflow: S(0),S(0)->S(0) and B,B->B both get OrderValue -10 (one input matches), but
// IbnCopyCost prices the B->S slice of y at INT32_MAX and the S->B all-gather of x at its size
// (128 bytes), so OneFlow all-gathers x and computes the add replicated: [B].
// rule=cost slices y locally for free and keeps [S(0)]: 0 us against one all-gather.

sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    -> !sbp.tensor<8x4xf32, @p, [B]>
// CHECK:         sbp.add {{.*}} {sbp.signature = #sbp.sig<[B], [B] -> [B]>} : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p, [B]>

// COST-LABEL: func.func @main(
// COST-SAME:    -> !sbp.tensor<8x4xf32, @p, [S(0)]>
// COST:         sbp.add {{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p, [S(0)]>

// REPORT:      // sbp-report (rule=oneflow)
// REPORT-NEXT: total rule=oneflow: 7.201 us modelled, 128 bytes sent{{.*}}, 1 ops with boxing
// REPORT-NEXT: total rule=cost: 0.000 us modelled, 0 bytes sent{{.*}}, 1 ops with boxing
// REPORT:        [S(0)], [S(0)] -> [S(0)] {{ *}}order=-10 oneflow_cost=2.14748e+09 modelled=0.000us
// REPORT:      * [B], [B] -> [B] {{ *}}order=-10 oneflow_cost=128 modelled=7.201us
// REPORT-NEXT:   chosen: [B], [B] -> [B] (lowest (OrderValue, IbnCopyCost) = (-10, 128))
// REPORT-NEXT:   boxing: operand 0: [S(0)] -> [B]
// The totals: rule=oneflow pays one all-gather (7.201 us, 128 bytes over both ranks), rule=cost nothing.

// COSTREPORT:      // sbp-report (rule=cost)
// COSTREPORT-NEXT: total rule=oneflow: 7.201 us modelled, 128 bytes sent{{.*}}, 1 ops with boxing
// COSTREPORT-NEXT: total rule=cost: 0.000 us modelled, 0 bytes sent{{.*}}, 1 ops with boxing
// COSTREPORT:      * [S(0)], [S(0)] -> [S(0)] {{ *}}order=0 oneflow_cost=0 modelled=0.000us
// COSTREPORT:        chosen: [S(0)], [S(0)] -> [S(0)] (lowest modelled boxing time 0.000 us)
// COSTREPORT-NEXT:   boxing: operand 1: [B] -> [S(0)]
func.func @main(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>, %y: !sbp.tensor<8x4xf32, @p, [B]>) -> !sbp.tensor<8x4xf32, @p> {
  %0 = sbp.add %x, %y : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  func.return %0 : !sbp.tensor<8x4xf32, @p>
}
