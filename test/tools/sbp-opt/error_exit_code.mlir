// RUN: not sbp-opt %s 2>&1 | filecheck %s
// RUN: not sbp-opt %s > %t.stdout 2>/dev/null
// RUN: sh -c 'wc -c < "$0"' %t.stdout | filecheck %s --check-prefix=STDOUT
// RUN: sh -c 'sbp-opt "$0" >/dev/null 2>&1; echo "exit code $?"' %s | filecheck %s --check-prefix=CODE

// Without --verify-diagnostics, a verifier error is printed on stderr as
// FILE:LINE:COL: error: MESSAGE, the source line and a caret; nothing goes to stdout; exit code 1.

// CHECK: error_exit_code.mlir:[[# @LINE + 6]]:3: error: sbp.add(f32[4][S(0)] @p, f32[3][S(0)] @p): shapes [4] and [3] are not broadcast-compatible{{$}}
// CHECK-NEXT: {{^}}  %0 = sbp.add %a, %b : !sbp.tensor<4xf32, @p, [S(0)]>, !sbp.tensor<3xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NOT: Traceback
sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4xf32, @p, [S(0)]>, %b: !sbp.tensor<3xf32, @p, [S(0)]>) {
  %0 = sbp.add %a, %b : !sbp.tensor<4xf32, @p, [S(0)]>, !sbp.tensor<3xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// STDOUT: {{^ *0$}}

// CODE: exit code 1{{$}}
