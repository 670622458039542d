// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Collectives: the SBP change read from the types must be the op's transition on every mesh axis
// in mesh_axes, and no other mesh axis may change (SPEC §2.4).

sbp.placement @p "cpu" [0, 1]
func.func @all_gather_b_to_b(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: collectives_invalid.mlir:[[# @LINE + 1]]:3: error: sbp.all_gather(f32[4,8][B] @p): [B] -> [B] on mesh axis 0 is B -> B, not the S(i) -> B of sbp.all_gather{{$}}
  %0 = sbp.all_gather %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @all_gather_s_to_p(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather(f32[4,8][S(0)] @p): [S(0)] -> [P] on mesh axis 0 is S(0) -> P, not the S(i) -> B of sbp.all_gather{{$}}
  %0 = sbp.all_gather %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [P]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @all_reduce_s_to_b(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_reduce(f32[4,8][S(0)] @p): [S(0)] -> [B] on mesh axis 0 is S(0) -> B, not the P(k) -> B of sbp.all_reduce{{$}}
  %0 = sbp.all_reduce %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @reduce_scatter_b_to_s(%a: !sbp.tensor<4x8xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_scatter(f32[4,8][B] @p): [B] -> [S(0)] on mesh axis 0 is B -> S(0), not the P(k) -> S(i) of sbp.reduce_scatter{{$}}
  %0 = sbp.reduce_scatter %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @all_to_all_same_axis(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_to_all(f32[4,8][S(0)] @p): [S(0)] -> [S(0)] on mesh axis 0 is S(0) -> S(0), not the S(i) -> S(j) of sbp.all_to_all{{$}}
  %0 = sbp.all_to_all %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @all_slice_s_to_b(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_slice(f32[4,8][S(0)] @p): [S(0)] -> [B] on mesh axis 0 is S(0) -> B, not the B -> S(i) of sbp.all_slice{{$}}
  %0 = sbp.all_slice %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @to_partial_p_to_b(%a: !sbp.tensor<4x8xf32, @p, [P]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.to_partial(f32[4,8][P] @p): [P] -> [B] on mesh axis 0 is P -> B, not the B -> P(k) or S(i) -> P(k) of sbp.to_partial{{$}}
  %0 = sbp.to_partial %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p, [B]>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @to_partial_p_to_p(%a: !sbp.tensor<4x8xf32, @p, [P]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.to_partial(f32[4,8][P] @p): [P] -> [P(max)] on mesh axis 0 is P -> P(max), not the B -> P(k) or S(i) -> P(k) of sbp.to_partial{{$}}
  %0 = sbp.to_partial %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [P]> -> !sbp.tensor<4x8xf32, @p, [P(max)]>
  func.return
}

// -----

// A mesh axis outside mesh_axes changes.
sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @unlisted_axis_changes(%a: !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather(f32[4,8][S(0), S(1)] @q): [S(0), S(1)] -> [B, B] changes mesh axis 1, which is not in mesh_axes [0]{{$}}
  %0 = sbp.all_gather %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q, [B, B]>
  func.return
}

// -----

// One listed axis is right, the other is not this collective's transition.
sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @second_axis_wrong(%a: !sbp.tensor<4x8xf32, @q, [P, B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_reduce(f32[4,8][P, B] @q): [P, B] -> [B, S(0)] on mesh axis 1 is B -> S(0), not the P(k) -> B of sbp.all_reduce{{$}}
  %0 = sbp.all_reduce %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @q, [P, B]> -> !sbp.tensor<4x8xf32, @q, [B, S(0)]>
  func.return
}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @mesh_axis_out_of_range(%a: !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather(f32[4,8][S(0), S(1)] @q): mesh_axes [2] must be one or more distinct mesh axes in 0..1{{$}}
  %0 = sbp.all_gather %a {mesh_axes = array<i64: 2>} : !sbp.tensor<4x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q, [B, B]>
  func.return
}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @mesh_axis_negative(%a: !sbp.tensor<4x8xf32, @q, [B, B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_slice(f32[4,8][B, B] @q): mesh_axes [-1] must be one or more distinct mesh axes in 0..1{{$}}
  %0 = sbp.all_slice %a {mesh_axes = array<i64: -1>} : !sbp.tensor<4x8xf32, @q, [B, B]> -> !sbp.tensor<4x8xf32, @q, [B, S(0)]>
  func.return
}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @mesh_axes_repeated(%a: !sbp.tensor<4x8xf32, @q, [P, P]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_scatter(f32[4,8][P, P] @q): mesh_axes [0, 0] must be one or more distinct mesh axes in 0..1{{$}}
  %0 = sbp.reduce_scatter %a {mesh_axes = array<i64: 0, 0>} : !sbp.tensor<4x8xf32, @q, [P, P]> -> !sbp.tensor<4x8xf32, @q, [S(0), P]>
  func.return
}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @mesh_axes_empty(%a: !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_to_all(f32[4,8][S(0), S(1)] @q): mesh_axes [] must be one or more distinct mesh axes in 0..1{{$}}
  %0 = sbp.all_to_all %a {mesh_axes = array<i64>} : !sbp.tensor<4x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>
  func.return
}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @mesh_axes_missing(%a: !sbp.tensor<4x8xf32, @q, [S(0), S(1)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather: property 'mesh_axes' expected in operation 'sbp.all_gather'{{$}}
  %0 = sbp.all_gather %a : !sbp.tensor<4x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<4x8xf32, @q, [B, S(1)]>
  func.return
}

// -----

// Collective types always carry an SBP.
sbp.placement @p "cpu" [0, 1]
func.func @result_without_sbp(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather(f32[4,8][S(0)] @p): collective operand and result types must carry an ND-SBP{{$}}
  %0 = sbp.all_gather %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @operand_without_sbp(%a: !sbp.tensor<4x8xf32, @p>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_reduce(f32[4,8][?] @p): collective operand and result types must carry an ND-SBP{{$}}
  %0 = sbp.all_reduce %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p, [B]>
  func.return
}

// -----

// Shape and element type are kept as by every conversion.
sbp.placement @p "cpu" [0, 1]
func.func @collective_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather(f32[4,8][S(0)] @p): result shape [2, 8] should be [4, 8]{{$}}
  %0 = sbp.all_gather %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<2x8xf32, @p, [B]>
  func.return
}

// -----

// The issue-11 example: on mesh axis 0 the ranks of a group hold rows the others do not want, and the
// rows they want are split further on mesh axis 1, outside the group (sbp-run used to print NaN).
sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @split_not_minor_most(%a: !sbp.tensor<4x4xf32, @m, [S(0), S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather(f32[4,4][S(0), S(0)] @m): [S(0), S(0)] -> [B, S(0)] on mesh axes [0] of the mesh [2, 2] changes the split of tensor axis 0 on mesh axis 0, but mesh axis 1 splits it further in the source [S(0), S(0)]: ranks would not hold contiguous blocks{{$}}
  "sbp.all_gather"(%a) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<4x4xf32, @m, [S(0), S(0)]>) -> !sbp.tensor<4x4xf32, @m, [B, S(0)]>
  func.return
}

// -----

sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @scatter_not_minor_most(%a: !sbp.tensor<4x8xi64, @m, [P, S(1)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.reduce_scatter(i64[4,8][P, S(1)] @m): [P, S(1)] -> [S(1), S(1)] on mesh axes [0] of the mesh [2, 2] changes the split of tensor axis 1 on mesh axis 0, but mesh axis 1 splits it further in the result [S(1), S(1)]: ranks would not hold contiguous blocks{{$}}
  %0 = sbp.reduce_scatter %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xi64, @m, [P, S(1)]> -> !sbp.tensor<4x8xi64, @m, [S(1), S(1)]>
  func.return
}

// -----

// One merged all-reduce reduces with one kind.
sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @merged_mixed_reduce(%a: !sbp.tensor<4x8xf32, @m, [P, P(max)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_reduce(f32[4,8][P, P(max)] @m): [P, P(max)] -> [B, B] on mesh axes [0, 1] of the mesh [2, 2] merges different transitions (P -> B on mesh axis 0, P(max) -> B on mesh axis 1); only an all_to_all may{{$}}
  %0 = sbp.all_reduce %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @m, [P, P(max)]> -> !sbp.tensor<4x8xf32, @m, [B, B]>
  func.return
}

// -----

// The value is max over mesh axis 0 of the sums over mesh axis 1: the max cannot be taken first.
sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @reduce_order(%a: !sbp.tensor<4x8xf32, @m, [P(max), P]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_reduce(f32[4,8][P(max), P] @m): [P(max), P] -> [B, P] on mesh axes [0] of the mesh [2, 2] moves P(max) on mesh axis 0 across P on the later mesh axis 1: reductions of different kinds do not commute{{$}}
  %0 = sbp.all_reduce %a {mesh_axes = array<i64: 0>} : !sbp.tensor<4x8xf32, @m, [P(max), P]> -> !sbp.tensor<4x8xf32, @m, [B, P]>
  func.return
}

// -----

// The per-rank form after spmdize spells the step out; it is checked against the same semantics,
// on the mesh of its placement property.
sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @local_split_not_minor_most(%x: tensor<1x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather(tensor<1x4xf32>): [S(0), S(0)] -> [B, S(0)] on mesh axes [0] of the mesh [2, 2] changes the split of tensor axis 0 on mesh axis 0, but mesh axis 1 splits it further in the source [S(0), S(0)]: ranks would not hold contiguous blocks{{$}}
  %0 = sbp.all_gather %x {mesh_axes = array<i64: 0>, placement = @m, src_sbp = #sbp.nd<[S(0), S(0)]>, dst_sbp = #sbp.nd<[B, S(0)]>, global_shape = array<i64: 4, 4>} : tensor<1x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @local_unknown_placement(%x: tensor<2x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather: unknown placement @nope{{$}}
  %0 = sbp.all_gather %x {mesh_axes = array<i64: 0>, placement = @nope, src_sbp = #sbp.nd<[S(0), B]>, dst_sbp = #sbp.nd<[B, B]>, global_shape = array<i64: 4, 4>} : tensor<2x4xf32> -> tensor<4x4xf32>
  func.return
}

// -----

sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @local_wrong_mesh_rank(%x: tensor<2x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.all_gather: src_sbp [S(0)] has length 1, but placement @m has hierarchy [2, 2] of rank 2{{$}}
  %0 = sbp.all_gather %x {mesh_axes = array<i64: 0>, placement = @m, src_sbp = #sbp.nd<[S(0)]>, dst_sbp = #sbp.nd<[B]>, global_shape = array<i64: 4, 4>} : tensor<2x4xf32> -> tensor<4x4xf32>
  func.return
}
