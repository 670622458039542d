// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// sbp.transpose (perm a permutation), sbp.reshape (same element count), sbp.cast (same shape),
// sbp.to_global / sbp.boxing (same shape, element type and placement).

sbp.placement @p "cpu" [0, 1]
func.func @perm_repeated(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: shape_ops_invalid.mlir:[[# @LINE + 1]]:3: error: sbp.transpose(f32[4,8][B] @p): perm [0, 0] is not a permutation of 0..1{{$}}
  %0 = sbp.transpose %a {perm = array<i64: 0, 0>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @perm_too_long(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.transpose(f32[4,8][B] @p): perm [1, 0, 2] is not a permutation of 0..1{{$}}
  %0 = sbp.transpose %a {perm = array<i64: 1, 0, 2>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @perm_result_shape(%a: !sbp.tensor<2x4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.transpose(f32[2,4,8][B] @p): result shape [8, 4, 2] should be [8, 2, 4]{{$}}
  %0 = sbp.transpose %a {perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x8xf32, @p, [B]> -> !sbp.tensor<8x4x2xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @reshape_count(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reshape(f32[4,8][B] @p): reshape changes the element count: [4, 8] (32) -> [30] (30){{$}}
  %0 = sbp.reshape %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<30xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @reshape_element_type(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reshape(f32[4,8][B] @p): result element type f16 should be f32{{$}}
  %0 = sbp.reshape %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<32xf16, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @cast_shape(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.cast(f32[4,8][B] @p): result shape [32] should be [4, 8]{{$}}
  %0 = sbp.cast %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<32xf16, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @to_global_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.to_global(f32[4,8][S(0)] @p): result shape [8, 4] should be [4, 8]{{$}}
  %0 = sbp.to_global %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<8x4xf32, @p, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @to_global_element_type(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.to_global(f32[4,8][S(0)] @p): result element type bf16 should be f32{{$}}
  %0 = sbp.to_global %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xbf16, @p, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [2, 3]
func.func @to_global_placement(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.to_global(f32[4,8][B] @p): result placement @q differs from the operands' @p{{$}}
  %0 = sbp.to_global %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @q, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @boxing_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.boxing(f32[4,8][S(0)] @p): result shape [4, 4] should be [4, 8]{{$}}
  %0 = sbp.boxing %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @boxing_element_type(%a: !sbp.tensor<4x8xi32, @p, [P]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.boxing(i32[4,8][P] @p): result element type i64 should be i32{{$}}
  %0 = sbp.boxing %a : !sbp.tensor<4x8xi32, @p, [P]> -> !sbp.tensor<4x8xi64, @p, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @perm_not_dense(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.transpose: [1 : i64, 0 : i64] should be of base attribute array{{$}}
  %0 = sbp.transpose %a {perm = [1, 0]} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  func.return
}

// -----

// Global and per-rank (builtin tensor) types do not mix.
sbp.placement @p "cpu" [0, 1]
func.func @builtin_result(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.relu: cannot mix per-rank tensor<...> and global !sbp.tensor types{{$}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [B]> -> tensor<4x8xf32>
  func.return
}
