// RUN: sbp-opt %s -p "infer-sbp{rule=global}" | filecheck %s
// RUN: sbp-opt %s -p "infer-sbp{rule=global}" | sbp-opt | filecheck %s
// RUN: sbp-opt %s -p "infer-sbp{rule=global}" --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=FREE
// RUN: sbp-opt %s -p "infer-sbp{rule=global mem=4MiB}" | filecheck %s --check-prefix=MEM
// RUN: sbp-opt %s -p "infer-sbp{rule=global mem=4MiB}" --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: sbp-opt %s -p "infer-sbp{rule=global mem=4MiB}" --sbp-report=json 2>&1 >/dev/null | filecheck %s --check-prefix=JSON
// RUN: sbp-opt %s -p "infer-sbp{rule=global mem=4MiB}" --sbp-report=dot 2>&1 >/dev/null | filecheck %s --check-prefix=DOTMEM
// RUN: sbp-run %s --pipeline "infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize" --entry mlp --check | filecheck %s --check-prefix=SIM
// RUN: sbp-run %s --pipeline "infer-sbp{rule=global mem=4MiB},materialize-boxing,lower-boxing,spmdize" --entry mlp --check | filecheck %s --check-prefix=SIM

// rule=global decides the free weights of an MLP on a 2x4 npu mesh: %w1 is written without an
// SBP, %w2 with mesh axis 0 fixed to B and axis 1 free (`?`); the function type is updated.
// Without a budget, replicated weights and the batch split 8 ways (x [S(0), B] -> [S(0), S(0)] is a
// local slice) compute as fast as any tensor-parallel split and need one all-gather of the result.
// With mem=4MiB the 16 MiB of replicated weights do not fit: the search picks Megatron's layout,
// w1 column-split and w2 row-split on the tensor-parallel axis, one all-reduce of the result
// (to_global plans it as reduce-scatter + all-gather).

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %w1: !sbp.tensor<512x2048xf32, @m, [B, B]>
// CHECK-SAME:    %w2: !sbp.tensor<2048x512xf32, @m, [B, B]>
// CHECK-SAME:    -> !sbp.tensor<512x512xf32, @m, [S(0), B]>
// CHECK:         sbp.matmul %x, %w1 {sbp.signature = #sbp.sig<[S(0), B], [B, B] -> [S(0), B]>}
// CHECK:         sbp.gelu %h {sbp.signature = #sbp.sig<[S(0), B] -> [S(0), B]>}
// CHECK:         sbp.matmul %g, %w2 {sbp.signature = #sbp.sig<[S(0), B], [B, B] -> [S(0), B]>}

// MEM-LABEL: func.func @mlp(
// MEM-SAME:    %w1: !sbp.tensor<512x2048xf32, @m, [B, S(1)]>
// MEM-SAME:    %w2: !sbp.tensor<2048x512xf32, @m, [B, S(0)]>
// MEM:         sbp.matmul %x, %w1 {sbp.signature = #sbp.sig<[S(0), B], [B, S(1)] -> [S(0), S(1)]>}
// MEM:         sbp.gelu %h {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>}
// MEM:         sbp.matmul %g, %w2 {sbp.signature = #sbp.sig<[S(0), S(1)], [B, S(0)] -> [S(0), P]>}

// REPORT:      // sbp-report (rule=global)
// REPORT:      global: objective {{[0-9.]+}} us = compute {{[0-9.]+}} us + communication {{[0-9.]+}} us; memory 3670016 bytes (3.5 MiB) per device, budget 4194304 bytes (4.0 MiB)
// REPORT-NEXT: global: solver lagrangian+fixing+knapsack in {{[0-9.]+}} s; lower bound {{[0-9.]+}} us, gap 0.0000 %
// REPORT-NEXT: global: free argument %w1 = [B, S(1)]
// REPORT-NEXT: global: free argument %w2 = [B, S(0)]

// JSON:      "totals": {
// JSON:        "global": {
// JSON:      "global": {
// JSON-NEXT:   "objective_s": {{[0-9.e-]+}},
// JSON-NEXT:   "compute_s": {{[0-9.e-]+}},
// JSON-NEXT:   "comm_s": {{[0-9.e-]+}},
// JSON-NEXT:   "memory_bytes": 3670016,
// JSON-NEXT:   "mem_budget": 4194304,
// JSON-NEXT:   "lower_bound_s": {{[0-9.e-]+}},
// JSON-NEXT:   "gap": 0.0,
// JSON-NEXT:   "solver": "lagrangian+fixing+knapsack",
// JSON-NEXT:   "solve_s": {{[0-9.e-]+}},
// JSON-NEXT:   "free_args": {
// JSON-NEXT:     "%w1": "[B, S(1)]",
// JSON-NEXT:     "%w2": "[B, S(0)]"
// JSON-NEXT:   },

// FREE:      global: objective {{[0-9.]+}} us = compute {{[0-9.]+}} us + communication 0.000 us; memory 13107200 bytes (12.5 MiB) per device, budget none
// FREE-NEXT: global: solver elimination in {{[0-9.]+}} s; lower bound {{[0-9.]+}} us, gap 0.0000 %
// FREE-NEXT: global: free argument %w1 = [B, B]
// FREE-NEXT: global: free argument %w2 = [B, B]
// FREE-NEXT: global: op sbp.matmul(f32[512,512][S(0), B] @m, f32[512,2048][B, B] @m): chose [S(0), B], [B, B] -> [S(0), B]; best local [S(0), B], [B, S(1)] -> [S(0), S(1)] is {{[0-9.]+}} us cheaper there

// The plan drawn is the pipeline's, within its budget.
// DOTMEM: f0_arg1 [shape=invhouse, label="%w1\nf32[512,2048] [B, S(1)]"];
// DOTMEM: label="rule=global, planner=optimal: 1 collective(s), 6.0 MiB sent (all ranks)";

// SIM: check: OK

sbp.placement @m "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]

func.func @mlp(%x: !sbp.tensor<512x512xf32, @m, [S(0), B]>, %w1: !sbp.tensor<512x2048xf32, @m>,
               %w2: !sbp.tensor<2048x512xf32, @m, [B, ?]>) -> !sbp.tensor<512x512xf32, @m, [S(0), B]> {
  %h = sbp.matmul %x, %w1 : !sbp.tensor<512x512xf32, @m, [S(0), B]>, !sbp.tensor<512x2048xf32, @m> -> !sbp.tensor<512x2048xf32, @m>
  %g = sbp.gelu %h : !sbp.tensor<512x2048xf32, @m> -> !sbp.tensor<512x2048xf32, @m>
  %y = sbp.matmul %g, %w2 : !sbp.tensor<512x2048xf32, @m>, !sbp.tensor<2048x512xf32, @m, [B, ?]> -> !sbp.tensor<512x512xf32, @m>
  %r = sbp.to_global %y : !sbp.tensor<512x512xf32, @m> -> !sbp.tensor<512x512xf32, @m, [S(0), B]>
  func.return %r : !sbp.tensor<512x512xf32, @m, [S(0), B]>
}
