// RUN: sbp-run %s --check --kernels ascendc-cpu | filecheck %s
// RUN: sbp-run %s --check --kernels ascendc-cpu --entry bf16 | filecheck %s --check-prefix=BF16
// REQUIRES: cxx

// f16 and bf16 fmod through the emitted Ascend C kernels (cast up to fp32, TBE formula, cast down: half
// CAST_NONE, bf16 CAST_RINT) on a 2x2 mesh with uneven shards, bit for bit against the global reference.
// The scalar is rounded to self's dtype first (0.1 is not representable in either).

sbp.placement @q "cpu" [[0, 1], [2, 3]]

func.func @main(%x: !sbp.tensor<5x7xf16, @q, [S(0), S(1)]>, %r: !sbp.tensor<7xf16, @q, [B, B]>,
                %c: !sbp.tensor<5x1xf16, @q, [S(0), B]>, %y: !sbp.tensor<5x7xf16, @q, [S(0), S(1)]>)
    -> (!sbp.tensor<5x7xf16, @q>, !sbp.tensor<5x7xf16, @q>, !sbp.tensor<5x7xf16, @q>, !sbp.tensor<5x7xf16, @q>, !sbp.tensor<5x7xf16, @q>) {
  %0 = sbp.fmod %x, %r : !sbp.tensor<5x7xf16, @q, [S(0), S(1)]>, !sbp.tensor<7xf16, @q, [B, B]> -> !sbp.tensor<5x7xf16, @q>
  %1 = sbp.fmod %x, %c : !sbp.tensor<5x7xf16, @q, [S(0), S(1)]>, !sbp.tensor<5x1xf16, @q, [S(0), B]> -> !sbp.tensor<5x7xf16, @q>
  %2 = sbp.fmod %x, %y : !sbp.tensor<5x7xf16, @q, [S(0), S(1)]>, !sbp.tensor<5x7xf16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf16, @q>
  %3 = sbp.fmod_scalar %x, 2.5 : f16 : !sbp.tensor<5x7xf16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf16, @q>
  %4 = sbp.fmod_scalar %x, 0.1 : f32 : !sbp.tensor<5x7xf16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf16, @q>
  func.return %0, %1, %2, %3, %4 : !sbp.tensor<5x7xf16, @q>, !sbp.tensor<5x7xf16, @q>, !sbp.tensor<5x7xf16, @q>, !sbp.tensor<5x7xf16, @q>, !sbp.tensor<5x7xf16, @q>
}

func.func @bf16(%x: !sbp.tensor<5x7xbf16, @q, [S(0), S(1)]>, %r: !sbp.tensor<7xbf16, @q, [B, B]>,
                %c: !sbp.tensor<5x1xbf16, @q, [S(0), B]>, %y: !sbp.tensor<5x7xbf16, @q, [S(0), S(1)]>)
    -> (!sbp.tensor<5x7xbf16, @q>, !sbp.tensor<5x7xbf16, @q>, !sbp.tensor<5x7xbf16, @q>, !sbp.tensor<5x7xbf16, @q>, !sbp.tensor<5x7xbf16, @q>) {
  %0 = sbp.fmod %x, %r : !sbp.tensor<5x7xbf16, @q, [S(0), S(1)]>, !sbp.tensor<7xbf16, @q, [B, B]> -> !sbp.tensor<5x7xbf16, @q>
  %1 = sbp.fmod %x, %c : !sbp.tensor<5x7xbf16, @q, [S(0), S(1)]>, !sbp.tensor<5x1xbf16, @q, [S(0), B]> -> !sbp.tensor<5x7xbf16, @q>
  %2 = sbp.fmod %x, %y : !sbp.tensor<5x7xbf16, @q, [S(0), S(1)]>, !sbp.tensor<5x7xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xbf16, @q>
  %3 = sbp.fmod_scalar %x, 2.5 : bf16 : !sbp.tensor<5x7xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xbf16, @q>
  %4 = sbp.fmod_scalar %x, 0.1 : f32 : !sbp.tensor<5x7xbf16, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xbf16, @q>
  func.return %0, %1, %2, %3, %4 : !sbp.tensor<5x7xbf16, @q>, !sbp.tensor<5x7xbf16, @q>, !sbp.tensor<5x7xbf16, @q>, !sbp.tensor<5x7xbf16, @q>, !sbp.tensor<5x7xbf16, @q>
}

// CHECK:      {{^}}all_slice mesh_axes=[1] [B, B]->[B, S(0)] f16[7]: bytes sent per rank [0, 0, 0, 0]{{$}}
// CHECK:      {{^}}ascendc fmod vs C fmod: max abs deviation 0, {{[0-9]+}} of 175 elements differ{{$}}
// CHECK:      {{^}}check: OK ({{.*}}){{$}}

// BF16:       {{^}}all_slice mesh_axes=[1] [B, B]->[B, S(0)] bf16[7]: bytes sent per rank [0, 0, 0, 0]{{$}}
// BF16:       {{^}}ascendc fmod vs C fmod: max abs deviation 0, {{[0-9]+}} of 175 elements differ{{$}}
// BF16:       {{^}}check: OK ({{.*}}){{$}}
