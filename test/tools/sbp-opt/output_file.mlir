// RUN: rm -f %t.out
// RUN: sbp-opt %s -o %t.out > %t.stdout
// RUN: filecheck %s --input-file %t.out
// RUN: sh -c 'wc -c < "$0"' %t.stdout | filecheck %s --check-prefix=STDOUT
// RUN: sbp-opt %s --print-op-generic -o %t.generic
// RUN: filecheck %s --input-file %t.generic --check-prefix=GENERIC
// RUN: sbp-opt %t.generic -o %t.again
// RUN: diff %t.out %t.again

// `-o FILE` writes the printed program to FILE instead of stdout.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4xf32, @p, [S(0)]>) {
  %0 = sbp.neg %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// CHECK-NEXT:   func.func @f(%a: !sbp.tensor<4xf32, @p, [S(0)]>) {
// CHECK-NEXT:     %0 = sbp.neg %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>{{$}}
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

// STDOUT: {{^ *0$}}

// GENERIC: %0 = "sbp.neg"(%a) : (!sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p>{{$}}
