// RUN: sbp-opt %s -p lower-boxing | filecheck %s
// RUN: sbp-run %s --check | filecheck %s --check-prefix=SIM
// RUN: %if torch %{ sbp-run %s --check --backend torch | filecheck %s --check-prefix=TORCH %}

// Placement links change the planner's choice (SPEC §2.1). (P, P) -> (B, B), 512x512 f32, 2x4:
// with the default constants one all-reduce over the merged mesh axes is cheapest (@flat); with
// a slow outer axis (25 GB/s, 10 us per hop) and a fast inner one (@main) the planner reduces
// hierarchically: reduce-scatter inside a node, all-reduce of a quarter across nodes, all-gather.

// CHECK-LABEL: func.func @flat(
// CHECK-NEXT:    sbp.all_reduce %a {mesh_axes = array<i64: 0, 1>}
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    sbp.reduce_scatter %a {mesh_axes = array<i64: 1>} : !sbp.tensor<512x512xf32, @node_mesh, [P, P]> -> !sbp.tensor<512x512xf32, @node_mesh, [P, S(0)]>
// CHECK-NEXT:    sbp.all_reduce %{{.*}} {mesh_axes = array<i64: 0>} : !sbp.tensor<512x512xf32, @node_mesh, [P, S(0)]> -> !sbp.tensor<512x512xf32, @node_mesh, [B, S(0)]>
// CHECK-NEXT:    sbp.all_gather %{{.*}} {mesh_axes = array<i64: 1>} : !sbp.tensor<512x512xf32, @node_mesh, [B, S(0)]> -> !sbp.tensor<512x512xf32, @node_mesh, [B, B]>
// CHECK-NEXT:    func.return

// SIM: reduce_scatter mesh_axes=[1]
// SIM-NEXT: all_reduce mesh_axes=[0]
// SIM-NEXT: all_gather mesh_axes=[1]
// SIM: check: OK

// The torch backend's modelled times read the links: the all-reduce across nodes is
// 6.6 + 2·10 + 262144 B / 25 GB/s = 37.1 us; the all-gather inside a node 6.6 + 3·1.5 + 786432 B / 196 GB/s = 15.1 us.
// TORCH: all_reduce mesh_axes=[0] {{.*}} model 0.037 ms
// TORCH: all_gather mesh_axes=[1] {{.*}} model 0.015 ms
// TORCH: check: OK

sbp.placement @flat_mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]
sbp.placement @node_mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]] links [(25.0, 10.0), (196.0, 1.5)]
func.func @flat(%a: !sbp.tensor<512x512xf32, @flat_mesh, [P, P]>) -> !sbp.tensor<512x512xf32, @flat_mesh, [B, B]> {
  %0 = sbp.boxing %a : !sbp.tensor<512x512xf32, @flat_mesh, [P, P]> -> !sbp.tensor<512x512xf32, @flat_mesh, [B, B]>
  func.return %0 : !sbp.tensor<512x512xf32, @flat_mesh, [B, B]>
}
func.func @main(%a: !sbp.tensor<512x512xf32, @node_mesh, [P, P]>) -> !sbp.tensor<512x512xf32, @node_mesh, [B, B]> {
  %0 = sbp.boxing %a : !sbp.tensor<512x512xf32, @node_mesh, [P, P]> -> !sbp.tensor<512x512xf32, @node_mesh, [B, B]>
  func.return %0 : !sbp.tensor<512x512xf32, @node_mesh, [B, B]>
}
