// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// sbp.matmul: rank >= 2, equal contraction dims (after transposes), broadcast-compatible batch
// dims, equal element types, result [*batch, m, n].

sbp.placement @p "cpu" [0, 1]
func.func @contraction_mismatch(%a: !sbp.tensor<4x8xf32, @p, [B]>, %b: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: matmul_invalid.mlir:[[# @LINE + 1]]:3: error: sbp.matmul(f32[4,8][B] @p, f32[4,8][B] @p): contraction dimensions differ: 8 (a) vs 4 (b){{$}}
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

// transpose_a makes a's contraction dim its first one.
sbp.placement @p "cpu" [0, 1]
func.func @contraction_mismatch_transposed(%a: !sbp.tensor<4x10xf32, @p, [B]>, %b: !sbp.tensor<10x3xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(f32[4,10][B] @p, f32[10,3][B] @p): contraction dimensions differ: 4 (a) vs 10 (b){{$}}
  %0 = sbp.matmul %a, %b {transpose_a} : !sbp.tensor<4x10xf32, @p, [B]>, !sbp.tensor<10x3xf32, @p, [B]> -> !sbp.tensor<10x3xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @contraction_mismatch_transpose_b(%a: !sbp.tensor<4x10xf32, @p, [B]>, %b: !sbp.tensor<10x3xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(f32[4,10][B] @p, f32[10,3][B] @p): contraction dimensions differ: 10 (a) vs 3 (b){{$}}
  %0 = "sbp.matmul"(%a, %b) <{transpose_b}> : (!sbp.tensor<4x10xf32, @p, [B]>, !sbp.tensor<10x3xf32, @p, [B]>) -> !sbp.tensor<4x10xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @rank_1_operand(%a: !sbp.tensor<8xf32, @p, [B]>, %b: !sbp.tensor<8x4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(f32[8][B] @p, f32[8,4][B] @p): matmul operands need rank >= 2, got ranks 1 and 2{{$}}
  %0 = sbp.matmul %a, %b : !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8x4xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @rank_0_operand(%a: !sbp.tensor<4x8xf32, @p, [B]>, %b: !sbp.tensor<f32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(f32[4,8][B] @p, f32[][B] @p): matmul operands need rank >= 2, got ranks 2 and 0{{$}}
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @batch_mismatch(%a: !sbp.tensor<2x4x8xf32, @p, [B]>, %b: !sbp.tensor<3x8x4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(f32[2,4,8][B] @p, f32[3,8,4][B] @p): batch dimensions [2] and [3] are not broadcast-compatible{{$}}
  %0 = sbp.matmul %a, %b : !sbp.tensor<2x4x8xf32, @p, [B]>, !sbp.tensor<3x8x4xf32, @p, [B]> -> !sbp.tensor<2x4x4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @element_types_differ(%a: !sbp.tensor<4x8xf16, @p, [B]>, %b: !sbp.tensor<8x4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(f16[4,8][B] @p, f32[8,4][B] @p): operand element types f16 and f32 differ{{$}}
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x8xf16, @p, [B]>, !sbp.tensor<8x4xf32, @p, [B]> -> !sbp.tensor<4x4xf16, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @result_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<8x3xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(f32[4,8][S(0)] @p, f32[8,3][B] @p): result shape [3, 4] should be [4, 3]{{$}}
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8x3xf32, @p, [B]> -> !sbp.tensor<3x4xf32, @p>
  func.return
}

// -----

// The broadcast batch dims lead the result shape.
sbp.placement @p "cpu" [0, 1]
func.func @result_batch_shape(%a: !sbp.tensor<5x1x4x8xf32, @p, [B]>, %b: !sbp.tensor<2x8x3xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(f32[5,1,4,8][B] @p, f32[2,8,3][B] @p): result shape [5, 1, 4, 3] should be [5, 2, 4, 3]{{$}}
  %0 = sbp.matmul %a, %b : !sbp.tensor<5x1x4x8xf32, @p, [B]>, !sbp.tensor<2x8x3xf32, @p, [B]> -> !sbp.tensor<5x1x4x3xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @result_element_type(%a: !sbp.tensor<4x8xi32, @p, [B]>, %b: !sbp.tensor<8x3xi32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul(i32[4,8][B] @p, i32[8,3][B] @p): result element type i64 should be i32{{$}}
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x8xi32, @p, [B]>, !sbp.tensor<8x3xi32, @p, [B]> -> !sbp.tensor<4x3xi64, @p>
  func.return
}

// -----

// transpose flags are unit attributes.
sbp.placement @p "cpu" [0, 1]
func.func @transpose_flag_not_unit(%a: !sbp.tensor<8x4xf32, @p, [B]>, %b: !sbp.tensor<8x3xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.matmul: true should be of base attribute unit{{$}}
  %0 = sbp.matmul %a, %b {transpose_a = true} : !sbp.tensor<8x4xf32, @p, [B]>, !sbp.tensor<8x3xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p>
  func.return
}
