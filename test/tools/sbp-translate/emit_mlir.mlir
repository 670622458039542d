// RUN: sbp-translate %s --emit-mlir -o - | filecheck %s
// RUN: sbp-translate %s --emit-mlir -o %t.mlir && filecheck %s --input-file=%t.mlir
// RUN: sbp-translate %s --emit-mlir=global | filecheck %s --check-prefix=GLOBAL
// RUN: not sbp-translate %s --emit-mlir --pipeline infer-sbp 2>&1 | filecheck %s --check-prefix=ERR

// The per-rank program in upstream dialects, generic form: one shard.grid per placement (devices
// as discardable attributes), 5 rows on 2 ranks as a dynamic dim, the all-gather on that dynamic
// dim then cast to the static gathered type, the relu as a linalg.generic of arith.maximumf.
sbp.placement @p "cpu" [0, 1]

// CHECK:      "shard.grid"() <{sym_name = "p", shape = array<i64: 2>}> {sbp.device_type = "cpu", sbp.devices = array<i64: 0, 1>} : () -> ()
// CHECK:      "func.func"() <{sym_name = "main", function_type = (tensor<?x6xf32>) -> tensor<5x6xf32>
// CHECK-SAME:   arg_attrs = [{sbp.sbp = "[S(0)]", sbp.global_shape = array<i64: 5, 6>, sbp.local_shapes = [array<i64: 3, 6>, array<i64: 2, 6>]}]
// CHECK:      "linalg.generic"
// CHECK:      "arith.maximumf"
// CHECK:      %[[G:.*]] = "shard.all_gather"(%{{.*}}) <{grid = @p, grid_axes = array<i16: 0>, gather_axis = 0 : index}> : (tensor<?x6xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[C:.*]] = "tensor.cast"(%[[G]]) : (tensor<?x6xf32>) -> tensor<5x6xf32>
// CHECK-NEXT: "func.return"(%[[C]]) : (tensor<5x6xf32>) -> ()

// GLOBAL:      "func.func"() <{sym_name = "main", function_type = (tensor<5x6xf32>) -> tensor<5x6xf32>
// GLOBAL:      "shard.sharding"() <{grid = @p, split_axes = #shard<axisarray[[0]]>, operandSegmentSizes = array<i32: 0, 0>, static_halo_sizes = array<i64>, static_sharded_dims_offsets = array<i64: 0, 3, 5>}> : () -> !shard.sharding
// GLOBAL:      split_axes = #shard<axisarray[[]]>

// ERR: emit_mlir.mlir:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}run spmdize before --emit-mlir
func.func @main(%a: !sbp.tensor<5x6xf32, @p, [S(0)]>) -> !sbp.tensor<5x6xf32, @p, [B]> {
  %0 = sbp.relu %a : !sbp.tensor<5x6xf32, @p, [S(0)]> -> !sbp.tensor<5x6xf32, @p>
  %1 = sbp.to_global %0 : !sbp.tensor<5x6xf32, @p> -> !sbp.tensor<5x6xf32, @p, [B]>
  func.return %1 : !sbp.tensor<5x6xf32, @p, [B]>
}
