// Seed: generic form of the whole module, with properties and discardable attributes.
"builtin.module"() ({
  "sbp.placement"() <{sym_name = "p", device_type = "cpu", hierarchy = array<i64: 2>, ranks = array<i64: 0, 1>}> : () -> ()
  "sbp.placement"() <{sym_name = "q", device_type = "npu", hierarchy = array<i64: 2, 2>, ranks = array<i64: 0, 1, 2, 3>}> : () -> ()
  "func.func"() <{sym_name = "g", function_type = (!sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [B]>) -> !sbp.tensor<4x3xf32, @p>}> ({
  ^bb0(%0: !sbp.tensor<4x10xf32, @p, [S(0)]>, %1: !sbp.tensor<3x10xf32, @p, [B]>):
    %2 = "sbp.matmul"(%0, %1) <{transpose_b}> : (!sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [B]>) -> !sbp.tensor<4x3xf32, @p>
    %3 = "sbp.add"(%2, %2) {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : (!sbp.tensor<4x3xf32, @p>, !sbp.tensor<4x3xf32, @p>) -> !sbp.tensor<4x3xf32, @p>
    %4 = "sbp.transpose"(%0) <{perm = array<i64: 1, 0>}> : (!sbp.tensor<4x10xf32, @p, [S(0)]>) -> !sbp.tensor<10x4xf32, @p, [S(1)]>
    %5 = "sbp.reduce_max"(%0) <{axes = array<i64: 0, 1>}> : (!sbp.tensor<4x10xf32, @p, [S(0)]>) -> !sbp.tensor<f32, @p>
    %6 = "sbp.mul_scalar"(%0) <{scalar = 3 : i32}> : (!sbp.tensor<4x10xf32, @p, [S(0)]>) -> !sbp.tensor<4x10xf32, @p>
    "func.return"(%3) : (!sbp.tensor<4x3xf32, @p>) -> ()
  }) : () -> ()
}) : () -> ()
