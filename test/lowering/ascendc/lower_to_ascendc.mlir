// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize,lower-to-ascendc | filecheck %s

// --lower-to-ascendc: every local fmod becomes an `ascendc.launch` of the module's `ascendc.kernel`
// (one per op kind), carrying the concrete tiling of each rank's local shape and layout.
// Rows of 5 split over 2 ranks: 3 + 2. Keys: 2 (row broadcast), 1 (same shape), 0 (contiguous scalar),
// 4 and 3 (a transposed local layout).

sbp.placement @p "npu" [0, 1]

func.func @main(%a: !sbp.tensor<5x7xf32, @p, [S(0)]>, %b: !sbp.tensor<7xf32, @p, [B]>, %c: !sbp.tensor<5x7xi16, @p, [S(0)]>,
                %d: !sbp.tensor<4x8xf16, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>, %e: !sbp.tensor<8xf16, @p, [B]>)
    -> (!sbp.tensor<5x7xf32, @p>, !sbp.tensor<5x7xf32, @p>, !sbp.tensor<5x7xi16, @p>, !sbp.tensor<4x8xf16, @p>, !sbp.tensor<4x8xf16, @p>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<5x7xf32, @p, [S(0)]>, !sbp.tensor<7xf32, @p, [B]> -> !sbp.tensor<5x7xf32, @p>
  %1 = sbp.fmod %a, %a : !sbp.tensor<5x7xf32, @p, [S(0)]>, !sbp.tensor<5x7xf32, @p, [S(0)]> -> !sbp.tensor<5x7xf32, @p>
  %2 = sbp.fmod_scalar %c, 3 : i16 : !sbp.tensor<5x7xi16, @p, [S(0)]> -> !sbp.tensor<5x7xi16, @p>
  %3 = sbp.fmod %d, %e : !sbp.tensor<4x8xf16, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>, !sbp.tensor<8xf16, @p, [B]> -> !sbp.tensor<4x8xf16, @p>
  %4 = sbp.fmod_scalar %d, 2.5 : f16 : !sbp.tensor<4x8xf16, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>> -> !sbp.tensor<4x8xf16, @p>
  func.return %0, %1, %2, %3, %4 : !sbp.tensor<5x7xf32, @p>, !sbp.tensor<5x7xf32, @p>, !sbp.tensor<5x7xi16, @p>, !sbp.tensor<4x8xf16, @p>, !sbp.tensor<4x8xf16, @p>
}

// CHECK-LABEL: func.func @main(
// CHECK-NOT:   sbp.fmod

// key 2: other (7,) broadcast over the rows of each shard; the launch keeps the per-rank shape table.
// CHECK:       %[[L0:.*]] = ascendc.launch @fmod_tensor(%a, %b) {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>, sbp.local_shapes = [array<i64: 3, 7>, array<i64: 2, 7>], tilings = [
// CHECK-SAME:    {rank = 0 : i64, dtype = "f32", tilingKey = 2 : i64, soc = "ascend910b", coreNum = 48 : i64, totalLength = 21 : i64, blockDim = 1 : i64, blockLength = 1024 : i64, lastBlockLength = 21 : i64, tileLength = 1024 : i64, tileNum = 1 : i64,
// CHECK-SAME:    bufferNum = 1 : i64,
// CHECK-SAME:    dimNum = 2 : i64, innerRun = 7 : i64, shape = array<i64: 3, 7, 0, 0, 0, 0, 0, 0>, selfStride = array<i64: 7, 1, 0, 0, 0, 0, 0, 0>, otherStride = array<i64: 0, 1, 0, 0, 0, 0, 0, 0>, outStride = array<i64: 7, 1, 0, 0, 0, 0, 0, 0>
// CHECK-SAME:    {rank = 1 : i64, dtype = "f32", tilingKey = 2 : i64,
// CHECK-SAME:    totalLength = 14 : i64,
// CHECK-SAME:    shape = array<i64: 2, 7, 0, 0, 0, 0, 0, 0>
// CHECK-SAME:    : (tensor<?x7xf32>, tensor<7xf32>) -> tensor<?x7xf32>

// key 1: same-shape contiguous, coalesced to one dim.
// CHECK:       ascendc.launch @fmod_tensor(%a, %a) {{.*}}{rank = 0 : i64, dtype = "f32", tilingKey = 1 : i64, {{[^}]*}}totalLength = 21 : i64,{{[^}]*}}dimNum = 1 : i64, innerRun = 21 : i64, shape = array<i64: 21, 0, 0, 0, 0, 0, 0, 0>
// CHECK-SAME:    {rank = 1 : i64, dtype = "f32", tilingKey = 1 : i64, {{[^}]*}}totalLength = 14 : i64

