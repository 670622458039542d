// The seed program (OneFlow SBP inference article): t3 = t1 + t2 on ranks [0, 1].
sbp.placement @p "cpu" [0, 1]
func.func @main(%t1: !sbp.tensor<2x4xf32, @p, [S(0)]>, %t2: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p> {
  %t3 = sbp.add %t1, %t2 : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p>
  func.return %t3 : !sbp.tensor<2x4xf32, @p>
}
