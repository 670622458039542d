// RUN: not sbp-opt %s -p no-such-pass 2>&1 | filecheck %s
// RUN: sh -c 'sbp-opt "$0" -p no-such-pass >/dev/null 2>&1; echo "exit code $?"' %s | filecheck %s --check-prefix=CODE
// RUN: not sbp-opt %s -p 'no-such-pass,other-pass' 2>&1 | filecheck %s --check-prefix=TWO
// RUN: not sbp-opt %s --no-such-pass 2>&1 | filecheck %s --check-prefix=FLAG

// An unknown pass name in -p is a usage error: one `error:` line on stderr, exit code 1,
// never an internal error or a traceback. An unknown `--flag` is rejected by the argument parser.

sbp.placement @p "cpu" [0, 1]

// CHECK: {{^}}error: unknown pass 'no-such-pass' (registered passes: autodiff, infer-sbp, materialize-boxing, lower-boxing, spmdize, report, lower-to-ascendc){{$}}
// CHECK-NOT: internal error
// CHECK-NOT: Traceback

// CODE: exit code 1{{$}}

// TWO: {{^}}error: unknown pass 'no-such-pass' (registered passes: {{.*}}){{$}}

// FLAG: sbp-opt: error: unrecognized arguments: --no-such-pass{{$}}
