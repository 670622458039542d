// RUN: sbp-run %s --check --kernels ascendc-cpu | filecheck %s
// RUN: sbp-run %s --check --kernels ascendc-cpu --seed 7 | filecheck %s
// RUN: sbp-run %s --check --kernels ascendc-cpu --entry big | filecheck %s --check-prefix=BIG
// REQUIRES: cxx

// FmodTensor / FmodScalar (f32) through the emitted Ascend C kernels on the CPU shim, per rank, on a
// 2x2 mesh with uneven local shapes (5 rows -> 3 + 2, 7 columns -> 4 + 3), judged as C fmod within the
// TBE formula's rounding (SPEC §4.3; the dyadic default inputs give signed-zero differences only). `other` (7,) is broadcast on both mesh axes and sliced along mesh
// axis 1 to each rank's columns (key 2); (5, 1) is split with the rows (key 2, broadcast inner dim);
// the same-shape fmod is key 1, the scalar key 0. The IR's fmod is C fmod: the line before the verdict gives
// the TBE formula's largest deviation from it (fp32 rounding of q * other, a few ulp of the result).

sbp.placement @q "cpu" [[0, 1], [2, 3]]

func.func @main(%x: !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>, %r: !sbp.tensor<7xf32, @q, [B, B]>,
                %c: !sbp.tensor<5x1xf32, @q, [S(0), B]>, %y: !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>)
    -> (!sbp.tensor<5x7xf32, @q>, !sbp.tensor<5x7xf32, @q>, !sbp.tensor<5x7xf32, @q>, !sbp.tensor<5x7xf32, @q>) {
  %0 = sbp.fmod %x, %r : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>, !sbp.tensor<7xf32, @q, [B, B]> -> !sbp.tensor<5x7xf32, @q>
  %1 = sbp.fmod %x, %c : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>, !sbp.tensor<5x1xf32, @q, [S(0), B]> -> !sbp.tensor<5x7xf32, @q>
  %2 = sbp.fmod %x, %y : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>, !sbp.tensor<5x7xf32, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @q>
  %3 = sbp.fmod_scalar %x, 2.5 : f32 : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @q>
  func.return %0, %1, %2, %3 : !sbp.tensor<5x7xf32, @q>, !sbp.tensor<5x7xf32, @q>, !sbp.tensor<5x7xf32, @q>, !sbp.tensor<5x7xf32, @q>
}

// Multi-core shards (151 x 129 and smaller: 19479 elements, 1024 per core -> 20 cores, several tiles).
func.func @big(%x: !sbp.tensor<301x257xf32, @q, [S(0), S(1)]>, %r: !sbp.tensor<257xf32, @q, [B, B]>)
    -> (!sbp.tensor<301x257xf32, @q>, !sbp.tensor<301x257xf32, @q>) {
  %0 = sbp.fmod %x, %r : !sbp.tensor<301x257xf32, @q, [S(0), S(1)]>, !sbp.tensor<257xf32, @q, [B, B]> -> !sbp.tensor<301x257xf32, @q>
  %1 = sbp.fmod_scalar %x, -0.7 : f32 : !sbp.tensor<301x257xf32, @q, [S(0), S(1)]> -> !sbp.tensor<301x257xf32, @q>
  func.return %0, %1 : !sbp.tensor<301x257xf32, @q>, !sbp.tensor<301x257xf32, @q>
}

// CHECK:      {{^}}all_slice mesh_axes=[1] [B, B]->[B, S(0)] f32[7]: bytes sent per rank [0, 0, 0, 0]{{$}}
// CHECK:      {{^}}ascendc fmod vs C fmod: max abs deviation {{[0-9.e-]+}}{{( \(at .*\))?}}, {{[0-9]+}} of 140 elements differ{{$}}
// CHECK:      {{^}}check: OK ({{.*}}){{$}}

// BIG:        {{^}}all_slice mesh_axes=[1] [B, B]->[B, S(0)] f32[257]: bytes sent per rank [0, 0, 0, 0]{{$}}
// BIG:        {{^}}ascendc fmod vs C fmod: max abs deviation {{[0-9.e-]+}}{{( \(at .*\))?}}, {{[0-9]+}} of 154714 elements differ{{$}}
// BIG:        {{^}}check: OK ({{.*}}){{$}}
