// A hand-written MLP layer in the forms MLIR users write: named linalg ops, a broadcasting
// linalg.generic, shard annotations on the arguments only, and a batch_matmul on a reshape.
shard.grid @mesh(shape = 2x4)
func.func @main(%x: tensor<64x1024xf16>, %w: tensor<1024x4096xf16>, %b: tensor<4096xf16>,
                %q: tensor<8x16x32xf32>, %k: tensor<8x32x16xf32>) -> (tensor<64x4096xf16>, tensor<4096x64xf16>, tensor<8x16x16xf32>) {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<64x1024xf16>
  %s1 = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %ws = shard.shard %w to %s1 : tensor<1024x4096xf16>
  %sq = shard.sharding @mesh split_axes = [[0, 1]] : !shard.sharding
  %qs = shard.shard %q to %sq : tensor<8x16x32xf32>
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x4096xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<64x4096xf16>) -> tensor<64x4096xf16>
  %m = linalg.matmul ins(%xs, %ws : tensor<64x1024xf16>, tensor<1024x4096xf16>) outs(%f : tensor<64x4096xf16>) -> tensor<64x4096xf16>
  %hb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<64x4096xf16>, tensor<4096xf16>) outs(%e : tensor<64x4096xf16>) {
  ^bb0(%u: f16, %v: f16, %o: f16):
    %a = arith.addf %u, %v : f16
    linalg.yield %a : f16
  } -> tensor<64x4096xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%hb : tensor<64x4096xf16>) outs(%e : tensor<64x4096xf16>) {
  ^bb0(%u: f16, %o: f16):
    %c0 = arith.constant 0.0 : f16
    %a = arith.maximumf %u, %c0 : f16
    linalg.yield %a : f16
  } -> tensor<64x4096xf16>
  %et = tensor.empty() : tensor<4096x64xf16>
  %t = linalg.transpose ins(%r : tensor<64x4096xf16>) outs(%et : tensor<4096x64xf16>) permutation = [1, 0]
  %z32 = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<8x16x16xf32>
  %f3 = linalg.fill ins(%z32 : f32) outs(%e3 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %bm = linalg.batch_matmul ins(%qs, %k : tensor<8x16x32xf32>, tensor<8x32x16xf32>) outs(%f3 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %flat = tensor.collapse_shape %bm [[0, 1], [2]] : tensor<8x16x16xf32> into tensor<128x16xf32>
  %back = tensor.expand_shape %flat [[0, 1], [2]] output_shape [8, 16, 16] : tensor<128x16xf32> into tensor<8x16x16xf32>
  %sr = shard.sharding @mesh split_axes = [[0], [], [1]] : !shard.sharding
  %res = shard.shard %back to %sr : tensor<8x16x16xf32>
  return %r, %t, %res : tensor<64x4096xf16>, tensor<4096x64xf16>, tensor<8x16x16xf32>
}
