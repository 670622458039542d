// RUN: not sbp-run %s --pipeline "" --check 2>&1 | filecheck %s
// RUN: sh -c 'sbp-run "$0" --pipeline "" --check >/dev/null 2>&1; echo "exit code $?"' %s | filecheck %s --check-prefix=CODE

// Issue 11: the verifier accepted this all_gather, which the collective semantics cannot execute (the
// rows a mesh-axis-0 group wants are split further on mesh axis 1, outside the group), and the
// simulator printed NaN. Now it is a located verifier error before anything runs.

sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<4x4xf32, @m, [S(0), S(0)]>) -> !sbp.tensor<4x4xf32, @m, [B, S(0)]> {
  // CHECK: invalid_collective.mlir:[[# @LINE + 1]]:3: error: sbp.all_gather(f32[4,4][S(0), S(0)] @m): [S(0), S(0)] -> [B, S(0)] on mesh axes [0] of the mesh [2, 2] changes the split of tensor axis 0 on mesh axis 0, but mesh axis 1 splits it further in the source [S(0), S(0)]: ranks would not hold contiguous blocks{{$}}
  %0 = "sbp.all_gather"(%x) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x4xf32, @m, [S(0), S(0)]>) -> !sbp.tensor<4x4xf32, @m, [B, S(0)]>
  func.return %0 : !sbp.tensor<4x4xf32, @m, [B, S(0)]>
}

// CHECK-NOT: Traceback
// CHECK-NOT: nan
// CODE: exit code 1
