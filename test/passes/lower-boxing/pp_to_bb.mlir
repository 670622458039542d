// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sbp-opt %s -p "lower-boxing{planner=oneflow}" | filecheck %s --check-prefix=ONEFLOW
// RUN: sbp-run %s --check | filecheck %s --check-prefix=SIM
// RUN: sbp-opt %s --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: python -c "from sbpc.dialects.sbp import BROADCAST as B, partial; from sbpc.passes.cost.comm import plan_transition; P = partial(); print([(p.time_us, [(s.kind, s.mesh_axes) for s in p.steps]) for p in (plan_transition((P, P), (B, B), (8, 8), 4, (2, 2)), plan_transition((P, P), (B, B), (8, 8), 4, (2, 2), merge_axes=False))])" | filecheck %s --check-prefix=COST

// (P, P) -> (B, B) on a 2x2 mesh, 8x8 f32 (256 bytes): one all-reduce over the merged mesh axes
// [0, 1] (4 ranks), not one all-reduce per mesh axis. Both planners agree (OneFlow's
// nd-sbp-dim-reduce turns it into the 1-D [4]: P -> B).
//
// Modelled (α-β, DTensor constants): merged = 6.6 + 2·3·0.6 + 384 B / 87.7 GB/s = 10.204 us;
// per axis = 2 × (6.6 + 2·1·0.6 + 256 B / 87.7 GB/s) = 2 × 7.803 = 15.606 us. The merged ring also
// sends fewer bytes per rank: 2·(3/4)·256 = 384 instead of 2 × 2·(1/2)·256 = 512.

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[R:.*]] = sbp.all_reduce %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<8x8xf32, @q, [P, P]> -> !sbp.tensor<8x8xf32, @q, [B, B]>
// CHECK-NEXT:    func.return %[[R]] : !sbp.tensor<8x8xf32, @q, [B, B]>
// CHECK-NOT:     sbp.all_reduce
// ONEFLOW-LABEL: func.func @main(
// ONEFLOW-NEXT:    %[[R:.*]] = sbp.all_reduce %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<8x8xf32, @q, [P, P]> -> !sbp.tensor<8x8xf32, @q, [B, B]>
// ONEFLOW-NEXT:    func.return %[[R]]

// SIM:      all_reduce mesh_axes=[0, 1] [P, P]->[B, B] f32[8,8]: bytes sent per rank [384, 384, 384, 384]
// SIM-NEXT: total bytes sent: 1536 (all ranks); cost model: 1536
// SIM-NEXT: check: OK

// The report prices the boxing a consumer needs: relu (hinted to [B, B]) on the (P, P) value.
// REPORT:      op sbp.relu(f32[8,8][P, P] @q)
// REPORT-NEXT:   * [B, B] -> [B, B] {{.*}} modelled=10.204us
// REPORT:        boxing: operand 0: [P, P] -> [B, B]

// The planner with and without merged mesh axes: one all-reduce at 10.204 us against two at 15.606 us.
// COST: [(10.20437{{[0-9]*}}, [('all_reduce', (0, 1))]), (15.60583{{[0-9]*}}, [('all_reduce', (0,)), ('all_reduce', (1,))])]

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%a: !sbp.tensor<8x8xf32, @q, [P, P]>) -> !sbp.tensor<8x8xf32, @q, [B, B]> {
  %0 = sbp.boxing %a : !sbp.tensor<8x8xf32, @q, [P, P]> -> !sbp.tensor<8x8xf32, @q, [B, B]>
  func.return %0 : !sbp.tensor<8x8xf32, @q, [B, B]>
}

func.func @consumer(%a: !sbp.tensor<8x8xf32, @q, [P, P]>) -> !sbp.tensor<8x8xf32, @q> {
  %0 = sbp.relu %a {sbp.hint = #sbp.sig<[B, B] -> ?>} : !sbp.tensor<8x8xf32, @q, [P, P]> -> !sbp.tensor<8x8xf32, @q>
  func.return %0 : !sbp.tensor<8x8xf32, @q>
}
