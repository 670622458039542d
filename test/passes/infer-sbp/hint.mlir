// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// Hints (`sbp.hint`, OneFlow's sbp_sig_conf) keep only the candidates containing them; `?` leaves
// an entry free. A result type written with an SBP is a requirement on the op's output. With a
// constraint OneFlow's OrderValue is 0 for every candidate, so the IbnCopyCost alone decides.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// Partial hint: b must be B. Survivors (S(0),B)->S(0), (P,B)->P, (B,B)->B; the first only
// all-gathers b (192 bytes), the others also convert a.
// CHECK-LABEL: func.func @partial_hint(
// CHECK-SAME:    -> !sbp.tensor<4x8xf32, @p, [S(0)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.hint = #sbp.sig<?, [B] -> ?>, sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
// Without the hint OneFlow keeps b as is: (B, S(1)) -> S(1) matches b and only gathers a (96 bytes).
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[B], [S(1)] -> [S(1)]>} : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>
// COST-LABEL: func.func @partial_hint(
// COST:         sbp.matmul {{.*}}sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>
// REPORT-LABEL: op sbp.matmul(f32[4,6][S(0)] @p, f32[6,8][S(1)] @p)
// REPORT-NEXT:   * [S(0)], [B] -> [S(0)] {{ *}}order=0 oneflow_cost=192 modelled={{.*}}
// REPORT-NEXT:     [P], [B] -> [P] {{ *}}order=0 oneflow_cost=9.22337e+18 modelled={{.*}}
// REPORT-NEXT:     [B], [B] -> [B] {{ *}}order=0 oneflow_cost=288 modelled={{.*}}
// REPORT-NEXT:   chosen: [S(0)], [B] -> [S(0)] (lowest (OrderValue, IbnCopyCost) = (0, 192))
func.func @partial_hint(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>, %b: !sbp.tensor<6x8xf32, @p, [S(1)]>) -> !sbp.tensor<4x8xf32, @p> {
  %0 = sbp.matmul %a, %b {sbp.hint = #sbp.sig<?, [B] -> ?>} : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.matmul %a, %b : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p>
  func.return %0 : !sbp.tensor<4x8xf32, @p>
}

// A full hint fixes the signature: the contraction split even though both inputs must move.
// CHECK-LABEL: func.func @full_hint(
// CHECK-SAME:    -> !sbp.tensor<4x8xf32, @p, [P]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.hint = #sbp.sig<[S(1)], [S(0)] -> [P]>, sbp.signature = #sbp.sig<[S(1)], [S(0)] -> [P]>} : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [P]>
// COST-LABEL: func.func @full_hint(
// COST:         sbp.signature = #sbp.sig<[S(1)], [S(0)] -> [P]>
// REPORT-LABEL: op sbp.matmul(f32[4,6][S(0)] @p, f32[6,8][B] @p)
// REPORT-NEXT:   * [S(1)], [S(0)] -> [P] {{ *}}order=0
// REPORT-NEXT:   chosen: [S(1)], [S(0)] -> [P] (the only candidate left)
func.func @full_hint(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>, %b: !sbp.tensor<6x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p> {
  %0 = sbp.matmul %a, %b {sbp.hint = #sbp.sig<[S(1)], [S(0)] -> [P]>} : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return %0 : !sbp.tensor<4x8xf32, @p>
}

// A hint made only of `?` is an empty conf: OneFlow's OrderValue still rewards matching inputs.
// REPORT-LABEL: op sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p)
// REPORT-NEXT:   * [S(0)], [S(0)] -> [S(0)] {{ *}}order=-10 oneflow_cost=32
// REPORT-NEXT:     [S(1)], [S(1)] -> [S(1)] {{ *}}order=-10 oneflow_cost=32
// CHECK-LABEL: func.func @all_wild(
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.hint = #sbp.sig<?, ? -> ?>, sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>}
func.func @all_wild(%a: !sbp.tensor<2x4xf32, @p, [S(0)]>, %b: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p> {
  %0 = sbp.add %a, %b {sbp.hint = #sbp.sig<?, ? -> ?>} : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p>
  func.return %0 : !sbp.tensor<2x4xf32, @p>
}

// Result-type requirement: the op result is written [B], so only B outputs survive (OneFlow's
// consumer constraint); the function type shows what was inferred and required.
// CHECK-LABEL: func.func @required_result(
// CHECK-SAME:    -> (!sbp.tensor<8x4xf32, @p, [B]>, !sbp.tensor<8x4xf32, @p, [S(0)]>)
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[B], [B] -> [B]>} : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<8x4xf32, @p, [B]>
// CHECK:         sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<8x4xf32, @p, [S(0)]>
// COST-LABEL: func.func @required_result(
// COST:         sbp.signature = #sbp.sig<[B], [B] -> [B]>
func.func @required_result(%a: !sbp.tensor<8x4xf32, @p, [S(0)]>) -> (!sbp.tensor<8x4xf32, @p, [B]>, !sbp.tensor<8x4xf32, @p>) {
  %0 = sbp.add %a, %a : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<8x4xf32, @p, [B]>
  %1 = sbp.add %a, %a : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<8x4xf32, @p>
  func.return %0, %1 : !sbp.tensor<8x4xf32, @p, [B]>, !sbp.tensor<8x4xf32, @p>
}

// On a 2-D mesh a hint names whole ND-SBPs: x must be (S(0), B); without it x would stay (S(0), S(1)).
// CHECK-LABEL: func.func @nd_hint(
// CHECK:         sbp.relu %{{.*}} {sbp.hint = #sbp.sig<[S(0), B] -> ?>, sbp.signature = #sbp.sig<[S(0), B] -> [S(0), B]>} : !sbp.tensor<8x4xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x4xf32, @q, [S(0), B]>
// CHECK:         sbp.relu %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>} : !sbp.tensor<8x4xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x4xf32, @q, [S(0), S(1)]>
func.func @nd_hint(%x: !sbp.tensor<8x4xf32, @q, [S(0), S(1)]>) {
  %0 = sbp.relu %x {sbp.hint = #sbp.sig<[S(0), B] -> ?>} : !sbp.tensor<8x4xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x4xf32, @q>
  %1 = sbp.relu %x : !sbp.tensor<8x4xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x4xf32, @q>
  func.return
}
