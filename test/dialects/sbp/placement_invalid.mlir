// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Invalid sbp.placement ops (SPEC §2.1): the ranks must be a rectangular nested list of
// distinct non-negative integers.

// CHECK: placement_invalid.mlir:[[# @LINE + 3]]:24: error: placement ranks must form a rectangular nested list{{$}}
// CHECK-NEXT: {{^}}sbp.placement @p "cpu" {{\[\[}}0, 1], [2]]{{$}}
// CHECK-NEXT: {{^}}                       ^^^^^^^^^^^^^{{$}}
sbp.placement @p "cpu" [[0, 1], [2]]

// -----

// CHECK: :[[# @LINE + 1]]:24: error: placement ranks must form a rectangular nested list{{$}}
sbp.placement @p "cpu" [[0], 1]

// -----

// CHECK: :[[# @LINE + 1]]:24: error: placement ranks must form a rectangular nested list{{$}}
sbp.placement @p "cpu" [[[0, 1], [2, 3]], [[4, 5]]]

// -----

// CHECK: :[[# @LINE + 1]]:24: error: placement ranks must form a rectangular nested list{{$}}
sbp.placement @p "cpu" []

// -----

// CHECK: :[[# @LINE + 1]]:24: error: placement ranks must form a rectangular nested list{{$}}
sbp.placement @p "cpu" 0

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @p: duplicate ranks [1]{{$}}
sbp.placement @p "cpu" [0, 1, 1]

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @q: duplicate ranks [1, 2]{{$}}
sbp.placement @q "npu" [[0, 1, 2], [1, 2, 3]]

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @p: ranks must be non-negative, got [0, -1]{{$}}
sbp.placement @p "cpu" [0, -1]

// -----

// The generic form can state a hierarchy the ranks do not fill.
// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @p: 3 ranks do not fill hierarchy [2, 2] (ranks must be rectangular){{$}}
"sbp.placement"() <{sym_name = "p", device_type = "cpu", hierarchy = array<i64: 2, 2>, ranks = array<i64: 0, 1, 2>}> : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @p: hierarchy [0] must be non-empty and positive{{$}}
"sbp.placement"() <{sym_name = "p", device_type = "cpu", hierarchy = array<i64: 0>, ranks = array<i64>}> : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @p: hierarchy [] must be non-empty and positive{{$}}
"sbp.placement"() <{sym_name = "p", device_type = "cpu", hierarchy = array<i64>, ranks = array<i64>}> : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement: property 'hierarchy' expected in operation 'sbp.placement'{{$}}
"sbp.placement"() <{sym_name = "p", device_type = "cpu", ranks = array<i64: 0>}> : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:15: error: expect symbol name{{$}}
sbp.placement "cpu" [0]

// -----

// CHECK: :[[# @LINE + 1]]:18: error: string literal expected (device type, e.g. "cpu" or "npu"){{$}}
sbp.placement @p [0, 1]

// -----

// CHECK: :[[# @LINE + 1]]:28: error: Expected integer literal (a rank or a nested list of ranks){{$}}
sbp.placement @p "cpu" [0, x]

// -----

// Two placements with the same symbol.
// CHECK: error: builtin.module: Redefinition of symbol "p"{{$}}
sbp.placement @p "cpu" [0, 1]
sbp.placement @p "cpu" [2, 3]

// -----

// Placements live at module level.
func.func @nested() {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.placement @p: must be at module level, not inside func.func{{$}}
  sbp.placement @p "cpu" [0]
  func.return
}

// -----

// links: one (bandwidth, latency) pair per mesh axis.
// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @m: 1 link bandwidth value(s) for a hierarchy of rank 2 (links need one (bandwidth, latency) pair per mesh axis){{$}}
sbp.placement @m "npu" [[0, 1], [2, 3]] links [(25.0, 10.0)]

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @m: 0 link bandwidth value(s) for a hierarchy of rank 1 (links need one (bandwidth, latency) pair per mesh axis){{$}}
sbp.placement @m "npu" [0, 1] links []

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @m: link bandwidth must be positive and finite, got -25{{$}}
sbp.placement @m "npu" [0, 1] links [(-25.0, 10.0)]

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @m: link latency must be positive and finite, got 0{{$}}
sbp.placement @m "npu" [[0, 1], [2, 3]] links [(25.0, 1.0), (25.0, 0.0)]

// -----

// CHECK: :[[# @LINE + 1]]:44: error: Expected ','{{$}}
sbp.placement @m "npu" [0, 1] links [(25.0 10.0)]

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @p: link_bandwidth and link_latency must be given together{{$}}
"sbp.placement"() <{sym_name = "p", device_type = "cpu", hierarchy = array<i64: 2>, ranks = array<i64: 0, 1>, link_bandwidth = array<f64: 1.0>}> : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:1: error: sbp.placement @p: 2 link latency value(s) for a hierarchy of rank 1 (links need one (bandwidth, latency) pair per mesh axis){{$}}
"sbp.placement"() <{sym_name = "p", device_type = "cpu", hierarchy = array<i64: 2>, ranks = array<i64: 0, 1>, link_bandwidth = array<f64: 1.0>, link_latency = array<f64: 1.0, 2.0>}> : () -> ()
