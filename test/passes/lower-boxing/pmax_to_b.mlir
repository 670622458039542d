// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sbp-opt %s -p "lower-boxing{planner=oneflow}" | filecheck %s
// RUN: sbp-opt %s -p lower-boxing,spmdize | filecheck %s --check-prefix=LOCAL
// RUN: sbp-run %s --entry two_d --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM2
// RUN: sbp-run %s --entry mixed --pipeline lower-boxing,spmdize --check | filecheck %s --check-prefix=SIM3

// P(max) -> B is an all-reduce whose reduction (max) is read from the source type. Both planners
// give the same plans. Mixed partial kinds have an order: the value is R0(R1(pieces)), so the last
// mesh axis is reduced first and the two axes cannot merge into one all-reduce.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @one_d(
// CHECK-NEXT:    %[[R:.*]] = sbp.all_reduce %a {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @p, [P(max)]> -> !sbp.tensor<8x6xf32, @p, [B]>
// CHECK-NEXT:    func.return %[[R]]
// LOCAL-LABEL: func.func @one_d(
// LOCAL:         sbp.all_reduce %a {mesh_axes = array<i64: 0>, placement = @p, src_sbp = #sbp.nd<[P(max)]>, dst_sbp = #sbp.nd<[B]>, global_shape = array<i64: 8, 6>} : tensor<8x6xf32> -> tensor<8x6xf32>
func.func @one_d(%a: !sbp.tensor<8x6xf32, @p, [P(max)]>) -> !sbp.tensor<8x6xf32, @p, [B]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x6xf32, @p, [P(max)]> -> !sbp.tensor<8x6xf32, @p, [B]>
  func.return %0 : !sbp.tensor<8x6xf32, @p, [B]>
}

// Same kind on both axes: one all-reduce(max) over the 4 ranks.
// CHECK-LABEL: func.func @two_d(
// CHECK-NEXT:    %[[R:.*]] = sbp.all_reduce %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<8x6xf32, @q, [P(max), P(max)]> -> !sbp.tensor<8x6xf32, @q, [B, B]>
// CHECK-NEXT:    func.return %[[R]]
// SIM2:      all_reduce mesh_axes=[0, 1] [P(max), P(max)]->[B, B] f32[8,6]: bytes sent per rank [288, 288, 288, 288]
// SIM2-NEXT: total bytes sent: 1152 (all ranks); cost model: 1152
// SIM2-NEXT: check: OK
func.func @two_d(%a: !sbp.tensor<8x6xf32, @q, [P(max), P(max)]>) -> !sbp.tensor<8x6xf32, @q, [B, B]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x6xf32, @q, [P(max), P(max)]> -> !sbp.tensor<8x6xf32, @q, [B, B]>
  func.return %0 : !sbp.tensor<8x6xf32, @q, [B, B]>
}

// (P(sum), P(max)): the max over mesh axis 1 first, then the sum over mesh axis 0.
// CHECK-LABEL: func.func @mixed(
// CHECK-NEXT:    %[[M:.*]] = sbp.all_reduce %a {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [P, P(max)]> -> !sbp.tensor<8x6xf32, @q, [P, B]>
// CHECK-NEXT:    %[[S:.*]] = sbp.all_reduce %[[M]] {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @q, [P, B]> -> !sbp.tensor<8x6xf32, @q, [B, B]>
// CHECK-NEXT:    func.return %[[S]]
// SIM3:      all_reduce mesh_axes=[1] [P, P(max)]->[P, B] f32[8,6]
// SIM3-NEXT: all_reduce mesh_axes=[0] [P, B]->[B, B] f32[8,6]
// SIM3-NEXT: total bytes sent: 1536 (all ranks); cost model: 1536
// SIM3-NEXT: check: OK
func.func @mixed(%a: !sbp.tensor<8x6xf32, @q, [P, P(max)]>) -> !sbp.tensor<8x6xf32, @q, [B, B]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x6xf32, @q, [P, P(max)]> -> !sbp.tensor<8x6xf32, @q, [B, B]>
  func.return %0 : !sbp.tensor<8x6xf32, @q, [B, B]>
}

// (P(max), P(sum)): the sum over mesh axis 1 first, then the max over mesh axis 0.
// CHECK-LABEL: func.func @mixed_rev(
// CHECK-NEXT:    %[[S:.*]] = sbp.all_reduce %a {mesh_axes = array<i64: 1>} : !sbp.tensor<8x6xf32, @q, [P(max), P]> -> !sbp.tensor<8x6xf32, @q, [P(max), B]>
// CHECK-NEXT:    %[[M:.*]] = sbp.all_reduce %[[S]] {mesh_axes = array<i64: 0>} : !sbp.tensor<8x6xf32, @q, [P(max), B]> -> !sbp.tensor<8x6xf32, @q, [B, B]>
// CHECK-NEXT:    func.return %[[M]]
func.func @mixed_rev(%a: !sbp.tensor<8x6xf32, @q, [P(max), P]>) -> !sbp.tensor<8x6xf32, @q, [B, B]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x6xf32, @q, [P(max), P]> -> !sbp.tensor<8x6xf32, @q, [B, B]>
  func.return %0 : !sbp.tensor<8x6xf32, @q, [B, B]>
}
