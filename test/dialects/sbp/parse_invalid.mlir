// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Malformed SBP entries, ND-SBPs and signatures (SPEC §2.2, §2.5). Parse errors point at the
// offending token.

sbp.placement @p "cpu" [0, 1]
// CHECK: parse_invalid.mlir:[[# @LINE + 3]]:50: error: expected an SBP entry: S(k), B, P, P(max) or P(min){{$}}
// CHECK-NEXT: {{^}}func.func @q_entry(%a: !sbp.tensor<4x8xf32, @p, [Q]>) {{[{]}}{{$}}
// CHECK-NEXT: {{^}}                                                 ^{{$}}
func.func @q_entry(%a: !sbp.tensor<4x8xf32, @p, [Q]>) {
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:52: error: Expected integer literal (split axis){{$}}
func.func @split_x(%a: !sbp.tensor<4x8xf32, @p, [S(x)]>) {
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:56: error: Expected one of 'max', 'min', 'sum' (partial kind sum, max or min){{$}}
func.func @partial_avg(%a: !sbp.tensor<4x8xf32, @p, [P(avg)]>) {
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:59: error: split axis must be non-negative, got -1{{$}}
func.func @split_negative(%a: !sbp.tensor<4x8xf32, @p, [S(-1)]>) {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:27: error: expected an SBP entry: S(k), B, P, P(max) or P(min){{$}}
"test.op"() {t = #sbp.nd<[b]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:29: error: Expected '(' after S (write S(k) with k the split tensor axis){{$}}
"test.op"() {t = #sbp.nd<[S 0]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:29: error: Expected integer literal (split axis){{$}}
"test.op"() {t = #sbp.nd<[S()]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:29: error: Expected integer literal (split axis){{$}}
"test.op"() {t = #sbp.nd<[S(0.5)]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:32: error: Expected ')'{{$}}
"test.op"() {t = #sbp.nd<[P(max]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:29: error: Expected one of 'max', 'min', 'sum' (partial kind sum, max or min){{$}}
"test.op"() {t = #sbp.nd<[P()]>} : () -> ()

// -----

// A non-SBP attribute inside an ND-SBP.
// CHECK: :[[# @LINE + 1]]:27: error: expected an SBP entry: S(k), B, P, P(max) or P(min){{$}}
"test.op"() {t = #sbp.nd<[#sbp.nd<[B]>]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:27: error: expected an SBP entry: S(k), B, P, P(max) or P(min){{$}}
"test.op"() {t = #sbp.nd<[1]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:26: error: an ND-SBP needs one entry per placement hierarchy axis, got []{{$}}
"test.op"() {t = #sbp.nd<[]>} : () -> ()

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:50: error: an ND-SBP needs one entry per placement hierarchy axis, got []{{$}}
func.func @empty_nd(%a: !sbp.tensor<4x8xf32, @p, []>) {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:26: error: '[' expected{{$}}
"test.op"() {t = #sbp.nd<S(0)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:31: error: ']' expected{{$}}
"test.op"() {t = #sbp.nd<[S(0)>} : () -> ()

// -----

// Long forms: #sbp.S<k>, #sbp.B, #sbp.P<kind>.
// CHECK: :[[# @LINE + 1]]:25: error: split axis must be non-negative, got -1{{$}}
"test.op"() {t = #sbp.S<-1>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:25: error: Expected integer literal (split axis){{$}}
"test.op"() {t = #sbp.S<x>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:25: error: Expected one of 'max', 'min', 'sum' (partial kind sum, max or min){{$}}
"test.op"() {t = #sbp.P<avg>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:24: error: '<' expected{{$}}
"test.op"() {t = #sbp.P} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:24: error: #sbp.B takes no parameters{{$}}
"test.op"() {t = #sbp.B<1>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:26: error: 'sbp.foo' is not registered{{$}}
"test.op"() {t = #sbp.foo} : () -> ()

// -----

// Signatures.
// CHECK: :[[# @LINE + 1]]:30: error: Expected '->' in #sbp.sig<inputs -> outputs>{{$}}
"test.op"() {t = #sbp.sig<[B]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:31: error: Expected '->' in #sbp.sig<inputs -> outputs>{{$}}
"test.op"() {t = #sbp.sig<[B] [B]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:37: error: Expected '>' in #sbp.sig<inputs -> outputs>{{$}}
"test.op"() {t = #sbp.sig<[B] -> [B]} : () -> ()

// -----

// An entry of a signature is a bracketed ND-SBP or `?`.
// CHECK: :[[# @LINE + 1]]:27: error: '[' expected{{$}}
"test.op"() {t = #sbp.sig<B -> [B]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:32: error: '[' expected{{$}}
"test.op"() {t = #sbp.sig<[B], -> [B]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:28: error: Expected '->' in #sbp.sig<inputs -> outputs>{{$}}
"test.op"() {t = #sbp.sig<?? -> [B]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:38: error: expected an SBP entry: S(k), B, P, P(max) or P(min){{$}}
"test.op"() {t = #sbp.sig<[S(0)] -> [X]>} : () -> ()
