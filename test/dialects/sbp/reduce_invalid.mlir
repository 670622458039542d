// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// sbp.reduce_*: axes distinct and in range; the result drops (or keeps as 1 with keepdims) them.

sbp.placement @p "cpu" [0, 1]
func.func @axis_out_of_range(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: reduce_invalid.mlir:[[# @LINE + 1]]:3: error: sbp.reduce_sum(f32[4,8][B] @p): reduction axis 2 out of range for rank 2{{$}}
  %0 = sbp.reduce_sum %a {axes = array<i64: 2>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @negative_axis(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_max(f32[4,8][B] @p): reduction axis -1 out of range for rank 2{{$}}
  %0 = sbp.reduce_max %a {axes = array<i64: -1>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @axes_repeated(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_min(f32[4,8][B] @p): reduction axes [1, 1] are repeated{{$}}
  %0 = sbp.reduce_min %a {axes = array<i64: 1, 1>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @result_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_sum(f32[4,8][S(0)] @p): result shape [8] should be [4]{{$}}
  %0 = sbp.reduce_sum %a {axes = array<i64: 1>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @keepdims_result_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_sum(f32[4,8][S(0)] @p): result shape [4] should be [4, 1]{{$}}
  %0 = sbp.reduce_sum %a {axes = array<i64: 1>, keepdims} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @result_element_type(%a: !sbp.tensor<4x8xi16, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_sum(i16[4,8][B] @p): result element type i32 should be i16{{$}}
  %0 = sbp.reduce_sum %a {axes = array<i64: 0>} : !sbp.tensor<4x8xi16, @p, [B]> -> !sbp.tensor<8xi32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @axes_missing(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_sum: property 'axes' expected in operation 'sbp.reduce_sum'{{$}}
  %0 = sbp.reduce_sum %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

// axes is an array<i64>, not a plain array or an array<i32>.
sbp.placement @p "cpu" [0, 1]
func.func @axes_not_dense(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_sum: [1 : i64] should be of base attribute array{{$}}
  %0 = sbp.reduce_sum %a {axes = [1]} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @axes_i32(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_sum: Expected attribute i64 but got i32{{$}}
  %0 = sbp.reduce_sum %a {axes = array<i32: 1>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}
