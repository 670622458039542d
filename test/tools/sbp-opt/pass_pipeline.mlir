// RUN: sbp-opt %s --pass-pipeline='builtin.module(infer-sbp{rule=cost},materialize-boxing)' > %t.anchored
// RUN: sbp-opt %s -p 'infer-sbp{rule=cost},materialize-boxing' > %t.p
// RUN: sbp-opt %s --infer-sbp=rule=cost --materialize-boxing > %t.flags
// RUN: filecheck %s --input-file %t.anchored
// RUN: not sbp-opt %s --pass-pipeline='func.func(infer-sbp)' 2>&1 | filecheck %s --check-prefix=ANCHOR
// RUN: not sbp-opt %s --pass-pipeline='builtin.module(infer-sbp' 2>&1 | filecheck %s --check-prefix=OPEN
// RUN: diff %t.anchored %t.p
// RUN: diff %t.anchored %t.flags

// `--pass-pipeline='builtin.module(...)'` is the same pipeline as `-p ...` and as one flag per pass.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>, %b: !sbp.tensor<4x4xf32, @p, [S(1)]>) -> !sbp.tensor<4x4xf32, @p> {
  %0 = sbp.add %a, %b : !sbp.tensor<4x4xf32, @p, [S(0)]>, !sbp.tensor<4x4xf32, @p, [S(1)]> -> !sbp.tensor<4x4xf32, @p>
  func.return %0 : !sbp.tensor<4x4xf32, @p>
}

// CHECK: sbp.boxing
// CHECK: sbp.add {{.*}}sbp.signature

// ANCHOR: error: bad pass pipeline 'func.func(infer-sbp)': only the builtin.module anchor is supported
// OPEN: error: bad pass pipeline 'builtin.module(infer-sbp': 'builtin.module(' is not closed
