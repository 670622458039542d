// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s

// transpose's 1-D list (transpose_ops.cpp): S(perm[i]) -> S(i) for each output axis i, then P -> P.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @t2d(
// CHECK-SAME:    -> !sbp.tensor<4x8xf32, @p, [S(1)]>
// CHECK:         sbp.transpose %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [S(1)]>, perm = array<i64: 1, 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>
func.func @t2d(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p> {
  %0 = sbp.transpose %x {perm = array<i64: 1, 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  func.return %0 : !sbp.tensor<4x8xf32, @p>
}

// perm [2, 0, 1]: input axis 2 becomes output axis 0, input axis 0 output axis 1. P stays P.
// CHECK-LABEL: func.func @t3d(
// CHECK:         sbp.transpose %{{.*}} {sbp.signature = #sbp.sig<[S(2)] -> [S(0)]>, perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x6xf32, @p, [S(2)]> -> !sbp.tensor<6x2x4xf32, @p, [S(0)]>
// CHECK:         sbp.transpose %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [S(1)]>, perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x6xf32, @p, [S(0)]> -> !sbp.tensor<6x2x4xf32, @p, [S(1)]>
// CHECK:         sbp.transpose %{{.*}} {sbp.signature = #sbp.sig<[P] -> [P]>, perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x6xf32, @p, [P]> -> !sbp.tensor<6x2x4xf32, @p, [P]>
func.func @t3d(%x: !sbp.tensor<2x4x6xf32, @p, [S(2)]>, %y: !sbp.tensor<2x4x6xf32, @p, [S(0)]>, %z: !sbp.tensor<2x4x6xf32, @p, [P]>) {
  %0 = sbp.transpose %x {perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x6xf32, @p, [S(2)]> -> !sbp.tensor<6x2x4xf32, @p>
  %1 = sbp.transpose %y {perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x6xf32, @p, [S(0)]> -> !sbp.tensor<6x2x4xf32, @p>
  %2 = sbp.transpose %z {perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x6xf32, @p, [P]> -> !sbp.tensor<6x2x4xf32, @p>
  func.return
}

// On a 2-D mesh each mesh axis maps independently: (S(0), S(1)) -> (S(1), S(0)).
// CHECK-LABEL: func.func @t2d_mesh(
// CHECK:         sbp.transpose %{{.*}} {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(1), S(0)]>, perm = array<i64: 1, 0>} : !sbp.tensor<8x4xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q, [S(1), S(0)]>
func.func @t2d_mesh(%x: !sbp.tensor<8x4xf32, @q, [S(0), S(1)]>) {
  %0 = sbp.transpose %x {perm = array<i64: 1, 0>} : !sbp.tensor<8x4xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q>
  func.return
}
