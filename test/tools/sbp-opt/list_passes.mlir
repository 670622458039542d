// RUN: sbp-opt --list-passes | filecheck %s
// RUN: sbp-opt --help | filecheck %s --check-prefix=HELP

// `--list-passes` names every pass, its summary and each option with its allowed values and default;
// `--help` shows the same options beside each pass flag.

// CHECK:      {{^}}infer-sbp: Choose an ND-SBP signature for every op and type every result.
// CHECK-NEXT: {{^}}    rule=oneflow | cost{{.*}} (default oneflow)
// CHECK:      {{^}}materialize-boxing: Insert `sbp.boxing` ops
// CHECK:      {{^}}lower-boxing: Rewrite each `sbp.boxing` into single-step collectives.
// CHECK-NEXT: {{^}}    planner=optimal | oneflow (default optimal)
// CHECK:      {{^}}spmdize: Rewrite the global program into the per-rank program on local shapes.
// CHECK:      {{^}}report: Write the SBP report of the module, as it stands in the pipeline, to stderr.
// CHECK-NEXT: {{^}}    rule=oneflow | cost | global (default oneflow)
// CHECK-NEXT: {{^}}    mem=BYTES (rule=global only; e.g. 64MiB, 2GiB){{.*}}
// CHECK-NEXT: {{^}}    time-limit=SECONDS (rule=global only; per HiGHS run){{.*}}
// CHECK-NEXT: {{^}}    format=text | json | dot (default text)
// CHECK-NEXT: {{^}}    planner=optimal | oneflow (default optimal)
// CHECK:      {{^}}lower-to-ascendc:
// CHECK-NEXT: {{^}}    soc=ascend910b | {{.*}}(default ascend910b)

// HELP: -o OUT, --output-file OUT
// HELP: write the program to OUT ('-', the default, is stdout)
// HELP: --pass-pipeline PIPELINE
// HELP: passes (run in the order written; options in MLIR syntax):
// HELP: --infer-sbp [OPTIONS]
// HELP-NEXT: run infer-sbp; options: rule=oneflow | cost
// HELP: --lower-boxing [OPTIONS]
// HELP-NEXT: run lower-boxing; options: planner=optimal | oneflow
