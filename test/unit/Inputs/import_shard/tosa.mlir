"builtin.module"() ({
  "shard.grid"() <{shape = array<i64: 2>, sym_name = "g"}> : () -> ()
  "func.func"() <{function_type = (tensor<2x4x8xf32>, tensor<2x8x6xf32>, tensor<2x4x6xf32>) -> tensor<2x6x4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x8x6xf32>, %arg2: tensor<2x4x6xf32>):
    %0 = "shard.sharding"() <{grid = @g, operandSegmentSizes = array<i32: 0, 0>, split_axes = #shard<axisarray[[0]]>, static_halo_sizes = array<i64>, static_sharded_dims_offsets = array<i64>}> : () -> !shard.sharding
    %1 = "shard.shard"(%arg0, %0) : (tensor<2x4x8xf32>, !shard.sharding) -> tensor<2x4x8xf32>
    %2 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %3 = "tosa.matmul"(%1, %arg1, %2, %2) : (tensor<2x4x8xf32>, tensor<2x8x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x6xf32>
    %4 = "tosa.add"(%3, %arg2) : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
    %5 = "tosa.exp"(%4) : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
    %6 = "tosa.reduce_sum"(%5) <{axis = 2 : i32}> : (tensor<2x4x6xf32>) -> tensor<2x4x1xf32>
    %7 = "tosa.transpose"(%5) <{perms = array<i32: 0, 2, 1>}> : (tensor<2x4x6xf32>) -> tensor<2x6x4xf32>
    "func.return"(%7) : (tensor<2x6x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

