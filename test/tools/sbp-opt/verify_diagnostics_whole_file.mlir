// RUN: sbp-opt %s --verify-diagnostics | filecheck %s

// Without --split-input-file the whole file is one chunk: its annotation is checked against the
// first error, and a matched annotation gives exit code 0.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x8xf32, @p, [B]>, %b: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  %0 = sbp.add %a, %b : !sbp.tensor<4x8xf32, @p, [B]>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  // expected-error @+1 {{reshape changes the element count: [4, 8] (32) -> [31] (31)}}
  %1 = sbp.reshape %0 : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<31xf32, @p>
  func.return
}

// CHECK: verify_diagnostics_whole_file.mlir:10:3: error: sbp.reshape(f32[4,8][?] @p): reshape changes the element count: [4, 8] (32) -> [31] (31){{$}}
// CHECK-NOT: builtin.module
