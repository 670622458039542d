// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// Elementwise ops on a 2x4 mesh (mesh axes of different sizes).

sbp.placement @r "cpu" [[0, 1, 2, 3], [4, 5, 6, 7]]

// A bias add and a product whose inputs match a candidate: taken as is (kAllMatch).
// CHECK-LABEL: func.func @bias_and_mul(
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0), B], [B, B] -> [S(0), B]>} : !sbp.tensor<8x8xf32, @r, [S(0), B]>, !sbp.tensor<8xf32, @r, [B, B]> -> !sbp.tensor<8x8xf32, @r, [S(0), B]>
// x (S(0), B) * y (B, S(1)): mesh axis 0 slices y, mesh axis 1 slices x; cost 2 + 2.
// CHECK:         sbp.mul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)]>} : !sbp.tensor<8x8xf32, @r, [S(0), B]>, !sbp.tensor<8x8xf32, @r, [B, S(1)]> -> !sbp.tensor<8x8xf32, @r, [S(0), S(1)]>
// COST-LABEL: func.func @bias_and_mul(
// COST:         sbp.signature = #sbp.sig<[S(0), B], [B, B] -> [S(0), B]>
// COST:         sbp.signature = #sbp.sig<[S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)]>
func.func @bias_and_mul(%x: !sbp.tensor<8x8xf32, @r, [S(0), B]>, %b: !sbp.tensor<8xf32, @r, [B, B]>, %y: !sbp.tensor<8x8xf32, @r, [B, S(1)]>) {
  %0 = sbp.add %x, %b : !sbp.tensor<8x8xf32, @r, [S(0), B]>, !sbp.tensor<8xf32, @r, [B, B]> -> !sbp.tensor<8x8xf32, @r>
  %1 = sbp.mul %x, %y : !sbp.tensor<8x8xf32, @r, [S(0), B]>, !sbp.tensor<8x8xf32, @r, [B, S(1)]> -> !sbp.tensor<8x8xf32, @r>
  func.return
}

// Shape filter with floor division: 6 rows split by 2 leave 3 < 4, so (S(0), S(0)) is not a
// candidate for a (6, 8) tensor even though the input is stored that way (uneven splits are
// legal). The scan prices (S(0), S(1)) at 1 + 0 + 192*7/8 = 169, the cheapest move.
// CHECK-LABEL: func.func @uneven(
// CHECK:         sbp.relu %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>} : !sbp.tensor<6x8xf32, @r, [S(0), S(0)]> -> !sbp.tensor<6x8xf32, @r, [S(0), S(1)]>
// COST-LABEL: func.func @uneven(
// COST:         sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>
// REPORT-LABEL: op sbp.relu(f32[6,8][S(0), S(0)] @r)
// REPORT-NOT:     [S(0), S(0)] -> [S(0), S(0)]
// REPORT:         chosen: [S(0), S(1)] -> [S(0), S(1)] (lowest eager ND copy cost 169)
func.func @uneven(%x: !sbp.tensor<6x8xf32, @r, [S(0), S(0)]>) {
  %0 = sbp.relu %x : !sbp.tensor<6x8xf32, @r, [S(0), S(0)]> -> !sbp.tensor<6x8xf32, @r>
  func.return
}
