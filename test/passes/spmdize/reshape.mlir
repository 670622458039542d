// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize | sbp-opt | filecheck %s
// RUN: sbp-run %s --entry uneven --check | filecheck %s --check-prefix=SIM

// sbp.reshape's local output shape cannot be derived from its local input shape alone, so it
// always keeps its per-rank table, as the `local_shapes` property (even when every rank agrees).

sbp.placement @p "cpu" [0, 1]

// 6x4 S(0) -> 24 S(0): every rank reshapes 3x4 into 12.
// CHECK-LABEL: func.func @even(
// CHECK-SAME:    %a: tensor<3x4xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 6, 4>}
// CHECK-NEXT:    %[[R:.*]] = sbp.reshape %a {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>, local_shapes = [array<i64: 12>, array<i64: 12>]} : tensor<3x4xf32> -> tensor<12xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<12xf32>
func.func @even(%a: !sbp.tensor<6x4xf32, @p, [S(0)]>) -> !sbp.tensor<24xf32, @p> {
  %0 = sbp.reshape %a : !sbp.tensor<6x4xf32, @p, [S(0)]> -> !sbp.tensor<24xf32, @p>
  func.return %0 : !sbp.tensor<24xf32, @p>
}

// 5x4 S(0) -> 5x2x2 S(0): rank 0 reshapes 3x4 into 3x2x2, rank 1 2x4 into 2x2x2.
// CHECK-LABEL: func.func @uneven(
// CHECK-SAME:    %a: tensor<?x4xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 5, 4>, sbp.local_shapes = [array<i64: 3, 4>, array<i64: 2, 4>]}
// CHECK-NEXT:    %[[R:.*]] = sbp.reshape %a {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>, local_shapes = [array<i64: 3, 2, 2>, array<i64: 2, 2, 2>]} : tensor<?x4xf32> -> tensor<?x2x2xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<?x2x2xf32>
// SIM: check: OK
func.func @uneven(%a: !sbp.tensor<5x4xf32, @p, [S(0)]>) -> !sbp.tensor<5x2x2xf32, @p> {
  %0 = sbp.reshape %a : !sbp.tensor<5x4xf32, @p, [S(0)]> -> !sbp.tensor<5x2x2xf32, @p>
  func.return %0 : !sbp.tensor<5x2x2xf32, @p>
}

// 5x4 S(0) -> 20 cannot stay split (rows of 4 on 3 | 2 ranks do not make a balanced split of 20):
// the input is gathered first and the reshape runs on B.
// CHECK-LABEL: func.func @gathered(
// CHECK-NEXT:    %[[G:.*]] = sbp.all_gather %a {mesh_axes = array<i64: 0>, placement = @p, src_sbp = #sbp.nd<[S(0)]>, dst_sbp = #sbp.nd<[B]>, global_shape = array<i64: 5, 4>} : tensor<?x4xf32> -> tensor<5x4xf32>
// CHECK-NEXT:    %[[R:.*]] = sbp.reshape %[[G]] {sbp.signature = #sbp.sig<[B] -> [B]>, local_shapes = [array<i64: 20>, array<i64: 20>]} : tensor<5x4xf32> -> tensor<20xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<20xf32>
func.func @gathered(%a: !sbp.tensor<5x4xf32, @p, [S(0)]>) -> !sbp.tensor<20xf32, @p> {
  %0 = sbp.reshape %a : !sbp.tensor<5x4xf32, @p, [S(0)]> -> !sbp.tensor<20xf32, @p>
  func.return %0 : !sbp.tensor<20xf32, @p>
}
