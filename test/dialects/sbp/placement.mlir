// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.placement: a symbol op holding a device type and a rectangular nested rank list
// whose shape is the hierarchy (SPEC §2.1).

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @p1 "cpu" [0, 1]{{$}}
// CHECK-NEXT:   sbp.placement @single "cpu" [7]{{$}}
// CHECK-NEXT:   sbp.placement @p2 "npu" {{\[\[}}0, 1, 2], [3, 4, 5]]{{$}}
// CHECK-NEXT:   sbp.placement @col "npu" {{\[\[}}0], [1], [2], [3]]{{$}}
// CHECK-NEXT:   sbp.placement @p3 "npu" {{\[\[\[}}0, 1], [2, 3]], {{\[\[}}4, 5], [6, 7]]]{{$}}
// CHECK-NEXT:   sbp.placement @unordered "cuda" [3, 0, 2, 1]{{$}}
// CHECK-NEXT:   sbp.placement @attrs "cpu" [0, 1] {note = "kept"}{{$}}
// CHECK-NEXT: }

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "sbp.placement"() <{sym_name = "p1", device_type = "cpu", hierarchy = array<i64: 2>, ranks = array<i64: 0, 1>}> : () -> (){{$}}
// GENERIC-NEXT:   "sbp.placement"() <{sym_name = "single", device_type = "cpu", hierarchy = array<i64: 1>, ranks = array<i64: 7>}> : () -> (){{$}}
// GENERIC-NEXT:   "sbp.placement"() <{sym_name = "p2", device_type = "npu", hierarchy = array<i64: 2, 3>, ranks = array<i64: 0, 1, 2, 3, 4, 5>}> : () -> (){{$}}
// GENERIC-NEXT:   "sbp.placement"() <{sym_name = "col", device_type = "npu", hierarchy = array<i64: 4, 1>, ranks = array<i64: 0, 1, 2, 3>}> : () -> (){{$}}
// GENERIC-NEXT:   "sbp.placement"() <{sym_name = "p3", device_type = "npu", hierarchy = array<i64: 2, 2, 2>, ranks = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>}> : () -> (){{$}}
// GENERIC-NEXT:   "sbp.placement"() <{sym_name = "unordered", device_type = "cuda", hierarchy = array<i64: 4>, ranks = array<i64: 3, 0, 2, 1>}> : () -> (){{$}}
// GENERIC-NEXT:   "sbp.placement"() <{sym_name = "attrs", device_type = "cpu", hierarchy = array<i64: 2>, ranks = array<i64: 0, 1>}> {note = "kept"} : () -> (){{$}}
// GENERIC-NEXT: }) : () -> ()

sbp.placement @p1 "cpu" [0, 1]
sbp.placement @single "cpu" [7]
sbp.placement @p2 "npu" [[0, 1, 2], [3, 4, 5]]
sbp.placement @col "npu" [[0], [1], [2], [3]]
sbp.placement @p3 "npu" [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
sbp.placement @unordered "cuda" [3,0,  2 ,1]
sbp.placement @attrs "cpu" [0, 1] {note = "kept"}
