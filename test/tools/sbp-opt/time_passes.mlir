// RUN: sbp-opt %s -p infer-sbp,materialize-boxing --time-passes 2> %t.err > %t.out
// RUN: filecheck %s --input-file %t.err
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing > %t.plain
// RUN: sbp-opt %s --infer-sbp --mlir-timing 2>&1 >/dev/null | filecheck %s --check-prefix=ALIAS
// RUN: diff %t.plain %t.out

// `--time-passes` (or MLIR's `--mlir-timing`) prints MLIR's execution time report to stderr: the
// parser, every pass in pipeline order, the printer and the total; stdout is the program unchanged.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>, %b: !sbp.tensor<4x4xf32, @p, [S(1)]>) -> !sbp.tensor<4x4xf32, @p> {
  %0 = sbp.add %a, %b : !sbp.tensor<4x4xf32, @p, [S(0)]>, !sbp.tensor<4x4xf32, @p, [S(1)]> -> !sbp.tensor<4x4xf32, @p>
  func.return %0 : !sbp.tensor<4x4xf32, @p>
}

// CHECK:      {{^}}===-------------------------------------------------------------------------==={{$}}
// CHECK-NEXT: {{^ +}}... Execution time report ...{{$}}
// CHECK-NEXT: {{^}}===-------------------------------------------------------------------------==={{$}}
// CHECK-NEXT: {{^}}  Total Execution Time: {{[0-9]+\.[0-9]+}} seconds{{$}}
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  ----Wall Time----  ----Name----{{$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  Parser$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  infer-sbp$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  materialize-boxing$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  Output$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9]+ \(100\.0%\)  Total$}}

// ALIAS: Execution time report
// ALIAS: infer-sbp
