// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s
// RUN: sbp-opt %s --sbp-report 2>&1 >/dev/null | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s --infer-sbp --sbp-report=json 2>&1 >/dev/null | filecheck %s --check-prefix=JSON
// RUN: sbp-opt %s --infer-sbp --sbp-report | filecheck %s --check-prefix=IR

// The --sbp-report goes to stderr (the IR still goes to stdout): per op the candidates with
// OneFlow's order value and copy cost and the modelled α-β time, the choice and why, the boxing
// the inputs need, then the totals of both rules.

sbp.placement @p "cpu" [0, 1]

// CHECK:      // sbp-report (rule=oneflow)
// CHECK-NEXT: total rule=oneflow: {{[0-9]+\.[0-9][0-9][0-9]}} us modelled, 64 bytes sent{{.*}}, 1 ops with boxing
// CHECK-NEXT: total rule=cost: {{[0-9]+\.[0-9][0-9][0-9]}} us modelled, 64 bytes sent{{.*}}, 1 ops with boxing
// CHECK-NEXT: op sbp.matmul(f32[4,6][S(0)] @p, f32[6,8][B] @p)
// CHECK-NEXT:   * [S(0)], [B] -> [S(0)] {{ *}}order=-20 oneflow_cost=0 modelled=0.000us
// CHECK-NEXT:     [B], [S(1)] -> [S(1)] {{ *}}order=0 oneflow_cost=2.14748e+09 modelled={{[0-9.]+}}us
// CHECK-NEXT:     [S(1)], [S(0)] -> [P] {{ *}}order=0 oneflow_cost={{.*}} modelled={{[0-9.]+}}us
// CHECK-NEXT:     [P], [B] -> [P] {{ *}}order=-10 oneflow_cost=9.22337e+18 modelled={{[0-9.]+}}us
// CHECK-NEXT:     [B], [P] -> [P] {{ *}}order=0 oneflow_cost={{.*}} modelled={{[0-9.]+}}us
// CHECK-NEXT:     [B], [B] -> [B] {{ *}}order=-10 oneflow_cost=96 modelled={{[0-9.]+}}us
// CHECK-NEXT:   chosen: [S(0)], [B] -> [S(0)] (lowest (OrderValue, IbnCopyCost) = (-20, 0))
// CHECK-NEXT:   boxing: none
// CHECK-NEXT: op sbp.add(f32[4,8][S(0)] @p, f32[4,8][S(1)] @p)
// CHECK:        chosen: [S(0)], [S(0)] -> [S(0)] (lowest (OrderValue, IbnCopyCost) = (-10, 128))
// CHECK-NEXT:   boxing: operand 1: [S(1)] -> [S(0)]
// CHECK-NOT:  {{.}}

// COST:      // sbp-report (rule=cost)
// COST-NEXT: total rule=oneflow:
// COST-NEXT: total rule=cost:
// COST-NEXT: op sbp.matmul(f32[4,6][S(0)] @p, f32[6,8][B] @p)
// COST:        chosen: [S(0)], [B] -> [S(0)] (lowest modelled boxing time 0.000 us)

// JSON:      {
// JSON-NEXT:   "rule": "oneflow",
// JSON-NEXT:   "ops": [
// JSON-NEXT:     {
// JSON-NEXT:       "op": "sbp.matmul(f32[4,6][S(0)] @p, f32[6,8][B] @p)",
// JSON-NEXT:       "candidates": [
// JSON-NEXT:         {
// JSON-NEXT:           "signature": "[S(0)], [B] -> [S(0)]",
// JSON-NEXT:           "order_value": -20
// JSON-NEXT:           "oneflow_cost": 0
// JSON-NEXT:           "modelled_us": 0
// JSON:            "chosen": "[S(0)], [B] -> [S(0)]",
// JSON-NEXT:       "why": "lowest (OrderValue, IbnCopyCost) = (-20, 0)",
// JSON-NEXT:       "boxing": [],
// JSON-NEXT:       "modelled_us": 0
// JSON:            "boxing": [
// JSON-NEXT:         "operand 1: [S(1)] -> [S(0)]"
// JSON-NEXT:       ],
// JSON:        "totals": {
// JSON-NEXT:     "oneflow": {
// JSON-NEXT:       "modelled_us": {{[0-9.]+}},
// JSON-NEXT:       "bytes_sent_all_ranks": 64
// JSON-NEXT:       "ops_with_boxing": 1
// JSON-NEXT:     },
// JSON-NEXT:     "cost": {
// JSON-NEXT:       "modelled_us": {{[0-9.]+}},
// JSON-NEXT:       "bytes_sent_all_ranks": 64
// JSON-NEXT:       "ops_with_boxing": 1
// JSON-NEXT:     }
// JSON-NEXT:   }
// JSON-NEXT: }

// IR: sbp.matmul {{.*}}sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>
// IR: sbp.add {{.*}}sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>
func.func @main(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>, %b: !sbp.tensor<6x8xf32, @p, [B]>, %c: !sbp.tensor<4x8xf32, @p, [S(1)]>) -> !sbp.tensor<4x8xf32, @p> {
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.add %0, %c : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p>
  func.return %1 : !sbp.tensor<4x8xf32, @p>
}
