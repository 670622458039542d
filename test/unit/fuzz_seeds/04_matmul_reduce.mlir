// Seed: batched matmul with transposes, reductions with keepdims, transpose and reshape on a 2-D mesh.
sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @mm(%a: !sbp.tensor<2x4x8xf32, @m, [S(0), S(1)]>, %b: !sbp.tensor<8x6xf32, @m, [B, B]>, %c: !sbp.tensor<2x8x4xf32, @m, [B, P]>) -> !sbp.tensor<2x4x6xf32, @m> {
  %0 = sbp.matmul %a, %b : !sbp.tensor<2x4x8xf32, @m, [S(0), S(1)]>, !sbp.tensor<8x6xf32, @m, [B, B]> -> !sbp.tensor<2x4x6xf32, @m>
  %1 = sbp.matmul %c, %a {transpose_a, transpose_b} : !sbp.tensor<2x8x4xf32, @m, [B, P]>, !sbp.tensor<2x4x8xf32, @m, [S(0), S(1)]> -> !sbp.tensor<2x4x4xf32, @m>
  %2 = sbp.reduce_sum %0 {axes = array<i64: 2>} : !sbp.tensor<2x4x6xf32, @m> -> !sbp.tensor<2x4xf32, @m>
  %3 = sbp.reduce_max %0 {axes = array<i64: 0, 2>, keepdims} : !sbp.tensor<2x4x6xf32, @m> -> !sbp.tensor<1x4x1xf32, @m>
  %4 = sbp.reduce_min %0 {axes = array<i64>} : !sbp.tensor<2x4x6xf32, @m> -> !sbp.tensor<2x4x6xf32, @m>
  %5 = sbp.transpose %0 {perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x6xf32, @m> -> !sbp.tensor<6x2x4xf32, @m>
  %6 = sbp.reshape %5 : !sbp.tensor<6x2x4xf32, @m> -> !sbp.tensor<48xf32, @m>
  func.return %0 : !sbp.tensor<2x4x6xf32, @m>
}
