// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// The 2-D SBP example of the OneFlow documentation (parallelism/04_2d-sbp):
//   placement = flow.placement("cuda", [[0, 1], [2, 3]])
//   x = flow.randn(4, 4, placement=placement, sbp=[flow.sbp.broadcast, flow.sbp.split(0)])
//   w = flow.randn(4, 4, placement=placement, sbp=[flow.sbp.split(1), flow.sbp.broadcast])
//   y = flow.matmul(x, w)   # y.sbp == (split(1), split(0))
// Mesh axis 0 uses (B, S(1)) -> S(1), mesh axis 1 uses (S(0), B) -> S(0); the candidate matching
// both inputs is taken at once (kAllMatch) and no boxing is needed.

sbp.placement @q "cuda" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    -> !sbp.tensor<4x4xf32, @q, [S(1), S(0)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[B, S(0)], [S(1), B] -> [S(1), S(0)]>} : !sbp.tensor<4x4xf32, @q, [B, S(0)]>, !sbp.tensor<4x4xf32, @q, [S(1), B]> -> !sbp.tensor<4x4xf32, @q, [S(1), S(0)]>

// REPORT:      chosen: [B, S(0)], [S(1), B] -> [S(1), S(0)] (first candidate whose inputs all match (kAllMatch))
// REPORT-NEXT: boxing: none
func.func @main(%x: !sbp.tensor<4x4xf32, @q, [B, S(0)]>, %w: !sbp.tensor<4x4xf32, @q, [S(1), B]>) -> !sbp.tensor<4x4xf32, @q> {
  %y = sbp.matmul %x, %w : !sbp.tensor<4x4xf32, @q, [B, S(0)]>, !sbp.tensor<4x4xf32, @q, [S(1), B]> -> !sbp.tensor<4x4xf32, @q>
  func.return %y : !sbp.tensor<4x4xf32, @q>
}
