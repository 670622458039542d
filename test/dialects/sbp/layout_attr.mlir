// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// #sbp.layout<SHAPE:STRIDE[, offset = N]> (SPEC §2.6) and its use on !sbp.tensor.
// The printed form has no spaces inside SHAPE:STRIDE and omits a zero offset.

// CHECK:      "test.op"() {
// CHECK-SAME: row = #sbp.layout<(2,4):(4,1)>,
// CHECK-SAME: col = #sbp.layout<(2,4):(1,2)>,
// CHECK-SAME: hier = #sbp.layout<((2,3),(2,4)):((1,4),(2,12))>,
// CHECK-SAME: flat = #sbp.layout<8:1>,
// CHECK-SAME: one_mode = #sbp.layout<(8):(1)>,
// CHECK-SAME: empty = #sbp.layout<():()>,
// CHECK-SAME: zero_offset = #sbp.layout<(2,4):(4,1)>,
// CHECK-SAME: offset = #sbp.layout<(2,4):(4,1), offset = 5>,
// CHECK-SAME: spaced = #sbp.layout<(4,8):(1,4)>,
// CHECK-SAME: bcast = #sbp.layout<(4,8):(0,1)>} : () -> (){{$}}
// GENERIC: "test.op"() {row = #sbp.layout<(2,4):(4,1)>, col = #sbp.layout<(2,4):(1,2)>, hier = #sbp.layout<((2,3),(2,4)):((1,4),(2,12))>, flat = #sbp.layout<8:1>, one_mode = #sbp.layout<(8):(1)>, empty = #sbp.layout<():()>, zero_offset = #sbp.layout<(2,4):(4,1)>, offset = #sbp.layout<(2,4):(4,1), offset = 5>, spaced = #sbp.layout<(4,8):(1,4)>, bcast = #sbp.layout<(4,8):(0,1)>} : () -> (){{$}}
"test.op"() {
  row = #sbp.layout<(2,4):(4,1)>,
  col = #sbp.layout<(2,4):(1,2)>,
  hier = #sbp.layout<((2,3),(2,4)):((1,4),(2,12))>,
  flat = #sbp.layout<8:1>,
  one_mode = #sbp.layout<(8):(1)>,
  empty = #sbp.layout<():()>,
  zero_offset = #sbp.layout<(2,4):(4,1), offset = 0>,
  offset = #sbp.layout<(2,4):(4,1), offset = 5>,
  spaced = #sbp.layout<( 4 , 8 ) : ( 1 , 4 )>,
  bcast = #sbp.layout<(4,8):(0,1)>
} : () -> ()

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "npu" [[0, 1], [2, 3]]

// On a tensor type: after the ND-SBP, or alone when the SBP is not known yet.
// CHECK-LABEL: func.func @typed(
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf16, @p, [B], layout = #sbp.layout<(4,8):(1,4)>>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<4x8xf16, @p, layout = #sbp.layout<(4,8):(8,1)>>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<12x8xf32, @p, [S(1)], layout = #sbp.layout<((2,6),4):((1,8),2), offset = 16>>,
// CHECK-SAME: %{{.*}}: !sbp.tensor<f32, @p, [B], layout = #sbp.layout<():()>>) {
// GENERIC: function_type = (!sbp.tensor<4x8xf16, @p, [B], layout = #sbp.layout<(4,8):(1,4)>>, !sbp.tensor<4x8xf16, @p, layout = #sbp.layout<(4,8):(8,1)>>, !sbp.tensor<12x8xf32, @p, [S(1)], layout = #sbp.layout<((2,6),4):((1,8),2), offset = 16>>, !sbp.tensor<f32, @p, [B], layout = #sbp.layout<():()>>) -> ()
func.func @typed(%a: !sbp.tensor<4x8xf16, @p, [B], layout = #sbp.layout<(4,8):(1,4)>>, %b: !sbp.tensor<4x8xf16, @p, layout = #sbp.layout<(4,8):(8,1)>>, %c: !sbp.tensor<12x8xf32, @p, [S(1)], layout = #sbp.layout<((2,6),4):((1,8),2), offset = 16>>, %d: !sbp.tensor<f32, @p, [B], layout = #sbp.layout<():()>>) {
  func.return
}

// The layout describes each rank's largest local shard: 8x6 split as [S(0), S(1)] on a
// 2x2 mesh holds 4x3 per rank; an uneven 5x6 split on S(0) over 2 ranks is at most 3x6.
// CHECK-LABEL: func.func @local_shards(
// CHECK-NEXT:    %{{.*}} = sbp.relu %{{.*}} : !sbp.tensor<8x6xf32, @q, [S(0), S(1)], layout = #sbp.layout<(4,3):(3,1)>> -> !sbp.tensor<8x6xf32, @q, [S(0), S(1)], layout = #sbp.layout<(4,3):(1,4)>>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.neg %{{.*}} : !sbp.tensor<5x6xf32, @p, [S(0)], layout = #sbp.layout<(3,6):(6,1)>> -> !sbp.tensor<5x6xf32, @p, [S(0)]>{{$}}
// GENERIC-LABEL: sym_name = "local_shards"
// GENERIC: "sbp.relu"(%{{.*}}) : (!sbp.tensor<8x6xf32, @q, [S(0), S(1)], layout = #sbp.layout<(4,3):(3,1)>>) -> !sbp.tensor<8x6xf32, @q, [S(0), S(1)], layout = #sbp.layout<(4,3):(1,4)>>{{$}}
// GENERIC: "sbp.neg"(%{{.*}}) : (!sbp.tensor<5x6xf32, @p, [S(0)], layout = #sbp.layout<(3,6):(6,1)>>) -> !sbp.tensor<5x6xf32, @p, [S(0)]>{{$}}
func.func @local_shards(%a: !sbp.tensor<8x6xf32, @q, [S(0), S(1)], layout = #sbp.layout<(4,3):(3,1)>>, %b: !sbp.tensor<5x6xf32, @p, [S(0)], layout = #sbp.layout<(3,6):(6,1)>>) {
  %0 = sbp.relu %a : !sbp.tensor<8x6xf32, @q, [S(0), S(1)], layout = #sbp.layout<(4,3):(3,1)>> -> !sbp.tensor<8x6xf32, @q, [S(0), S(1)], layout = #sbp.layout<(4,3):(1,4)>>
  %1 = sbp.neg %b : !sbp.tensor<5x6xf32, @p, [S(0)], layout = #sbp.layout<(3,6):(6,1)>> -> !sbp.tensor<5x6xf32, @p, [S(0)]>
  func.return
}
