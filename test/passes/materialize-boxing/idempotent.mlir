// RUN: sbp-opt %s -p infer-sbp,materialize-boxing | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,materialize-boxing | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,materialize-boxing,materialize-boxing | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,materialize-boxing | filecheck %s --check-prefix=LOWERED
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing -o %t.once
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,materialize-boxing -o %t.twice
// RUN: diff %t.once %t.twice

// The pass is idempotent: a second (third) run finds every operand already matching its
// signature and inserts nothing, so all runs give the same output, checked line by line with the
// same CHECK lines, and the printed modules are byte-identical (diff). Run after lower-boxing
// it finds nothing to box either.

sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    -> (!sbp.tensor<8x8xf32, @q, [S(0), S(1)]>, !sbp.tensor<8x8xf32, @q, [B, B]>)
// CHECK-NEXT:    %[[BY:.*]] = sbp.boxing %y : !sbp.tensor<8x8xf32, @q, [B, S(1)]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>
// CHECK-NEXT:    %[[BX:.*]] = sbp.boxing %x : !sbp.tensor<8x8xf32, @q, [S(0), B]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>
// CHECK-NEXT:    %[[A:.*]] = sbp.add %[[BX]], %[[BY]] {sbp.signature = #sbp.sig<[S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)]>}
// CHECK-NEXT:    %[[BA:.*]] = sbp.boxing %[[A]] : !sbp.tensor<8x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x8xf32, @q, [B, B]>
// CHECK-NEXT:    %[[R:.*]] = sbp.relu %[[A]] {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>}
// CHECK-NEXT:    func.return %[[R]], %[[BA]] : !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>, !sbp.tensor<8x8xf32, @q, [B, B]>
// CHECK-NEXT:  }
// CHECK-NOT:   sbp.boxing

// LOWERED-LABEL: func.func @main(
// LOWERED-NOT:   sbp.boxing
// LOWERED:       sbp.add
// LOWERED-NOT:   sbp.boxing
// LOWERED:       func.return
func.func @main(%x: !sbp.tensor<8x8xf32, @q, [S(0), B]>, %y: !sbp.tensor<8x8xf32, @q, [B, S(1)]>) -> (!sbp.tensor<8x8xf32, @q>, !sbp.tensor<8x8xf32, @q, [B, B]>) {
  %0 = sbp.add %x, %y : !sbp.tensor<8x8xf32, @q, [S(0), B]>, !sbp.tensor<8x8xf32, @q, [B, S(1)]> -> !sbp.tensor<8x8xf32, @q>
  %1 = sbp.relu %0 : !sbp.tensor<8x8xf32, @q> -> !sbp.tensor<8x8xf32, @q>
  %2 = sbp.to_global %0 : !sbp.tensor<8x8xf32, @q> -> !sbp.tensor<8x8xf32, @q, [B, B]>
  func.return %1, %2 : !sbp.tensor<8x8xf32, @q>, !sbp.tensor<8x8xf32, @q, [B, B]>
}
