// RUN: sbp-run %examples/seed.mlir --check | filecheck %s --check-prefix=SEED
// RUN: sbp-run %examples/seed.mlir --check --pipeline infer-sbp,materialize-boxing,lower-boxing | filecheck %s --check-prefix=SEED

// The whole pipeline (default: infer-sbp, materialize-boxing, lower-boxing, spmdize) on the seed
// program: t2 is S(1) and the add runs on S(0), so t2 is all-to-all'ed (2x2 f32 per rank, each
// sends half: 8 bytes). The per-rank (spmd) program and the global lowered program give the same
// bytes.
// SEED:      {{^}}all_to_all mesh_axes=[0] S(1)->S(0) f32[2,4]: bytes sent per rank [8, 8]{{$}}
// SEED-NEXT: {{^}}total bytes sent: 16 (all ranks); cost model: 16{{$}}
// SEED-NEXT: {{^}}check: OK ({{.*}}){{$}}
