// RUN: sbp-opt %s -o %t.file
// RUN: sbp-opt - < %s > %t.dash
// RUN: sbp-opt < %s -o - | filecheck %s
// RUN: rm -rf %t.dir && mkdir %t.dir && cd %t.dir && sbp-opt %s -o - > %t.stdout && not test -e -
// RUN: not sbp-opt - < %S/Inputs/bad_type.mlir 2>&1 | filecheck %s --check-prefix=ERR
// RUN: diff %t.file %t.dash
// RUN: diff %t.file %t.stdout

// mlir-opt conventions: `-` as FILE reads stdin (as no FILE does), `-o -` writes stdout and creates
// no file named `-`.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4xf32, @p, [S(0)]>) {
  func.return
}

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// CHECK-NEXT:   func.func @f(%a: !sbp.tensor<4xf32, @p, [S(0)]>) {

// ERR: {{^}}<stdin>:2:44: error: Expected integer literal (split axis){{$}}
