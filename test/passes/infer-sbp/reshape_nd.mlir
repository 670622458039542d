// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s --check-prefix=COST
// RUN: sbp-run %s --entry split_4_to_2x2 --check | filecheck %s --check-prefixes=EXEC,ZERO
// RUN: sbp-run %s --entry uneven_product_dropped --check | filecheck %s --check-prefix=EXEC
// RUN: sbp-run %s --entry groups --check | filecheck %s --check-prefix=EXEC
// RUN: sbp-run %s --entry split_6_to_2x3 --check --seed 3 | filecheck %s --check-prefix=EXEC

// reshape on an ND mesh: OneFlow's ReshapeOp::EnumerateNdSbpSignatures appends multi-axis splits
// to the product of the per-axis lists, drops those whose output does not fit, deduplicates
// (sorting by OneFlow's measure: B < P < S(0) < S(1) ..., mesh axis 0 first, input first).

sbp.placement @q "cpu" [[0, 1], [2, 3]]
sbp.placement @r "cpu" [[0, 1, 2], [3, 4, 5]]

// (4,) -> (2, 2) on 2x2: the product only offers (S(0), S(0)) -> (S(0), S(0)), whose output does
// not fit (2 rows over 2x2 ranks); the ND enumeration adds (S(0), S(0)) -> (S(0), S(1)) and the
// all-match shortcut takes it: no boxing.
// CHECK-LABEL: func.func @split_4_to_2x2(
// CHECK-SAME:    -> !sbp.tensor<2x2xf32, @q, [S(0), S(1)]>
// CHECK:         sbp.reshape %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(0)] -> [S(0), S(1)]>}
// COST-LABEL: func.func @split_4_to_2x2(
// COST:         sbp.signature = #sbp.sig<[S(0), S(0)] -> [S(0), S(1)]>
// ZERO: total bytes sent: 0
// EXEC: check: OK
func.func @split_4_to_2x2(%x: !sbp.tensor<4xf32, @q, [S(0), S(0)]>) -> !sbp.tensor<2x2xf32, @q> {
  %y = sbp.reshape %x : !sbp.tensor<4xf32, @q, [S(0), S(0)]> -> !sbp.tensor<2x2xf32, @q>
  func.return %y : !sbp.tensor<2x2xf32, @q>
}

// (12,) -> (6, 2) on 2x2: the product holds (S(0), S(0)) -> (S(0), S(0)), under which rank
// (0, 0) would hold 3 input elements but 2 output rows (4 elements); OneFlow fails there at
// physical shape inference. It is dropped, and the eager ND cost then prefers (B, B) (144)
// over (S(0), B) (145); rule=cost takes the cheaper (S(0), B).
// CHECK-LABEL: func.func @uneven_product_dropped(
// CHECK:         sbp.signature = #sbp.sig<[B, B] -> [B, B]>
// COST-LABEL: func.func @uneven_product_dropped(
// COST:         sbp.signature = #sbp.sig<[S(0), B] -> [S(0), B]>
func.func @uneven_product_dropped(%x: !sbp.tensor<12xf32, @q, [S(0), S(0)]>) -> !sbp.tensor<6x2xf32, @q> {
  %y = sbp.reshape %x : !sbp.tensor<12xf32, @q, [S(0), S(0)]> -> !sbp.tensor<6x2xf32, @q>
  func.return %y : !sbp.tensor<6x2xf32, @q>
}

// OneFlow's own example, (4, 5, 2, 3) -> (2, 2, 5, 6): three groups (2, 3) -> (6), (5) -> (5),
// (4) -> (2, 2). Splitting the last group on mesh axis 0 and the first on mesh axis 1 is one of
// the combinations: (S(0), S(2)) -> (S(0), S(3)).
// CHECK-LABEL: func.func @groups(
// CHECK:         sbp.signature = #sbp.sig<[S(0), S(2)] -> [S(0), S(3)]>
// COST-LABEL: func.func @groups(
// COST:         sbp.signature = #sbp.sig<[S(0), S(2)] -> [S(0), S(3)]>
func.func @groups(%x: !sbp.tensor<4x5x2x3xf32, @q, [S(0), S(2)]>) -> !sbp.tensor<2x2x5x6xf32, @q> {
  %y = sbp.reshape %x : !sbp.tensor<4x5x2x3xf32, @q, [S(0), S(2)]> -> !sbp.tensor<2x2x5x6xf32, @q>
  func.return %y : !sbp.tensor<2x2x5x6xf32, @q>
}

// (6,) -> (2, 3) on 2x3 (the example in OneFlow's source): (S(0), S(0)) -> (S(0), S(1)).
// CHECK-LABEL: func.func @split_6_to_2x3(
// CHECK:         sbp.signature = #sbp.sig<[S(0), S(0)] -> [S(0), S(1)]>
func.func @split_6_to_2x3(%x: !sbp.tensor<6xi32, @r, [S(0), S(0)]>) -> !sbp.tensor<2x3xi32, @r> {
  %y = sbp.reshape %x : !sbp.tensor<6xi32, @r, [S(0), S(0)]> -> !sbp.tensor<2x3xi32, @r>
  func.return %y : !sbp.tensor<2x3xi32, @r>
}
