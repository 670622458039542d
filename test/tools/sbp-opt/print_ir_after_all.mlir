// RUN: sbp-opt %s -p infer-sbp,materialize-boxing --print-between-passes 2> %t.err | filecheck %s --check-prefix=OUT
// RUN: filecheck %s --input-file %t.err
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s

// `--print-between-passes` (MLIR's `--mlir-print-ir-after-all`) prints the IR after every pass, with
// MLIR's header, to stderr; stdout holds only the final program.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x4xf32, @p, [S(0)]>, %b: !sbp.tensor<4x4xf32, @p, [S(1)]>) -> !sbp.tensor<4x4xf32, @p> {
  %0 = sbp.add %a, %b : !sbp.tensor<4x4xf32, @p, [S(0)]>, !sbp.tensor<4x4xf32, @p, [S(1)]> -> !sbp.tensor<4x4xf32, @p>
  func.return %0 : !sbp.tensor<4x4xf32, @p>
}

// CHECK:      {{^}}// -----// IR Dump After InferSbpPass (infer-sbp) //----- //{{$}}
// CHECK-NEXT: {{^}}builtin.module {
// CHECK-NOT:  sbp.boxing
// CHECK:      %0 = sbp.add %a, {{.*}}sbp.signature = #sbp.sig<
// CHECK:      {{^}}// -----// IR Dump After MaterializeBoxingPass (materialize-boxing) //----- //{{$}}
// CHECK-NEXT: {{^}}builtin.module {
// CHECK:      sbp.boxing
// CHECK-NOT:  IR Dump

// OUT-NOT: IR Dump
// OUT:     {{^}}builtin.module {
// OUT:     sbp.boxing
// OUT-NOT: IR Dump
