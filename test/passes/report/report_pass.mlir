// RUN: sbp-opt %s -p report -o %t.ir 2> %t.pass
// RUN: sbp-opt %s --sbp-report -o %t.flag.ir 2> %t.flag
// RUN: cmp %t.pass %t.flag
// RUN: sbp-opt %s -o %t.plain.ir
// RUN: cmp %t.ir %t.plain.ir
// RUN: filecheck %s --input-file=%t.pass
// RUN: sbp-opt %s -p 'report{rule=cost format=json}' -o /dev/null 2>&1 | filecheck %s --check-prefix=JSON
// RUN: sbp-opt %s -p 'report{format=dot planner=oneflow}' -o /dev/null 2>&1 | filecheck %s --check-prefix=DOT
// RUN: sbp-opt %s -p 'infer-sbp,report' -o /dev/null 2>&1 | filecheck %s --check-prefix=AFTER
// RUN: not sbp-opt %s -p 'report{mem=1MiB}' 2>&1 | filecheck %s --check-prefix=MEM
// RUN: not sbp-opt %s -p 'infer-sbp,materialize-boxing,lower-boxing,spmdize,report' 2>&1 | filecheck %s --check-prefix=RANK

// The `report` pass prints the `--sbp-report` of the module where it stands in the pipeline, on
// stderr, byte for byte as the flag does, and leaves the IR as it was. After `infer-sbp` it reports
// the inferred program (the same choice: the result types written by inference are kept). It takes
// infer-sbp's `rule` and `mem` (rule=global only) and a `format`; it cannot follow `spmdize`.

sbp.placement @p "cpu" [0, 1]
func.func @main(%t1: !sbp.tensor<2x4xf32, @p, [S(0)]>, %t2: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p> {
  %s = sbp.add %t1, %t2 : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p>
  func.return %s : !sbp.tensor<2x4xf32, @p>
}

// CHECK:      // sbp-report (rule=oneflow)
// CHECK-NEXT: total rule=oneflow: 7.200 us modelled, 16 bytes sent (all ranks), 1 ops with boxing
// CHECK-NEXT: total rule=cost:
// CHECK-NEXT: op sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p)
// CHECK:      chosen: [S(0)], [S(0)] -> [S(0)]
// CHECK:      boxing: operand 1: [S(1)] -> [S(0)]

// JSON:      "rule": "cost"
// JSON:      "chosen": "[S(0)], [S(0)] -> [S(0)]"

// DOT:      digraph sbp_plan {
// DOT:      all_to_all

// AFTER:      op sbp.add(f32[2,4][S(0)] @p, f32[2,4][S(1)] @p)
// AFTER:      chosen: [S(0)], [S(0)] -> [S(0)]

// MEM: {{^}}error: pass 'report': mem=1MiB is an option of rule=global only (rule=oneflow){{$}}

// RANK: error: func.func @main is already per-rank (the output of spmdize): report needs the global program; leave it out
