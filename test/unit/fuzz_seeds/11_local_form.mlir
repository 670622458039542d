// Seed: the local (per-rank) form after --spmdize: sbp ops and collectives on builtin tensors.
builtin.module {
  sbp.placement @p "npu" [0, 1]
  sbp.placement @q "npu" [[0, 1], [2, 3]]
  func.func @local(%a: tensor<4x4xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 8, 4>}, %b: tensor<4x6xf32> {sbp.sbp = #sbp.nd<[B]>, sbp.global_shape = array<i64: 4, 6>}, %c: tensor<4x4xf16> {sbp.sbp = #sbp.nd<[P, S(1)]>, sbp.global_shape = array<i64: 4, 8>}) -> (tensor<8x6xf32> {sbp.sbp = #sbp.nd<[B]>, sbp.global_shape = array<i64: 8, 6>}, tensor<4x8xf16> {sbp.sbp = #sbp.nd<[B, B]>, sbp.global_shape = array<i64: 4, 8>}) attributes {sbp.placement = @p} {
    %0 = sbp.reduce_scatter %c {mesh_axes = array<i64: 0>, placement = @q, src_sbp = #sbp.nd<[P, S(1)]>, dst_sbp = #sbp.nd<[S(0), S(1)]>, global_shape = array<i64: 4, 8>} : tensor<4x4xf16> -> tensor<2x4xf16>
    %1 = sbp.matmul %a, %b {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : tensor<4x4xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
    %2 = sbp.relu %1 {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : tensor<4x6xf32> -> tensor<4x6xf32>
    %3 = sbp.all_gather %2 {mesh_axes = array<i64: 0>, placement = @p, src_sbp = #sbp.nd<[S(0)]>, dst_sbp = #sbp.nd<[B]>, global_shape = array<i64: 8, 6>} : tensor<4x6xf32> -> tensor<8x6xf32>
    %4 = sbp.fmod_scalar %0, 2.000000e+00 : f16 {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>} : tensor<2x4xf16> -> tensor<2x4xf16>
    %5 = sbp.all_gather %4 {mesh_axes = array<i64: 0>, placement = @q, src_sbp = #sbp.nd<[S(0), S(1)]>, dst_sbp = #sbp.nd<[B, S(1)]>, global_shape = array<i64: 4, 8>} : tensor<2x4xf16> -> tensor<4x4xf16>
    %6 = sbp.all_gather %5 {mesh_axes = array<i64: 1>, placement = @q, src_sbp = #sbp.nd<[B, S(1)]>, dst_sbp = #sbp.nd<[B, B]>, global_shape = array<i64: 4, 8>} : tensor<4x4xf16> -> tensor<4x8xf16>
    func.return %3, %6 : tensor<8x6xf32>, tensor<4x8xf16>
  }
}

