// RUN: sbp-translate --import-shard %s | filecheck %s
// RUN: sbp-translate --import-shard %s | sbp-opt - -p infer-sbp,materialize-boxing,lower-boxing | filecheck %s --check-prefix=PLAN

// What MLIR 22 means by a shard annotation, as --import-shard reads it (issue 22 item 3).

// A result annotation after an op is a requirement on the value, not the op's signature: Megatron's
// row-parallel matmul ([S(1)] x [S(0)]) produces its partial sum, and the boxing to the annotated
// replicated value (MLIR's all_reduce) comes after it.
shard.grid @g(shape = 4)
func.func @row_parallel(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %s1 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s1 : tensor<8x16xf32>
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %s0 : tensor<16x32xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %m = linalg.matmul ins(%xs, %ws : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32>
  %sr = shard.sharding @g split_axes = [[]] : !shard.sharding
  %r = shard.shard %m to %sr : tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @row_parallel(
// CHECK-SAME:    -> !sbp.tensor<8x32xf32, @g, [B]>
// CHECK-NEXT:    %m = sbp.matmul %x, %w : {{.*}} -> !sbp.tensor<8x32xf32, @g>
// CHECK-NEXT:    %r = sbp.to_global %m : !sbp.tensor<8x32xf32, @g> -> !sbp.tensor<8x32xf32, @g, [B]>
// CHECK-NEXT:    func.return %r

// PLAN-LABEL: func.func @row_parallel(
// PLAN:         sbp.matmul %x, %w {sbp.signature = #sbp.sig<[S(1)], [S(0)] -> [P]>}
// PLAN-NEXT:    %r = sbp.all_reduce %m {mesh_axes = array<i64: 0>} : !sbp.tensor<8x32xf32, @g, [P]> -> !sbp.tensor<8x32xf32, @g, [B]>
// PLAN-NEXT:    func.return %r

// annotate_for_users on a returned value: the function's caller is its user, so the function
// returns that SBP.

func.func @returned_for_users(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s0 : tensor<8x32xf32>
  %e = tensor.empty() : tensor<8x32xf32>
  %n = linalg.add ins(%xs, %xs : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %sr = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %u = shard.shard %n to %sr annotate_for_users : tensor<8x32xf32>
  return %u : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @returned_for_users(
// CHECK-SAME:    -> !sbp.tensor<8x32xf32, @g, [S(1)]>
// CHECK-NEXT:    %n = sbp.add %x, %x : {{.*}} -> !sbp.tensor<8x32xf32, @g>
// CHECK-NEXT:    %u = sbp.to_global %n : !sbp.tensor<8x32xf32, @g> -> !sbp.tensor<8x32xf32, @g, [S(1)]>
// CHECK-NEXT:    func.return %u

// PLAN-LABEL: func.func @returned_for_users(
// PLAN:         sbp.add %x, %x {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>}
// PLAN-NEXT:    %u = sbp.all_to_all %n {mesh_axes = array<i64: 0>} : {{.*}} -> !sbp.tensor<8x32xf32, @g, [S(1)]>
// PLAN-NEXT:    func.return %u
