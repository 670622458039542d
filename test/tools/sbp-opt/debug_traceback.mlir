// RUN: not sbp-opt %s 2>&1 | filecheck %s
// RUN: not sbp-opt %s --debug 2>&1 | filecheck %s --check-prefix=DEBUG

// Errors never show a Python traceback unless --debug is given.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x8xf32, @p, [P(avg)]>) {
  func.return
}

// CHECK-NOT: Traceback
// CHECK: debug_traceback.mlir:7:46: error: Expected one of 'max', 'min', 'sum' (partial kind sum, max or min){{$}}
// CHECK-NOT: Traceback

// DEBUG: Traceback (most recent call last):
// DEBUG: ParseError
// DEBUG: debug_traceback.mlir:7:46: error: Expected one of 'max', 'min', 'sum' (partial kind sum, max or min){{$}}
