// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize | sbp-opt | filecheck %s

// Uneven splits: the balanced split gives the first n % k ranks one more element, so shards differ
// between ranks. Such a dim is dynamic (`?`) in the local type and the exact per-rank shapes are
// kept in `sbp.local_shapes` tables, one entry per rank in flat (row-major mesh) order, on the op
// (or, for an argument, in its attributes). Even dims stay static. The output re-parses (RUN 2).

sbp.placement @p "cpu" [0, 1]
sbp.placement @r "cpu" [[0, 1, 2], [3, 4, 5]]

// 5 rows on 2 ranks: 3 and 2. 6 columns on 2 ranks: 3 and 3 (static).
// CHECK-LABEL: func.func @rows_5_on_2(
// CHECK-SAME:    %a: tensor<?x6xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 5, 6>, sbp.local_shapes = [array<i64: 3, 6>, array<i64: 2, 6>]}
// CHECK-SAME:    %b: tensor<5x3xf32> {sbp.sbp = #sbp.nd<[S(1)]>, sbp.global_shape = array<i64: 5, 6>}
// CHECK-SAME:    -> (tensor<?x6xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 5, 6>}, tensor<5x3xf32> {sbp.sbp = #sbp.nd<[S(1)]>, sbp.global_shape = array<i64: 5, 6>})
// CHECK-SAME:    attributes {sbp.placement = @p}
// CHECK-NEXT:    %[[R:.*]] = sbp.relu %a {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>, sbp.local_shapes = [array<i64: 3, 6>, array<i64: 2, 6>]} : tensor<?x6xf32> -> tensor<?x6xf32>
// An even result needs no table.
// CHECK-NEXT:    %[[N:.*]] = sbp.neg %b {sbp.signature = #sbp.sig<[S(1)] -> [S(1)]>} : tensor<5x3xf32> -> tensor<5x3xf32>
// CHECK-NEXT:    func.return %[[R]], %[[N]] : tensor<?x6xf32>, tensor<5x3xf32>
func.func @rows_5_on_2(%a: !sbp.tensor<5x6xf32, @p, [S(0)]>, %b: !sbp.tensor<5x6xf32, @p, [S(1)]>) -> (!sbp.tensor<5x6xf32, @p>, !sbp.tensor<5x6xf32, @p>) {
  %0 = sbp.relu %a : !sbp.tensor<5x6xf32, @p, [S(0)]> -> !sbp.tensor<5x6xf32, @p>
  %1 = sbp.neg %b : !sbp.tensor<5x6xf32, @p, [S(1)]> -> !sbp.tensor<5x6xf32, @p>
  func.return %0, %1 : !sbp.tensor<5x6xf32, @p>, !sbp.tensor<5x6xf32, @p>
}

// 5x7 on the 2x3 mesh as (S(0), S(1)): rows 3 | 2 by mesh axis 0, columns 3 | 2 | 2 by mesh axis 1.
// Ranks 0..5 = (0,0) (0,1) (0,2) (1,0) (1,1) (1,2).
// CHECK-LABEL: func.func @grid_5x7_on_2x3(
// CHECK-SAME:    %a: tensor<?x?xf32> {sbp.sbp = #sbp.nd<[S(0), S(1)]>, sbp.global_shape = array<i64: 5, 7>, sbp.local_shapes = [array<i64: 3, 3>, array<i64: 3, 2>, array<i64: 3, 2>, array<i64: 2, 3>, array<i64: 2, 2>, array<i64: 2, 2>]}
// CHECK-SAME:    attributes {sbp.placement = @r}
// CHECK-NEXT:    %[[E:.*]] = sbp.exp %a {sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), S(1)]>, sbp.local_shapes = [array<i64: 3, 3>, array<i64: 3, 2>, array<i64: 3, 2>, array<i64: 2, 3>, array<i64: 2, 2>, array<i64: 2, 2>]} : tensor<?x?xf32> -> tensor<?x?xf32>
// Row sums of the 5x7 (S(0), S(1)) value: (S(0), P), local 3 | 2 rows of length 1 (keepdims).
// CHECK-NEXT:    %[[S:.*]] = sbp.reduce_sum %[[E]] {{{.*}}sbp.signature = #sbp.sig<[S(0), S(1)] -> [S(0), P]>, sbp.local_shapes = [array<i64: 3, 1>, array<i64: 3, 1>, array<i64: 3, 1>, array<i64: 2, 1>, array<i64: 2, 1>, array<i64: 2, 1>]{{.*}}} : tensor<?x?xf32> -> tensor<?x1xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<?x1xf32>
func.func @grid_5x7_on_2x3(%a: !sbp.tensor<5x7xf32, @r, [S(0), S(1)]>) -> !sbp.tensor<5x1xf32, @r> {
  %0 = sbp.exp %a : !sbp.tensor<5x7xf32, @r, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @r>
  %1 = sbp.reduce_sum %0 {axes = array<i64: 1>, keepdims} : !sbp.tensor<5x7xf32, @r> -> !sbp.tensor<5x1xf32, @r>
  func.return %1 : !sbp.tensor<5x1xf32, @r>
}

// Columns 7 on mesh axis 0 (4 | 3), then rows 5 on mesh axis 1 (2 | 2 | 1): (S(1), S(0)).
// CHECK-LABEL: func.func @transposed_grid(
// CHECK-SAME:    %a: tensor<?x?xf32> {sbp.sbp = #sbp.nd<[S(1), S(0)]>, sbp.global_shape = array<i64: 5, 7>, sbp.local_shapes = [array<i64: 2, 4>, array<i64: 2, 4>, array<i64: 1, 4>, array<i64: 2, 3>, array<i64: 2, 3>, array<i64: 1, 3>]}
// A tensor axis split on both mesh axes, (S(0), S(0)): 5 rows -> 3 | 2, then 3 -> 1 | 1 | 1 and 2 -> 1 | 1 | 0.
// CHECK-SAME:    %b: tensor<?x7xf32> {sbp.sbp = #sbp.nd<[S(0), S(0)]>, sbp.global_shape = array<i64: 5, 7>, sbp.local_shapes = [array<i64: 1, 7>, array<i64: 1, 7>, array<i64: 1, 7>, array<i64: 1, 7>, array<i64: 1, 7>, array<i64: 0, 7>]}
func.func @transposed_grid(%a: !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>, %b: !sbp.tensor<5x7xf32, @r, [S(0), S(0)]>) -> (!sbp.tensor<5x7xf32, @r, [S(1), S(0)]>, !sbp.tensor<5x7xf32, @r, [S(0), S(0)]>) {
  func.return %a, %b : !sbp.tensor<5x7xf32, @r, [S(1), S(0)]>, !sbp.tensor<5x7xf32, @r, [S(0), S(0)]>
}
