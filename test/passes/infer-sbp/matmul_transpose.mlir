// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s

// matmul's 1-D list (matmul_op.cpp) with m = ta ? 1 : 0, ka = ta ? 0 : 1, kb = tb ? 1 : 0,
// n = tb ? 0 : 1:  (S(m), B) -> S(0); (B, S(n)) -> S(1); (S(ka), S(kb)) -> P; (P, B) -> P; (B, P) -> P.
//   no transpose: (S0,B)(B,S1)(S1,S0)    transpose_a: (S1,B)(B,S1)(S0,S0)
//   transpose_b:  (S0,B)(B,S0)(S1,S1)    both:        (S1,B)(B,S0)(S0,S1)
// Each case below feeds inputs that already match one candidate; both rules take it as is.

sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @plain(
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [S(0)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[B], [S(1)] -> [S(1)]>} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [S(1)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(1)], [S(0)] -> [P]>} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [P]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[P], [B] -> [P]>} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [P]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[B], [P] -> [P]>} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [P]>
func.func @plain(%a0: !sbp.tensor<4x6xf32, @p, [S(0)]>, %a1: !sbp.tensor<4x6xf32, @p, [S(1)]>,
                 %a2: !sbp.tensor<4x6xf32, @p, [P]>, %aB: !sbp.tensor<4x6xf32, @p, [B]>,
                 %b0: !sbp.tensor<6x8xf32, @p, [S(0)]>, %b1: !sbp.tensor<6x8xf32, @p, [S(1)]>,
                 %b2: !sbp.tensor<6x8xf32, @p, [P]>, %bB: !sbp.tensor<6x8xf32, @p, [B]>) {
  %0 = sbp.matmul %a0, %bB : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.matmul %aB, %b1 : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<6x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.matmul %a1, %b0 : !sbp.tensor<4x6xf32, @p, [S(1)]>, !sbp.tensor<6x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %3 = sbp.matmul %a2, %bB : !sbp.tensor<4x6xf32, @p, [P]>, !sbp.tensor<6x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %4 = sbp.matmul %aB, %b2 : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<6x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// transpose_a: a is (k, m) = (6, 4).
// CHECK-LABEL: func.func @transpose_a(
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(1)], [B] -> [S(0)]>, transpose_a} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [S(0)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[B], [S(1)] -> [S(1)]>, transpose_a} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [S(1)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [P]>, transpose_a} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [P]>
func.func @transpose_a(%a0: !sbp.tensor<6x4xf32, @p, [S(0)]>, %a1: !sbp.tensor<6x4xf32, @p, [S(1)]>, %aB: !sbp.tensor<6x4xf32, @p, [B]>,
                       %b0: !sbp.tensor<6x8xf32, @p, [S(0)]>, %b1: !sbp.tensor<6x8xf32, @p, [S(1)]>, %bB: !sbp.tensor<6x8xf32, @p, [B]>) {
  %0 = sbp.matmul %a1, %bB {transpose_a} : !sbp.tensor<6x4xf32, @p, [S(1)]>, !sbp.tensor<6x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.matmul %aB, %b1 {transpose_a} : !sbp.tensor<6x4xf32, @p, [B]>, !sbp.tensor<6x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.matmul %a0, %b0 {transpose_a} : !sbp.tensor<6x4xf32, @p, [S(0)]>, !sbp.tensor<6x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// transpose_b: b is (n, k) = (8, 6).
// CHECK-LABEL: func.func @transpose_b(
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>, transpose_b} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [S(0)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[B], [S(0)] -> [S(1)]>, transpose_b} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [S(1)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(1)], [S(1)] -> [P]>, transpose_b} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [P]>
func.func @transpose_b(%a0: !sbp.tensor<4x6xf32, @p, [S(0)]>, %a1: !sbp.tensor<4x6xf32, @p, [S(1)]>, %aB: !sbp.tensor<4x6xf32, @p, [B]>,
                       %b0: !sbp.tensor<8x6xf32, @p, [S(0)]>, %b1: !sbp.tensor<8x6xf32, @p, [S(1)]>, %bB: !sbp.tensor<8x6xf32, @p, [B]>) {
  %0 = sbp.matmul %a0, %bB {transpose_b} : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<8x6xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.matmul %aB, %b0 {transpose_b} : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<8x6xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.matmul %a1, %b1 {transpose_b} : !sbp.tensor<4x6xf32, @p, [S(1)]>, !sbp.tensor<8x6xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// transpose_a and transpose_b: a is (6, 4), b is (8, 6).
// CHECK-LABEL: func.func @transpose_ab(
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(1)], [B] -> [S(0)]>, transpose_a, transpose_b} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [S(0)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[B], [S(0)] -> [S(1)]>, transpose_a, transpose_b} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [S(1)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(1)] -> [P]>, transpose_a, transpose_b} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [P]>
func.func @transpose_ab(%a0: !sbp.tensor<6x4xf32, @p, [S(0)]>, %a1: !sbp.tensor<6x4xf32, @p, [S(1)]>, %aB: !sbp.tensor<6x4xf32, @p, [B]>,
                        %b0: !sbp.tensor<8x6xf32, @p, [S(0)]>, %b1: !sbp.tensor<8x6xf32, @p, [S(1)]>, %bB: !sbp.tensor<8x6xf32, @p, [B]>) {
  %0 = sbp.matmul %a1, %bB {transpose_a, transpose_b} : !sbp.tensor<6x4xf32, @p, [S(1)]>, !sbp.tensor<8x6xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.matmul %aB, %b0 {transpose_a, transpose_b} : !sbp.tensor<6x4xf32, @p, [B]>, !sbp.tensor<8x6xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.matmul %a0, %b1 {transpose_a, transpose_b} : !sbp.tensor<6x4xf32, @p, [S(0)]>, !sbp.tensor<8x6xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// Batch matmul (equal ranks): the batch axis comes first, (S(0), S(0)) -> S(0); the matrix
// signatures follow on the last two axes.
// CHECK-LABEL: func.func @batch(
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : {{.*}} -> !sbp.tensor<2x4x8xf32, @p, [S(0)]>
// CHECK:         sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(2)], [S(1)] -> [P]>} : {{.*}} -> !sbp.tensor<2x4x8xf32, @p, [P]>
func.func @batch(%a: !sbp.tensor<2x4x6xf32, @p, [S(0)]>, %b: !sbp.tensor<2x6x8xf32, @p, [S(0)]>,
                 %c: !sbp.tensor<2x4x6xf32, @p, [S(2)]>, %d: !sbp.tensor<2x6x8xf32, @p, [S(1)]>) {
  %0 = sbp.matmul %a, %b : !sbp.tensor<2x4x6xf32, @p, [S(0)]>, !sbp.tensor<2x6x8xf32, @p, [S(0)]> -> !sbp.tensor<2x4x8xf32, @p>
  %1 = sbp.matmul %c, %d : !sbp.tensor<2x4x6xf32, @p, [S(2)]>, !sbp.tensor<2x6x8xf32, @p, [S(1)]> -> !sbp.tensor<2x4x8xf32, @p>
  func.return
}
