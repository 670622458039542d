// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// !sbp.tensor<SHAPE x ELT, @placement[, ND-SBP][, layout = ...]> (SPEC §2.3).

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "npu" [[0, 1, 2], [3, 4, 5]]
sbp.placement @r "npu" [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]

// With an ND-SBP on 1-D, 2-D and 3-D placements.
// CHECK-LABEL: func.func @with_sbp(
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf32, @p, [S(0)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf32, @q, [S(0), B]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<2x4x8xf32, @r, [S(0), S(2), P]>)
// CHECK-SAME: -> !sbp.tensor<4x8xf32, @q, [S(0), B]> {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @q, [S(0), B]>, !sbp.tensor<2x4x8xf32, @r, [S(0), S(2), P]>) -> !sbp.tensor<4x8xf32, @q, [S(0), B]>
func.func @with_sbp(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<4x8xf32, @q, [S(0), B]>, %c: !sbp.tensor<2x4x8xf32, @r, [S(0), S(2), P]>) -> !sbp.tensor<4x8xf32, @q, [S(0), B]> {
  func.return %b : !sbp.tensor<4x8xf32, @q, [S(0), B]>
}

// Without an ND-SBP (to be inferred).
// CHECK-LABEL: func.func @without_sbp(%{{.*}}: !sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p> {
// CHECK-NEXT:    func.return %{{.*}} : !sbp.tensor<4x8xf32, @p>
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p>
// GENERIC: "func.return"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p>) -> ()
func.func @without_sbp(%a: !sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p> {
  func.return %a : !sbp.tensor<4x8xf32, @p>
}

// 0-d tensors (any entry but a split), 1-d, higher rank, size-1 and size-0 dims.
// CHECK-LABEL: func.func @ranks(
// CHECK-SAME: %{{.*}}: !sbp.tensor<f16, @p, [B]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<f32, @q, [P, P(max)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<i64, @p>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<16xi32, @p, [S(0)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<2x3x4x5xbf16, @q, [S(3), S(1)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<1x1xi16, @p, [S(1)]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<0x8xf32, @p, [S(0)]>) {
// GENERIC: function_type = (!sbp.tensor<f16, @p, [B]>, !sbp.tensor<f32, @q, [P, P(max)]>, !sbp.tensor<i64, @p>, !sbp.tensor<16xi32, @p, [S(0)]>, !sbp.tensor<2x3x4x5xbf16, @q, [S(3), S(1)]>, !sbp.tensor<1x1xi16, @p, [S(1)]>, !sbp.tensor<0x8xf32, @p, [S(0)]>) -> ()
func.func @ranks(%a: !sbp.tensor<f16, @p, [B]>, %b: !sbp.tensor<f32, @q, [P, P(max)]>, %c: !sbp.tensor<i64, @p>, %d: !sbp.tensor<16xi32, @p, [S(0)]>, %e: !sbp.tensor<2x3x4x5xbf16, @q, [S(3), S(1)]>, %f: !sbp.tensor<1x1xi16, @p, [S(1)]>, %g: !sbp.tensor<0x8xf32, @p, [S(0)]>) {
  func.return
}

// All six element types.
// CHECK-LABEL: func.func @element_types(
// CHECK-SAME: %{{.*}}: !sbp.tensor<4xf32, @p, [B]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4xf16, @p, [B]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4xbf16, @p, [B]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4xi16, @p, [B]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4xi32, @p, [B]>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4xi64, @p, [B]>) {
// GENERIC: function_type = (!sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xf16, @p, [B]>, !sbp.tensor<4xbf16, @p, [B]>, !sbp.tensor<4xi16, @p, [B]>, !sbp.tensor<4xi32, @p, [B]>, !sbp.tensor<4xi64, @p, [B]>) -> ()
func.func @element_types(%a: !sbp.tensor<4xf32, @p, [B]>, %b: !sbp.tensor<4xf16, @p, [B]>, %c: !sbp.tensor<4xbf16, @p, [B]>, %d: !sbp.tensor<4xi16, @p, [B]>, %e: !sbp.tensor<4xi32, @p, [B]>, %f: !sbp.tensor<4xi64, @p, [B]>) {
  func.return
}

// Whitespace inside the type is not significant; the printed form is canonical.
// CHECK-LABEL: func.func @spacing(%{{.*}}: !sbp.tensor<4x8xf32, @q, [S(1), P(min)]>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf32, @q, [S(1), P(min)]>) -> ()
func.func @spacing(%a: !sbp.tensor< 4x8xf32 ,  @q ,[ S(1) ,P(min) ] >) {
  func.return
}

// The type as an attribute value and in a type list.
// CHECK: "test.op"() {ty = !sbp.tensor<4x8xf32, @q, [S(0), B]>, tys = [!sbp.tensor<f32, @p>, !sbp.tensor<2xi64, @p, [P]>]} : () -> (){{$}}
// GENERIC: "test.op"() {ty = !sbp.tensor<4x8xf32, @q, [S(0), B]>, tys = [!sbp.tensor<f32, @p>, !sbp.tensor<2xi64, @p, [P]>]} : () -> (){{$}}
"test.op"() {ty = !sbp.tensor<4x8xf32, @q, [S(0), B]>, tys = [!sbp.tensor<f32, @p>, !sbp.tensor<2xi64, @p, [P(sum)]>]} : () -> ()
