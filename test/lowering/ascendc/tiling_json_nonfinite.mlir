// RUN: rm -rf %t
// RUN: sbp-translate %s --emit-ascendc -o %t
// RUN: filecheck %s --input-file=%t/fmod_scalar/tiling.json

// A scalar that rounds to +inf in self's dtype (1e6 > 65504 for f16) is written as the string "inf":
// tiling.json stays standard JSON (no bare Infinity/NaN tokens).

sbp.placement @p "npu" [0, 1]

func.func @main(%a: !sbp.tensor<4x8xf16, @p, [S(0)]>) {
  %0 = sbp.fmod_scalar %a, 1.0e6 : f32 : !sbp.tensor<4x8xf16, @p, [S(0)]> -> !sbp.tensor<4x8xf16, @p>
  func.return
}

// CHECK:     "rank": 0,
// CHECK:     "scalarOther": "inf",
// CHECK:     "rank": 1,
// CHECK:     "scalarOther": "inf",
// CHECK-NOT: Infinity
