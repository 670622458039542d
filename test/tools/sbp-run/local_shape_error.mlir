// RUN: not sbp-run %s --pipeline "" 2>&1 | filecheck %s
// RUN: not sbp-run %s --pipeline "" --entry boxing 2>&1 | filecheck %s --check-prefix=BOXING
// RUN: not sbp-run %s --pipeline "" --entry unsigned 2>&1 | filecheck %s --check-prefix=SIG

// Inconsistencies the simulator finds while running are located errors at the op.

sbp.placement @p "cpu" [0, 1]

// Each rank computes a 2x3 piece, but the result type says every rank holds the whole 4x3 tensor.
// CHECK: local_shape_error.mlir:[[# @LINE + 2]]:3: error: sbp.neg(f32[4,3][S(0)] @p): result f32[4,3][B] @p should have local shape [4, 3] on rank [0], but it has [2, 3]{{$}}
func.func @main(%a: !sbp.tensor<4x3xf32, @p, [S(0)]>) -> !sbp.tensor<4x3xf32, @p, [B]> {
  %0 = sbp.neg %a : !sbp.tensor<4x3xf32, @p, [S(0)]> -> !sbp.tensor<4x3xf32, @p, [B]>
  func.return %0 : !sbp.tensor<4x3xf32, @p, [B]>
}
// CHECK-NEXT: {{^}}  %0 = sbp.neg %a
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NOT: Traceback

// A boxing the pipeline has not lowered.
// BOXING: local_shape_error.mlir:[[# @LINE + 2]]:3: error: sbp.boxing(f32[4,3][S(0)] @p) -> f32[4,3][B] @p is not lowered to collectives: run lower-boxing first{{$}}
func.func @boxing(%a: !sbp.tensor<4x3xf32, @p, [S(0)]>) -> !sbp.tensor<4x3xf32, @p, [B]> {
  %0 = sbp.boxing %a : !sbp.tensor<4x3xf32, @p, [S(0)]> -> !sbp.tensor<4x3xf32, @p, [B]>
  func.return %0 : !sbp.tensor<4x3xf32, @p, [B]>
}

// An op whose inferred signature needs another operand SBP than the operand has.
// SIG: local_shape_error.mlir:[[# @LINE + 2]]:3: error: sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p): operand 1 is [S(1)] but the signature needs [S(0)] (run materialize-boxing and lower-boxing first){{$}}
func.func @unsigned(%a: !sbp.tensor<2x4xf32, @p, [S(0)]>, %b: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p, [S(0)]> {
  %0 = sbp.add %a, %b {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p, [S(0)]>
  func.return %0 : !sbp.tensor<2x4xf32, @p, [S(0)]>
}
