// RUN: not sbp-run %s --pipeline "no-such-pass" 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not sbp-run %s --pipeline "infer-sbp{bogus=1}" 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not sbp-run %s --entry nope 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: not sbp-run %s.missing 2>&1 | filecheck %s --check-prefix=FILE
// RUN: not sbp-run %s --seed 1 --inputs x.npy 2>&1 | filecheck %s --check-prefix=EXCLUSIVE
// RUN: not sbp-run %S/Inputs/parse_error.mlir 2>&1 | filecheck %s --check-prefix=PARSE

// Command-line and input problems: one `error:` line (located where there is a place), exit code 1,
// no traceback.

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.neg %x : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}

// PASS: {{^}}error: bad --pipeline: unknown pass 'no-such-pass' (registered passes: {{.*}}infer-sbp{{.*}}){{$}}
// OPTION: {{^}}error: bad --pipeline: {{.*}}bogus
// ENTRY: usage_errors.mlir: error: no function @nope in the module (functions: @main){{$}}
// FILE: {{^}}error: cannot read {{.*}}usage_errors.mlir.missing: No such file or directory{{$}}
// EXCLUSIVE: sbp-run: error: argument --inputs: not allowed with argument --seed
// PARSE: parse_error.mlir:4:{{[0-9]+}}: error: {{.+}}
// PARSE-NOT: Traceback
