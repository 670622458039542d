// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// #sbp.sig<inputs -> outputs> (SPEC §2.5): one ND-SBP per operand and per result,
// `?` for an unconstrained entry (hints), possibly zero inputs.

// CHECK:      "test.op"() {
// CHECK-SAME: unary = #sbp.sig<[S(0)] -> [S(0)]>,
// CHECK-SAME: binary = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>,
// CHECK-SAME: nd = #sbp.sig<[S(0), B], [B, S(1)] -> [S(0), S(1)]>,
// CHECK-SAME: partial = #sbp.sig<[S(1)], [S(0)] -> [P]>,
// CHECK-SAME: kinds = #sbp.sig<[P(max)], [P(min)] -> [P(max)]>,
// CHECK-SAME: wild = #sbp.sig<?, [B] -> ?>,
// CHECK-SAME: all_wild = #sbp.sig<?, ? -> ?>,
// CHECK-SAME: no_inputs = #sbp.sig<-> [B]>,
// CHECK-SAME: two_results = #sbp.sig<[B] -> [B], [S(0)]>,
// CHECK-SAME: long = #sbp.sig<[S(1), B] -> [P(max), P]>} : () -> (){{$}}
// GENERIC: "test.op"() {unary = #sbp.sig<[S(0)] -> [S(0)]>, binary = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>, nd = #sbp.sig<[S(0), B], [B, S(1)] -> [S(0), S(1)]>, partial = #sbp.sig<[S(1)], [S(0)] -> [P]>, kinds = #sbp.sig<[P(max)], [P(min)] -> [P(max)]>, wild = #sbp.sig<?, [B] -> ?>, all_wild = #sbp.sig<?, ? -> ?>, no_inputs = #sbp.sig<-> [B]>, two_results = #sbp.sig<[B] -> [B], [S(0)]>, long = #sbp.sig<[S(1), B] -> [P(max), P]>} : () -> (){{$}}
"test.op"() {
  unary = #sbp.sig<[S(0)] -> [S(0)]>,
  binary = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>,
  nd = #sbp.sig<[S(0), B], [B, S(1)] -> [S(0), S(1)]>,
  partial = #sbp.sig<[S(1)], [S(0)] -> [P(sum)]>,
  kinds = #sbp.sig<[P(max)], [P(min)] -> [P(max)]>,
  wild = #sbp.sig<?, [B] -> ?>,
  all_wild = #sbp.sig<?,? -> ?>,
  no_inputs = #sbp.sig<-> [B]>,
  two_results = #sbp.sig<[B] -> [B], [S(0)]>,
  long = #sbp.sig<[#sbp.S<1>, #sbp.B] -> [#sbp.P<max>, #sbp.P<sum>]>
} : () -> ()

// As the discardable attributes sbp.signature and sbp.hint of an op (custom and generic form).
sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @on_ops(
// CHECK-NEXT:    %{{.*}} = sbp.add %{{.*}}, %{{.*}} {sbp.hint = #sbp.sig<?, [B] -> ?>} : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.relu %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.exp %{{.*}} {sbp.hint = #sbp.sig<[S(0)] -> ?>, sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "on_ops"
// GENERIC: %{{.*}} = "sbp.add"(%{{.*}}, %{{.*}}) {sbp.hint = #sbp.sig<?, [B] -> ?>} : (!sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT: %{{.*}} = "sbp.relu"(%{{.*}}) {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-NEXT: %{{.*}} = "sbp.exp"(%{{.*}}) {sbp.hint = #sbp.sig<[S(0)] -> ?>, sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
func.func @on_ops(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<4x8xf32, @p, [B]>) {
  %0 = sbp.add %a, %b {sbp.hint = #sbp.sig<?, [B] -> ?>} : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.relu %a {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  %2 = sbp.exp %a {sbp.hint = #sbp.sig<[S(0)] -> ?>, sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  func.return
}
