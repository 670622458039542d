// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// A 3-D mesh 2x2x2: 4^3 = 64 add_n candidates, 5^3 = 125 for sub/mul.

sbp.placement @c "cpu" [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]

// Matching inputs: kAllMatch.
// CHECK-LABEL: func.func @match3(
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0), B, S(1)], [S(0), B, S(1)] -> [S(0), B, S(1)]>}
// A broadcast operand is sliced for free (B -> S priced 1 per mesh axis), so w follows x.
// CHECK:         sbp.sub %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0), B, S(1)], [S(0), B, S(1)] -> [S(0), B, S(1)]>} : !sbp.tensor<8x8xf32, @c, [S(0), B, S(1)]>, !sbp.tensor<8x8xf32, @c, [B, B, B]> -> !sbp.tensor<8x8xf32, @c, [S(0), B, S(1)]>
// COST-LABEL: func.func @match3(
// COST:         sbp.signature = #sbp.sig<[S(0), B, S(1)], [S(0), B, S(1)] -> [S(0), B, S(1)]>
// COST:         sbp.signature = #sbp.sig<[S(0), B, S(1)], [S(0), B, S(1)] -> [S(0), B, S(1)]>
func.func @match3(%x: !sbp.tensor<8x8xf32, @c, [S(0), B, S(1)]>, %y: !sbp.tensor<8x8xf32, @c, [S(0), B, S(1)]>, %w: !sbp.tensor<8x8xf32, @c, [B, B, B]>) {
  %0 = sbp.add %x, %y : !sbp.tensor<8x8xf32, @c, [S(0), B, S(1)]>, !sbp.tensor<8x8xf32, @c, [S(0), B, S(1)]> -> !sbp.tensor<8x8xf32, @c>
  %1 = sbp.sub %x, %w : !sbp.tensor<8x8xf32, @c, [S(0), B, S(1)]>, !sbp.tensor<8x8xf32, @c, [B, B, B]> -> !sbp.tensor<8x8xf32, @c>
  func.return
}

// x (S(0), B, P) + y (B, S(1), S(0)). OneFlow's eager cost prices every mesh axis with the total
// device count (8): x's P -> S(1) costs 256*7 = 1792 (+1 for B -> S(1), +1 base) and y's
// S(0) -> S(1) 256*7/8 = 224 (+1 +1): 2020 for (S(0), S(1), S(1)). Keeping x's P would need
// y's S(0) -> P, penalised 2 * 8*8*256. rule=cost keeps P instead: the local S(0) -> P of y
// plus one deferred all-reduce is cheaper in the α-β model.
// CHECK-LABEL: func.func @mixed3(
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1), S(1)], [S(0), S(1), S(1)] -> [S(0), S(1), S(1)]>}
// COST-LABEL: func.func @mixed3(
// COST:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1), P], [S(0), S(1), P] -> [S(0), S(1), P]>}
// REPORT-LABEL: op sbp.add(f32[8,8][S(0), B, P] @c, f32[8,8][B, S(1), S(0)] @c)
// REPORT:         chosen: [S(0), S(1), S(1)], [S(0), S(1), S(1)] -> [S(0), S(1), S(1)] (lowest eager ND copy cost 2020)
func.func @mixed3(%x: !sbp.tensor<8x8xf32, @c, [S(0), B, P]>, %y: !sbp.tensor<8x8xf32, @c, [B, S(1), S(0)]>) {
  %0 = sbp.add %x, %y : !sbp.tensor<8x8xf32, @c, [S(0), B, P]>, !sbp.tensor<8x8xf32, @c, [B, S(1), S(0)]> -> !sbp.tensor<8x8xf32, @c>
  func.return
}
