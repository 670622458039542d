// RUN: sbp-run %s --pipeline "" --check | filecheck %s
// RUN: sbp-run %s --pipeline "" --check --entry ints | filecheck %s --check-prefix=INTS

// Partial inputs are distributed as random pieces (P: pieces summing to the value, P(max): pieces
// whose maximum is the value). An all-reduce over n ranks is a reduce-scatter of n flat pieces plus
// an all-gather of them: each rank sends (n-1)/n of its buffer twice.
// 4x6 f32 on 3 ranks: 96 bytes per rank, pieces of 32 bytes: 2*32 + 2*32 = 128 bytes each.
// The float sum is compared with a tolerance, the maximum bitwise.

sbp.placement @p "cpu" [0, 1, 2]
func.func @main(%s: !sbp.tensor<4x6xf32, @p, [P]>, %m: !sbp.tensor<4x6xf32, @p, [P(max)]>) -> (!sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<4x6xf32, @p, [B]>) {
  %0 = sbp.all_reduce %s {mesh_axes = array<i64: 0>} : !sbp.tensor<4x6xf32, @p, [P]> -> !sbp.tensor<4x6xf32, @p, [B]>
  %1 = sbp.all_reduce %m {mesh_axes = array<i64: 0>} : !sbp.tensor<4x6xf32, @p, [P(max)]> -> !sbp.tensor<4x6xf32, @p, [B]>
  func.return %0, %1 : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<4x6xf32, @p, [B]>
}

// CHECK:      {{^}}all_reduce mesh_axes=[0] P->B f32[4,6]: bytes sent per rank [128, 128, 128]{{$}}
// CHECK-NEXT: {{^}}all_reduce mesh_axes=[0] P(max)->B f32[4,6]: bytes sent per rank [128, 128, 128]{{$}}
// CHECK-NEXT: {{^}}total bytes sent: 768 (all ranks); cost model: 768{{$}}
// CHECK-NEXT: {{^}}check: OK ({{.*}}){{$}}

// Integers are exact. A matmul with the contraction axis split gives a partial sum; a reduce-scatter
// leaves each rank its rows: 4x4 i32 on 2 ranks, each sends the other's 2x4 rows (32 bytes).
func.func @ints(%a: !sbp.tensor<4x6xi32, @p2, [S(1)]>, %b: !sbp.tensor<6x4xi32, @p2, [S(0)]>) -> !sbp.tensor<4x4xi32, @p2, [S(0)]> {
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x6xi32, @p2, [S(1)]>, !sbp.tensor<6x4xi32, @p2, [S(0)]> -> !sbp.tensor<4x4xi32, @p2, [P]>
  %1 = sbp.reduce_scatter %0 {mesh_axes = array<i64: 0>} : !sbp.tensor<4x4xi32, @p2, [P]> -> !sbp.tensor<4x4xi32, @p2, [S(0)]>
  func.return %1 : !sbp.tensor<4x4xi32, @p2, [S(0)]>
}
sbp.placement @p2 "cpu" [0, 1]

// INTS:      {{^}}reduce_scatter mesh_axes=[0] P->S(0) i32[4,4]: bytes sent per rank [32, 32]{{$}}
// INTS-NEXT: {{^}}total bytes sent: 64 (all ranks); cost model: 64{{$}}
// INTS-NEXT: {{^}}check: OK ({{.*}}){{$}}
