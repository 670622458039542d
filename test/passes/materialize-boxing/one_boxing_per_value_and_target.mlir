// RUN: sbp-opt %s -p infer-sbp,materialize-boxing | filecheck %s

// One sbp.boxing per (value, target SBP): every consumer that needs the same SBP of a value shares
// one boxing; a different target gets its own. The boxing sits right after the value's definition
// (at the top of the body for a function argument).

sbp.placement @p "cpu" [0, 1]

// %t2 (S(1)) is needed as S(0) by add and mul, and as B by relu and exp (hinted): two boxings.
// CHECK-LABEL: func.func @shared_arg(
// CHECK-DAG:     %[[TOB:.*]] = sbp.boxing %t2 : !sbp.tensor<4x6xf32, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p, [B]>
// CHECK-DAG:     %[[TOS0:.*]] = sbp.boxing %t2 : !sbp.tensor<4x6xf32, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p, [S(0)]>
// CHECK-NOT:     sbp.boxing
// CHECK:         sbp.add %t1, %[[TOS0]] {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>}
// CHECK-NEXT:    sbp.mul %t1, %[[TOS0]] {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>}
// CHECK-NEXT:    sbp.relu %[[TOB]] {{.*}}sbp.signature = #sbp.sig<[B] -> [B]>
// CHECK-NEXT:    sbp.exp %[[TOB]] {{.*}}sbp.signature = #sbp.sig<[B] -> [B]>
// CHECK-NEXT:    func.return
func.func @shared_arg(%t1: !sbp.tensor<4x6xf32, @p, [S(0)]>, %t2: !sbp.tensor<4x6xf32, @p, [S(1)]>) -> (!sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p>) {
  %a = sbp.add %t1, %t2 : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<4x6xf32, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p>
  %b = sbp.mul %t1, %t2 : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<4x6xf32, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p>
  %c = sbp.relu %t2 {sbp.hint = #sbp.sig<[B] -> ?>} : !sbp.tensor<4x6xf32, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p>
  %d = sbp.exp %t2 {sbp.hint = #sbp.sig<[B] -> ?>} : !sbp.tensor<4x6xf32, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p>
  func.return %a, %b, %c, %d : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p>
}

// An op result (%n = neg, S(1)) consumed as S(0) by three ops: one boxing, right after neg.
// CHECK-LABEL: func.func @shared_result(
// CHECK:         %[[N:.*]] = sbp.neg %y {sbp.signature = #sbp.sig<[S(1)] -> [S(1)]>}
// CHECK-NEXT:    %[[BN:.*]] = sbp.boxing %[[N]] : !sbp.tensor<4x6xf32, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p, [S(0)]>
// CHECK-NEXT:    %[[A:.*]] = sbp.add %x, %[[BN]]
// CHECK-NEXT:    %[[M:.*]] = sbp.mul %[[A]], %[[BN]]
// CHECK-NEXT:    %{{.*}} = sbp.sub %[[M]], %[[BN]]
// CHECK-NEXT:    func.return
// CHECK-NOT:     sbp.boxing
func.func @shared_result(%x: !sbp.tensor<4x6xf32, @p, [S(0)]>, %y: !sbp.tensor<4x6xf32, @p, [S(1)]>) -> !sbp.tensor<4x6xf32, @p> {
  %n = sbp.neg %y : !sbp.tensor<4x6xf32, @p, [S(1)]> -> !sbp.tensor<4x6xf32, @p>
  %a = sbp.add %x, %n : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  %m = sbp.mul %a, %n : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  %s = sbp.sub %m, %n : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  func.return %s : !sbp.tensor<4x6xf32, @p>
}
