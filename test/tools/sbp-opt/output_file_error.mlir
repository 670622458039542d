// RUN: rm -f %t.out
// RUN: not sbp-opt %s -o %t.out 2>&1 | filecheck %s
// RUN: not test -e %t.out

// On an error with -o, the message goes to stderr and no output file is written.

sbp.placement @p "cpu" [0, 1]
// CHECK: output_file_error.mlir:[[# @LINE + 1]]:29: error: a 0-d tensor cannot be split: [S(0)]{{$}}
func.func @f(%a: !sbp.tensor<f32, @p, [S(0)]>) {
  func.return
}
