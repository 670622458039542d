// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s --check-prefix=COST
// RUN: sbp-opt %examples/seed.mlir --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// The seed article's program: t3 = t1 + t2 with t1: S(0), t2: S(1) on ranks [0, 1].
// Equal shapes, so OneFlow runs add_n: candidates S(0),S(0)->S(0); S(1),S(1)->S(1); P,P->P;
// B,B->B. The two split signatures tie on (OrderValue -10, IbnCopyCost = size = 32 bytes);
// the earlier one, S(0), wins. rule=cost agrees (one all-to-all either way; S(0) first).

sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    -> !sbp.tensor<2x4xf32, @p, [S(0)]>
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p, [S(0)]>
// CHECK-NEXT:    func.return %{{.*}} : !sbp.tensor<2x4xf32, @p, [S(0)]>

// COST-LABEL: func.func @main(
// COST:         sbp.add {{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} {{.*}} -> !sbp.tensor<2x4xf32, @p, [S(0)]>

// REPORT:      op sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p)
// REPORT-NEXT:   * [S(0)], [S(0)] -> [S(0)] {{ *}}order=-10 oneflow_cost=32 modelled={{.*}}
// REPORT-NEXT:     [S(1)], [S(1)] -> [S(1)] {{ *}}order=-10 oneflow_cost=32 modelled={{.*}}
// REPORT-NEXT:     [P], [P] -> [P] {{ *}}order=0 oneflow_cost=1.84467e+19 modelled={{.*}}
// REPORT-NEXT:     [B], [B] -> [B] {{ *}}order=0 oneflow_cost=64 modelled={{.*}}
// REPORT-NEXT:   chosen: [S(0)], [S(0)] -> [S(0)] (lowest (OrderValue, IbnCopyCost) = (-10, 32))
// REPORT-NEXT:   boxing: operand 1: [S(1)] -> [S(0)]
func.func @main(%t1: !sbp.tensor<2x4xf32, @p, [S(0)]>, %t2: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p> {
  %t3 = sbp.add %t1, %t2 : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p>
  func.return %t3 : !sbp.tensor<2x4xf32, @p>
}
