// RUN: sbp-opt %s -p "infer-sbp{rule=global}" | filecheck %s
// RUN: not sbp-opt %s -p "infer-sbp{rule=cost}" 2>&1 | filecheck %s --check-prefix=COST
// RUN: sbp-run %s --entry f --pipeline "infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize" --check | filecheck %s --check-prefix=SIM

// An op result type with `?` entries requires its fixed entries (here P on mesh axis 1) under
// rule=global, which decides the rest; the other rules reject it.

// CHECK: func.func @f({{.*}}) -> !sbp.tensor<64x64xf32, @m, [S(0), P]>
// CHECK: sbp.matmul %x, %w {sbp.signature = #sbp.sig<[S(0), S(1)], [B, S(0)] -> [S(0), P]>}
// COST: global_result_pattern.mlir:[[# @LINE + 5]]:3: error: sbp.matmul(f32[64,64][S(0), B] @m, f32[64,64][B, B] @m): result type f32[64,64][?, P] @m has `?` entries; only rule=global decides them
// SIM: check: OK

sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @f(%x: !sbp.tensor<64x64xf32, @m, [S(0), B]>, %w: !sbp.tensor<64x64xf32, @m, [B, B]>) -> !sbp.tensor<64x64xf32, @m, [?, P]> {
  %y = sbp.matmul %x, %w : !sbp.tensor<64x64xf32, @m, [S(0), B]>, !sbp.tensor<64x64xf32, @m, [B, B]> -> !sbp.tensor<64x64xf32, @m, [?, P]>
  func.return %y : !sbp.tensor<64x64xf32, @m, [?, P]>
}
