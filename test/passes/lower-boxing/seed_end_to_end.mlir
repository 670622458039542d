// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing | filecheck %s
// RUN: sbp-opt %examples/seed.mlir -p infer-sbp,materialize-boxing,lower-boxing | filecheck %s
// RUN: sbp-opt %s -p "infer-sbp,materialize-boxing,lower-boxing{planner=oneflow}" | filecheck %s
// RUN: sbp-opt %s -p "infer-sbp{rule=cost},materialize-boxing,lower-boxing" | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing | filecheck %s --check-prefix=ONLY
// RUN: sbp-run %s --check | filecheck %s --check-prefix=SIM

// The seed program (examples/seed.mlir): t3 = t1 + t2, t1: S(0), t2: S(1), 2x4 f32 on ranks [0, 1].
// Inference picks S(0), S(0) -> S(0); materialise boxes t2 S(1) -> S(0); lowering turns that boxing
// into exactly one all-to-all on t2 and nothing else (with either planner and either rule).

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %t1: !sbp.tensor<2x4xf32, @p, [S(0)]>, %t2: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p, [S(0)]>
// CHECK-NEXT:    %[[A2A:.*]] = sbp.all_to_all %t2 {mesh_axes = array<i64: 0>} : !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p, [S(0)]>
// CHECK-NEXT:    %t3 = sbp.add %t1, %[[A2A]] {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(0)]> -> !sbp.tensor<2x4xf32, @p, [S(0)]>
// CHECK-NEXT:    func.return %t3 : !sbp.tensor<2x4xf32, @p, [S(0)]>

// ONLY-NOT:     sbp.{{boxing|all_gather|all_reduce|reduce_scatter|all_slice|to_partial}}
// ONLY-COUNT-1: sbp.all_to_all
// ONLY-NOT:     sbp.{{boxing|all_gather|all_reduce|reduce_scatter|all_slice|to_partial|all_to_all}}

// Executed: each rank sends the half of its 2x2 block the other rank needs (2 f32 = 8 bytes).
// SIM:      all_to_all mesh_axes=[0] S(1)->S(0) f32[2,4]: bytes sent per rank [8, 8]
// SIM-NEXT: total bytes sent: 16 (all ranks); cost model: 16
// SIM-NEXT: check: OK

// The seed program (OneFlow SBP inference article): t3 = t1 + t2 on ranks [0, 1].
sbp.placement @p "cpu" [0, 1]
func.func @main(%t1: !sbp.tensor<2x4xf32, @p, [S(0)]>, %t2: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p> {
  %t3 = sbp.add %t1, %t2 : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p>
  func.return %t3 : !sbp.tensor<2x4xf32, @p>
}
