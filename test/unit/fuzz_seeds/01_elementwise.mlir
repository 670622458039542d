// Seed: 1-D and 2-D placements, elementwise binary ops in custom form (with broadcasting).
sbp.placement @p "cpu" [0, 1]
sbp.placement @q "npu" [[0, 1, 2], [3, 4, 5]]
func.func @elementwise(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<8xf32, @p, [B]>, %c: !sbp.tensor<6x4xf16, @q, [S(0), S(1)]>) -> !sbp.tensor<4x8xf32, @p> {
  %0 = sbp.add %a, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.sub %0, %a : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.mul %1, %b : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %3 = sbp.div %2, %2 : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %4 = sbp.maximum %3, %a : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %5 = sbp.minimum %c, %c : !sbp.tensor<6x4xf16, @q, [S(0), S(1)]>, !sbp.tensor<6x4xf16, @q, [S(0), S(1)]> -> !sbp.tensor<6x4xf16, @q, [S(0), S(1)]>
  func.return %4 : !sbp.tensor<4x8xf32, @p>
}
