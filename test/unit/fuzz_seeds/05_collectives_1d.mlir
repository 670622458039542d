// Seed: every collective on a 1-D mesh, custom form.
sbp.placement @p "npu" [0, 1, 2, 3]
func.func @coll(%s: !sbp.tensor<8x8xf32, @p, [S(0)]>, %b: !sbp.tensor<8x8xf32, @p, [B]>, %q: !sbp.tensor<8x8xf32, @p, [P(max)]>) -> !sbp.tensor<8x8xf32, @p, [B]> {
  %0 = sbp.all_gather %s {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @p, [S(0)]> -> !sbp.tensor<8x8xf32, @p, [B]>
  %1 = sbp.all_reduce %q {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @p, [P(max)]> -> !sbp.tensor<8x8xf32, @p, [B]>
  %2 = sbp.reduce_scatter %q {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @p, [P(max)]> -> !sbp.tensor<8x8xf32, @p, [S(1)]>
  %3 = sbp.all_to_all %s {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @p, [S(0)]> -> !sbp.tensor<8x8xf32, @p, [S(1)]>
  %4 = sbp.all_slice %b {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @p, [B]> -> !sbp.tensor<8x8xf32, @p, [S(0)]>
  %5 = sbp.to_partial %b {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @p, [B]> -> !sbp.tensor<8x8xf32, @p, [P(min)]>
  %6 = sbp.to_partial %s {mesh_axes = array<i64: 0>} : !sbp.tensor<8x8xf32, @p, [S(0)]> -> !sbp.tensor<8x8xf32, @p, [P(sum)]>
  func.return %0 : !sbp.tensor<8x8xf32, @p, [B]>
}
