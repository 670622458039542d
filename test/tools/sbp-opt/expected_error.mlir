// RUN: sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// MLIR-style `expected-error` annotations: `@+N`, `@-N`, `@above`, `@below` or none (same
// line); the text between {{ }} must be a substring of the produced message. When every
// annotation is matched the run succeeds (exit 0) and the diagnostics are still printed.

sbp.placement @p "cpu" [0, 1]
func.func @plus_one(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // expected-error @+1 {{result shape [8, 4] should be [4, 8]}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  func.return
}
// CHECK: expected_error.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,8][B] @p): result shape [8, 4] should be [4, 8]{{$}}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @same_line(%a: !sbp.tensor<4xf32, @p, [B]>) {
  %0 = sbp.exp %a : !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<4xf16, @p> // expected-error {{result element type f16 should be f32}}
  func.return
}
// CHECK: expected_error.mlir:[[# @LINE - 3]]:3: error: sbp.exp(f32[4][B] @p): result element type f16 should be f32{{$}}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @above(%a: !sbp.tensor<4xf32, @p, [B]>, %b: !sbp.tensor<5xf32, @p, [B]>) {
  %0 = sbp.sub %a, %b : !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<5xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  // expected-error @above {{are not broadcast-compatible}}
  func.return
}
// CHECK: expected_error.mlir:[[# @LINE - 4]]:3: error: sbp.sub(f32[4][B] @p, f32[5][B] @p): shapes [4] and [5] are not broadcast-compatible{{$}}

// -----

// A parse error inside a type, annotated from the line before it.
sbp.placement @p "cpu" [0, 1]
// expected-error @below {{a 0-d tensor cannot be split}}
func.func @below(%a: !sbp.tensor<f32, @p, [S(0)]>) {
  func.return
}
// CHECK: expected_error.mlir:[[# @LINE - 3]]:33: error: a 0-d tensor cannot be split: [S(0)]{{$}}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @minus_two(%a: !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>) {
  %0 = sbp.all_gather %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q, [B, B]>

  // expected-error @-2 {{changes mesh axis 1, which is not in mesh_axes [0]}}
  func.return
}
// CHECK: expected_error.mlir:[[# @LINE - 5]]:3: error: sbp.all_gather(f32[4,8][S(0), S(1)] @q): [S(0), S(1)] -> [B, B] changes mesh axis 1, which is not in mesh_axes [0]{{$}}

// -----

// A chunk without errors and without annotations is printed as usual.
sbp.placement @p "cpu" [0, 1]
// CHECK: builtin.module {
// CHECK-NEXT: sbp.placement @p "cpu" [0, 1]{{$}}
// CHECK-NEXT: }
