// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.fmod (FmodTensor): `other` broadcasts to `self`; the result has self's shape.
// Kernel element types bf16, f16, f32, i16.

sbp.placement @p "npu" [0, 1]
sbp.placement @q "npu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @fmod_same_shape(
// CHECK-NEXT:    %[[R:.*]] = sbp.fmod %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    func.return %[[R]] : !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-LABEL: sym_name = "fmod_same_shape"
// GENERIC:       %{{.*}} = "sbp.fmod"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
func.func @fmod_same_shape(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p> {
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  func.return %0 : !sbp.tensor<4x8xf32, @p>
}

// other of lower rank, with size-1 dims, 0-d; the four kernel dtypes; 2-D mesh.
// CHECK-LABEL: func.func @fmod_broadcast(
// CHECK-NEXT:    sbp.fmod %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf16, @p, [S(0)]>, !sbp.tensor<8xf16, @p, [B]> -> !sbp.tensor<4x8xf16, @p>{{$}}
// CHECK-NEXT:    sbp.fmod %{{.*}}, %{{.*}} : !sbp.tensor<2x4x8xbf16, @q, [S(0), S(2)]>, !sbp.tensor<4x1xbf16, @q, [B, B]> -> !sbp.tensor<2x4x8xbf16, @q, [S(0), S(2)]>{{$}}
// CHECK-NEXT:    sbp.fmod %{{.*}}, %{{.*}} : !sbp.tensor<4x8xi16, @p, [B]>, !sbp.tensor<i16, @p, [B]> -> !sbp.tensor<4x8xi16, @p>{{$}}
// CHECK-NEXT:    sbp.fmod %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(1)]>, !sbp.tensor<1x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>{{$}}
// GENERIC-LABEL: sym_name = "fmod_broadcast"
// GENERIC:       "sbp.fmod"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf16, @p, [S(0)]>, !sbp.tensor<8xf16, @p, [B]>) -> !sbp.tensor<4x8xf16, @p>{{$}}
// GENERIC-NEXT:  "sbp.fmod"(%{{.*}}, %{{.*}}) : (!sbp.tensor<2x4x8xbf16, @q, [S(0), S(2)]>, !sbp.tensor<4x1xbf16, @q, [B, B]>) -> !sbp.tensor<2x4x8xbf16, @q, [S(0), S(2)]>{{$}}
// GENERIC-NEXT:  "sbp.fmod"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xi16, @p, [B]>, !sbp.tensor<i16, @p, [B]>) -> !sbp.tensor<4x8xi16, @p>{{$}}
// GENERIC-NEXT:  "sbp.fmod"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(1)]>, !sbp.tensor<1x8xf32, @p, [S(1)]>) -> !sbp.tensor<4x8xf32, @p, [S(1)]>{{$}}
func.func @fmod_broadcast(%a: !sbp.tensor<4x8xf16, @p, [S(0)]>, %b: !sbp.tensor<8xf16, @p, [B]>, %c: !sbp.tensor<2x4x8xbf16, @q, [S(0), S(2)]>, %d: !sbp.tensor<4x1xbf16, @q, [B, B]>, %e: !sbp.tensor<4x8xi16, @p, [B]>, %f: !sbp.tensor<i16, @p, [B]>, %g: !sbp.tensor<4x8xf32, @p, [S(1)]>, %h: !sbp.tensor<1x8xf32, @p, [S(1)]>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x8xf16, @p, [S(0)]>, !sbp.tensor<8xf16, @p, [B]> -> !sbp.tensor<4x8xf16, @p>
  %1 = sbp.fmod %c, %d : !sbp.tensor<2x4x8xbf16, @q, [S(0), S(2)]>, !sbp.tensor<4x1xbf16, @q, [B, B]> -> !sbp.tensor<2x4x8xbf16, @q, [S(0), S(2)]>
  %2 = sbp.fmod %e, %f : !sbp.tensor<4x8xi16, @p, [B]>, !sbp.tensor<i16, @p, [B]> -> !sbp.tensor<4x8xi16, @p>
  %3 = sbp.fmod %g, %h : !sbp.tensor<4x8xf32, @p, [S(1)]>, !sbp.tensor<1x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>
  func.return
}

// A non-contiguous local layout on self (transposed storage of the 2x8 shard).
// CHECK-LABEL: func.func @fmod_layout(
// CHECK-NEXT:    sbp.fmod %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-LABEL: sym_name = "fmod_layout"
// GENERIC:       "sbp.fmod"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>, !sbp.tensor<8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
func.func @fmod_layout(%a: !sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>, %b: !sbp.tensor<8xf32, @p, [B]>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(2,8):(1,2)>>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  func.return
}
