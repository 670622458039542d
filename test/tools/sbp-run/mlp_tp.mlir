// RUN: sbp-run %examples/mlp_tp.mlir --check | filecheck %s

// The MLP with Megatron tensor parallelism on a 2x4 mesh (f16), through the default pipeline:
// the measured bytes equal the cost model's, and the outputs match the reference within f16
// tolerances (split contractions add partial sums in another order).
// CHECK:      {{^}}total bytes sent: [[N:[0-9]+]] (all ranks); cost model: [[N]]{{$}}
// CHECK-NEXT: {{^}}check: OK ({{.*}}){{$}}
