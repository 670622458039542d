// RUN: rm -rf %t && sbp-run %s --check --save-outputs %t/spmd | filecheck %s
// RUN: sbp-run %s --check --save-outputs %t/global --pipeline infer-sbp,materialize-boxing,lower-boxing | filecheck %s
// RUN: python -c "import numpy as np, sys; [np.testing.assert_array_equal(np.load(f'{sys.argv[1]}/result{i}.npy').view(np.uint8), np.load(f'{sys.argv[2]}/result{i}.npy').view(np.uint8)) for i in range(6)]; print('same outputs')" %t/spmd %t/global | filecheck %s --check-prefix=SAME

// Every compute op kind on a 2x2 mesh with mixed input SBPs (splits, broadcasts, P and P(max)),
// through the default pipeline (per-rank spmd program) and through the global lowered program:
// both pass the check against the global reference and give bit-identical outputs.
sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%a: !sbp.tensor<6x5xf32, @q, [S(0), B]>, %b: !sbp.tensor<6x5xf32, @q, [B, S(1)]>,
                %w: !sbp.tensor<3x5xf32, @q, [B, B]>, %i: !sbp.tensor<6x4xi32, @q, [S(1), S(0)]>,
                %j: !sbp.tensor<4xi32, @q, [B, P]>, %h: !sbp.tensor<6x5xbf16, @q, [P(max), S(0)]>)
    -> (!sbp.tensor<6x3xf32, @q>, !sbp.tensor<6xf32, @q>, !sbp.tensor<6x4xi32, @q>, !sbp.tensor<5x6xbf16, @q>,
        !sbp.tensor<3x2x5xf32, @q>, !sbp.tensor<30xf16, @q>) {
  %0 = sbp.add %a, %b : !sbp.tensor<6x5xf32, @q, [S(0), B]>, !sbp.tensor<6x5xf32, @q, [B, S(1)]> -> !sbp.tensor<6x5xf32, @q>
  %1 = sbp.mul %0, %a : !sbp.tensor<6x5xf32, @q>, !sbp.tensor<6x5xf32, @q, [S(0), B]> -> !sbp.tensor<6x5xf32, @q>
  %2 = sbp.fmod_scalar %1, 0.7 : f32 : !sbp.tensor<6x5xf32, @q> -> !sbp.tensor<6x5xf32, @q>
  %3 = sbp.matmul %2, %w {transpose_b} : !sbp.tensor<6x5xf32, @q>, !sbp.tensor<3x5xf32, @q, [B, B]> -> !sbp.tensor<6x3xf32, @q>
  %4 = sbp.exp %2 : !sbp.tensor<6x5xf32, @q> -> !sbp.tensor<6x5xf32, @q>
  %5 = sbp.reduce_sum %4 {axes = array<i64: 1>} : !sbp.tensor<6x5xf32, @q> -> !sbp.tensor<6xf32, @q>
  %6 = sbp.div %i, %j : !sbp.tensor<6x4xi32, @q, [S(1), S(0)]>, !sbp.tensor<4xi32, @q, [B, P]> -> !sbp.tensor<6x4xi32, @q>
  %7 = sbp.fmod %6, %i : !sbp.tensor<6x4xi32, @q>, !sbp.tensor<6x4xi32, @q, [S(1), S(0)]> -> !sbp.tensor<6x4xi32, @q>
  %8 = sbp.reduce_max %h {axes = array<i64: 0>, keepdims} : !sbp.tensor<6x5xbf16, @q, [P(max), S(0)]> -> !sbp.tensor<1x5xbf16, @q>
  %9 = sbp.sub %h, %8 : !sbp.tensor<6x5xbf16, @q, [P(max), S(0)]>, !sbp.tensor<1x5xbf16, @q> -> !sbp.tensor<6x5xbf16, @q>
  %10 = sbp.transpose %9 {perm = array<i64: 1, 0>} : !sbp.tensor<6x5xbf16, @q> -> !sbp.tensor<5x6xbf16, @q>
  %11 = sbp.reshape %a : !sbp.tensor<6x5xf32, @q, [S(0), B]> -> !sbp.tensor<3x2x5xf32, @q>
  %12 = sbp.reshape %b : !sbp.tensor<6x5xf32, @q, [B, S(1)]> -> !sbp.tensor<30xf32, @q>
  %13 = sbp.cast %12 : !sbp.tensor<30xf32, @q> -> !sbp.tensor<30xf16, @q>
  func.return %3, %5, %7, %10, %11, %13 : !sbp.tensor<6x3xf32, @q>, !sbp.tensor<6xf32, @q>, !sbp.tensor<6x4xi32, @q>, !sbp.tensor<5x6xbf16, @q>, !sbp.tensor<3x2x5xf32, @q>, !sbp.tensor<30xf16, @q>
}
// CHECK: {{^}}total bytes sent: [[N:[0-9]+]] (all ranks); cost model: [[N]]{{$}}
// CHECK-NEXT: {{^}}check: OK ({{.*}}){{$}}

// SAME: same outputs
