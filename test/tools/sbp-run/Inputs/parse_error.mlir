// Not a test: an input with a syntax error for usage_errors.mlir.
sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.neg %x : !sbp.tensor<4xf32, @p, [S(7)]> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}
