// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Invalid !sbp.tensor types (SPEC §2.3): ND-SBP length = hierarchy rank, split axis < rank,
// no split of a 0-d tensor, the placement exists, supported element types, static shapes.

sbp.placement @p "cpu" [0, 1]
func.func @sbp_longer_than_hierarchy(%a: !sbp.tensor<4x8xf32, @p, [S(0), B]>) {
  // CHECK: tensor_type_invalid.mlir:[[# @LINE + 3]]:3: error: sbp.relu(f32[4,8][S(0), B] @p): operand 0 has ND-SBP [S(0), B] of length 2, but placement @p has hierarchy [2] of rank 1{{$}}
  // CHECK-NEXT: {{^}}  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [S(0), B]> -> !sbp.tensor<4x8xf32, @p>{{$}}
  // CHECK-NEXT: {{^}}  ^{{$}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [S(0), B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @sbp_shorter_than_hierarchy(%a: !sbp.tensor<4x8xf32, @q, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.neg(f32[4,8][S(0)] @q): operand 0 has ND-SBP [S(0)] of length 1, but placement @q has hierarchy [2, 2] of rank 2{{$}}
  %0 = sbp.neg %a : !sbp.tensor<4x8xf32, @q, [S(0)]> -> !sbp.tensor<4x8xf32, @q>
  func.return
}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @result_sbp_length(%a: !sbp.tensor<4x8xf32, @q, [S(0), B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.relu(f32[4,8][S(0), B] @q): result 0 has ND-SBP [S(0), B, B] of length 3, but placement @q has hierarchy [2, 2] of rank 2{{$}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @q, [S(0), B]> -> !sbp.tensor<4x8xf32, @q, [S(0), B, B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 3]]:48: error: split axis 2 out of range for a rank-2 tensor in [S(2)]{{$}}
// CHECK-NEXT: {{^}}func.func @split_axis_too_large(%a: !sbp.tensor<4x8xf32, @p, [S(2)]>) {{[{]}}{{$}}
// CHECK-NEXT: {{^}}                                               ^^^^^^^^^^^^^^^^^^^^^{{$}}
func.func @split_axis_too_large(%a: !sbp.tensor<4x8xf32, @p, [S(2)]>) {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:29: error: split axis 1 out of range for a rank-1 tensor in [B, P(max), S(1)]{{$}}
"test.op"() {t = !sbp.tensor<4xf32, @r, [B, P(max), S(1)]>} : () -> ()

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:36: error: a 0-d tensor cannot be split: [S(0)]{{$}}
func.func @split_0d(%a: !sbp.tensor<f32, @p, [S(0)]>) {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:3: error: sbp.relu(f32[4][B] @nowhere): operand 0 refers to unknown placement @nowhere{{$}}
  %0 = "sbp.relu"(%x) : (!sbp.tensor<4xf32, @nowhere, [B]>) -> !sbp.tensor<4xf32, @nowhere>
  %x = "test.op"() : () -> !sbp.tensor<4xf32, @nowhere, [B]>

// -----

sbp.placement @p "cpu" [0, 1]
func.func @unknown_result_placement(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.relu(f32[4,8][B] @p): result 0 refers to unknown placement @nope{{$}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @nope>
  func.return
}

// -----

// A placement symbol must name an sbp.placement, not another symbol.
func.func @not_a_placement(%a: !sbp.tensor<4xf32, @not_a_placement, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.exp(f32[4][B] @not_a_placement): operand 0 refers to @not_a_placement, which is a func.func, not an sbp.placement{{$}}
  %0 = sbp.exp %a : !sbp.tensor<4xf32, @not_a_placement, [B]> -> !sbp.tensor<4xf32, @not_a_placement>
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:36: error: element type must be one of f32, f16, bf16, i16, i32, i64, i8, ui8, i1{{$}}
func.func @f64(%a: !sbp.tensor<4x8xf64, @p, [B]>) {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:35: error: element type must be one of f32, f16, bf16, i16, i32, i64, i8, ui8, i1{{$}}
func.func @i4(%a: !sbp.tensor<4x8xi4, @p, [B]>) {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:32: error: element type must be one of f32, f16, bf16, i16, i32, i64, i8, ui8, i1{{$}}
"test.op"() {t = !sbp.tensor<4xindex, @p, [B]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:36: error: !sbp.tensor dimensions must be static{{$}}
func.func @dynamic(%a: !sbp.tensor<?x8xf32, @p, [B]>) {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:30: error: !sbp.tensor dimensions must be static{{$}}
"test.op"() {t = !sbp.tensor<4x?xf32, @p>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:35: error: Expected ',' before the placement symbol{{$}}
"test.op"() {t = !sbp.tensor<4xf32>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:37: error: expect symbol name{{$}}
"test.op"() {t = !sbp.tensor<4xf32, p, [B]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:41: error: '[' expected{{$}}
"test.op"() {t = !sbp.tensor<4xf32, @p, B>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:46: error: expected `layout = #sbp.layout<...>` or `>`{{$}}
"test.op"() {t = !sbp.tensor<4xf32, @p, [B], [B]>} : () -> ()

// -----

// The ND-SBP comes before the layout.
// CHECK: :[[# @LINE + 1]]:72: error: expected `layout = #sbp.layout<...>` or `>`{{$}}
"test.op"() {t = !sbp.tensor<4xf32, @p, layout = #sbp.layout<(4):(1)>, [B]>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:50: error: expected #sbp.layout<...>{{$}}
"test.op"() {t = !sbp.tensor<4xf32, @p, layout = #sbp.B>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:44: error: Expected '>'{{$}}
"test.op"() {t = !sbp.tensor<4xf32, @p, [B]} : () -> ()
