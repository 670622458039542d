// RUN: sbp-translate --import-shard %s | filecheck %s
// RUN: sbp-translate --import-shard %s -o %t.mlir && sbp-opt %t.mlir -p infer-sbp | filecheck %s --check-prefix=INFER
// RUN: sbp-translate %S/../../../examples/mlp_tp.mlir --emit-mlir=global | sbp-translate --import-shard - | filecheck %s --check-prefix=ROUND
// RUN: sed 's/split_axes = \[\[0\]\] :/split_axes = [[0]] halo_sizes = [1, 1] :/' %s > %t.halo.mlir && not sbp-translate --import-shard %t.halo.mlir 2>&1 | filecheck %s --check-prefix=HALO

// A user's MLIR program with only its inputs annotated: the grid becomes a placement, split_axes
// become SBPs, the linalg ops sbp ops; sbp-opt then plans it.
shard.grid @mesh(shape = 2x4)
func.func @main(%x: tensor<64x1024xf16>, %w: tensor<1024x4096xf16>) -> tensor<64x4096xf16> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<64x1024xf16>
  %s1 = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %ws = shard.shard %w to %s1 : tensor<1024x4096xf16>
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x4096xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<64x4096xf16>) -> tensor<64x4096xf16>
  %m = linalg.matmul ins(%xs, %ws : tensor<64x1024xf16>, tensor<1024x4096xf16>) outs(%f : tensor<64x4096xf16>) -> tensor<64x4096xf16>
  return %m : tensor<64x4096xf16>
}

// CHECK:      sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]
// CHECK-NEXT: func.func @main(%x: !sbp.tensor<64x1024xf16, @mesh, [S(0), B]>, %w: !sbp.tensor<1024x4096xf16, @mesh, [B, S(1)]>) -> !sbp.tensor<64x4096xf16, @mesh> {
// CHECK-NEXT:   %m = sbp.matmul %x, %w : !sbp.tensor<64x1024xf16, @mesh, [S(0), B]>, !sbp.tensor<1024x4096xf16, @mesh, [B, S(1)]> -> !sbp.tensor<64x4096xf16, @mesh>
// CHECK-NEXT:   func.return %m : !sbp.tensor<64x4096xf16, @mesh>

// INFER: sbp.matmul %x, %w {sbp.signature = #sbp.sig<[S(0), B], [B, S(1)] -> [S(0), S(1)]>}

// ROUND: sbp.matmul %0, %1 {sbp.hint = #sbp.sig<[S(0), B], [B, S(1)] -> ?>} : {{.*}} -> !sbp.tensor<64x4096xf16, @mesh>
// ROUND-NEXT: sbp.to_global %5 : !sbp.tensor<64x4096xf16, @mesh> -> !sbp.tensor<64x4096xf16, @mesh, [S(0), S(1)]>
// ROUND: -> !sbp.tensor<64x1024xf16, @mesh, [S(0), P]>

// HALO: import_shard.mlir.tmp.halo.mlir:10:3: error: shard.sharding: halo sizes have no sbp form
