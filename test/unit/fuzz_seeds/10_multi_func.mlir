// Seed: several functions, calls, placement attributes, entry forms of SBP attributes.
sbp.placement @p "cpu" [0, 1] {tag = "mesh"}
sbp.placement @r "cpu" [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
func.func @callee(%x: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p, [S(0)]> {
  %0 = sbp.relu %x : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p, [S(0)]>
  func.return %0 : !sbp.tensor<4xf32, @p, [S(0)]>
}
func.func @caller(%x: !sbp.tensor<4xf32, @p, [S(0)]>, %y: !sbp.tensor<2x2x2xf32, @r, [S(0), S(1), S(2)]>) -> !sbp.tensor<4xf32, @p, [S(0)]> {
  %0 = func.call @callee(%x) : (!sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p, [S(0)]>
  %1 = sbp.add %y, %y {e = [#sbp.S<1>, #sbp.B, #sbp.P<max>]} : !sbp.tensor<2x2x2xf32, @r, [S(0), S(1), S(2)]>, !sbp.tensor<2x2x2xf32, @r, [S(0), S(1), S(2)]> -> !sbp.tensor<2x2x2xf32, @r>
  func.return %0 : !sbp.tensor<4xf32, @p, [S(0)]>
}
