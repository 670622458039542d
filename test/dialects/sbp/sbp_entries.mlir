// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// Every spelling of an SBP entry (SPEC §2.2) and its canonical printed form:
// S(k), B, P, P(sum) -> P, P(max), P(min), and the long attribute forms #sbp.S<k>,
// #sbp.B, #sbp.P<kind> inside an ND-SBP list.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "npu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @split0(%{{.*}}: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> ()
func.func @split0(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  func.return
}

// CHECK-LABEL: func.func @split1(%{{.*}}: !sbp.tensor<4x8xf32, @p, [S(1)]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p, [S(1)]>) -> ()
func.func @split1(%a: !sbp.tensor<4x8xf32, @p, [S( 1 )]>) {
  func.return
}

// CHECK-LABEL: func.func @broadcast(%{{.*}}: !sbp.tensor<4x8xf32, @p, [B]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p, [B]>) -> ()
func.func @broadcast(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  func.return
}

// CHECK-LABEL: func.func @partial(%{{.*}}: !sbp.tensor<4x8xf32, @p, [P]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p, [P]>) -> ()
func.func @partial(%a: !sbp.tensor<4x8xf32, @p, [P]>) {
  func.return
}

// P(sum) is the same entry as P and prints as P.
// CHECK-LABEL: func.func @partial_sum(%{{.*}}: !sbp.tensor<4x8xf32, @p, [P]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p, [P]>) -> ()
func.func @partial_sum(%a: !sbp.tensor<4x8xf32, @p, [P(sum)]>) {
  func.return
}

// CHECK-LABEL: func.func @partial_max(%{{.*}}: !sbp.tensor<4x8xf32, @p, [P(max)]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p, [P(max)]>) -> ()
func.func @partial_max(%a: !sbp.tensor<4x8xf32, @p, [P(max)]>) {
  func.return
}

// CHECK-LABEL: func.func @partial_min(%{{.*}}: !sbp.tensor<4x8xf32, @p, [P(min)]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p, [P(min)]>) -> ()
func.func @partial_min(%a: !sbp.tensor<4x8xf32, @p, [P(min)]>) {
  func.return
}

// Long forms inside a list print in the short canonical spelling.
// CHECK-LABEL: func.func @long_split(%{{.*}}: !sbp.tensor<4x8xf32, @q, [S(1), B]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @q, [S(1), B]>) -> ()
func.func @long_split(%a: !sbp.tensor<4x8xf32, @q, [#sbp.S<1>, #sbp.B]>) {
  func.return
}

// CHECK-LABEL: func.func @long_partial(%{{.*}}: !sbp.tensor<4x8xf32, @q, [P(max), P]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @q, [P(max), P]>) -> ()
func.func @long_partial(%a: !sbp.tensor<4x8xf32, @q, [#sbp.P<max>, #sbp.P<sum>]>) {
  func.return
}

// CHECK-LABEL: func.func @long_min_mixed(%{{.*}}: !sbp.tensor<4x8xf32, @q, [P(min), S(0)]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @q, [P(min), S(0)]>) -> ()
func.func @long_min_mixed(%a: !sbp.tensor<4x8xf32, @q, [#sbp.P<min>, S(0)]>) {
  func.return
}

// Every pair of kinds on a 2-D mesh, including the same tensor axis split twice.
// CHECK-LABEL: func.func @two_d(
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf32, @q, [S(0), S(0)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf32, @q, [B, S(1)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf32, @q, [P, B]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf32, @q, [S(1), P(max)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf32, @q, [P(min), P]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @q, [S(0), S(0)]>, !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>, !sbp.tensor<4x8xf32, @q, [B, S(1)]>, !sbp.tensor<4x8xf32, @q, [P, B]>, !sbp.tensor<4x8xf32, @q, [S(1), P(max)]>, !sbp.tensor<4x8xf32, @q, [P(min), P]>) -> ()
func.func @two_d(%a: !sbp.tensor<4x8xf32, @q, [S(0), S(0)]>, %b: !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>, %c: !sbp.tensor<4x8xf32, @q, [B, S(1)]>, %d: !sbp.tensor<4x8xf32, @q, [P(sum), B]>, %e: !sbp.tensor<4x8xf32, @q, [S(1), P(max)]>, %f: !sbp.tensor<4x8xf32, @q, [P(min), P]>) {
  func.return
}

// The entries as standalone attributes keep their long form.
// CHECK-LABEL: "test.op"() {
// CHECK-SAME: s0 = #sbp.S<0>, s3 = #sbp.S<3>, b = #sbp.B, psum = #sbp.P<sum>, pmax = #sbp.P<max>, pmin = #sbp.P<min>} : () -> (){{$}}
// GENERIC: "test.op"() {s0 = #sbp.S<0>, s3 = #sbp.S<3>, b = #sbp.B, psum = #sbp.P<sum>, pmax = #sbp.P<max>, pmin = #sbp.P<min>} : () -> (){{$}}
"test.op"() {s0 = #sbp.S<0>, s3 = #sbp.S< 3 >, b = #sbp.B, psum = #sbp.P<sum>, pmax = #sbp.P<max>, pmin = #sbp.P<min>} : () -> ()
