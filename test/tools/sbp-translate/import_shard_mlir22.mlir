// RUN: sbp-translate --import-shard %s --grid g=4 | filecheck %s
// RUN: sbp-translate --import-shard %s --grid g=4 | sbp-run - --check | filecheck %s --check-prefix=EXEC
// RUN: sbp-translate --import-shard %s --grid g=4 --free-args | filecheck %s --check-prefix=FREE
// RUN: sbp-translate --import-shard %s --grid g=4 --free-args | sbp-opt - -p 'infer-sbp{rule=global}' | filecheck %s --check-prefix=GLOBAL
// RUN: not sbp-translate --import-shard %s 2>&1 | filecheck %s --check-prefix=NOGRID
// RUN: not sbp-translate --import-shard %s --grid g=2x2 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not sbp-translate %s --emit-mlir --grid g=4 2>&1 | filecheck %s --check-prefix=ONLY

// What MLIR 22's shard tests write (issue 22 item 3): a `?` grid (sized by --grid), an unannotated
// argument (replicated, or with --free-args left to rule=global), a matmul accumulating into an
// argument (result = %c + x·w).
shard.grid @g(shape = ?)
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  %m = linalg.matmul ins(%xs, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}

// CHECK:      sbp.placement @g "npu" [0, 1, 2, 3]
// CHECK-NEXT: func.func @main(%x: !sbp.tensor<8x16xf32, @g, [S(0)]>, %w: !sbp.tensor<16x4xf32, @g, [B]>, %c: !sbp.tensor<8x4xf32, @g, [B]>)
// CHECK-NEXT:   %0 = sbp.matmul %x, %w
// CHECK-NEXT:   %m = sbp.add %0, %c

// EXEC: check: OK (result 0: exact)

// FREE: func.func @main(%x: !sbp.tensor<8x16xf32, @g, [S(0)]>, %w: !sbp.tensor<16x4xf32, @g>, %c: !sbp.tensor<8x4xf32, @g>)

// GLOBAL: func.func @main(%x: !sbp.tensor<8x16xf32, @g, [S(0)]>, %w: !sbp.tensor<16x4xf32, @g, [{{.*}}]>, %c: !sbp.tensor<8x4xf32, @g, [{{.*}}]>)

// NOGRID: import_shard_mlir22.mlir:14:3: error: shard.sharding: grid @g has shape ?, sized only at run time; an sbp placement lists its devices: give the size with `--grid g=N`

// RANK: import_shard_mlir22.mlir:12:1: error: shard.grid @g: --grid g=2x2 does not fit its shape ?

// ONLY: error: --grid is an option of --import-shard
