// RUN: sbp-opt %s -p "infer-sbp{rule=cost}" | filecheck %s
// RUN: sbp-opt %s -p "infer-sbp{rule=cost}" --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: sbp-run %s --pipeline "infer-sbp{rule=cost},materialize-boxing,lower-boxing,spmdize" --check | filecheck %s --check-prefix=SIM

// Placement links change rule=cost's choice (SPEC §2.1). x [S(0), B] + y [B, S(0)] on 2x2: one
// operand must move along a mesh axis. With the default constants (@even, in @other) the cheapest
// signature is [S(0), S(1)] (y moves on mesh axis 1); when mesh axis 1 is the slow link (@main),
// it is [S(1), S(0)] (x moves on mesh axis 0), and the report prices every candidate on the links.

// CHECK-LABEL: func.func @main(
// CHECK:         sbp.add %x, %y {sbp.signature = #sbp.sig<[S(1), S(0)], [S(1), S(0)] -> [S(1), S(0)]>}
// CHECK-LABEL: func.func @other(
// CHECK:         sbp.add %x, %y {sbp.signature = #sbp.sig<[S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)]>}

// REPORT:      op sbp.add(f32[64,64][S(0), B] @slow1, f32[64,64][B, S(0)] @slow1)
// REPORT:          [S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)] {{.*}} modelled=17.010us
// REPORT:        * [S(1), S(0)], [S(1), S(0)] -> [S(1), S(0)] {{.*}} modelled=7.620us
// REPORT:      op sbp.add(f32[64,64][S(0), B] @even, f32[64,64][B, S(0)] @even)
// REPORT:        * [S(0), S(1)], [S(0), S(1)] -> [S(0), S(1)] {{.*}} modelled=7.247us

// SIM: all_to_all mesh_axes=[0] [S(0), B]->[S(1), B] f32[64,64]
// SIM: check: OK

sbp.placement @slow1 "cpu" [[0, 1], [2, 3]] links [(200.0, 1.0), (10.0, 10.0)]
sbp.placement @even "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<64x64xf32, @slow1, [S(0), B]>, %y: !sbp.tensor<64x64xf32, @slow1, [B, S(0)]>) -> !sbp.tensor<64x64xf32, @slow1> {
  %0 = sbp.add %x, %y : !sbp.tensor<64x64xf32, @slow1, [S(0), B]>, !sbp.tensor<64x64xf32, @slow1, [B, S(0)]> -> !sbp.tensor<64x64xf32, @slow1>
  func.return %0 : !sbp.tensor<64x64xf32, @slow1>
}
func.func @other(%x: !sbp.tensor<64x64xf32, @even, [S(0), B]>, %y: !sbp.tensor<64x64xf32, @even, [B, S(0)]>) -> !sbp.tensor<64x64xf32, @even> {
  %0 = sbp.add %x, %y : !sbp.tensor<64x64xf32, @even, [S(0), B]>, !sbp.tensor<64x64xf32, @even, [B, S(0)]> -> !sbp.tensor<64x64xf32, @even>
  func.return %0 : !sbp.tensor<64x64xf32, @even>
}
