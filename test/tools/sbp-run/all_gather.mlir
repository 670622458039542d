// RUN: sbp-run %s --pipeline "" --check | filecheck %s
// RUN: sbp-run %s --pipeline "" --check --seed 5 | filecheck %s

// A hand-lowered program run as is: S(0) -> B on a 1-D mesh of 2. Rank 0 holds rows 0-2 (3 rows,
// balanced split), rank 1 rows 3-4; each sends its rows to the other: 3*7*4 and 2*7*4 bytes.
// relu and the all_gather reorder no float sums, so the check is bitwise.

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<5x7xf32, @p, [S(0)]>) -> !sbp.tensor<5x7xf32, @p, [B]> {
  %0 = sbp.relu %x : !sbp.tensor<5x7xf32, @p, [S(0)]> -> !sbp.tensor<5x7xf32, @p, [S(0)]>
  %1 = sbp.all_gather %0 {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @p, [S(0)]> -> !sbp.tensor<5x7xf32, @p, [B]>
  func.return %1 : !sbp.tensor<5x7xf32, @p, [B]>
}

// CHECK:      {{^}}all_gather mesh_axes=[0] S(0)->B f32[5,7]: bytes sent per rank [84, 56]{{$}}
// CHECK-NEXT: {{^}}total bytes sent: 140 (all ranks); cost model: 140{{$}}
// CHECK-NEXT: {{^}}check: OK ({{.*}}){{$}}
// CHECK-EMPTY:
