// RUN: sbp-opt %s -p infer-sbp,materialize-boxing | filecheck %s

// Every sbp.to_global becomes an sbp.boxing to its result type, or disappears (its uses take the
// operand) when it changes nothing. A to_global and an op needing the same SBP of the same value
// share one boxing.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @convert(
// CHECK-NEXT:    %[[B:.*]] = sbp.boxing %a : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p, [B]>
// CHECK-NEXT:    func.return %[[B]] : !sbp.tensor<4x6xf32, @p, [B]>
// CHECK-NOT:     sbp.to_global
func.func @convert(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>) -> !sbp.tensor<4x6xf32, @p, [B]> {
  %0 = sbp.to_global %a : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p, [B]>
  func.return %0 : !sbp.tensor<4x6xf32, @p, [B]>
}

// A no-op conversion vanishes: the relu reads %a directly.
// CHECK-LABEL: func.func @noop(
// CHECK-NOT:     sbp.to_global
// CHECK-NOT:     sbp.boxing
// CHECK:         %[[R:.*]] = sbp.relu %a {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>}
// CHECK-NEXT:    func.return %a, %[[R]] : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<4x6xf32, @p, [S(0)]>
func.func @noop(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>) -> (!sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<4x6xf32, @p>) {
  %0 = sbp.to_global %a : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p, [S(0)]>
  %1 = sbp.relu %0 : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p>
  func.return %0, %1 : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<4x6xf32, @p>
}

// to_global %a -> [B] and relu needing %a as [B] (hint): a single boxing serves both.
// CHECK-LABEL: func.func @shared_with_op(
// CHECK-NEXT:    %[[B:.*]] = sbp.boxing %a : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p, [B]>
// CHECK-NEXT:    %[[R:.*]] = sbp.relu %[[B]] {{.*}}sbp.signature = #sbp.sig<[B] -> [B]>
// CHECK-NEXT:    func.return %[[B]], %[[R]] :
func.func @shared_with_op(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>) -> (!sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<4x6xf32, @p>) {
  %0 = sbp.to_global %a : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p, [B]>
  %1 = sbp.relu %a {sbp.hint = #sbp.sig<[B] -> ?>} : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p>
  func.return %0, %1 : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<4x6xf32, @p>
}

// A chain of conversions on a 2-D mesh, the second from an op result: each to_global is one boxing
// from the value it converts; the last, back to the same SBP, vanishes.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %[[B1:.*]] = sbp.boxing %a : !sbp.tensor<8x8xf32, @q, [P, P]> -> !sbp.tensor<8x8xf32, @q, [S(0), B]>
// CHECK-NEXT:    %[[N:.*]] = sbp.neg %[[B1]] {sbp.signature = #sbp.sig<[S(0), B] -> [S(0), B]>}
// CHECK-NEXT:    %[[B2:.*]] = sbp.boxing %[[N]] : !sbp.tensor<8x8xf32, @q, [S(0), B]> -> !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
// CHECK-NEXT:    func.return %[[B2]] : !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
// CHECK-NOT:     sbp.to_global
func.func @chain(%a: !sbp.tensor<8x8xf32, @q, [P, P]>) -> !sbp.tensor<8x8xf32, @q, [S(1), S(0)]> {
  %0 = sbp.to_global %a : !sbp.tensor<8x8xf32, @q, [P, P]> -> !sbp.tensor<8x8xf32, @q, [S(0), B]>
  %1 = sbp.neg %0 : !sbp.tensor<8x8xf32, @q, [S(0), B]> -> !sbp.tensor<8x8xf32, @q>
  %2 = sbp.to_global %1 : !sbp.tensor<8x8xf32, @q> -> !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
  %3 = sbp.to_global %2 : !sbp.tensor<8x8xf32, @q, [S(1), S(0)]> -> !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
  func.return %3 : !sbp.tensor<8x8xf32, @q, [S(1), S(0)]>
}
