// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not sbp-opt %s --split-input-file --verify-diagnostics 2>&1 >/dev/null | filecheck %s --check-prefix=STDERR
// RUN: sh -c 'sbp-opt "$0" --split-input-file --verify-diagnostics >/dev/null 2>&1; echo "exit code $?"' %s | filecheck %s --check-prefix=CODE

// With --verify-diagnostics and no annotations, every chunk is processed: diagnostics of failing
// chunks are printed to stdout in order, valid chunks are printed as modules. No annotation
// expects the errors, so each is also reported on stderr as unexpected and the exit code is 1
// (mlir-opt's rule: an unexpected diagnostic fails the run).

// CHECK: verify_diagnostics.mlir:[[# @LINE + 1]]:24: error: placement ranks must form a rectangular nested list{{$}}
sbp.placement @p "cpu" [[0, 1], [2]]
// CHECK-NEXT: {{^}}sbp.placement @p "cpu" {{\[\[}}0, 1], [2]]{{$}}
// CHECK-NEXT: {{^}}                       ^^^^^^^^^^^^^{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}// {{-----$}}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4xf32, @p, [P]>) {
  // CHECK-NEXT: verify_diagnostics.mlir:[[# @LINE + 1]]:3: error: sbp.to_partial(f32[4][P] @p): [P] -> [P] on mesh axis 0 is P -> P, not the B -> P(k) or S(i) -> P(k) of sbp.to_partial{{$}}
  %0 = sbp.to_partial %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4xf32, @p, [P]> -> !sbp.tensor<4xf32, @p, [P]>
  func.return
}
// CHECK-NEXT: {{^}}  %0 = sbp.to_partial
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NOT: {{.}}

// Each unexpected error is named on stderr by its place only: its text is printed once, on stdout.
// STDERR:      {{^}}unexpected error: {{.*}}verify_diagnostics.mlir:11:24: no `// expected-error` annotation matches it{{$}}
// STDERR-NEXT: {{^}}unexpected error: {{.*}}verify_diagnostics.mlir:30:3: no `// expected-error` annotation matches it{{$}}
// STDERR-NOT:  {{.}}

// CODE: exit code 1{{$}}
