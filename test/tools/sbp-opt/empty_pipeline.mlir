// RUN: sbp-opt %s -p '' | filecheck %s
// RUN: sbp-opt %s -p "" --split-input-file | filecheck %s
// RUN: sbp-opt %s -p '' --print-op-generic | filecheck %s --check-prefix=GENERIC

// `-p` with an empty pipeline runs no pass: the program is parsed, verified and printed unchanged.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.relu %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// CHECK-NEXT:   func.func @f(%a: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
// CHECK-NEXT:     %0 = sbp.relu %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>{{$}}
// CHECK-NEXT:     func.return %0 : !sbp.tensor<4xf32, @p>{{$}}
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NOT: sbp.signature

// GENERIC: %0 = "sbp.relu"(%a) : (!sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p>{{$}}
