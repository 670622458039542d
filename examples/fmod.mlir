// Phase wrapping on a 2x4 mesh: the fmod ops that `sbp-translate --emit-ascendc` turns into CANN
// projects (FmodTensor for `sbp.fmod`, FmodScalar for `sbp.fmod_scalar`).
//   mesh axis 0 (size 2): data parallel   - the angles x are split along the batch, S(0)
//   mesh axis 1 (size 4): tensor parallel - the projection w is column-split S(1), and so is the
//                                           per-column period (S(0) of its only axis)
// phase = x @ w is [S(0), S(1)] with no communication; both fmods then run on local shards, so every
// rank launches the kernels on a 32x128 f32 block and nothing is sent.
// fmod has the sign of the dividend, computed as TBE does (an fp32 quotient truncated), so it is C's fmod
// to rounding while |phase / period| < 2^23.
sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]

func.func @main(%x: !sbp.tensor<64x256xf32, @mesh, [S(0), B]>,
                %w: !sbp.tensor<256x512xf32, @mesh, [B, S(1)]>,
                %period: !sbp.tensor<512xf32, @mesh, [B, S(0)]>) -> !sbp.tensor<64x512xf32, @mesh> {
  %phase = sbp.matmul %x, %w : !sbp.tensor<64x256xf32, @mesh, [S(0), B]>, !sbp.tensor<256x512xf32, @mesh, [B, S(1)]> -> !sbp.tensor<64x512xf32, @mesh>
  %local = sbp.fmod %phase, %period : !sbp.tensor<64x512xf32, @mesh>, !sbp.tensor<512xf32, @mesh, [B, S(0)]> -> !sbp.tensor<64x512xf32, @mesh>
  %turn = sbp.fmod_scalar %local, 6.28318548 : f32 : !sbp.tensor<64x512xf32, @mesh> -> !sbp.tensor<64x512xf32, @mesh>
  func.return %turn : !sbp.tensor<64x512xf32, @mesh>
}
