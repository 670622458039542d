// RUN: not sbp-opt %t.does-not-exist.mlir 2>&1 | filecheck %s

// An unreadable input file: one `error:` line, exit code 1, no traceback.

// CHECK: {{^}}error: cannot read input: [Errno 2] No such file or directory: '{{.*}}.does-not-exist.mlir'{{$}}
// CHECK-NOT: Traceback
