// RUN: sbp-opt %s --sbp-report=dot -o %t.out 2> %t.dot
// RUN: filecheck %s --input-file %t.dot
// RUN: sbp-opt %s --lower-boxing=planner=oneflow --sbp-report=dot --disable-verify -o /dev/null 2>&1 | filecheck %s --check-prefix=PLANNER
// RUN: sbp-opt %s -o %t.plain
// RUN: diff %t.out %t.plain

// `--sbp-report=dot` draws the plan (infer-sbp, materialize-boxing, lower-boxing on a clone) as a
// Graphviz digraph on stderr: arguments with their SBP, ops with their signature, values as edges
// labelled with name, shape and SBP (dashed while partial), collectives filled with the bytes they
// send over all ranks (a step that sends nothing in a lighter colour). The printed program is the
// input, unchanged. The all-reduce of a partial 4x4 f32 (64 B on each rank) over 2 ranks: each rank
// sends 32 B in the reduce-scatter phase and 32 B in the all-gather phase, 128 B over both ranks.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x8xf32, @p, [S(1)]>, %b: !sbp.tensor<8x4xf32, @p, [S(0)]>) -> !sbp.tensor<4x4xf32, @p, [B]> {
  %m = sbp.matmul %a, %b : !sbp.tensor<4x8xf32, @p, [S(1)]>, !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4x4xf32, @p>
  %r = sbp.relu %m : !sbp.tensor<4x4xf32, @p> -> !sbp.tensor<4x4xf32, @p, [B]>
  func.return %r : !sbp.tensor<4x4xf32, @p, [B]>
}

// CHECK:      digraph sbp_plan {
// CHECK:        subgraph cluster_0 {
// CHECK-NEXT:     label="@f";
// CHECK-NEXT:     f0_arg0 [shape=invhouse, label="%a\nf32[4,8] [S(1)]"];
// CHECK-NEXT:     f0_arg1 [shape=invhouse, label="%b\nf32[8,4] [S(0)]"];
// CHECK-NEXT:     f0_op0 [label="sbp.matmul\n[S(1)], [S(0)] -> [P]", shape="box"];
// CHECK-NEXT:     f0_arg0 -> f0_op0 [label="%a f32[4,8] [S(1)]"];
// CHECK-NEXT:     f0_arg1 -> f0_op0 [label="%b f32[8,4] [S(0)]"];
// CHECK-NEXT:     f0_op1 [label="sbp.all_reduce mesh axes [0]\n[P] -> [B]\n128 B sent", style="filled", fillcolor="orange", shape="box"];
// CHECK-NEXT:     f0_op0 -> f0_op1 [label="%m f32[4,4] [P]", style=dashed];
// CHECK-NEXT:     f0_op2 [label="sbp.relu\n[B] -> [B]", shape="box"];
// CHECK-NEXT:     f0_op1 -> f0_op2 [label="f32[4,4] [B]"];
// CHECK-NEXT:     f0_op3 [label="func.return", shape="oval"];
// CHECK-NEXT:     f0_op2 -> f0_op3 [label="%r f32[4,4] [B]"];
// CHECK-NEXT:   }
// CHECK-NEXT:   label="rule=oneflow, planner=optimal: 1 collective(s), 128 B sent (all ranks)";

// PLANNER: label="rule=oneflow, planner=oneflow:
