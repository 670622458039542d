// RUN: sbp-opt %examples/gpt_block.mlir --infer-sbp=rule=global --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=TEXT
// RUN: sbp-opt %examples/gpt_block.mlir --infer-sbp=rule=global --sbp-report=json 2>&1 >/dev/null | filecheck %s --check-prefix=JSON
// RUN: sbp-opt %examples/gpt_block.mlir --infer-sbp=rule=global --sbp-report=dot 2>&1 >/dev/null | filecheck %s --check-prefix=DOT
// RUN: sbp-opt %examples/gpt_block.mlir --infer-sbp=rule=global --sbp-report > %t.report.mlir 2>/dev/null
// RUN: sbp-opt %examples/gpt_block.mlir --infer-sbp=rule=global > %t.plain.mlir
// RUN: cmp %t.report.mlir %t.plain.mlir
// RUN: sbp-opt %examples/gpt_block.mlir --infer-sbp="rule=global mem=3932160" --sbp-report 2>&1 >/dev/null | filecheck %s --check-prefix=MEM
// RUN: not sbp-opt %examples/gpt_block.mlir --infer-sbp="rule=global mem=100KiB" 2>&1 | filecheck %s --check-prefix=SMALL
// RUN: not sbp-opt %examples/gpt_block.mlir --infer-sbp="rule=global mem=100KiB" --sbp-report 2>&1 | filecheck %s --check-prefix=SMALL
// RUN: not sbp-opt %examples/gpt_block.mlir --infer-sbp="rule=global mem=100KiB" --sbp-report=dot 2>&1 | filecheck %s --check-prefix=SMALL
// RUN: not sbp-opt %examples/gpt_block.mlir --infer-sbp="rule=oneflow mem=4MiB" --sbp-report 2>&1 | filecheck %s --check-prefix=OPTION

// The rule=global report of examples/gpt_block.mlir (weights free, npu figures), in every format:
// without a budget the search keeps every weight replicated and sends nothing; the report says so
// and, per op, what splitting further would have saved locally (compute only: the split is free, but
// the result must be all-gathered back to [S(0), B]). With --sbp-report the program is still written
// byte for byte as without. With ¼ of the weights + 3 MiB the weights no longer all fit replicated.
// A budget no plan fits is the same located error with or without the report, naming the smallest.

// TEXT:      // sbp-report (rule=global)
// TEXT:      total rule=global: 0.000 us modelled, 0 bytes sent (all ranks), 0 ops with boxing
// TEXT-NEXT: total rule=oneflow: not available (func.func @main: argument 1 (f32[256][?] @mesh) has no SBP; {{.*}})
// TEXT-NEXT: total rule=cost: not available (func.func @main: argument 1 (f32[256][?] @mesh) has no SBP; {{.*}})
// TEXT-NEXT: global: objective 6.894 us = compute 6.894 us + communication 0.000 us; memory 4460544 bytes (4.3 MiB) per device, budget none
// TEXT-NEXT: global: solver elimination+bound(elimination) in {{[0-9.]+}} s; lower bound 6.894 us, gap 0.0000 %
// TEXT-NEXT: global: free argument %ln1_g = [B, B]
// TEXT-NEXT: global: free argument %ln1_b = [B, B]
// TEXT-NEXT: global: free argument %wq = [B, B]
// TEXT-NEXT: global: free argument %wk = [B, B]
// TEXT-NEXT: global: free argument %wv = [B, B]
// TEXT-NEXT: global: free argument %wo = [B, B]
// TEXT-NEXT: global: free argument %ln2_g = [B, B]
// TEXT-NEXT: global: free argument %ln2_b = [B, B]
// TEXT-NEXT: global: free argument %w1 = [B, B]
// TEXT-NEXT: global: free argument %w2 = [B, B]
// TEXT-NEXT: global: %n1's shared boxing has no exact factor (it would exceed 1000000 entries): bounded per consuming edge, see the gap
// TEXT-NEXT: global: op sbp.layer_norm(f32[8,32,256][S(0), B] @mesh, f32[256][B, B] @mesh, f32[256][B, B] @mesh): chose [S(0), B], [B, B], [B, B] -> [S(0), B]; best local [S(0), S(0)], [B, B], [B, B] -> [S(0), S(0)] is 0.123 us cheaper there (compute +0.123 us, communication +0.000 us)
// TEXT-NEXT: global: op sbp.matmul(f32[8,32,256][S(0), B] @mesh, f32[256,256][B, B] @mesh): chose [S(0), B], [B, B] -> [S(0), B]; best local [S(0), B], [B, S(1)] -> [S(0), S(2)] is 0.184 us cheaper there (compute +0.184 us, communication +0.000 us)
// TEXT:      global: op sbp.matmul(f32[8,32,1024][S(0), B] @mesh, f32[1024,256][B, B] @mesh): chose [S(0), B], [B, B] -> [S(0), B]; best local [S(0), S(2)], [B, S(0)] -> [S(0), P] is 0.737 us cheaper there (compute +0.737 us, communication +0.000 us)
// The per-op detail follows the totals and the global summary.
// TEXT-NEXT: op sbp.layer_norm(

