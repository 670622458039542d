// RUN: sbp-opt < %s | filecheck %s
// RUN: not sbp-opt < %S/Inputs/bad_type.mlir 2>&1 | filecheck %s --check-prefix=ERR

// Without a file argument the program is read from stdin; diagnostics name it <stdin>.

sbp.placement @p "cpu" [0, 1]

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// CHECK-NEXT: }

// ERR: {{^}}<stdin>:2:44: error: Expected integer literal (split axis){{$}}
// ERR-NEXT: {{^}}func.func @f(%a: !sbp.tensor<4xf32, @p, [S(k)]>) {{[{]}}{{$}}
