// One transformer block (self-attention + MLP) with data and tensor parallelism on a 2x4 mesh.
//   mesh axis 0 (size 2): data parallel   - the activations x are split along the batch, S(0)
//   mesh axis 1 (size 4): tensor parallel - wq/wk/wv and w1 column-split S(1), wo and w2 row-split
//                                           S(0) (Megatron), so that the 16 heads are split 4 ways
// Batch 8, sequence 128, model width 1024 = 16 heads x 64, MLP width 4096; weights and activations
// in f16, the softmax in f32 (reduce_max + sub for stability, exp / reduce_sum / div).
// Only the inputs carry SBPs; every op result and the function result are left to --infer-sbp.
sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]

func.func @main(%x: !sbp.tensor<8x128x1024xf16, @mesh, [S(0), B]>,
                %wq: !sbp.tensor<1024x1024xf16, @mesh, [B, S(1)]>,
                %wk: !sbp.tensor<1024x1024xf16, @mesh, [B, S(1)]>,
                %wv: !sbp.tensor<1024x1024xf16, @mesh, [B, S(1)]>,
                %wo: !sbp.tensor<1024x1024xf16, @mesh, [B, S(0)]>,
                %w1: !sbp.tensor<1024x4096xf16, @mesh, [B, S(1)]>,
                %w2: !sbp.tensor<4096x1024xf16, @mesh, [B, S(0)]>) -> !sbp.tensor<8x128x1024xf16, @mesh> {
  // Q, K, V projections and the split into heads: [8, 128, 1024] -> [8, 16, 128, 64].
  %q = sbp.matmul %x, %wq : !sbp.tensor<8x128x1024xf16, @mesh, [S(0), B]>, !sbp.tensor<1024x1024xf16, @mesh, [B, S(1)]> -> !sbp.tensor<8x128x1024xf16, @mesh>
  %k = sbp.matmul %x, %wk : !sbp.tensor<8x128x1024xf16, @mesh, [S(0), B]>, !sbp.tensor<1024x1024xf16, @mesh, [B, S(1)]> -> !sbp.tensor<8x128x1024xf16, @mesh>
  %v = sbp.matmul %x, %wv : !sbp.tensor<8x128x1024xf16, @mesh, [S(0), B]>, !sbp.tensor<1024x1024xf16, @mesh, [B, S(1)]> -> !sbp.tensor<8x128x1024xf16, @mesh>
  %q4 = sbp.reshape %q : !sbp.tensor<8x128x1024xf16, @mesh> -> !sbp.tensor<8x128x16x64xf16, @mesh>
  %k4 = sbp.reshape %k : !sbp.tensor<8x128x1024xf16, @mesh> -> !sbp.tensor<8x128x16x64xf16, @mesh>
  %v4 = sbp.reshape %v : !sbp.tensor<8x128x1024xf16, @mesh> -> !sbp.tensor<8x128x16x64xf16, @mesh>
  %qh = sbp.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : !sbp.tensor<8x128x16x64xf16, @mesh> -> !sbp.tensor<8x16x128x64xf16, @mesh>
  %kh = sbp.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : !sbp.tensor<8x128x16x64xf16, @mesh> -> !sbp.tensor<8x16x128x64xf16, @mesh>
  %vh = sbp.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : !sbp.tensor<8x128x16x64xf16, @mesh> -> !sbp.tensor<8x16x128x64xf16, @mesh>
  // Scores q k^T / sqrt(64), softmax over the key axis in f32.
  %s = sbp.matmul %qh, %kh {transpose_b} : !sbp.tensor<8x16x128x64xf16, @mesh>, !sbp.tensor<8x16x128x64xf16, @mesh> -> !sbp.tensor<8x16x128x128xf16, @mesh>
  %s32 = sbp.cast %s : !sbp.tensor<8x16x128x128xf16, @mesh> -> !sbp.tensor<8x16x128x128xf32, @mesh>
  %ss = sbp.mul_scalar %s32, 0.125 : f32 : !sbp.tensor<8x16x128x128xf32, @mesh> -> !sbp.tensor<8x16x128x128xf32, @mesh>
  %mx = sbp.reduce_max %ss {axes = array<i64: 3>, keepdims} : !sbp.tensor<8x16x128x128xf32, @mesh> -> !sbp.tensor<8x16x128x1xf32, @mesh>
  %z = sbp.sub %ss, %mx : !sbp.tensor<8x16x128x128xf32, @mesh>, !sbp.tensor<8x16x128x1xf32, @mesh> -> !sbp.tensor<8x16x128x128xf32, @mesh>
  %e = sbp.exp %z : !sbp.tensor<8x16x128x128xf32, @mesh> -> !sbp.tensor<8x16x128x128xf32, @mesh>
  %den = sbp.reduce_sum %e {axes = array<i64: 3>, keepdims} : !sbp.tensor<8x16x128x128xf32, @mesh> -> !sbp.tensor<8x16x128x1xf32, @mesh>
  %p32 = sbp.div %e, %den : !sbp.tensor<8x16x128x128xf32, @mesh>, !sbp.tensor<8x16x128x1xf32, @mesh> -> !sbp.tensor<8x16x128x128xf32, @mesh>
  %p = sbp.cast %p32 : !sbp.tensor<8x16x128x128xf32, @mesh> -> !sbp.tensor<8x16x128x128xf16, @mesh>
  // Weighted values, heads merged back: [8, 16, 128, 64] -> [8, 128, 1024], output projection.
  %o = sbp.matmul %p, %vh : !sbp.tensor<8x16x128x128xf16, @mesh>, !sbp.tensor<8x16x128x64xf16, @mesh> -> !sbp.tensor<8x16x128x64xf16, @mesh>
  %ot = sbp.transpose %o {perm = array<i64: 0, 2, 1, 3>} : !sbp.tensor<8x16x128x64xf16, @mesh> -> !sbp.tensor<8x128x16x64xf16, @mesh>
  %oc = sbp.reshape %ot : !sbp.tensor<8x128x16x64xf16, @mesh> -> !sbp.tensor<8x128x1024xf16, @mesh>
  %attn = sbp.matmul %oc, %wo : !sbp.tensor<8x128x1024xf16, @mesh>, !sbp.tensor<1024x1024xf16, @mesh, [B, S(0)]> -> !sbp.tensor<8x128x1024xf16, @mesh>
  %r1 = sbp.add %x, %attn : !sbp.tensor<8x128x1024xf16, @mesh, [S(0), B]>, !sbp.tensor<8x128x1024xf16, @mesh> -> !sbp.tensor<8x128x1024xf16, @mesh>
  // MLP with a residual connection.
  %h = sbp.matmul %r1, %w1 : !sbp.tensor<8x128x1024xf16, @mesh>, !sbp.tensor<1024x4096xf16, @mesh, [B, S(1)]> -> !sbp.tensor<8x128x4096xf16, @mesh>
  %a = sbp.relu %h : !sbp.tensor<8x128x4096xf16, @mesh> -> !sbp.tensor<8x128x4096xf16, @mesh>
  %y = sbp.matmul %a, %w2 : !sbp.tensor<8x128x4096xf16, @mesh>, !sbp.tensor<4096x1024xf16, @mesh, [B, S(0)]> -> !sbp.tensor<8x128x1024xf16, @mesh>
  %out = sbp.add %r1, %y : !sbp.tensor<8x128x1024xf16, @mesh>, !sbp.tensor<8x128x1024xf16, @mesh> -> !sbp.tensor<8x128x1024xf16, @mesh>
  func.return %out : !sbp.tensor<8x128x1024xf16, @mesh>
}
