// Seed: fmod (tensor and scalar), scalar ops, unary ops and cast.
sbp.placement @p "npu" [0, 1, 2, 3]
func.func @fmod(%x: !sbp.tensor<16x32xf16, @p, [S(1)]>, %y: !sbp.tensor<32xf16, @p, [B]>, %i: !sbp.tensor<8xi16, @p, [P]>) -> !sbp.tensor<16x32xf16, @p> {
  %0 = sbp.fmod %x, %y : !sbp.tensor<16x32xf16, @p, [S(1)]>, !sbp.tensor<32xf16, @p, [B]> -> !sbp.tensor<16x32xf16, @p>
  %1 = sbp.fmod_scalar %0, 2.5 : f16 : !sbp.tensor<16x32xf16, @p> -> !sbp.tensor<16x32xf16, @p>
  %2 = sbp.fmod_scalar %i, 3 : i16 : !sbp.tensor<8xi16, @p, [P]> -> !sbp.tensor<8xi16, @p>
  %3 = sbp.add_scalar %1, -1.0 : f32 : !sbp.tensor<16x32xf16, @p> -> !sbp.tensor<16x32xf16, @p>
  %4 = sbp.mul_scalar %3, 4 : i64 : !sbp.tensor<16x32xf16, @p> -> !sbp.tensor<16x32xf16, @p>
  %5 = sbp.relu %4 : !sbp.tensor<16x32xf16, @p> -> !sbp.tensor<16x32xf16, @p>
  %6 = sbp.neg %5 : !sbp.tensor<16x32xf16, @p> -> !sbp.tensor<16x32xf16, @p>
  %7 = sbp.exp %6 : !sbp.tensor<16x32xf16, @p> -> !sbp.tensor<16x32xf16, @p>
  %8 = sbp.cast %7 : !sbp.tensor<16x32xf16, @p> -> !sbp.tensor<16x32xbf16, @p>
  %9 = sbp.cast %i : !sbp.tensor<8xi16, @p, [P]> -> !sbp.tensor<8xi32, @p, [P]>
  func.return %7 : !sbp.tensor<16x32xf16, @p>
}
