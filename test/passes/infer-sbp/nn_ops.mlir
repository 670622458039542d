// RUN: sbp-opt %s -p infer-sbp | filecheck %s
// RUN: sbp-opt %s -p "infer-sbp{rule=cost}" | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize | filecheck %s --check-prefix=SPMD

// The signatures of the ops of SPEC §7 chosen from their rules: softmax never splits its axis (an
// S(2) input over axis 2 is all-to-all'd to S(0)); rms_norm keeps rows whole; a vocab-split table
// gives P (Megatron's vocab-parallel embedding), a hidden-split one a result split on its last axis;
// concat and slice pass P through, as dropout does; broadcast_to maps S(0) of [8] to S(2) of
// [4, 6, 8]; where broadcasts its condition; cross_entropy splits a batch axis of logits and targets.
// spmdize records a vocab-parallel op's global operand types (each rank reads its rows from them).

// CHECK-LABEL: func.func @main(
// CHECK: sbp.softmax %x {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>, axis = 2 : i64}
// CHECK: sbp.rms_norm %l, %g {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>}
// CHECK: sbp.embedding %t, %i {sbp.signature = #sbp.sig<[S(0)], [B] -> [P]>}
// CHECK: sbp.embedding %th, %i {sbp.signature = #sbp.sig<[S(1)], [B] -> [S(2)]>}
// CHECK: sbp.concat %2, %q {sbp.signature = #sbp.sig<[P], [P] -> [P]>, axis = 2 : i64}
// CHECK: sbp.slice %l {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>, start = array<i64: 0, 0, 1>, stop = array<i64: 4, 6, 8>, step = array<i64: 1, 1, 2>}
// CHECK: sbp.slice %q {sbp.signature = #sbp.sig<[P] -> [P]>, start
// CHECK: sbp.broadcast_to %y {sbp.signature = #sbp.sig<[S(0)] -> [S(2)]>}
// CHECK: sbp.where %c, %{{.*}}, %l {sbp.signature = #sbp.sig<[B], [S(0)], [S(0)] -> [S(0)]>}
// CHECK: sbp.cross_entropy %l, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>}
// CHECK: sbp.dropout %q {sbp.signature = #sbp.sig<[P] -> [P]>, p = 5.000000e-01 : f32}

// SPMD: sbp.embedding %t, %i {sbp.signature = #sbp.sig<[S(0)], [B] -> [P]>, sbp.global_operands = [!sbp.tensor<16x8xf32, @p, [S(0)]>, !sbp.tensor<4x6xi64, @p, [B]>]} : tensor<8x8xf32>, tensor<4x6xi64> -> tensor<4x6x8xf32>

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4x6x8xf32, @p, [S(2)]>, %g: !sbp.tensor<8xf32, @p, [B]>, %t: !sbp.tensor<16x8xf32, @p, [S(0)]>, %th: !sbp.tensor<16x8xf32, @p, [S(1)]>, %i: !sbp.tensor<4x6xi64, @p, [B]>, %is: !sbp.tensor<4x6xi64, @p, [S(1)]>, %l: !sbp.tensor<4x6x8xf32, @p, [S(0)]>, %c: !sbp.tensor<6x1xi1, @p, [B]>, %q: !sbp.tensor<4x6x8xf32, @p, [P]>, %y: !sbp.tensor<8xf32, @p, [S(0)]>) {
  %0 = sbp.softmax %x {axis = 2 : i64} : !sbp.tensor<4x6x8xf32, @p, [S(2)]> -> !sbp.tensor<4x6x8xf32, @p>
  %1 = sbp.rms_norm %l, %g : !sbp.tensor<4x6x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x6x8xf32, @p>
  %2 = sbp.embedding %t, %i : !sbp.tensor<16x8xf32, @p, [S(0)]>, !sbp.tensor<4x6xi64, @p, [B]> -> !sbp.tensor<4x6x8xf32, @p>
  %3 = sbp.embedding %th, %i : !sbp.tensor<16x8xf32, @p, [S(1)]>, !sbp.tensor<4x6xi64, @p, [B]> -> !sbp.tensor<4x6x8xf32, @p>
  %4 = sbp.embedding %t, %is : !sbp.tensor<16x8xf32, @p, [S(0)]>, !sbp.tensor<4x6xi64, @p, [S(1)]> -> !sbp.tensor<4x6x8xf32, @p>
  %5 = sbp.concat %2, %q {axis = 2 : i64} : !sbp.tensor<4x6x8xf32, @p>, !sbp.tensor<4x6x8xf32, @p, [P]> -> !sbp.tensor<4x6x16xf32, @p>
  %6 = sbp.slice %l {start = array<i64: 0, 0, 1>, stop = array<i64: 4, 6, 8>, step = array<i64: 1, 1, 2>} : !sbp.tensor<4x6x8xf32, @p, [S(0)]> -> !sbp.tensor<4x6x4xf32, @p>
  %7 = sbp.slice %q {start = array<i64: 0, 0, 1>, stop = array<i64: 4, 6, 8>, step = array<i64: 1, 1, 2>} : !sbp.tensor<4x6x8xf32, @p, [P]> -> !sbp.tensor<4x6x4xf32, @p>
  %8 = sbp.broadcast_to %y : !sbp.tensor<8xf32, @p, [S(0)]> -> !sbp.tensor<4x6x8xf32, @p>
  %9 = sbp.where %c, %8, %l : !sbp.tensor<6x1xi1, @p, [B]>, !sbp.tensor<4x6x8xf32, @p>, !sbp.tensor<4x6x8xf32, @p, [S(0)]> -> !sbp.tensor<4x6x8xf32, @p>
  %10 = sbp.cross_entropy %l, %is : !sbp.tensor<4x6x8xf32, @p, [S(0)]>, !sbp.tensor<4x6xi64, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p>
  %11 = sbp.dropout %q {p = 5.000000e-01 : f32} : !sbp.tensor<4x6x8xf32, @p, [P]> -> !sbp.tensor<4x6x8xf32, @p>
  func.return
}
