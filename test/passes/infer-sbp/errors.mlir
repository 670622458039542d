// RUN: sbp-opt %s --infer-sbp --split-input-file --verify-diagnostics | filecheck %s
// RUN: not sbp-opt %examples/seed.mlir --infer-sbp="rule=fastest" 2>&1 | filecheck %s --check-prefix=RULE

// Every error of --infer-sbp, located at the offending op, naming it and its operands.

// RULE: {{^}}error: pass 'infer-sbp': rule=fastest is not allowed (allowed: oneflow, cost, global){{$}}

// Inputs on different placements (OneFlow: CheckInputParallelDescIdentical). The op verifier
// already rejects them before the pass runs.
sbp.placement @p "cpu" [0, 1]
sbp.placement @r "cpu" [2, 3]
func.func @placements(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>, %b: !sbp.tensor<4x4xf32, @r, [S(0)]>) {
  // expected-error @+1 {{sbp.add(f32[4,4][S(0)] @p, f32[4,4][S(0)] @r): operands are on different placements @p, @r}}
  %0 = sbp.add %a, %b : !sbp.tensor<4x4xf32, @p, [S(0)]>, !sbp.tensor<4x4xf32, @r, [S(0)]> -> !sbp.tensor<4x4xf32, @p>
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.add(f32[4,4][S(0)] @p, f32[4,4][S(0)] @r): operands are on different placements @p, @r{{$}}

// -----

// No candidate survives the hint: the message prints the hint and the candidates left after the
// shape filter.
sbp.placement @p "cpu" [0, 1]
func.func @hint(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>) {
  // expected-error @+1 {{sbp.relu(f32[4,4][S(0)] @p): no SBP signature satisfies [P] -> ?; candidates: [S(0)] -> [S(0)]; [S(1)] -> [S(1)]; [B] -> [B]}}
  %0 = sbp.relu %a {sbp.hint = #sbp.sig<[P] -> ?>} : !sbp.tensor<4x4xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p>
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,4][S(0)] @p): no SBP signature satisfies [P] -> ?; candidates: [S(0)] -> [S(0)]; [S(1)] -> [S(1)]; [B] -> [B]{{$}}

// -----

// The same on a 2-D mesh: the candidates are the product of the per-axis lists.
sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @nd_hint(%a: !sbp.tensor<4x4xf32, @q, [S(0), S(1)]>) {
  // expected-error @+1 {{sbp.relu(f32[4,4][S(0), S(1)] @q): no SBP signature satisfies [P, B] -> ?; candidates: [S(0), S(0)] -> [S(0), S(0)]; [S(0), S(1)] -> [S(0), S(1)]; [S(0), B] -> [S(0), B]; [S(1), S(0)] -> [S(1), S(0)]; [S(1), S(1)] -> [S(1), S(1)]; [S(1), B] -> [S(1), B]; [B, S(0)] -> [B, S(0)]; [B, S(1)] -> [B, S(1)]; [B, B] -> [B, B]}}
  %0 = sbp.relu %a {sbp.hint = #sbp.sig<[P, B] -> ?>} : !sbp.tensor<4x4xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x4xf32, @q>
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,4][S(0), S(1)] @q): no SBP signature satisfies [P, B] -> ?; candidates: [S(0), S(0)] -> [S(0), S(0)]; [S(0), S(1)] -> [S(0), S(1)]; [S(0), B] -> [S(0), B]; [S(1), S(0)] -> [S(1), S(0)]; [S(1), S(1)] -> [S(1), S(1)]; [S(1), B] -> [S(1), B]; [B, S(0)] -> [B, S(0)]; [B, S(1)] -> [B, S(1)]; [B, B] -> [B, B]{{$}}

// -----

// A function argument without an SBP.
sbp.placement @p "cpu" [0, 1]
// expected-error @+1 {{func.func @no_sbp: argument 1 (f32[4,4][?] @p) has no SBP; give %b one, or let rule=global decide it (sbp-opt -p 'infer-sbp{rule=global}'; sbp-run --rule global, i.e. --pipeline 'infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize')}}
func.func @no_sbp(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>, %b: !sbp.tensor<4x4xf32, @p>) {
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:57: error: func.func @no_sbp: argument 1 (f32[4,4][?] @p) has no SBP; give %b one, or let rule=global decide it (sbp-opt -p 'infer-sbp{rule=global}'; sbp-run --rule global, i.e. --pipeline 'infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize'){{$}}

// -----

// An op with no SBP signature rule.
sbp.placement @p "cpu" [0, 1]
func.func @no_rule(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>) {
  // expected-error @+1 {{test.op(f32[4,4][S(0)] @p): test.op has no SBP signature rule}}
  %0 = "test.op"(%a) : (!sbp.tensor<4x4xf32, @p, [S(0)]>) -> !sbp.tensor<4x4xf32, @p>
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: test.op(f32[4,4][S(0)] @p): test.op has no SBP signature rule{{$}}

// -----

// A result SBP written on the op that no candidate produces (relu has no P signature).
sbp.placement @p "cpu" [0, 1]
func.func @required(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>) -> !sbp.tensor<4x4xf32, @p, [P]> {
  // expected-error @+1 {{sbp.relu(f32[4,4][S(0)] @p): no SBP signature satisfies result [P]; candidates: [S(0)] -> [S(0)]; [S(1)] -> [S(1)]; [B] -> [B]}}
  %0 = sbp.relu %a : !sbp.tensor<4x4xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p, [P]>
  func.return %0 : !sbp.tensor<4x4xf32, @p, [P]>
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,4][S(0)] @p): no SBP signature satisfies result [P]; candidates: [S(0)] -> [S(0)]; [S(1)] -> [S(1)]; [B] -> [B]{{$}}

// -----

// A hint and a result requirement that contradict each other.
sbp.placement @p "cpu" [0, 1]
func.func @hint_and_required(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>) {
  // expected-error @+1 {{sbp.relu(f32[4,4][S(0)] @p): no SBP signature satisfies [S(0)] -> ? and result [B]; candidates: [S(0)] -> [S(0)]; [S(1)] -> [S(1)]; [B] -> [B]}}
  %0 = sbp.relu %a {sbp.hint = #sbp.sig<[S(0)] -> ?>} : !sbp.tensor<4x4xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p, [B]>
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,4][S(0)] @p): no SBP signature satisfies [S(0)] -> ? and result [B]; candidates: [S(0)] -> [S(0)]; [S(1)] -> [S(1)]; [B] -> [B]{{$}}

// -----

// A hint whose arity does not match the op.
sbp.placement @p "cpu" [0, 1]
func.func @hint_arity(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>) {
  // expected-error @+1 {{sbp.relu(f32[4,4][S(0)] @p): hint #sbp.sig<?, ? -> ?> needs 1 operand and 1 result entries}}
  %0 = sbp.relu %a {sbp.hint = #sbp.sig<?, ? -> ?>} : !sbp.tensor<4x4xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p>
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,4][S(0)] @p): hint #sbp.sig<?, ? -> ?> needs 1 operand and 1 result entries{{$}}

// -----

// A hint that is not a signature.
sbp.placement @p "cpu" [0, 1]
func.func @hint_kind(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>) {
  // expected-error @+1 {{sbp.relu(f32[4,4][S(0)] @p): sbp.hint must be a #sbp.sig<...>}}
  %0 = sbp.relu %a {sbp.hint = 1 : i64} : !sbp.tensor<4x4xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p>
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.relu(f32[4,4][S(0)] @p): sbp.hint must be a #sbp.sig<...>{{$}}

// -----

// An explicit conversion must name its target SBP.
sbp.placement @p "cpu" [0, 1]
func.func @to_global(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>) {
  // expected-error @+1 {{sbp.to_global(f32[4,4][S(0)] @p): the result type of sbp.to_global must give the target SBP}}
  %0 = sbp.to_global %a : !sbp.tensor<4x4xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p>
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: sbp.to_global(f32[4,4][S(0)] @p): the result type of sbp.to_global must give the target SBP{{$}}
