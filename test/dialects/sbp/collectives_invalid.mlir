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
