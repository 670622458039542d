// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.placement with `links`: one (bandwidth GB/s, latency µs per hop) pair per mesh axis,
// outermost first (SPEC §2.1); integers are accepted and printed as floats.

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @m "npu" {{\[\[}}0, 1, 2, 3], [4, 5, 6, 7]] links [(25.0, 10.0), (196.0, 1.5)]{{$}}
// CHECK-NEXT:   sbp.placement @one "cpu" [0, 1] links [(87.7, 2.7)] {note = "kept"}{{$}}
// CHECK-NEXT:   sbp.placement @plain "cpu" [0, 1]{{$}}
// CHECK-NEXT: }

// GENERIC:      "sbp.placement"() <{sym_name = "m", device_type = "npu", hierarchy = array<i64: 2, 4>, ranks = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, link_bandwidth = array<f64: 2.500000e+01, 1.960000e+02>, link_latency = array<f64: 1.000000e+01, 1.500000e+00>}> : () -> (){{$}}
// GENERIC-NEXT: "sbp.placement"() <{sym_name = "one", device_type = "cpu", hierarchy = array<i64: 2>, ranks = array<i64: 0, 1>, link_bandwidth = array<f64: 8.770000e+01>, link_latency = array<f64: 2.700000e+00>}> {note = "kept"} : () -> (){{$}}
// GENERIC-NEXT: "sbp.placement"() <{sym_name = "plain", device_type = "cpu", hierarchy = array<i64: 2>, ranks = array<i64: 0, 1>}> : () -> (){{$}}

sbp.placement @m "npu" [[0, 1, 2, 3], [4, 5, 6, 7]] links [(25, 10.0), (196.0, 1.5)]
sbp.placement @one "cpu" [0, 1] links [( 87.7 ,2.7 )] {note = "kept"}
sbp.placement @plain "cpu" [0, 1]
