// RUN: not sbp-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Invalid #sbp.layout attributes (SPEC §2.6) and layouts that do not fit the tensor: one mode
// per tensor dimension, and mode extents equal to the largest local shard.

// CHECK: layout_invalid.mlir:[[# @LINE + 3]]:30: error: layout shape (2,4) and stride (4) are not congruent{{$}}
// CHECK-NEXT: {{^}}"test.op"() {l = #sbp.layout<(2,4):(4)>} : () -> (){{$}}
// CHECK-NEXT: {{^}}                             ^^^^^^^^^{{$}}
"test.op"() {l = #sbp.layout<(2,4):(4)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:30: error: layout shape (2,4) and stride (4,1,1) are not congruent{{$}}
"test.op"() {l = #sbp.layout<(2,4):(4,1,1)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:30: error: layout shape ((2,3),4) and stride (4,1) are not congruent{{$}}
"test.op"() {l = #sbp.layout<((2,3),4):(4,1)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:33: error: layout shape entries must be non-negative{{$}}
"test.op"() {l = #sbp.layout<(2,-4):(4,1)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:37: error: layout stride entries must be non-negative{{$}}
"test.op"() {l = #sbp.layout<(2,4):(-4,1)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:52: error: layout offset must be non-negative{{$}}
"test.op"() {l = #sbp.layout<(2,4):(4,1), offset = -1>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:35: error: Expected ':' between the layout shape and stride{{$}}
"test.op"() {l = #sbp.layout<(2,4)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:43: error: Expected 'offset' in #sbp.layout{{$}}
"test.op"() {l = #sbp.layout<(2,4):(4,1), stride = 3>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:34: error: expected ',' or ')' in the layout shape{{$}}
"test.op"() {l = #sbp.layout<(2,4:(4,1)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:33: error: expected an integer or '(' in the layout shape{{$}}
"test.op"() {l = #sbp.layout<(2,x):(4,1)>} : () -> ()

// -----

// CHECK: :[[# @LINE + 1]]:41: error: Expected '>' at the end of #sbp.layout{{$}}
"test.op"() {l = #sbp.layout<(2,4):(4,1)} : () -> ()

// -----

// Layout modes must match the tensor rank.
sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:29: error: layout (4,8,1):(8,1,1) has 3 modes for a rank-2 tensor{{$}}
"test.op"() {t = !sbp.tensor<4x8xf32, @p, [B], layout = #sbp.layout<(4,8,1):(8,1,1)>>} : () -> ()

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:39: error: layout (32):(1) has 1 mode for a rank-2 tensor{{$}}
func.func @flat_layout(%a: !sbp.tensor<4x8xf32, @p, [B], layout = #sbp.layout<(32):(1)>>) {
  func.return
}

// -----

sbp.placement @p "cpu" [0, 1]
// CHECK: :[[# @LINE + 1]]:29: error: layout 1:1 has 1 mode for a rank-0 tensor{{$}}
"test.op"() {t = !sbp.tensor<f32, @p, [B], layout = #sbp.layout<1:1>>} : () -> ()

// -----

// Layout extents must be the largest local shard: [S(0)] over 2 ranks of 4x8 holds 2x8.
sbp.placement @p "cpu" [0, 1]
func.func @global_extents(%a: !sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.relu(f32[4,8][S(0)] @p): operand 0 layout (4,8):(8,1) has extents [4, 8], but the largest local shard is [2, 8]{{$}}
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// -----

// An uneven split: 5 rows over 2 ranks, the first rank holds 3.
sbp.placement @p "cpu" [0, 1]
func.func @uneven_split(%a: !sbp.tensor<5x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(8,1)>>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.neg(f32[5,8][S(0)] @p): operand 0 layout (2,8):(8,1) has extents [2, 8], but the largest local shard is [3, 8]{{$}}
  %0 = sbp.neg %a : !sbp.tensor<5x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(8,1)>> -> !sbp.tensor<5x8xf32, @p>
  func.return
}

// -----

sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @result_extents(%a: !sbp.tensor<8x8xf32, @q, [S(0), S(1)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.exp(f32[8,8][S(0), S(1)] @q): result 0 layout (8,8):(8,1) has extents [8, 8], but the largest local shard is [4, 4]{{$}}
  %0 = sbp.exp %a : !sbp.tensor<8x8xf32, @q, [S(0), S(1)]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(1)], layout = #sbp.layout<(8,8):(8,1)>>
  func.return
}

// -----

// A tensor axis split on both mesh axes: 8 rows over 2x2 ranks hold 2 each; a hierarchical mode
// is measured by its total extent.
sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @hierarchical_extents(%a: !sbp.tensor<8x8xf32, @q, [S(0), S(0)]>) {
  // CHECK: :[[# @LINE + 1]]:3: error: sbp.relu(f32[8,8][S(0), S(0)] @q): result 0 layout ((2,2),8):((8,16),1) has extents [4, 8], but the largest local shard is [2, 8]{{$}}
  %0 = sbp.relu %a : !sbp.tensor<8x8xf32, @q, [S(0), S(0)]> -> !sbp.tensor<8x8xf32, @q, [S(0), S(0)], layout = #sbp.layout<((2,2),8):((8,16),1)>>
  func.return
}
