// RUN: sbp-opt %s --infer-sbp | sbp-opt | filecheck %s
// RUN: sbp-opt %s --infer-sbp --print-op-generic | sbp-opt | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | sbp-opt | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s --infer-sbp | sbp-opt --infer-sbp | filecheck %s

// The output of --infer-sbp re-parses and verifies (custom and generic form), running the pass
// again changes nothing, and function result types are updated to the inferred SBPs.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %{{.*}}: !sbp.tensor<8x16xf32, @p, [S(0)]>, %{{.*}}: !sbp.tensor<16x32xf32, @p, [B]>, %{{.*}}: !sbp.tensor<32xf32, @p, [B]>, %{{.*}}: !sbp.tensor<32x16xf32, @p, [B]>)
// CHECK-SAME:    -> (!sbp.tensor<8x16xf32, @p, [S(0)]>, !sbp.tensor<16xf32, @p, [P]>) {
// CHECK-NEXT:    %{{.*}} = sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : !sbp.tensor<8x16xf32, @p, [S(0)]>, !sbp.tensor<16x32xf32, @p, [B]> -> !sbp.tensor<8x32xf32, @p, [S(0)]>
// CHECK-NEXT:    %{{.*}} = sbp.add %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : !sbp.tensor<8x32xf32, @p, [S(0)]>, !sbp.tensor<32xf32, @p, [B]> -> !sbp.tensor<8x32xf32, @p, [S(0)]>
// CHECK-NEXT:    %{{.*}} = sbp.relu %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : !sbp.tensor<8x32xf32, @p, [S(0)]> -> !sbp.tensor<8x32xf32, @p, [S(0)]>
// CHECK-NEXT:    %{{.*}} = sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : !sbp.tensor<8x32xf32, @p, [S(0)]>, !sbp.tensor<32x16xf32, @p, [B]> -> !sbp.tensor<8x16xf32, @p, [S(0)]>
// CHECK-NEXT:    %{{.*}} = sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [P]>, axes = array<i64: 0>} : !sbp.tensor<8x16xf32, @p, [S(0)]> -> !sbp.tensor<16xf32, @p, [P]>
// CHECK-NEXT:    func.return %{{.*}}, %{{.*}} : !sbp.tensor<8x16xf32, @p, [S(0)]>, !sbp.tensor<16xf32, @p, [P]>
// COST-LABEL: func.func @mlp(
// COST-SAME:    -> (!sbp.tensor<8x16xf32, @p, [S(0)]>, !sbp.tensor<16xf32, @p, [P]>) {
func.func @mlp(%x: !sbp.tensor<8x16xf32, @p, [S(0)]>, %w1: !sbp.tensor<16x32xf32, @p, [B]>, %b1: !sbp.tensor<32xf32, @p, [B]>, %w2: !sbp.tensor<32x16xf32, @p, [B]>)
    -> (!sbp.tensor<8x16xf32, @p>, !sbp.tensor<16xf32, @p>) {
  %0 = sbp.matmul %x, %w1 : !sbp.tensor<8x16xf32, @p, [S(0)]>, !sbp.tensor<16x32xf32, @p, [B]> -> !sbp.tensor<8x32xf32, @p>
  %1 = sbp.add %0, %b1 : !sbp.tensor<8x32xf32, @p>, !sbp.tensor<32xf32, @p, [B]> -> !sbp.tensor<8x32xf32, @p>
  %2 = sbp.relu %1 : !sbp.tensor<8x32xf32, @p> -> !sbp.tensor<8x32xf32, @p>
  %3 = sbp.matmul %2, %w2 : !sbp.tensor<8x32xf32, @p>, !sbp.tensor<32x16xf32, @p, [B]> -> !sbp.tensor<8x16xf32, @p>
  %4 = sbp.reduce_sum %3 {axes = array<i64: 0>} : !sbp.tensor<8x16xf32, @p> -> !sbp.tensor<16xf32, @p>
  func.return %3, %4 : !sbp.tensor<8x16xf32, @p>, !sbp.tensor<16xf32, @p>
}

