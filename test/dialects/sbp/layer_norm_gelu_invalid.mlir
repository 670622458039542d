// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// sbp.layer_norm: gamma and beta 1-D of x's last axis, one element type, a float x of rank >= 1,
// epsilon a positive f32. sbp.gelu: a float tensor.

sbp.placement @p "cpu" [0, 1]
func.func @gamma_shape(%x: !sbp.tensor<4x8xf32, @p, [B]>, %g: !sbp.tensor<4xf32, @p, [B]>, %b: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: layer_norm_gelu_invalid.mlir:[[# @LINE + 1]]:3: error: sbp.layer_norm(f32[4,8][B] @p, f32[4][B] @p, f32[8][B] @p): gamma has shape [4], expected [8] (the last axis of x){{$}}
  %0 = sbp.layer_norm %x, %g, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @beta_2d(%x: !sbp.tensor<4x8xf32, @p, [B]>, %g: !sbp.tensor<8xf32, @p, [B]>, %b: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.layer_norm(f32[4,8][B] @p, f32[8][B] @p, f32[4,8][B] @p): beta has shape [4, 8], expected [8] (the last axis of x){{$}}
  %0 = sbp.layer_norm %x, %g, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @gamma_type(%x: !sbp.tensor<4x8xf32, @p, [B]>, %g: !sbp.tensor<8xf16, @p, [B]>, %b: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.layer_norm(f32[4,8][B] @p, f16[8][B] @p, f32[8][B] @p): gamma element type f16 differs from x's f32{{$}}
  %0 = sbp.layer_norm %x, %g, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf16, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @integer(%x: !sbp.tensor<4x8xi32, @p, [B]>, %g: !sbp.tensor<8xi32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.layer_norm(i32[4,8][B] @p, i32[8][B] @p, i32[8][B] @p): layer_norm needs a floating-point tensor, got i32{{$}}
  %0 = sbp.layer_norm %x, %g, %g : !sbp.tensor<4x8xi32, @p, [B]>, !sbp.tensor<8xi32, @p, [B]>, !sbp.tensor<8xi32, @p, [B]> -> !sbp.tensor<4x8xi32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @scalar(%x: !sbp.tensor<f32, @p, [B]>, %g: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.layer_norm(f32[][B] @p, f32[8][B] @p, f32[8][B] @p): layer_norm needs a tensor of rank >= 1 (it normalises the last axis){{$}}
  %0 = sbp.layer_norm %x, %g, %g : !sbp.tensor<f32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<f32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @epsilon_type(%x: !sbp.tensor<4x8xf32, @p, [B]>, %g: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.layer_norm(f32[4,8][B] @p, f32[8][B] @p, f32[8][B] @p): epsilon must be an f32 float attribute, got f64{{$}}
  %0 = sbp.layer_norm %x, %g, %g {epsilon = 1.0e-5 : f64} : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @epsilon_sign(%x: !sbp.tensor<4x8xf32, @p, [B]>, %g: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.layer_norm(f32[4,8][B] @p, f32[8][B] @p, f32[8][B] @p): epsilon must be positive, got -1{{$}}
  %0 = sbp.layer_norm %x, %g, %g {epsilon = -1.0 : f32} : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @result(%x: !sbp.tensor<4x8xf32, @p, [B]>, %g: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.layer_norm(f32[4,8][B] @p, f32[8][B] @p, f32[8][B] @p): result shape [8] should be [4, 8]{{$}}
  %0 = sbp.layer_norm %x, %g, %g : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @gelu_integer(%x: !sbp.tensor<4xi32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.gelu(i32[4][B] @p): gelu needs a floating-point tensor, got i32{{$}}
  %0 = sbp.gelu %x : !sbp.tensor<4xi32, @p, [B]> -> !sbp.tensor<4xi32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @gelu_result(%x: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.gelu(f32[8][B] @p): result element type f16 should be f32{{$}}
  %0 = sbp.gelu %x : !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<8xf16, @p>
  func.return
}
