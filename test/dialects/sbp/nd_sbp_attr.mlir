// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// #sbp.nd<[...]>: an ND-SBP as a standalone attribute (one entry per hierarchy axis).
// Entries print in their canonical short form whatever the input spelling.

// CHECK:      "test.op"() {
// CHECK-SAME: one = #sbp.nd<[S(0)]>,
// CHECK-SAME: two = #sbp.nd<[S(0), B]>,
// CHECK-SAME: three = #sbp.nd<[P, P(max), P(min)]>,
// CHECK-SAME: sum = #sbp.nd<[P]>,
// CHECK-SAME: long = #sbp.nd<[S(1), B, P(max)]>,
// CHECK-SAME: spaced = #sbp.nd<[S(2), B]>} : () -> (){{$}}
// GENERIC: "test.op"() {one = #sbp.nd<[S(0)]>, two = #sbp.nd<[S(0), B]>, three = #sbp.nd<[P, P(max), P(min)]>, sum = #sbp.nd<[P]>, long = #sbp.nd<[S(1), B, P(max)]>, spaced = #sbp.nd<[S(2), B]>} : () -> (){{$}}
"test.op"() {
  one = #sbp.nd<[S(0)]>,
  two = #sbp.nd<[S(0), B]>,
  three = #sbp.nd<[P, P(max), P(min)]>,
  sum = #sbp.nd<[P(sum)]>,
  long = #sbp.nd<[#sbp.S<1>, #sbp.B, #sbp.P<max>]>,
  spaced = #sbp.nd<[ S ( 2 ) ,B ]>
} : () -> ()

// An ND-SBP in an array and as an op's discardable attribute.
// CHECK: "test.op"() {list = [#sbp.nd<[B]>, #sbp.nd<[S(0), P]>]} : () -> (){{$}}
// GENERIC: "test.op"() {list = [#sbp.nd<[B]>, #sbp.nd<[S(0), P]>]} : () -> (){{$}}
"test.op"() {list = [#sbp.nd<[B]>, #sbp.nd<[S(0), P]>]} : () -> ()
