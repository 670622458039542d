// RUN: sbp-run %s --pipeline "" --check | filecheck %s
// RUN: sbp-run %s --pipeline "" --check --entry merged | filecheck %s --check-prefix=MERGED

// (S(0), S(1)) -> (S(1), S(0)) on a 2x2 mesh, 5x7 f32.
// @main is the plan lower-boxing makes: all-gather on mesh axis 0, all-to-all on mesh axis 1, then a
// local slice on mesh axis 0 (a split may only change on the minor-most mesh axis splitting its
// tensor axis, so there is no two-step all-to-all route). @merged does it in one all-to-all over
// both mesh axes. Bytes are listed by flat rank (row-major over the mesh).

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]> {
  %0 = sbp.all_gather %x {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @q, [B, S(1)]>
  %1 = sbp.all_to_all %0 {mesh_axes = array<i64: 1>} : !sbp.tensor<5x7xf32, @q, [B, S(1)]> -> !sbp.tensor<5x7xf32, @q, [B, S(0)]>
  %2 = sbp.all_slice %1 {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @q, [B, S(0)]> -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
  func.return %2 : !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
}

func.func @merged(%x: !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]> {
  %0 = sbp.all_to_all %x {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
  func.return %0 : !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
}

// CHECK:      {{^}}all_gather mesh_axes=[0] [S(0), S(1)]->[B, S(1)] f32[5,7]: bytes sent per rank [48, 36, 32, 24]{{$}}
// CHECK-NEXT: {{^}}all_to_all mesh_axes=[1] [B, S(1)]->[B, S(0)] f32[5,7]: bytes sent per rank [32, 36, 32, 36]{{$}}
// CHECK-NEXT: {{^}}all_slice mesh_axes=[0] [B, S(0)]->[S(1), S(0)] f32[5,7]: bytes sent per rank [0, 0, 0, 0]{{$}}
// CHECK-NEXT: {{^}}total bytes sent: 276 (all ranks); cost model: 276{{$}}
// CHECK-NEXT: {{^}}check: OK ({{.*}}){{$}}

// MERGED:      {{^}}all_to_all mesh_axes=[0, 1] [S(0), S(1)]->[S(1), S(0)] f32[5,7]: bytes sent per rank [{{[0-9, ]+}}]{{$}}
// MERGED-NEXT: {{^}}total bytes sent: [[N:[0-9]+]] (all ranks); cost model: [[N]]{{$}}
// MERGED-NEXT: {{^}}check: OK ({{.*}}){{$}}
