// RUN: sbp-opt %s -p spmdize | filecheck %s
// RUN: sbp-opt %s -p spmdize | sbp-opt | filecheck %s
// RUN: sbp-run %s --entry chain --pipeline spmdize --check | filecheck %s --check-prefix=SIM

// Every collective kind after spmdize: the op keeps `mesh_axes` and gets `placement`, `src_sbp`,
// `dst_sbp` and `global_shape` (read off its global types before they are rewritten), which say
// which mesh axes and tensor axes it moves; its operand and result become local tensors.
// A hand-written lowered chain on a 2x2 mesh, 8x6 f32.

sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @chain(
// CHECK-SAME:    %a: tensor<4x6xf32> {sbp.sbp = #sbp.nd<[S(0), P]>, sbp.global_shape = array<i64: 8, 6>}
// CHECK-SAME:    -> (tensor<8x3xf32> {sbp.sbp = #sbp.nd<[S(1), B]>, sbp.global_shape = array<i64: 8, 6>})
// CHECK-SAME:    attributes {sbp.placement = @q}
// CHECK-NEXT:    %[[RS:.*]] = sbp.reduce_scatter %a {mesh_axes = array<i64: 1>, placement = @q, src_sbp = #sbp.nd<[S(0), P]>, dst_sbp = #sbp.nd<[S(0), S(1)]>, global_shape = array<i64: 8, 6>} : tensor<4x6xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[A2A:.*]] = sbp.all_to_all %[[RS]] {mesh_axes = array<i64: 1>, placement = @q, src_sbp = #sbp.nd<[S(0), S(1)]>, dst_sbp = #sbp.nd<[S(0), S(0)]>, global_shape = array<i64: 8, 6>} : tensor<4x3xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    %[[AG1:.*]] = sbp.all_gather %[[A2A]] {mesh_axes = array<i64: 1>, placement = @q, src_sbp = #sbp.nd<[S(0), S(0)]>, dst_sbp = #sbp.nd<[S(0), B]>, global_shape = array<i64: 8, 6>} : tensor<2x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %[[AG0:.*]] = sbp.all_gather %[[AG1]] {mesh_axes = array<i64: 0>, placement = @q, src_sbp = #sbp.nd<[S(0), B]>, dst_sbp = #sbp.nd<[B, B]>, global_shape = array<i64: 8, 6>} : tensor<4x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:    %[[SL:.*]] = sbp.all_slice %[[AG0]] {mesh_axes = array<i64: 0>, placement = @q, src_sbp = #sbp.nd<[B, B]>, dst_sbp = #sbp.nd<[S(1), B]>, global_shape = array<i64: 8, 6>} : tensor<8x6xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    %[[TP:.*]] = sbp.to_partial %[[SL]] {mesh_axes = array<i64: 1>, placement = @q, src_sbp = #sbp.nd<[S(1), B]>, dst_sbp = #sbp.nd<[S(1), P(max)]>, global_shape = array<i64: 8, 6>} : tensor<8x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    %[[AR:.*]] = sbp.all_reduce %[[TP]] {mesh_axes = array<i64: 1>, placement = @q, src_sbp = #sbp.nd<[S(1), P(max)]>, dst_sbp = #sbp.nd<[S(1), B]>, global_shape = array<i64: 8, 6>} : tensor<8x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    func.return %[[AR]] : tensor<8x3xf32>
// CHECK-NOT:     !sbp.tensor

// SIM:      reduce_scatter mesh_axes=[1] [S(0), P]->[S(0), S(1)] f32[8,6]
// SIM-NEXT: all_to_all mesh_axes=[1] [S(0), S(1)]->[S(0), S(0)] f32[8,6]
// SIM-NEXT: all_gather mesh_axes=[1] [S(0), S(0)]->[S(0), B] f32[8,6]
// SIM-NEXT: all_gather mesh_axes=[0] [S(0), B]->[B, B] f32[8,6]
// SIM-NEXT: all_slice mesh_axes=[0] [B, B]->[S(1), B] f32[8,6]: bytes sent per rank [0, 0, 0, 0]
// SIM-NEXT: to_partial mesh_axes=[1] [S(1), B]->[S(1), P(max)] f32[8,6]: bytes sent per rank [0, 0, 0, 0]
// SIM-NEXT: all_reduce mesh_axes=[1] [S(1), P(max)]->[S(1), B] f32[8,6]
// SIM:      check: OK
func.func @chain(%a: !sbp.tensor<8x6xf32, @q, [S(0), P]>) -> !sbp.tensor<8x6xf32, @q, [S(1), B]> {
  %0 = sbp.reduce_scatter %a {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [S(0), P]> -> !sbp.tensor<8x6xf32, @q, [S(0), S(1)]>
  %1 = sbp.all_to_all %0 {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x6xf32, @q, [S(0), S(0)]>
  %2 = sbp.all_gather %1 {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [S(0), S(0)]> -> !sbp.tensor<8x6xf32, @q, [S(0), B]>
  %3 = sbp.all_gather %2 {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @q, [S(0), B]> -> !sbp.tensor<8x6xf32, @q, [B, B]>
  %4 = sbp.all_slice %3 {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @q, [B, B]> -> !sbp.tensor<8x6xf32, @q, [S(1), B]>
  %5 = sbp.to_partial %4 {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [S(1), B]> -> !sbp.tensor<8x6xf32, @q, [S(1), P(max)]>
  %6 = sbp.all_reduce %5 {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [S(1), P(max)]> -> !sbp.tensor<8x6xf32, @q, [S(1), B]>
  func.return %6 : !sbp.tensor<8x6xf32, @q, [S(1), B]>
}
