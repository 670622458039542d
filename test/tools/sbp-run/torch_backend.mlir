// RUN: sbp-run %s --pipeline "" --check --backend torch --repeat 2 | filecheck %s
// RUN: rm -rf %t && sbp-run %s --pipeline "" --check --backend torch --entry bf16 --save-outputs %t/torch | filecheck %s --check-prefix=BF16
// RUN: sbp-run %s --pipeline "" --entry bf16 --save-outputs %t/sim
// RUN: python -c "import numpy as np, sys; assert np.load(sys.argv[1] + '/result0.npy').tobytes() == np.load(sys.argv[2] + '/result0.npy').tobytes(); print('same bits')" %t/torch %t/sim | filecheck %s --check-prefix=SAME
// RUN: sbp-run %s --check --backend torch --kernels ascendc-cpu --entry fmod | filecheck %s --check-prefix=FMOD
// RUN: not sbp-run %s --backend torch --timeout 0 2>&1 | filecheck %s --check-prefix=TIMEOUT
// REQUIRES: torch, cxx

// The mesh_2x2 plan on forked torch.distributed ranks (gloo): the same bytes as the simulator, each
// collective's measured time beside the α-β model's, and the check against the global reference.
// bf16 partial sums are reduced in the simulator's member order, so the result is bitwise the same.
// --kernels ascendc-cpu: every rank runs fmod through the emitted Ascend C kernel (built once, the
// ranks taking turns), checked bit for bit against the TBE-formula reference.

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]> {
  %0 = sbp.all_gather %x {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @q, [B, S(1)]>
  %1 = sbp.all_to_all %0 {mesh_axes = array<i64: 1>} : !sbp.tensor<5x7xf32, @q, [B, S(1)]> -> !sbp.tensor<5x7xf32, @q, [B, S(0)]>
  %2 = sbp.all_slice %1 {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @q, [B, S(0)]> -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
  func.return %2 : !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
}

func.func @bf16(%x: !sbp.tensor<5x7xbf16, @q, [P, P]>) -> !sbp.tensor<5x7xbf16, @q, [B, B]> {
  %0 = sbp.all_reduce %x {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<5x7xbf16, @q, [P, P]> -> !sbp.tensor<5x7xbf16, @q, [B, B]>
  func.return %0 : !sbp.tensor<5x7xbf16, @q, [B, B]>
}

func.func @fmod(%x: !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>, %r: !sbp.tensor<7xf32, @q, [B, B]>) -> !sbp.tensor<5x7xf32, @q> {
  %0 = sbp.fmod %x, %r : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>, !sbp.tensor<7xf32, @q, [B, B]> -> !sbp.tensor<5x7xf32, @q>
  func.return %0 : !sbp.tensor<5x7xf32, @q>
}

// CHECK:      {{^}}all_gather mesh_axes=[0] [S(0), S(1)]->[B, S(1)] f32[5,7]: bytes sent per rank [48, 36, 32, 24]; measured {{[0-9.]+}} ms, model 0.007 ms{{$}}
// CHECK-NEXT: {{^}}all_to_all mesh_axes=[1] [B, S(1)]->[B, S(0)] f32[5,7]: bytes sent per rank [32, 36, 32, 36]; measured {{[0-9.]+}} ms, model 0.007 ms{{$}}
// CHECK-NEXT: {{^}}all_slice mesh_axes=[0] [B, S(0)]->[S(1), S(0)] f32[5,7]: bytes sent per rank [0, 0, 0, 0]; measured {{[0-9.]+}} ms, model 0.000 ms{{$}}
// CHECK-NEXT: {{^}}total bytes sent: 276 (all ranks); cost model: 276{{$}}
// CHECK-NEXT: {{^}}total collective time: measured {{[0-9.]+}} ms, model 0.014 ms (3 collectives, median of 2 runs, median over ranks){{$}}
// CHECK-NEXT: {{^}}check: OK ({{.*}}){{$}}

// BF16:      {{^}}all_reduce mesh_axes=[0, 1] [P, P]->[B, B] bf16[5,7]: bytes sent per rank [{{[0-9, ]+}}]; measured {{[0-9.]+}} ms, model {{[0-9.]+}} ms{{$}}
// BF16-NEXT: {{^}}total bytes sent: [[N:[0-9]+]] (all ranks); cost model: [[N]]{{$}}
// BF16:      {{^}}check: OK ({{.*}}){{$}}
// SAME: same bits

// FMOD:      {{^}}total bytes sent: [[N:[0-9]+]] (all ranks); cost model: [[N]]{{$}}
// FMOD:      {{^}}check: OK ({{.*}}){{$}}

// TIMEOUT: sbp-run: error: argument --timeout: expected a positive number of at most 86400, got '0'
