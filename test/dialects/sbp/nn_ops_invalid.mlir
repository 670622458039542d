// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of the ops of SPEC §7: float-only activations and normalisations, axes in range,
// gamma of the last axis, a positive epsilon, dropout's p in [0, 1), a 2-D embedding table, i32/i64
// indices and targets, concat inputs equal but on the axis, slice bounds per axis, where's i1
// condition and broadcasting, broadcast_to's numpy rules.

sbp.placement @p "cpu" [0, 1]
func.func @sigmoid_int(%x: !sbp.tensor<4x6xi32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.sigmoid(i32[4,6][B] @p): sigmoid needs a floating-point tensor, got i32{{$}}
  %0 = sbp.sigmoid %x : !sbp.tensor<4x6xi32, @p, [B]> -> !sbp.tensor<4x6xi32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @softmax_axis(%x: !sbp.tensor<4x6xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.softmax(f32[4,6][B] @p): softmax axis 2 out of range for rank 2{{$}}
  %0 = sbp.softmax %x {axis = 2 : i64} : !sbp.tensor<4x6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @rms_norm_gamma(%x: !sbp.tensor<4x6xf32, @p, [B]>, %g: !sbp.tensor<4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.rms_norm(f32[4,6][B] @p, f32[4][B] @p): gamma has shape [4], expected [6] (the last axis of x){{$}}
  %0 = sbp.rms_norm %x, %g : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @rms_norm_epsilon(%x: !sbp.tensor<4x6xf32, @p, [B]>, %g: !sbp.tensor<6xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.rms_norm(f32[4,6][B] @p, f32[6][B] @p): epsilon must be positive, got 0{{$}}
  %0 = sbp.rms_norm %x, %g {epsilon = 0.000000e+00 : f32} : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @dropout_p(%x: !sbp.tensor<4x6xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.dropout(f32[4,6][B] @p): dropout probability p must be in [0, 1), got 1{{$}}
  %0 = sbp.dropout %x {p = 1.000000e+00 : f32} : !sbp.tensor<4x6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @embedding_table(%t: !sbp.tensor<10xf32, @p, [B]>, %i: !sbp.tensor<4xi64, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.embedding(f32[10][B] @p, i64[4][B] @p): the embedding table must be 2-D [vocabulary, hidden], got rank 1{{$}}
  %0 = sbp.embedding %t, %i : !sbp.tensor<10xf32, @p, [B]>, !sbp.tensor<4xi64, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @embedding_indices(%t: !sbp.tensor<10x6xf32, @p, [B]>, %i: !sbp.tensor<4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.embedding(f32[10,6][B] @p, f32[4][B] @p): indices must be i32 or i64, got f32{{$}}
  %0 = sbp.embedding %t, %i : !sbp.tensor<10x6xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @embedding_result(%t: !sbp.tensor<10x6xf32, @p, [B]>, %i: !sbp.tensor<4xi32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.embedding(f32[10,6][B] @p, i32[4][B] @p): result shape [4, 10] should be [4, 6]{{$}}
  %0 = sbp.embedding %t, %i : !sbp.tensor<10x6xf32, @p, [B]>, !sbp.tensor<4xi32, @p, [B]> -> !sbp.tensor<4x10xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @cross_entropy_targets(%l: !sbp.tensor<4x6xf32, @p, [B]>, %y: !sbp.tensor<6xi64, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.cross_entropy(f32[4,6][B] @p, i64[6][B] @p): targets have shape [6], expected [4] (the logits without their class axis){{$}}
  %0 = sbp.cross_entropy %l, %y : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<6xi64, @p, [B]> -> !sbp.tensor<6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @cross_entropy_i1(%l: !sbp.tensor<4x6xf32, @p, [B]>, %y: !sbp.tensor<4xi1, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.cross_entropy(f32[4,6][B] @p, i1[4][B] @p): targets must be i32 or i64, got i1{{$}}
  %0 = sbp.cross_entropy %l, %y : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<4xi1, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @concat_shape(%a: !sbp.tensor<4x6xf32, @p, [B]>, %b: !sbp.tensor<3x2xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.concat(f32[4,6][B] @p, f32[3,2][B] @p): input 1 has shape [3, 2], which differs from input 0's [4, 6] on an axis other than 1{{$}}
  %0 = sbp.concat %a, %b {axis = 1 : i64} : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<3x2xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @concat_axis(%a: !sbp.tensor<4x6xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.concat(f32[4,6][B] @p): concat axis 2 out of range for rank 2{{$}}
  %0 = sbp.concat %a {axis = 2 : i64} : !sbp.tensor<4x6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @concat_type(%a: !sbp.tensor<4x6xf32, @p, [B]>, %b: !sbp.tensor<4x2xf16, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.concat(f32[4,6][B] @p, f16[4,2][B] @p): input 1 element type f16 differs from input 0's f32{{$}}
  %0 = sbp.concat %a, %b {axis = 1 : i64} : !sbp.tensor<4x6xf32, @p, [B]>, !sbp.tensor<4x2xf16, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @slice_step(%x: !sbp.tensor<4x6xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.slice(f32[4,6][B] @p): step 0 on axis 1 is not >= 1{{$}}
  %0 = sbp.slice %x {start = array<i64: 0, 0>, stop = array<i64: 4, 6>, step = array<i64: 1, 0>} : !sbp.tensor<4x6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @slice_stop(%x: !sbp.tensor<4x6xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.slice(f32[4,6][B] @p): slice 2:7 on axis 1 is not within 0 <= start <= stop <= 6{{$}}
  %0 = sbp.slice %x {start = array<i64: 0, 2>, stop = array<i64: 4, 7>, step = array<i64: 1, 1>} : !sbp.tensor<4x6xf32, @p, [B]> -> !sbp.tensor<4x5xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @slice_entries(%x: !sbp.tensor<4x6xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.slice(f32[4,6][B] @p): start has 1 entries for a tensor of rank 2{{$}}
  %0 = sbp.slice %x {start = array<i64: 0>, stop = array<i64: 4>, step = array<i64: 1>} : !sbp.tensor<4x6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @slice_result(%x: !sbp.tensor<4x6xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.slice(f32[4,6][B] @p): result shape [4, 2] should be [4, 3]{{$}}
  %0 = sbp.slice %x {start = array<i64: 0, 1>, stop = array<i64: 4, 6>, step = array<i64: 1, 2>} : !sbp.tensor<4x6xf32, @p, [B]> -> !sbp.tensor<4x2xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @where_cond(%c: !sbp.tensor<4xf32, @p, [B]>, %x: !sbp.tensor<4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.where(f32[4][B] @p, f32[4][B] @p, f32[4][B] @p): cond must be an i1 tensor, got f32{{$}}
  %0 = sbp.where %c, %x, %x : !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @where_shapes(%c: !sbp.tensor<3xi1, @p, [B]>, %x: !sbp.tensor<4xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.where(i1[3][B] @p, f32[4][B] @p, f32[4][B] @p): shapes [3], [4] and [4] are not broadcast-compatible{{$}}
  %0 = sbp.where %c, %x, %x : !sbp.tensor<3xi1, @p, [B]>, !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @where_types(%c: !sbp.tensor<4xi1, @p, [B]>, %x: !sbp.tensor<4xf32, @p, [B]>, %y: !sbp.tensor<4xi32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.where(i1[4][B] @p, f32[4][B] @p, i32[4][B] @p): x and y element types f32 and i32 differ{{$}}
  %0 = sbp.where %c, %x, %y : !sbp.tensor<4xi1, @p, [B]>, !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xi32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
func.func @broadcast_to_shape(%x: !sbp.tensor<4x2xf32, @p, [B]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.broadcast_to(f32[4,2][B] @p): [4, 2] does not broadcast to the result shape [4, 6]{{$}}
  %0 = sbp.broadcast_to %x : !sbp.tensor<4x2xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:40: error: an i1 tensor cannot be partial (booleans do not add): [P]{{$}}
func.func @bool_partial(%c: !sbp.tensor<4xi1, @p, [P]>) {
  func.return
}
