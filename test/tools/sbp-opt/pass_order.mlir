// RUN: sbp-opt %s --infer-sbp --pass-pipeline='builtin.module(materialize-boxing)' -p lower-boxing --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s
// RUN: not sbp-opt %s --materialize-boxing -p infer-sbp 2>&1 | filecheck %s --check-prefix=REVERSED
// RUN: sbp-opt %s -p infer-sbp --materialize-boxing | filecheck %s --check-prefix=WRITTEN

// Passes run in the order they are written, whether given by `-p`, `--pass-pipeline` or `--<pass>`
// (xDSL's driver ran `-p` first). Written after infer-sbp, materialize-boxing works; written before,
// it finds no signature.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>, %b: !sbp.tensor<4x4xf32, @p, [S(1)]>) -> !sbp.tensor<4x4xf32, @p> {
  %0 = sbp.add %a, %b : !sbp.tensor<4x4xf32, @p, [S(0)]>, !sbp.tensor<4x4xf32, @p, [S(1)]> -> !sbp.tensor<4x4xf32, @p>
  func.return %0 : !sbp.tensor<4x4xf32, @p>
}

// CHECK:      // -----// IR Dump After InferSbpPass (infer-sbp) //----- //
// CHECK-NOT:  sbp.boxing
// CHECK:      // -----// IR Dump After MaterializeBoxingPass (materialize-boxing) //----- //
// CHECK:      sbp.boxing
// CHECK:      // -----// IR Dump After LowerBoxingPass (lower-boxing) //----- //
// CHECK-NOT:  sbp.boxing
// CHECK:      sbp.all_to_all

// REVERSED: error: {{.*}}no sbp.signature; run infer-sbp before materialize-boxing

// WRITTEN: sbp.boxing