// JSON:      "rule": "global",
// JSON:      "totals": {
// JSON-NEXT:   "global": {
// JSON-NEXT:     "modelled_us": 0.0,
// JSON-NEXT:     "bytes_sent_all_ranks": 0.0,
// JSON-NEXT:     "ops_with_boxing": 0
// JSON:      "global": {
// JSON-NEXT:   "objective_s": 6.89408e-06,
// JSON-NEXT:   "compute_s": 6.89408e-06,
// JSON-NEXT:   "comm_s": 0.0,
// JSON-NEXT:   "memory_bytes": 4460544,
// JSON-NEXT:   "mem_budget": null,
// JSON-NEXT:   "lower_bound_s": 6.89408e-06,
// JSON-NEXT:   "gap": 0.0,
// JSON-NEXT:   "solver": "elimination+bound(elimination)",
// JSON-NEXT:   "solve_s": {{[0-9.e-]+}},
// JSON-NEXT:   "free_args": {
// JSON-NEXT:     "%ln1_g": "[B, B]",
// JSON:          "%w2": "[B, B]"
// JSON-NEXT:   },
// JSON-NEXT:   "differs": [
// JSON-NEXT:     {
// JSON-NEXT:       "op": "sbp.layer_norm(f32[8,32,256][S(0), B] @mesh, f32[256][B, B] @mesh, f32[256][B, B] @mesh)",
// JSON-NEXT:       "chosen": "[S(0), B], [B, B], [B, B] -> [S(0), B]",
// JSON-NEXT:       "best_local": "[S(0), S(0)], [B, B], [B, B] -> [S(0), S(0)]",
// JSON-NEXT:       "local_extra_us": 0.12288,
// JSON-NEXT:       "compute_extra_us": 0.12288,
// JSON-NEXT:       "comm_extra_us": 0.0

// DOT:      digraph sbp_plan {
// DOT:        f0_arg9 [shape=invhouse, label="%w1\nf32[256,1024] [B, B]"];
// DOT:        label="rule=global, planner=optimal: 0 collective(s), 0 B sent (all ranks)";

// MEM:      // sbp-report (rule=global)
// MEM:      global: objective 12.721 us = compute 3.200 us + communication 9.521 us; memory {{[0-9]+}} bytes ({{[0-9.]+}} MiB) per device, budget 3932160 bytes (3.8 MiB)
// MEM-NEXT: global: solver lagrangian+fixing+knapsack+highs(shared boxing bounded) in {{[0-9.]+}} s; lower bound 12.721 us, gap 0.0000 %
// MEM-NEXT: global: free argument %ln1_g = [B, B]

// SMALL:     gpt_block.mlir:16:1: error: func.func @main: mem=102400 bytes (100.0 KiB) is too small; the smallest budget this function fits is 819712 bytes (800.5 KiB)
// SMALL-NOT: Traceback

// OPTION: error: pass 'infer-sbp': mem=4MiB is an option of rule=global only (rule=oneflow)
