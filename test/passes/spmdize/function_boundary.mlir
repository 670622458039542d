// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize | sbp-opt | filecheck %s
// RUN: sbp-opt %s -p infer-sbp,materialize-boxing,lower-boxing,spmdize --print-op-generic | sbp-opt | filecheck %s

// The per-rank function keeps its global contract as attributes: `sbp.placement = @p` on the
// function, and on every argument and result `sbp.sbp` (its ND-SBP) and `sbp.global_shape`; its
// types become local. The printed output re-parses, also from the generic form.

sbp.placement @p "cpu" [0, 1]
sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]

// The seed: t2 (S(1)) all-to-all'd to S(0); the result is S(0).
// CHECK-LABEL: func.func @seed(
// CHECK-SAME:    %t1: tensor<1x4xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 2, 4>},
// CHECK-SAME:    %t2: tensor<2x2xf32> {sbp.sbp = #sbp.nd<[S(1)]>, sbp.global_shape = array<i64: 2, 4>})
// CHECK-SAME:    -> (tensor<1x4xf32> {sbp.sbp = #sbp.nd<[S(0)]>, sbp.global_shape = array<i64: 2, 4>})
// CHECK-SAME:    attributes {sbp.placement = @p} {
// CHECK-NEXT:    %[[A:.*]] = sbp.all_to_all %t2 {mesh_axes = array<i64: 0>, placement = @p, src_sbp = #sbp.nd<[S(1)]>, dst_sbp = #sbp.nd<[S(0)]>, global_shape = array<i64: 2, 4>} : tensor<2x2xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[T3:.*]] = sbp.add %t1, %[[A]] {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>} : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    func.return %[[T3]] : tensor<1x4xf32>
func.func @seed(%t1: !sbp.tensor<2x4xf32, @p, [S(0)]>, %t2: !sbp.tensor<2x4xf32, @p, [S(1)]>) -> !sbp.tensor<2x4xf32, @p> {
  %t3 = sbp.add %t1, %t2 : !sbp.tensor<2x4xf32, @p, [S(0)]>, !sbp.tensor<2x4xf32, @p, [S(1)]> -> !sbp.tensor<2x4xf32, @p>
  func.return %t3 : !sbp.tensor<2x4xf32, @p>
}

// Megatron MLP on the 2x4 mesh (examples/mlp_tp.mlir, smaller): several arguments, a 1-D bias,
// f16. The second matmul gives a partial sum (S(0), P) that the bias add consumes as (S(0), S(0))
// after a reduce-scatter over the tensor-parallel mesh axis; the result attributes carry the
// inferred ND-SBP of the returned value.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %x: tensor<4x16xf16> {sbp.sbp = #sbp.nd<[S(0), B]>, sbp.global_shape = array<i64: 8, 16>},
// CHECK-SAME:    %w1: tensor<16x8xf16> {sbp.sbp = #sbp.nd<[B, S(1)]>, sbp.global_shape = array<i64: 16, 32>},
// CHECK-SAME:    %w2: tensor<8x16xf16> {sbp.sbp = #sbp.nd<[B, S(0)]>, sbp.global_shape = array<i64: 32, 16>},
// CHECK-SAME:    %b2: tensor<16xf16> {sbp.sbp = #sbp.nd<[B, B]>, sbp.global_shape = array<i64: 16>})
// CHECK-SAME:    -> (tensor<1x16xf16> {sbp.sbp = #sbp.nd<[S(0), S(0)]>, sbp.global_shape = array<i64: 8, 16>})
// CHECK-SAME:    attributes {sbp.placement = @mesh}
// CHECK:         sbp.matmul %x, %w1 {{.*}} : tensor<4x16xf16>, tensor<16x8xf16> -> tensor<4x8xf16>
// CHECK:         %[[Y:.*]] = sbp.matmul {{.*}} : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
// CHECK-NEXT:    sbp.reduce_scatter %[[Y]] {mesh_axes = array<i64: 1>, placement = @mesh, src_sbp = #sbp.nd<[S(0), P]>, dst_sbp = #sbp.nd<[S(0), S(0)]>, global_shape = array<i64: 8, 16>} : tensor<4x16xf16> -> tensor<1x16xf16>
// CHECK:         func.return {{.*}} : tensor<1x16xf16>
func.func @mlp(%x: !sbp.tensor<8x16xf16, @mesh, [S(0), B]>, %w1: !sbp.tensor<16x32xf16, @mesh, [B, S(1)]>,
               %w2: !sbp.tensor<32x16xf16, @mesh, [B, S(0)]>, %b2: !sbp.tensor<16xf16, @mesh, [B, B]>) -> !sbp.tensor<8x16xf16, @mesh> {
  %h = sbp.matmul %x, %w1 : !sbp.tensor<8x16xf16, @mesh, [S(0), B]>, !sbp.tensor<16x32xf16, @mesh, [B, S(1)]> -> !sbp.tensor<8x32xf16, @mesh>
  %a = sbp.relu %h : !sbp.tensor<8x32xf16, @mesh> -> !sbp.tensor<8x32xf16, @mesh>
  %y = sbp.matmul %a, %w2 : !sbp.tensor<8x32xf16, @mesh>, !sbp.tensor<32x16xf16, @mesh, [B, S(0)]> -> !sbp.tensor<8x16xf16, @mesh>
  %yb = sbp.add %y, %b2 : !sbp.tensor<8x16xf16, @mesh>, !sbp.tensor<16xf16, @mesh, [B, B]> -> !sbp.tensor<8x16xf16, @mesh>
  func.return %yb : !sbp.tensor<8x16xf16, @mesh>
}

// A 0-d value: a B scalar is a rank-0 local tensor with an empty global shape.
// CHECK-LABEL: func.func @scalar(
// CHECK-SAME:    %s: tensor<f32> {sbp.sbp = #sbp.nd<[B]>, sbp.global_shape = array<i64>}
// CHECK-SAME:    -> (tensor<f32> {sbp.sbp = #sbp.nd<[B]>, sbp.global_shape = array<i64>})
// CHECK-SAME:    attributes {sbp.placement = @p}
func.func @scalar(%s: !sbp.tensor<f32, @p, [B]>) -> !sbp.tensor<f32, @p> {
  %0 = sbp.neg %s : !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<f32, @p>
  func.return %0 : !sbp.tensor<f32, @p>
}
