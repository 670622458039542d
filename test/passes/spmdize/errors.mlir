// RUN: sbp-opt %s -p spmdize --split-input-file --verify-diagnostics | filecheck %s
// RUN: not sbp-opt %examples/seed.mlir -p infer-sbp,materialize-boxing,spmdize 2>&1 | filecheck %s --check-prefix=PIPELINE
// RUN: not sbp-opt %examples/seed.mlir -p spmdize 2>&1 | filecheck %s --check-prefix=NOINFER

// spmdize needs a fully lowered global program: a remaining sbp.boxing or sbp.to_global is a
// located error naming the op with its *global* operand type (nothing is rewritten before the
// check), and so is a value whose SBP was never inferred.

sbp.placement @p "cpu" [0, 1]
func.func @boxing_left(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>) -> !sbp.tensor<4x6xf32, @p, [B]> {
  // expected-error @+1 {{sbp.boxing(f32[4,6][S(0)] @p): run lower-boxing (and materialize-boxing) before spmdize}}
  %0 = sbp.boxing %a : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p, [B]>
  func.return %0 : !sbp.tensor<4x6xf32, @p, [B]>
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.boxing(f32[4,6][S(0)] @p): run lower-boxing (and materialize-boxing) before spmdize{{$}}

// -----

// A boxing after already-lowered collectives: still rejected before anything is rewritten.
sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @boxing_after_collective(%a: !sbp.tensor<8x8xf32, @q, [P, P]>) -> !sbp.tensor<8x8xf32, @q, [S(1), B]> {
  %0 = sbp.all_reduce %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<8x8xf32, @q, [P, P]> -> !sbp.tensor<8x8xf32, @q, [B, B]>
  // expected-error @+1 {{sbp.boxing(f32[8,8][B, B] @q): run lower-boxing (and materialize-boxing) before spmdize}}
  %1 = sbp.boxing %0 : !sbp.tensor<8x8xf32, @q, [B, B]> -> !sbp.tensor<8x8xf32, @q, [S(1), B]>
  func.return %1 : !sbp.tensor<8x8xf32, @q, [S(1), B]>
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.boxing(f32[8,8][B, B] @q): run lower-boxing (and materialize-boxing) before spmdize{{$}}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @to_global_left(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>) -> !sbp.tensor<4x6xf32, @p, [S(1)]> {
  // expected-error @+1 {{sbp.to_global(f32[4,6][S(0)] @p): run lower-boxing (and materialize-boxing) before spmdize}}
  %0 = sbp.to_global %a : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p, [S(1)]>
  func.return %0 : !sbp.tensor<4x6xf32, @p, [S(1)]>
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.to_global(f32[4,6][S(0)] @p): run lower-boxing (and materialize-boxing) before spmdize{{$}}

// -----

// Without infer-sbp the op results have no SBP, so they have no local shape.
sbp.placement @p "cpu" [0, 1]
func.func @not_inferred(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>) -> !sbp.tensor<4x6xf32, @p> {
  // expected-error @+1 {{sbp.relu(f32[4,6][S(0)] @p): a value has no SBP; run infer-sbp before spmdize}}
  %0 = sbp.relu %a : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p>
  func.return %0 : !sbp.tensor<4x6xf32, @p>
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,6][S(0)] @p): a value has no SBP; run infer-sbp before spmdize{{$}}

// The pipeline without lower-boxing: the boxing materialize-boxing inserted is reported.
// PIPELINE: error: sbp.boxing(f32[2,4][S(1)] @p): run lower-boxing (and materialize-boxing) before spmdize
// NOINFER: seed.mlir:4:3: error: sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p): a value has no SBP; run infer-sbp before spmdize
