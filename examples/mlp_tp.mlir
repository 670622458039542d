// A 2-layer MLP with Megatron-style tensor parallelism on a 2x4 mesh.
//   mesh axis 0 (size 2): data parallel   - the activations x are split along the batch, S(0)
//   mesh axis 1 (size 4): tensor parallel - w1 is column-split S(1) (with its bias b1 S(0)),
//                                           w2 is row-split S(0) (its bias b2 replicated)
// y = relu(x @ w1 + b1) @ w2 + b2 with batch 64, hidden 1024, ffn 4096 (f16).
// Only the inputs carry SBPs; every op result and the function result are left to --infer-sbp.
// Expected (Megatron): h = x @ w1 is [S(0), S(1)] with no communication, relu stays column-split,
// the second matmul yields a partial sum [S(0), P] and the bias add needs one all-reduce (or a
// reduce-scatter, under rule=cost) over the tensor-parallel axis.
sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]

func.func @main(%x: !sbp.tensor<64x1024xf16, @mesh, [S(0), B]>,
                %w1: !sbp.tensor<1024x4096xf16, @mesh, [B, S(1)]>,
                %b1: !sbp.tensor<4096xf16, @mesh, [B, S(0)]>,
                %w2: !sbp.tensor<4096x1024xf16, @mesh, [B, S(0)]>,
                %b2: !sbp.tensor<1024xf16, @mesh, [B, B]>) -> !sbp.tensor<64x1024xf16, @mesh> {
  %h = sbp.matmul %x, %w1 : !sbp.tensor<64x1024xf16, @mesh, [S(0), B]>, !sbp.tensor<1024x4096xf16, @mesh, [B, S(1)]> -> !sbp.tensor<64x4096xf16, @mesh>
  %hb = sbp.add %h, %b1 : !sbp.tensor<64x4096xf16, @mesh>, !sbp.tensor<4096xf16, @mesh, [B, S(0)]> -> !sbp.tensor<64x4096xf16, @mesh>
  %a = sbp.relu %hb : !sbp.tensor<64x4096xf16, @mesh> -> !sbp.tensor<64x4096xf16, @mesh>
  %y = sbp.matmul %a, %w2 : !sbp.tensor<64x4096xf16, @mesh>, !sbp.tensor<4096x1024xf16, @mesh, [B, S(0)]> -> !sbp.tensor<64x1024xf16, @mesh>
  %yb = sbp.add %y, %b2 : !sbp.tensor<64x1024xf16, @mesh>, !sbp.tensor<1024xf16, @mesh, [B, B]> -> !sbp.tensor<64x1024xf16, @mesh>
  func.return %yb : !sbp.tensor<64x1024xf16, @mesh>
}