// Properties, hints, scalars, explicit conversions and a 2-D mesh survive the round trip.
// CHECK-LABEL: func.func @misc(
// CHECK-SAME:    -> !sbp.tensor<4x8xf32, @q, [S(1), B]> {
// With b forced to (B, B), a's mesh axis 1 goes S(1) -> S(0) (all-to-all, 1 + 128*3/4 = 97) rather
// than S(1) -> B (1 + 128*3 = 385): (S(0), S(0)).
// CHECK-NEXT:    %{{.*}} = sbp.matmul %{{.*}}, %{{.*}} {sbp.hint = #sbp.sig<?, [B, B] -> ?>, sbp.signature = #sbp.sig<[S(0), S(0)], [B, B] -> [S(0), S(0)]>, transpose_b} : !sbp.tensor<8x4xf32, @q, [S(0), S(1)]>, !sbp.tensor<4x4xf32, @q, [B, S(0)]> -> !sbp.tensor<8x4xf32, @q, [S(0), S(0)]>
// CHECK-NEXT:    %{{.*}} = sbp.mul_scalar %{{.*}}, 2.500000e+00 : f32 {sbp.signature = #sbp.sig<[S(0), S(0)] -> [S(0), S(0)]>} : !sbp.tensor<8x4xf32, @q, [S(0), S(0)]> -> !sbp.tensor<8x4xf32, @q, [S(0), S(0)]>
// CHECK-NEXT:    %{{.*}} = sbp.transpose %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(0)] -> [S(1), S(1)]>, perm = array<i64: 1, 0>} : !sbp.tensor<8x4xf32, @q, [S(0), S(0)]> -> !sbp.tensor<4x8xf32, @q, [S(1), S(1)]>
// CHECK-NEXT:    %{{.*}} = sbp.to_global %{{.*}} {sbp.signature = #sbp.sig<[S(1), S(1)] -> [S(1), B]>} : !sbp.tensor<4x8xf32, @q, [S(1), S(1)]> -> !sbp.tensor<4x8xf32, @q, [S(1), B]>
// CHECK-NEXT:    func.return %{{.*}} : !sbp.tensor<4x8xf32, @q, [S(1), B]>
func.func @misc(%a: !sbp.tensor<8x4xf32, @q, [S(0), S(1)]>, %b: !sbp.tensor<4x4xf32, @q, [B, S(0)]>) -> !sbp.tensor<4x8xf32, @q, [S(1), B]> {
  %0 = sbp.matmul %a, %b {transpose_b, sbp.hint = #sbp.sig<?, [B, B] -> ?>} : !sbp.tensor<8x4xf32, @q, [S(0), S(1)]>, !sbp.tensor<4x4xf32, @q, [B, S(0)]> -> !sbp.tensor<8x4xf32, @q>
  %1 = sbp.mul_scalar %0, 2.5 : f32 : !sbp.tensor<8x4xf32, @q> -> !sbp.tensor<8x4xf32, @q>
  %2 = sbp.transpose %1 {perm = array<i64: 1, 0>} : !sbp.tensor<8x4xf32, @q> -> !sbp.tensor<4x8xf32, @q>
  %3 = sbp.to_global %2 : !sbp.tensor<4x8xf32, @q> -> !sbp.tensor<4x8xf32, @q, [S(1), B]>
  func.return %3 : !sbp.tensor<4x8xf32, @q, [S(1), B]>
}

// Partial max under rule=cost round-trips too.
// COST-LABEL: func.func @pmax(
// COST-SAME:    -> !sbp.tensor<4xf32, @p, [P(max)]> {
// COST-NEXT:    sbp.reduce_max %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [P(max)]>, axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p, [P(max)]>
func.func @pmax(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.reduce_max %x {axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}
