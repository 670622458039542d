// RUN: not sbp-opt %s --split-input-file 2>&1 >/dev/null | filecheck %s
// RUN: not sbp-opt %s --split-input-file 2>/dev/null | filecheck %s --check-prefix=OUT
// RUN: sh -c 'sbp-opt "$0" --split-input-file >/dev/null 2>&1; echo "exit code $?"' %s | filecheck %s --check-prefix=CODE

// Without --verify-diagnostics a failing chunk does not stop the run (mlir-opt's rule): every
// chunk is processed, each error goes to stderr, valid chunks are printed to stdout, and the exit
// code is 1. Line numbers count from the start of the file, not of the chunk.

// CHECK: split_input_file_error.mlir:[[# @LINE + 10]]:3: error: sbp.exp(f32[4][S(0)] @p): result element type i32 should be f32{{$}}
// CHECK-NEXT: {{^}}  %0 = sbp.exp %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xi32, @p>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NEXT: split_input_file_error.mlir:[[# @LINE + 11]]:24: error: placement ranks must form a rectangular nested list{{$}}
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
// -----
sbp.placement @q "cpu" [0, 1, 2]

// The first and the last chunk are valid: both are printed, joined by one split marker.
// OUT:      builtin.module {
// OUT-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// OUT-NEXT: }
// OUT-EMPTY:
// OUT-NEXT: {{^}}// {{-----$}}
// OUT-NEXT: builtin.module {
// OUT-NEXT:   sbp.placement @q "cpu" [0, 1, 2]{{$}}
// OUT-NEXT: }
// OUT-NOT: {{.}}

// CODE: exit code 1{{$}}
