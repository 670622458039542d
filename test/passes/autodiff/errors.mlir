// RUN: sbp-opt %s -p autodiff --split-input-file --verify-diagnostics | filecheck %s
// RUN: not sbp-opt %s -p 'autodiff{optimizer=adam}' 2>&1 | filecheck %s --check-prefix=OPT
// RUN: not sbp-opt %s -p 'autodiff{loss=2}' --split-input-file 2>&1 | filecheck %s --check-prefix=LOSS
// RUN: not sbp-opt %s -p 'autodiff{micro-batches=0}' 2>&1 | filecheck %s --check-prefix=MICRO

// Every error of the autodiff pass, located at the offending op.

// OPT: {{^}}error: pass 'autodiff': optimizer=adam is not allowed (allowed: sgd, adamw){{$}}
// MICRO: {{^}}error: pass 'autodiff': micro-batches=0 must be >= 1{{$}}
// LOSS: errors.mlir:[[# @LINE + 7]]:3: error: func.return: autodiff: loss=2, but @matrix returns 1 result{{$}}

// A loss must be one element: a 2x2 result is not.
sbp.placement @p "cpu" [0, 1]
func.func @matrix(%x: !sbp.tensor<2x2xf32, @p, [B]>, %w: !sbp.tensor<2x2xf32, @p, [B]>) -> !sbp.tensor<2x2xf32, @p> {
  %0 = sbp.matmul %x, %w : !sbp.tensor<2x2xf32, @p, [B]>, !sbp.tensor<2x2xf32, @p, [B]> -> !sbp.tensor<2x2xf32, @p>
  // expected-error @+1 {{autodiff: the loss (result 0) must be a float tensor of one element (0-d or 1x...x1), got f32[2,2][?] @p}}
  func.return %0 : !sbp.tensor<2x2xf32, @p>
}
// CHECK: errors.mlir:[[# @LINE - 2]]:3: error: func.return: autodiff: the loss (result 0) must be a float tensor of one element (0-d or 1x...x1), got f32[2,2][?] @p{{$}}

// -----

// An integer loss has no gradient.
sbp.placement @p "cpu" [0, 1]
func.func @integer(%x: !sbp.tensor<4xi32, @p, [B]>, %w: !sbp.tensor<4xi32, @p, [B]>) -> !sbp.tensor<i32, @p> {
  %0 = sbp.mul %x, %w : !sbp.tensor<4xi32, @p, [B]>, !sbp.tensor<4xi32, @p, [B]> -> !sbp.tensor<4xi32, @p>
  %1 = sbp.reduce_sum %0 {axes = array<i64: 0>} : !sbp.tensor<4xi32, @p> -> !sbp.tensor<i32, @p>
  // expected-error @+1 {{autodiff: the loss (result 0) must be a float tensor of one element (0-d or 1x...x1), got i32[][?] @p}}
  func.return %1 : !sbp.tensor<i32, @p>
}
// CHECK: errors.mlir:[[# @LINE - 2]]:3: error: func.return: autodiff: the loss (result 0) must be a float tensor of one element (0-d or 1x...x1), got i32[][?] @p{{$}}

// -----

// A parameter's gradient through an op without a gradient rule (fmod).
sbp.placement @p "cpu" [0, 1]
func.func @fmod(%x: !sbp.tensor<4xf32, @p, [B]>, %w: !sbp.tensor<4xf32, @p, [B]>) -> !sbp.tensor<f32, @p> {
  // expected-error @+1 {{autodiff: sbp.fmod(f32[4][B] @p, f32[4][B] @p) has no gradient rule, and a parameter's gradient flows through it}}
  %0 = sbp.fmod %x, %w : !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  %1 = sbp.reduce_sum %0 {axes = array<i64: 0>} : !sbp.tensor<4xf32, @p> -> !sbp.tensor<f32, @p>
  func.return %1 : !sbp.tensor<f32, @p>
}
// CHECK: errors.mlir:[[# @LINE - 4]]:3: error: sbp.fmod: autodiff: sbp.fmod(f32[4][B] @p, f32[4][B] @p) has no gradient rule, and a parameter's gradient flows through it{{$}}
