// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// sbp.fmod: `other` must broadcast to `self`'s shape and the result has `self`'s shape;
// sbp.fmod_scalar keeps shape and element type.

sbp.placement @p "npu" [0, 1]
func.func @output_shape_not_self(%a: !sbp.tensor<4x8xf32, @p, [B]>, %b: !sbp.tensor<8xf32, @p, [B]>) {
  // CHECK: fmod_invalid.mlir:[[# @LINE + 1]]:3: error: sbp.fmod(f32[4,8][B] @p, f32[8][B] @p): result shape [8] should be [4, 8]{{$}}
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<8xf32, @p>
  func.return
}

// -----

// self broadcasting up to other's shape is not allowed (unlike sbp.add).
sbp.placement @p "npu" [0, 1]
func.func @self_would_broadcast(%a: !sbp.tensor<4x1xf32, @p, [B]>, %b: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod(f32[4,1][B] @p, f32[4,8][B] @p): other's shape [4, 8] does not broadcast to self's shape [4, 1]{{$}}
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x1xf32, @p, [B]>, !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "npu" [0, 1]
func.func @other_incompatible(%a: !sbp.tensor<4x8xf16, @p, [B]>, %b: !sbp.tensor<3xf16, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod(f16[4,8][B] @p, f16[3][B] @p): other's shape [3] does not broadcast to self's shape [4, 8]{{$}}
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x8xf16, @p, [B]>, !sbp.tensor<3xf16, @p, [B]> -> !sbp.tensor<4x8xf16, @p>
  func.return
}

// -----

// other of higher rank than self.
sbp.placement @p "npu" [0, 1]
func.func @other_higher_rank(%a: !sbp.tensor<8xbf16, @p, [B]>, %b: !sbp.tensor<2x8xbf16, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod(bf16[8][B] @p, bf16[2,8][B] @p): other's shape [2, 8] does not broadcast to self's shape [8]{{$}}
  %0 = sbp.fmod %a, %b : !sbp.tensor<8xbf16, @p, [B]>, !sbp.tensor<2x8xbf16, @p, [B]> -> !sbp.tensor<8xbf16, @p>
  func.return
}

// -----

sbp.placement @p "npu" [0, 1]
func.func @element_types_differ(%a: !sbp.tensor<4x8xf32, @p, [B]>, %b: !sbp.tensor<4x8xi16, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod(f32[4,8][B] @p, i16[4,8][B] @p): operand element types f32 and i16 differ{{$}}
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<4x8xi16, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "npu" [0, 1]
func.func @result_element_type(%a: !sbp.tensor<4x8xf16, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod(f16[4,8][B] @p, f16[4,8][B] @p): result element type f32 should be f16{{$}}
  %0 = sbp.fmod %a, %a : !sbp.tensor<4x8xf16, @p, [B]>, !sbp.tensor<4x8xf16, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "npu" [0, 1]
func.func @scalar_result_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod_scalar(f32[4,8][S(0)] @p): result shape [4, 4] should be [4, 8]{{$}}
  %0 = sbp.fmod_scalar %a, 2.5 : f32 : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p>
  func.return
}

// -----

sbp.placement @p "npu" [0, 1]
func.func @scalar_result_element_type(%a: !sbp.tensor<4x8xbf16, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod_scalar(bf16[4,8][S(0)] @p): result element type f32 should be bf16{{$}}
  %0 = sbp.fmod_scalar %a, 2.5 : bf16 : !sbp.tensor<4x8xbf16, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

// `other` must be a number attribute.
sbp.placement @p "npu" [0, 1]
func.func @scalar_string(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod_scalar: Unexpected attribute "x"{{$}}
  %0 = sbp.fmod_scalar %a, "x" : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "npu" [0, 1]
func.func @scalar_missing(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.fmod_scalar: property 'other' expected in operation 'sbp.fmod_scalar'{{$}}
  %0 = "sbp.fmod_scalar"(%a) : (!sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>
  func.return
}