// key 0: the scalar, rounded to i16 on the host, is stored as a float in the tiling.
// CHECK:       ascendc.launch @fmod_scalar(%c) {{.*}}{rank = 0 : i64, dtype = "i16", tilingKey = 0 : i64, {{[^}]*}}blockLength = 2048 : i64,{{[^}]*}}scalarOther = 3.000000e+00 : f32
// CHECK-SAME:    {rank = 1 : i64, dtype = "i16", tilingKey = 0 : i64,

// keys 4 and 3: the local layout (2,8):(1,2) is column-major storage: strided element walk.
// CHECK:       ascendc.launch @fmod_tensor(%d, %e) {{.*}}tilingKey = 4 : i64, {{[^}]*}}innerRun = 1 : i64, shape = array<i64: 2, 8, 0, 0, 0, 0, 0, 0>, selfStride = array<i64: 1, 2, 0, 0, 0, 0, 0, 0>, otherStride = array<i64: 0, 1, 0, 0, 0, 0, 0, 0>, outStride = array<i64: 8, 1, 0, 0, 0, 0, 0, 0>
// CHECK-SAME:    : (tensor<2x8xf16, #sbp.layout<(2,8):(1,2)>>, tensor<8xf16>) -> tensor<2x8xf16>
// CHECK:       ascendc.launch @fmod_scalar(%d) {{.*}}tilingKey = 3 : i64, {{[^}]*}}scalarOther = 2.500000e+00 : f32, {{[^}]*}}selfStride = array<i64: 1, 2, 0, 0, 0, 0, 0, 0>

// One kernel per op kind, holding the per-tile program of the TBE formula.
// CHECK:       ascendc.kernel @fmod_tensor attributes {op_type = "FmodTensor"} {
// CHECK-NEXT:    ascendc.copy_in {src = "self", dst = "x"}
// CHECK-NEXT:    ascendc.copy_in {src = "other", dst = "y"}
// CHECK-NEXT:    ascendc.cast {dst = "x32", src = "x", modes = {f16 = "CAST_NONE", bf16 = "CAST_NONE", i16 = "CAST_NONE"}}
// CHECK-NEXT:    ascendc.cast {dst = "y32", src = "y", modes = {f16 = "CAST_NONE", bf16 = "CAST_NONE", i16 = "CAST_NONE"}}
// CHECK-NEXT:    ascendc.duplicate {dst = "y32", scalar = "other"}
// CHECK-NEXT:    ascendc.div {dst = "q32", src0 = "x32", src1 = "y32"}
// CHECK-NEXT:    ascendc.cast {dst = "q32", src = "q32", mode = "CAST_TRUNC"}
// CHECK-NEXT:    ascendc.mul {dst = "q32", src0 = "q32", src1 = "y32"}
// CHECK-NEXT:    ascendc.sub {dst = "z32", src0 = "x32", src1 = "q32"}
// CHECK-NEXT:    ascendc.cast {dst = "z", src = "z32", modes = {f16 = "CAST_NONE", bf16 = "CAST_RINT", i16 = "CAST_RINT"}}
// CHECK-NEXT:    ascendc.copy_out {src = "z", dst = "out"}
// CHECK-NEXT:  }
// CHECK-NEXT:  ascendc.kernel @fmod_scalar attributes {op_type = "FmodScalar", scalar} {
// CHECK-NEXT:    ascendc.copy_in {src = "self", dst = "x"}
// CHECK-NEXT:    ascendc.cast {dst = "x32", src = "x", modes = {f16 = "CAST_NONE", bf16 = "CAST_NONE", i16 = "CAST_NONE"}}
// CHECK-NEXT:    ascendc.duplicate {dst = "y32", scalar = "tiling"}
// CHECK-NEXT:    ascendc.div {dst = "q32", src0 = "x32", src1 = "y32"}
// CHECK-NEXT:    ascendc.cast {dst = "q32", src = "q32", mode = "CAST_TRUNC"}
// CHECK-NEXT:    ascendc.mul {dst = "q32", src0 = "q32", src1 = "y32"}
// CHECK-NEXT:    ascendc.sub {dst = "z32", src0 = "x32", src1 = "q32"}
// CHECK-NEXT:    ascendc.cast {dst = "z", src = "z32", modes = {f16 = "CAST_NONE", bf16 = "CAST_RINT", i16 = "CAST_RINT"}}
// CHECK-NEXT:    ascendc.copy_out {src = "z", dst = "out"}
// CHECK-NEXT:  }
// CHECK-NOT:   ascendc.kernel
