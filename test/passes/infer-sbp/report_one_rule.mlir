// RUN: sbp-opt %s --infer-sbp=rule=cost --sbp-report 2>&1 >/dev/null | filecheck %s
// RUN: sbp-opt %s --infer-sbp=rule=cost --sbp-report=json 2>&1 >/dev/null | filecheck %s --check-prefix=JSON
// RUN: not sbp-opt %s --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=ONEFLOW
// RUN: not sbp-opt %s --sbp-report=dot 2>&1 >/dev/null | filecheck %s --check-prefix=ONEFLOW

// A result written [P(max)] is produced only by rule=cost's complete lists. Under rule=cost the
// report gives its own totals and says why the side-by-side rule=oneflow total is missing; a report
// under rule=oneflow fails where the op is, as the pass does (it is built on a copy of the module).

sbp.placement @p "cpu" [0, 1]

func.func @main(%a: !sbp.tensor<4x4xf32, @p, [P(max)]>, %b: !sbp.tensor<4x4xf32, @p, [P(max)]>) -> !sbp.tensor<4x4xf32, @p, [P(max)]> {
  %0 = sbp.maximum %a, %b : !sbp.tensor<4x4xf32, @p, [P(max)]>, !sbp.tensor<4x4xf32, @p, [P(max)]> -> !sbp.tensor<4x4xf32, @p, [P(max)]>
  func.return %0 : !sbp.tensor<4x4xf32, @p, [P(max)]>
}

// CHECK:      total rule=cost: 0.000 us modelled, 0 bytes sent (all ranks), 0 ops with boxing
// CHECK-NEXT: total rule=oneflow: not available (sbp.maximum(f32[4,4][P(max)] @p, f32[4,4][P(max)] @p): no SBP signature satisfies result [P(max)];
// CHECK:      chosen: [P(max)], [P(max)] -> [P(max)]

// JSON:      "unavailable": {
// JSON-NEXT:   "oneflow": "sbp.maximum(

// ONEFLOW: report_one_rule.mlir:13:3: error: sbp.maximum(f32[4,4][P(max)] @p, f32[4,4][P(max)] @p): no SBP signature satisfies result [P(max)]
