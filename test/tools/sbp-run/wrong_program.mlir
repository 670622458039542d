// RUN: not sbp-run %s --pipeline "" --check 2>&1 | filecheck %s
// RUN: not sbp-run %s --pipeline "" --check --entry replicas 2>&1 | filecheck %s --check-prefix=REPLICAS
// RUN: not sbp-run %s --pipeline "" --entry replicas 2>&1 | filecheck %s --check-prefix=NOCHECK
// RUN: sh -c 'sbp-run "$0" --pipeline "" --check >/dev/null 2>&1; echo "exit code $?"' %s | filecheck %s --check-prefix=CODE

// Programs the verifier accepts but that compute the wrong value: the simulator runs them rank by
// rank and the check against the global reference catches them.

sbp.placement @p "cpu" [0, 1]

// A product of two partial sums is not the partial sum of the products: (a0+a1)(b0+b1) != a0b0 + a1b1.
// (infer-sbp never picks [P], [P] -> [P] for mul; this signature is written by hand.)
func.func @main(%a: !sbp.tensor<4x3xi32, @p, [P]>, %b: !sbp.tensor<4x3xi32, @p, [P]>) -> !sbp.tensor<4x3xi32, @p, [P]> {
  %0 = sbp.mul %a, %b : !sbp.tensor<4x3xi32, @p, [P]>, !sbp.tensor<4x3xi32, @p, [P]> -> !sbp.tensor<4x3xi32, @p, [P]>
  func.return %0 : !sbp.tensor<4x3xi32, @p, [P]>
}

// CHECK:      {{^}}total bytes sent: 0 (all ranks); cost model: 0{{$}}
// CHECK-NEXT: {{^}}check: FAILED: result 0 (i32[4,3][P] @p): {{[0-9]+}} of 12 elements differ (exact); max abs error {{[0-9]+}}; first differing index [{{[0-9]+}}, {{[0-9]+}}]: got {{-?[0-9]+}}, expected {{-?[0-9]+}}{{$}}
// CHECK-NOT:  Traceback

// The result type claims B, but every rank holds only its own piece of a partial value: the
// broadcast replicas differ when the output is reassembled.
func.func @replicas(%a: !sbp.tensor<4x3xf32, @p, [P]>) -> !sbp.tensor<4x3xf32, @p, [B]> {
  %0 = sbp.neg %a : !sbp.tensor<4x3xf32, @p, [P]> -> !sbp.tensor<4x3xf32, @p, [B]>
  func.return %0 : !sbp.tensor<4x3xf32, @p, [B]>
}

// REPLICAS:      {{^}}total bytes sent: 0 (all ranks); cost model: 0{{$}}
// REPLICAS-NEXT: {{^}}check: FAILED: result 0 (f32[4,3][B] @p): broadcast replicas differ on mesh axis 0{{$}}

// Without --check, the inconsistent output is still an error.
// NOCHECK: {{^}}error: result 0 (f32[4,3][B] @p): broadcast replicas differ on mesh axis 0{{$}}

// CODE: exit code 1{{$}}
