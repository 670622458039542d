// RUN: sbp-run %s --check --kernels ascendc-cpu | filecheck %s
// RUN: sbp-run %s --check --kernels ascendc-cpu --seed 3 | filecheck %s
// REQUIRES: cxx

// int16 fmod through the emitted Ascend C kernels on a 2x2 mesh with uneven shards. The random inputs
// are integers in [-10, 10], so divisors of 0 occur (the kernel's CAST_RINT of NaN gives 0, as the
// reference does). Scalars 3 and -3.

sbp.placement @q "cpu" [[0, 1], [2, 3]]

func.func @main(%x: !sbp.tensor<5x7xi16, @q, [S(0), S(1)]>, %r: !sbp.tensor<7xi16, @q, [B, B]>,
                %c: !sbp.tensor<5x1xi16, @q, [S(0), B]>, %y: !sbp.tensor<5x7xi16, @q, [S(0), S(1)]>)
    -> (!sbp.tensor<5x7xi16, @q>, !sbp.tensor<5x7xi16, @q>, !sbp.tensor<5x7xi16, @q>, !sbp.tensor<5x7xi16, @q>, !sbp.tensor<5x7xi16, @q>) {
  %0 = sbp.fmod %x, %r : !sbp.tensor<5x7xi16, @q, [S(0), S(1)]>, !sbp.tensor<7xi16, @q, [B, B]> -> !sbp.tensor<5x7xi16, @q>
  %1 = sbp.fmod %x, %c : !sbp.tensor<5x7xi16, @q, [S(0), S(1)]>, !sbp.tensor<5x1xi16, @q, [S(0), B]> -> !sbp.tensor<5x7xi16, @q>
  %2 = sbp.fmod %x, %y : !sbp.tensor<5x7xi16, @q, [S(0), S(1)]>, !sbp.tensor<5x7xi16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xi16, @q>
  %3 = sbp.fmod_scalar %x, 3 : i16 : !sbp.tensor<5x7xi16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xi16, @q>
  %4 = sbp.fmod_scalar %x, -3 : i16 : !sbp.tensor<5x7xi16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xi16, @q>
  func.return %0, %1, %2, %3, %4 : !sbp.tensor<5x7xi16, @q>, !sbp.tensor<5x7xi16, @q>, !sbp.tensor<5x7xi16, @q>, !sbp.tensor<5x7xi16, @q>, !sbp.tensor<5x7xi16, @q>
}

// CHECK:      {{^}}all_slice mesh_axes=[1] [B, B]->[B, S(0)] i16[7]: bytes sent per rank [0, 0, 0, 0]{{$}}
// CHECK:      {{^}}ascendc fmod vs C fmod: max abs deviation 0, 0 of 175 elements differ{{$}}
// CHECK:      {{^}}check: OK ({{.*}}){{$}}
