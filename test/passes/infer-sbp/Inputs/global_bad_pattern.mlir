// A `?` pattern must have one entry per mesh axis, like any ND-SBP.
sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @f(%x: !sbp.tensor<64x64xf32, @m, [S(0), ?, B]>) -> !sbp.tensor<64x64xf32, @m, [S(0), ?, B]> {
  func.return %x : !sbp.tensor<64x64xf32, @m, [S(0), ?, B]>
}
