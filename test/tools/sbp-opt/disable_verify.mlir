// RUN: sbp-opt %s --disable-verify | filecheck %s
// RUN: not sbp-opt %s 2>&1 | filecheck %s --check-prefix=VERIFY

// --disable-verify skips the verifiers: an op whose types break its rules is printed as written.
// Parse-time checks (the syntax of types and attributes) still apply.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<8x8xf32, @p>
  func.return
}

// CHECK: %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<8x8xf32, @p>{{$}}

// VERIFY: disable_verify.mlir:9:3: error: sbp.relu(f32[4,8][S(0)] @p): result shape [8, 8] should be [4, 8]{{$}}
