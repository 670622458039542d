sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4xf32, @p, [S(k)]>) {
  func.return
}
