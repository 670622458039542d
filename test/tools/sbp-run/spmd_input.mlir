// RUN: rm -rf %t && sbp-run %s --pipeline "" --save-outputs %t --seed 3 | filecheck %s
// RUN: python -c "import numpy as np, sys; x = np.ldexp(np.random.default_rng(3).integers(-4, 5, size=(5, 4)), -1).astype(np.float32); np.testing.assert_array_equal(np.load(sys.argv[1] + '/result0.npy'), (-x).reshape(5, 2, 2)); print('matches')" %t | filecheck %s --check-prefix=VALUE
// RUN: sbp-run %s --pipeline "" --check --entry seed | filecheck %s --check-prefix=SEED
// RUN: not sbp-run %s --pipeline "" --check 2>&1 | filecheck %s --check-prefix=NOREF

// A program already in the per-rank (spmd) form that `spmdize` produces: builtin tensors with local
// shapes (`?` where ranks differ), the function's `sbp.placement`, the arguments' and results'
// `sbp.sbp` / `sbp.global_shape`, collectives carrying placement, src_sbp, dst_sbp and global_shape,
// and `sbp.reshape` carrying one local shape per rank. `--pipeline ""` runs it as is.

sbp.placement @p "cpu" [0, 1, 2]

// 5 rows over 3 ranks: 2, 2, 1; each rank sends its 8, 8 or 4 floats to the two others.
func.func @main(%x: tensor<?x4xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 5, 4>})
    -> (tensor<5x2x2xf32> {sbp.sbp = #sbp.nd<[B]>, sbp.global_shape = array<i64: 5, 2, 2>}) attributes {sbp.placement = @p} {
  %0 = sbp.neg %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = sbp.reshape %0 {local_shapes = [array<i64: 2, 2, 2>, array<i64: 2, 2, 2>, array<i64: 1, 2, 2>]} : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %2 = sbp.all_gather %1 {mesh_axes = array<i64: 0>, placement = @p, src_sbp = #sbp.nd<[S(0)]>, dst_sbp = #sbp.nd<[B]>, global_shape = array<i64: 5, 2, 2>} : tensor<?x2x2xf32> -> tensor<5x2x2xf32>
  func.return %2 : tensor<5x2x2xf32>
}
// CHECK:      {{^}}all_gather mesh_axes=[0] S(0)->B f32[5,2,2]: bytes sent per rank [64, 64, 32]{{$}}
// CHECK-NEXT: {{^}}total bytes sent: 160 (all ranks); cost model: 160{{$}}
// VALUE: matches

// The global reference runs the per-rank ops on whole arrays, which is sound except for a reshape,
// whose global result shape the spmd form no longer records.
// NOREF: spmd_input.mlir:[[# @LINE - 10]]:3: error: sbp.reshape on per-rank tensors has no global result shape: the reference needs the global program{{$}}

// The seed program as spmdize prints it.
func.func @seed(%t1: tensor<1x4xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 2, 4>}, %t2: tensor<2x2xf32> {sbp.sbp = #sbp.nd<[S(1)]>, sbp.global_shape = array<i64: 2, 4>}) -> (tensor<1x4xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 2, 4>}) attributes {sbp.placement = @p2} {
  %0 = sbp.all_to_all %t2 {mesh_axes = array<i64: 0>, placement = @p2, src_sbp = #sbp.nd<[S(1)]>, dst_sbp = #sbp.nd<[S(0)]>, global_shape = array<i64: 2, 4>} : tensor<2x2xf32> -> tensor<1x4xf32>
  %t3 = sbp.add %t1, %0 {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  func.return %t3 : tensor<1x4xf32>
}
sbp.placement @p2 "cpu" [0, 1]
// SEED:      {{^}}all_to_all mesh_axes=[0] S(1)->S(0) f32[2,4]: bytes sent per rank [8, 8]{{$}}
// SEED-NEXT: {{^}}total bytes sent: 16 (all ranks); cost model: 16{{$}}
// SEED-NEXT: {{^}}check: OK ({{.*}}){{$}}
