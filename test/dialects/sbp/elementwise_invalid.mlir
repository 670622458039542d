// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Elementwise ops: broadcast-compatible shapes, equal element types, the result type they imply,
// one placement.

sbp.placement @p "cpu" [0, 1]
func.func @not_broadcastable(%a: !sbp.tensor<4x8xf32, @p, [B]>, %b: !sbp.tensor<4x3xf32, @p, [B]>) {
  // CHECK: elementwise_invalid.mlir:[[# @LINE + 1]]:3: error: sbp.add(f32[4,8][B] @p, f32[4,3][B] @p): shapes [4, 8] and [4, 3] are not broadcast-compatible{{$}}
  %0 = sbp.add %a, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<4x3xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @not_broadcastable_rank(%a: !sbp.tensor<2x4xf32, @p, [B]>, %b: !sbp.tensor<3x1x4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.mul(f32[2,4][B] @p, f32[3,1,4][B] @p): result shape [2, 4] should be [3, 2, 4]{{$}}
  %0 = sbp.mul %a, %b : !sbp.tensor<2x4xf32, @p, [B]>, !sbp.tensor<3x1x4xf32, @p, [B]> -> !sbp.tensor<2x4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @element_types_differ(%a: !sbp.tensor<4x8xf32, @p, [B]>, %b: !sbp.tensor<4x8xf16, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.sub(f32[4,8][B] @p, f16[4,8][B] @p): operand element types f32 and f16 differ{{$}}
  %0 = sbp.sub %a, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<4x8xf16, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @result_element_type(%a: !sbp.tensor<4x8xi32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.div(i32[4,8][B] @p, i32[4,8][B] @p): result element type i64 should be i32{{$}}
  %0 = sbp.div %a, %a : !sbp.tensor<4x8xi32, @p, [B]>, !sbp.tensor<4x8xi32, @p, [B]> -> !sbp.tensor<4x8xi64, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @result_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.maximum(f32[4,8][S(0)] @p, f32[8][B] @p): result shape [8] should be [4, 8]{{$}}
  %0 = sbp.maximum %a, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
sbp.placement @p2 "cpu" [2, 3]
func.func @different_placements(%a: !sbp.tensor<4xf32, @p, [B]>, %b: !sbp.tensor<4xf32, @p2, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.minimum(f32[4][B] @p, f32[4][B] @p2): operands are on different placements @p, @p2{{$}}
  %0 = sbp.minimum %a, %b : !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xf32, @p2, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
sbp.placement @p2 "cpu" [2, 3]
func.func @result_placement(%a: !sbp.tensor<4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.add(f32[4][B] @p, f32[4][B] @p): result placement @p2 differs from the operands' @p{{$}}
  %0 = sbp.add %a, %a : !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<4xf32, @p2>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @unary_result_shape(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.relu(f32[4,8][B] @p): result shape [8, 4] should be [4, 8]{{$}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @unary_result_element_type(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.exp(f32[4,8][B] @p): result element type f16 should be f32{{$}}
  %0 = sbp.exp %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf16, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @scalar_result_shape(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.add_scalar(f32[4,8][B] @p): result shape [4] should be [4, 8]{{$}}
  %0 = sbp.add_scalar %a, 1.0 : f32 : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @scalar_result_element_type(%a: !sbp.tensor<4x8xi32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.mul_scalar(i32[4,8][B] @p): result element type f32 should be i32{{$}}
  %0 = sbp.mul_scalar %a, 2 : i32 : !sbp.tensor<4x8xi32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @scalar_missing(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.add_scalar: property 'scalar' expected in operation 'sbp.add_scalar'{{$}}
  %0 = "sbp.add_scalar"(%a) : (!sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @binary_arity(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.add: Expected 2 operands, but got 1{{$}}
  %0 = "sbp.add"(%a) : (!sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>
  func.return
}
