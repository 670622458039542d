// RUN: sbp-opt %s -p "infer-sbp,materialize-boxing,lower-boxing,spmdize,lower-to-ascendc{soc=ascend910b3}" | filecheck %s --check-prefix=IR
// RUN: rm -rf %t
// RUN: sbp-translate %s --emit-ascendc --soc ascend910b3 -o %t
// RUN: filecheck %s --check-prefix=JSON --input-file=%t/fmod_scalar/tiling.json
// RUN: sbp-opt %s -p "infer-sbp,materialize-boxing,lower-boxing,spmdize,lower-to-ascendc" | filecheck %s --check-prefix=B
// RUN: not sbp-opt %s -p "infer-sbp,materialize-boxing,lower-boxing,spmdize,lower-to-ascendc{soc=ascend310p}" 2>&1 | filecheck %s --check-prefix=UNKNOWN

// soc=ascend910b3 (and b4) has 40 AIV cores instead of 48: the same shards split over 40 cores.
// Rank 0 (501 x 500 f16 = 250500): blockLength = align16(ceil(250500 / 40)) = 6272,
// blockDim = ceil(250500 / 6272) = 40, lastBlockLength = 250500 - 39 * 6272 = 5892.

// A SoC outside lower-to-ascendc's typed `soc` option is a usage error, before the input is read.
// UNKNOWN: {{^}}error: pass 'lower-to-ascendc': soc=ascend310p is not allowed (allowed: ascend910b, ascend910b1, ascend910b2, ascend910b3, ascend910b4, ascend910_93){{$}}

sbp.placement @q "npu" [[0, 1], [2, 3]]

func.func @main(%x: !sbp.tensor<1001x999xf16, @q, [S(0), S(1)]>) -> !sbp.tensor<1001x999xf16, @q> {
  %0 = sbp.fmod_scalar %x, 2.5 : f16 : !sbp.tensor<1001x999xf16, @q, [S(0), S(1)]> -> !sbp.tensor<1001x999xf16, @q>
  func.return %0 : !sbp.tensor<1001x999xf16, @q>
}

// IR:      ascendc.launch @fmod_scalar(%x)
// IR-SAME: {rank = 0 : i64, dtype = "f16", tilingKey = 0 : i64, soc = "ascend910b3", coreNum = 40 : i64, totalLength = 250500 : i64, blockDim = 40 : i64, blockLength = 6272 : i64, lastBlockLength = 5892 : i64, tileLength = 6272 : i64, tileNum = 1 : i64
// IR-SAME: {rank = 1 : i64, dtype = "f16", tilingKey = 0 : i64, soc = "ascend910b3", coreNum = 40 : i64, totalLength = 249999 : i64, blockDim = 40 : i64, blockLength = 6256 : i64, lastBlockLength = 6015 : i64
// IR-SAME: {rank = 2 : i64, dtype = "f16", tilingKey = 0 : i64, soc = "ascend910b3", coreNum = 40 : i64, totalLength = 250000 : i64, blockDim = 40 : i64, blockLength = 6256 : i64, lastBlockLength = 6016 : i64
// IR-SAME: {rank = 3 : i64, dtype = "f16", tilingKey = 0 : i64, soc = "ascend910b3", coreNum = 40 : i64, totalLength = 249500 : i64, blockDim = 40 : i64, blockLength = 6240 : i64, lastBlockLength = 6140 : i64

// JSON:      "rank": 0,
// JSON-NEXT: "dtype": "f16",
// JSON-NEXT: "tilingKey": 0,
// JSON-NEXT: "soc": "ascend910b3",
// JSON-NEXT: "coreNum": 40,
// JSON-NEXT: "totalLength": 250500,
// JSON-NEXT: "blockDim": 40,
// JSON-NEXT: "blockLength": 6272,
// JSON:      "rank": 3,
// JSON:      "blockDim": 40,
// JSON-NEXT: "blockLength": 6240,

// The default soc (ascend910b): 48 cores.
// B:      {rank = 0 : i64, dtype = "f16", tilingKey = 0 : i64, soc = "ascend910b", coreNum = 48 : i64, totalLength = 250500 : i64, blockDim = 48 : i64, blockLength = 5232 : i64
