// RUN: sbp-opt %s -p infer-sbp | filecheck %s
// RUN: sbp-opt %s -p "infer-sbp{rule=cost}" | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s -p "infer-sbp{rule=cost}" --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// Signatures of sbp.layer_norm (S(i), B, B -> S(i) for every axis but the last, no partial) and
// sbp.gelu (S(i) -> S(i), no partial). A layer_norm input split on its last axis is gathered; a
// partial input of gelu is reduce-scattered (under both rules: no partial candidate exists).

// CHECK-LABEL: func.func @main(
// CHECK:         sbp.layer_norm %x, %g, %b {sbp.signature = #sbp.sig<[S(0)], [B], [B] -> [S(0)]>}
// CHECK:         sbp.gelu %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>}
// CHECK:         sbp.gelu %p {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>}
// COST:          sbp.layer_norm %x, %g, %b {sbp.signature = #sbp.sig<[S(0)], [B], [B] -> [S(0)]>}
// COST:          sbp.gelu %p {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>}

// REPORT:      op sbp.layer_norm(f32[2,6,8][S(2)] @p, f32[8][B] @p, f32[8][B] @p)
// REPORT-NEXT:   * [S(0)], [B], [B] -> [S(0)]
// REPORT-NEXT:     [S(1)], [B], [B] -> [S(1)]
// REPORT-NEXT:     [B], [B], [B] -> [B]
// REPORT-NEXT:   chosen:
// REPORT:      op sbp.gelu(f32[2,6,8][S(0)] @p)
// REPORT-NEXT:   * [S(0)] -> [S(0)]
// REPORT-NEXT:     [S(1)] -> [S(1)]
// REPORT-NEXT:     [S(2)] -> [S(2)]
// REPORT-NEXT:     [B] -> [B]
// REPORT-NEXT:   chosen:
// REPORT:      op sbp.gelu(f32[6][P] @p)
// REPORT-NEXT:   * [S(0)] -> [S(0)]
// REPORT-NEXT:     [B] -> [B]
// REPORT-NEXT:   chosen:

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<2x6x8xf32, @p, [S(2)]>, %g: !sbp.tensor<8xf32, @p, [B]>, %b: !sbp.tensor<8xf32, @p, [B]>, %p: !sbp.tensor<6xf32, @p, [P]>) -> (!sbp.tensor<2x6x8xf32, @p>, !sbp.tensor<6xf32, @p>) {
  %0 = sbp.layer_norm %x, %g, %b : !sbp.tensor<2x6x8xf32, @p, [S(2)]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<2x6x8xf32, @p>
  %1 = sbp.gelu %0 : !sbp.tensor<2x6x8xf32, @p> -> !sbp.tensor<2x6x8xf32, @p>
  %2 = sbp.gelu %p : !sbp.tensor<6xf32, @p, [P]> -> !sbp.tensor<6xf32, @p>
  func.return %1, %2 : !sbp.tensor<2x6x8xf32, @p>, !sbp.tensor<6xf32, @p>
}
