// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sed 's/ links .*//' %s | sbp-opt -p lower-boxing | filecheck %s --check-prefix=NOLINKS
// RUN: sbp-run %s --check | filecheck %s --check-prefix=SIM

// Issue 13's P2 re-run, one of its pairs: (P, P) -> (B, B) of a 4 MiB f32 tensor on a 2x4 CPU mesh
// whose links are DTensor's CPU-mesh constants (every axis 87.7 x 0.22 = 19.294 GB/s, 2.7 us per hop).
// With sbpc's default constants (no links: 87.7 GB/s, 0.6 us) one all-reduce over the 8 merged ranks
// is cheapest; at 2.7 us per hop its 14 hops cost more than DTensor's plan, which the planner now
// finds too: reduce-scatter on the 4-rank axis, all-reduce a quarter of the data on the 2-rank axis,
// all-gather (DTensor's formulas: 395.7 us against 398.7 us for the merged all-reduce;
// test/unit/test_dtensor_p2.py checks all 512 pairs).

// CHECK:      %0 = sbp.reduce_scatter %x {mesh_axes = array<i64: 1>} : !sbp.tensor<1024x1024xf32, @m, [P, P]> -> !sbp.tensor<1024x1024xf32, @m, [P, S(0)]>
// CHECK-NEXT: %1 = sbp.all_reduce %0 {mesh_axes = array<i64: 0>} : !sbp.tensor<1024x1024xf32, @m, [P, S(0)]> -> !sbp.tensor<1024x1024xf32, @m, [B, S(0)]>
// CHECK-NEXT: %y = sbp.all_gather %1 {mesh_axes = array<i64: 1>} : !sbp.tensor<1024x1024xf32, @m, [B, S(0)]> -> !sbp.tensor<1024x1024xf32, @m, [B, B]>
// NOLINKS:      %y = sbp.all_reduce %x {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<1024x1024xf32, @m, [P, P]> -> !sbp.tensor<1024x1024xf32, @m, [B, B]>
// NOLINKS-NEXT: func.return %y
// SIM: check: OK

sbp.placement @m "cpu" [[0, 1, 2, 3], [4, 5, 6, 7]] links [(19.294, 2.7), (19.294, 2.7)]
func.func @main(%x: !sbp.tensor<1024x1024xf32, @m, [P, P]>) -> !sbp.tensor<1024x1024xf32, @m, [B, B]> {
  %y = sbp.boxing %x : !sbp.tensor<1024x1024xf32, @m, [P, P]> -> !sbp.tensor<1024x1024xf32, @m, [B, B]>
  func.return %y : !sbp.tensor<1024x1024xf32, @m, [B, B]>
}
