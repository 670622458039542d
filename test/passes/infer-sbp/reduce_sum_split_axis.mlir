// RUN: sbp-opt %s --infer-sbp | filecheck %s
// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s
// RUN: sbp-opt %s --infer-sbp --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// reduce_sum's 1-D list (reduce_ops.cpp), per input axis i in order: a reduced axis gives
// S(i) -> P followed by P -> P; a kept axis gives S(i) -> S(keepdims ? i : i - #reduced before i).

sbp.placement @p "cpu" [0, 1]

// Reducing the split axis leaves each rank a partial sum: S(0) -> P.
// CHECK-LABEL: func.func @split_axis(
// CHECK-SAME:    -> !sbp.tensor<4xf32, @p, [P]>
// CHECK:         sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [P]>, axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p, [P]>
func.func @split_axis(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.reduce_sum %x {axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}

// keepdims: the same, the result keeps a size-1 axis 0.
// CHECK-LABEL: func.func @split_axis_keepdims(
// CHECK-SAME:    -> !sbp.tensor<1x4xf32, @p, [P]>
// CHECK:         sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [P]>, axes = array<i64: 0>, keepdims} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<1x4xf32, @p, [P]>
func.func @split_axis_keepdims(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>) -> !sbp.tensor<1x4xf32, @p> {
  %0 = sbp.reduce_sum %x {axes = array<i64: 0>, keepdims} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<1x4xf32, @p>
  func.return %0 : !sbp.tensor<1x4xf32, @p>
}

// A partial input stays partial (P -> P).
// CHECK-LABEL: func.func @partial_in(
// CHECK:         sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[P] -> [P]>, axes = array<i64: 1>} : !sbp.tensor<8x4xf32, @p, [P]> -> !sbp.tensor<8xf32, @p, [P]>
func.func @partial_in(%x: !sbp.tensor<8x4xf32, @p, [P]>) -> !sbp.tensor<8xf32, @p> {
  %0 = sbp.reduce_sum %x {axes = array<i64: 1>} : !sbp.tensor<8x4xf32, @p, [P]> -> !sbp.tensor<8xf32, @p>
  func.return %0 : !sbp.tensor<8xf32, @p>
}

// A kept split axis is renumbered when reduced axes before it disappear: (4,8,6) S(2) summed
// over axis 1 -> (4,6) S(1); with keepdims it stays S(2); over axes [0, 1] it becomes S(0).
// CHECK-LABEL: func.func @kept_axis(
// CHECK:         sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[S(2)] -> [S(1)]>, axes = array<i64: 1>} : !sbp.tensor<4x8x6xf32, @p, [S(2)]> -> !sbp.tensor<4x6xf32, @p, [S(1)]>
// CHECK:         sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[S(2)] -> [S(2)]>, axes = array<i64: 1>, keepdims} : !sbp.tensor<4x8x6xf32, @p, [S(2)]> -> !sbp.tensor<4x1x6xf32, @p, [S(2)]>
// CHECK:         sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[S(2)] -> [S(0)]>, axes = array<i64: 0, 1>} : !sbp.tensor<4x8x6xf32, @p, [S(2)]> -> !sbp.tensor<6xf32, @p, [S(0)]>
func.func @kept_axis(%x: !sbp.tensor<4x8x6xf32, @p, [S(2)]>) {
  %0 = sbp.reduce_sum %x {axes = array<i64: 1>} : !sbp.tensor<4x8x6xf32, @p, [S(2)]> -> !sbp.tensor<4x6xf32, @p>
  %1 = sbp.reduce_sum %x {axes = array<i64: 1>, keepdims} : !sbp.tensor<4x8x6xf32, @p, [S(2)]> -> !sbp.tensor<4x1x6xf32, @p>
  %2 = sbp.reduce_sum %x {axes = array<i64: 0, 1>} : !sbp.tensor<4x8x6xf32, @p, [S(2)]> -> !sbp.tensor<6xf32, @p>
  func.return
}

// Reducing everything of a split tensor to a 0-d value: S(0) -> P.
// CHECK-LABEL: func.func @to_scalar(
// CHECK:         sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[S(1)] -> [P]>, axes = array<i64: 0, 1>} : !sbp.tensor<8x4xf32, @p, [S(1)]> -> !sbp.tensor<f32, @p, [P]>
func.func @to_scalar(%x: !sbp.tensor<8x4xf32, @p, [S(1)]>) {
  %0 = sbp.reduce_sum %x {axes = array<i64: 0, 1>} : !sbp.tensor<8x4xf32, @p, [S(1)]> -> !sbp.tensor<f32, @p>
  func.return
}

// Two reduced axes: OneFlow lists S(i) -> P followed by P -> P for each, so P -> P appears twice
// (the report stars the first; ties go to the earlier one).
// CHECK-LABEL: func.func @two_reduced(
// CHECK:         sbp.reduce_sum %{{.*}} {sbp.signature = #sbp.sig<[P] -> [P]>, axes = array<i64: 0, 2>} : !sbp.tensor<4x6x8xf32, @p, [P]> -> !sbp.tensor<6xf32, @p, [P]>
// REPORT-LABEL: op sbp.reduce_sum(f32[4,6,8][P] @p)
// REPORT-NEXT:     [S(0)] -> [P] {{ *}}order=0 oneflow_cost=768
// REPORT-NEXT:   * [P] -> [P] {{ *}}order=-10 oneflow_cost=0
// REPORT-NEXT:     [S(1)] -> [S(0)] {{ *}}order=0 oneflow_cost=768
// REPORT-NEXT:     [S(2)] -> [P] {{ *}}order=0 oneflow_cost=768
// REPORT-NEXT:     [P] -> [P] {{ *}}order=-10 oneflow_cost=0
// REPORT-NEXT:     [B] -> [B] {{ *}}order=0 oneflow_cost=768
// REPORT-NEXT:   chosen: [P] -> [P] (lowest (OrderValue, IbnCopyCost) = (-10, 0))
func.func @two_reduced(%x: !sbp.tensor<4x6x8xf32, @p, [P]>) {
  %0 = sbp.reduce_sum %x {axes = array<i64: 0, 2>} : !sbp.tensor<4x6x8xf32, @p, [P]> -> !sbp.tensor<6xf32, @p>
  func.return
}
