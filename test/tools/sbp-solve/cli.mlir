// sbp-solve (SPEC §9) end to end; RUN lines only (lit here runs .mlir files). The contest's example:
// its optimum [0, 0, 2, 1, 0] at cost 445 (15 + 55 + 35 + 75 + 95 + 30 + 40 + 10 + 30 + 60), proved;
// under a limit of 40 nothing fits (every plan peaks at 50 or more); bad input.

// RUN: sbp-solve %S/Inputs/example.json -o %t.json | filecheck %s
// RUN: filecheck %s --check-prefix=SOL < %t.json
// RUN: not sbp-solve %S/Inputs/tight.json 2>&1 | filecheck %s --check-prefix=TIGHT
// RUN: not sbp-solve %S/Inputs/bad.json 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: example: cost=445 bound=445 gap=0% time={{[0-9.]+}} s
// SOL: [0, 0, 2, 1, 0]
// TIGHT: sbp-solve: error: example: no plan fits the usage limit 40 ({{.*}}); the smallest usage limit found is 50
// BAD: sbp-solve: error: {{.*}}bad.json:2:{{[0-9]+}}: expected a non-negative integer, found 'x'
// BAD-NOT: Traceback
