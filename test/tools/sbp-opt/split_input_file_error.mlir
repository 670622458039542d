// RUN: not sbp-opt %s --split-input-file 2>&1 | filecheck %s

// Without --verify-diagnostics the first failing chunk stops the run (exit code 1). Line numbers
// count from the start of the file, not of the chunk, and nothing is printed for earlier chunks.

// CHECK-NOT: builtin.module
// CHECK: split_input_file_error.mlir:[[# @LINE + 9]]:3: error: sbp.exp(f32[4][S(0)] @p): result element type i32 should be f32{{$}}
// CHECK-NEXT: {{^}}  %0 = sbp.exp %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xi32, @p>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NOT: error

sbp.placement @p "cpu" [0, 1]
// -----
sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4xf32, @p, [S(0)]>) {
  %0 = sbp.exp %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xi32, @p>
  func.return
}
// -----
sbp.placement @p "cpu" [[0, 1], [2]]
