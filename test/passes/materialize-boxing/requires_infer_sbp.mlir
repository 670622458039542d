// RUN: sbp-opt %s -p materialize-boxing --split-input-file --verify-diagnostics | filecheck %s
// RUN: not sbp-opt %s -p materialize-boxing --split-input-file 2>&1 | filecheck %s --check-prefix=PLAIN

// materialize-boxing reads each op's sbp.signature; run without infer-sbp it stops with a located
// error at the first op that has none, naming the op and its operand types.

sbp.placement @p "cpu" [0, 1]
func.func @seed(%t1: !sbp.tensor<2x4xf32, @p, [S(0)]>, %t2: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p> {
  // expected-error @+1 {{sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p): no sbp.signature; run infer-sbp before materialize-boxing}}
  %t3 = sbp.add %t1, %t2 : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p>
  func.return %t3 : !sbp.tensor<2x4xf32, @p>
}
// CHECK: requires_infer_sbp.mlir:[[# @LINE - 3]]:3: error: sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p): no sbp.signature; run infer-sbp before materialize-boxing{{$}}
// PLAIN: requires_infer_sbp.mlir:[[# @LINE - 4]]:3: error: sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p): no sbp.signature; run infer-sbp before materialize-boxing{{$}}

// -----

// Even when the SBPs agree (nothing to box), the op must have been inferred: the result type has
// no SBP yet.
sbp.placement @p "cpu" [0, 1]
func.func @agree(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>) -> !sbp.tensor<4x4xf32, @p> {
  // expected-error @+1 {{sbp.relu(f32[4,4][S(0)] @p): no sbp.signature; run infer-sbp before materialize-boxing}}
  %0 = sbp.relu %a : !sbp.tensor<4x4xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p>
  func.return %0 : !sbp.tensor<4x4xf32, @p>
}
// CHECK: requires_infer_sbp.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,4][S(0)] @p): no sbp.signature; run infer-sbp before materialize-boxing{{$}}
