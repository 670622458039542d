// RUN: not sbp-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// RUN: not sbp-opt %s --split-input-file --verify-diagnostics 2>/dev/null | filecheck %s --check-prefix=STDOUT

// A wrong annotation (other text, other line, or an error where none is produced) makes
// --verify-diagnostics fail with exit code 1; the problems are reported on stderr while the
// diagnostics themselves stay on stdout, and every chunk is still processed.

sbp.placement @p "cpu" [0, 1]
func.func @wrong_text(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // expected-error @+1 {{this text is not in the message}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  func.return
}
// CHECK-DAG: expected_error_mismatch.mlir:[[# @LINE - 3]]: error: expected error "this text is not in the message" was not produced{{$}}
// CHECK-DAG: unexpected error: {{.*}}expected_error_mismatch.mlir:[[# @LINE - 4]]:3: no `// expected-error` annotation matches it{{$}}
// STDOUT: expected_error_mismatch.mlir:[[# @LINE - 5]]:3: error: sbp.relu(f32[4,8][B] @p): result shape [8, 4] should be [4, 8]{{$}}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @wrong_line(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // expected-error @+2 {{result shape [8, 4] should be [4, 8]}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  func.return
}
// The annotation points at the `func.return` line, two lines below it.
// CHECK-DAG: expected_error_mismatch.mlir:[[# @LINE - 3]]: error: expected error "result shape [8, 4] should be [4, 8]" was not produced{{$}}
// CHECK-DAG: unexpected error: {{.*}}expected_error_mismatch.mlir:[[# @LINE - 5]]:3: no `// expected-error` annotation matches it{{$}}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @no_error(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // expected-error @+1 {{never produced}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}
// CHECK-DAG: expected_error_mismatch.mlir:[[# @LINE - 3]]: error: expected error "never produced" was not produced{{$}}
// STDOUT: func.func @no_error(
