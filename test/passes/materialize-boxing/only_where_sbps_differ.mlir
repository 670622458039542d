// RUN: sbp-opt %s -p infer-sbp,materialize-boxing | filecheck %s

// materialize-boxing inserts an sbp.boxing only for an operand whose producer's SBP differs from
// the consumer's signature entry; operands that already agree are used directly.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// Every SBP already agrees: no boxing at all.
// CHECK-LABEL: func.func @agree(
// CHECK-NOT:     sbp.boxing
// CHECK:         %[[S:.*]] = sbp.add %x, %y {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>}
// CHECK-NOT:     sbp.boxing
// CHECK:         %[[R:.*]] = sbp.relu %[[S]] {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>}
// CHECK-NOT:     sbp.boxing
// CHECK:         func.return %[[R]]
func.func @agree(%x: !sbp.tensor<4x6xf32, @p, [S(0)]>, %y: !sbp.tensor<4x6xf32, @p, [S(0)]>) -> !sbp.tensor<4x6xf32, @p> {
  %s = sbp.add %x, %y : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p>
  %r = sbp.relu %s : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  func.return %r : !sbp.tensor<4x6xf32, @p>
}

// The seed: S(0) + S(1) runs as S(0), S(0) -> S(0). Only operand 1 is boxed; operand 0 is used as is.
// CHECK-LABEL: func.func @seed(
// CHECK-NEXT:    %[[B:.*]] = sbp.boxing %t2 : !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p, [S(0)]>
// CHECK-NEXT:    %{{.*}} = sbp.add %t1, %[[B]] {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(0)]> -> !sbp.tensor<2x4xf32, @p, [S(0)]>
// CHECK-NOT:     sbp.boxing
// CHECK:         func.return
func.func @seed(%t1: !sbp.tensor<2x4xf32, @p, [S(0)]>, %t2: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p> {
  %t3 = sbp.add %t1, %t2 : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p>
  func.return %t3 : !sbp.tensor<2x4xf32, @p>
}

// 2-D mesh: (S(0), B) + (B, S(1)) runs as (S(0), S(1)) (nd_elementwise_2x2): both operands are boxed,
// each to the signature's entry, and the result feeds relu without a boxing.
// CHECK-LABEL: func.func @mixed_2d(
// CHECK-DAG:     %[[BY:.*]] = sbp.boxing %y : !sbp.tensor<8x8xf32, @q, [B, S(1)]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>
// CHECK-DAG:     %[[BX:.*]] = sbp.boxing %x : !sbp.tensor<8x8xf32, @q, [S(0), B]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>
// CHECK:         %[[A:.*]] = sbp.add %[[BX]], %[[BY]] {sbp.signature = #sbp.sig<[S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)]>}
// CHECK-NEXT:    %{{.*}} = sbp.relu %[[A]] {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>}
// CHECK-NEXT:    func.return
func.func @mixed_2d(%x: !sbp.tensor<8x8xf32, @q, [S(0), B]>, %y: !sbp.tensor<8x8xf32, @q, [B, S(1)]>) -> !sbp.tensor<8x8xf32, @q> {
  %0 = sbp.add %x, %y : !sbp.tensor<8x8xf32, @q, [S(0), B]>, !sbp.tensor<8x8xf32, @q, [B, S(1)]> -> !sbp.tensor<8x8xf32, @q>
  %1 = sbp.relu %0 : !sbp.tensor<8x8xf32, @q> -> !sbp.tensor<8x8xf32, @q>
  func.return %1 : !sbp.tensor<8x8xf32, @q>
}
