// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// The ops of SPEC §7 round-trip in their custom and generic forms: the activations, dropout (`p`),
// softmax (`axis`), rms_norm (`epsilon` omitted when not written), embedding and cross_entropy on
// integer indices, concat (variadic), slice (`start`, `stop`, `step`), where on an i1 condition
// and broadcast_to (shape from the result type); the new element types i1, i8, ui8, i32, i64.

sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @ops(
// CHECK-NEXT:    %[[S:.*]] = sbp.sigmoid %x : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %[[T:.*]] = sbp.tanh %[[S]] : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %[[U:.*]] = sbp.silu %[[T]] : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %[[M:.*]] = sbp.softmax %[[U]] {axis = 1 : i64} : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %[[R:.*]] = sbp.rms_norm %[[M]], %g : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.rms_norm %[[M]], %g {epsilon = 1.000000e-05 : f32} : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %[[D:.*]] = sbp.dropout %[[R]] {p = 1.000000e-01 : f32} : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %[[E:.*]] = sbp.embedding %t, %i : !sbp.tensor<10x6xf32, @p, [S(0)]>, !sbp.tensor<4xi64, @p, [B]> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %[[C:.*]] = sbp.concat %[[D]], %[[E]] {axis = 1 : i64} : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x12xf32, @p>{{$}}
// CHECK-NEXT:    %[[L:.*]] = sbp.slice %[[C]] {start = array<i64: 0, 1>, stop = array<i64: 4, 12>, step = array<i64: 1, 2>} : !sbp.tensor<4x12xf32, @p> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %[[B:.*]] = sbp.broadcast_to %c : !sbp.tensor<4x1xi1, @p, [B]> -> !sbp.tensor<4x6xi1, @p>{{$}}
// CHECK-NEXT:    %[[W:.*]] = sbp.where %[[B]], %[[L]], %[[E]] : !sbp.tensor<4x6xi1, @p>, !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.cross_entropy %[[W]], %j : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4xi32, @p, [B]> -> !sbp.tensor<4xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.broadcast_to %k : !sbp.tensor<6xui8, @p, [S(0)]> -> !sbp.tensor<2x6xui8, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.cast %[[B]] : !sbp.tensor<4x6xi1, @p> -> !sbp.tensor<4x6xi8, @p>{{$}}
// GENERIC-LABEL: sym_name = "ops"
// GENERIC:       "sbp.sigmoid"(%{{.*}}) : (!sbp.tensor<4x6xf32, @p, [S(0)]>) -> !sbp.tensor<4x6xf32, @p>{{$}}
// GENERIC:       "sbp.softmax"(%{{.*}}) <{axis = 1 : i64}> : (!sbp.tensor<4x6xf32, @p>) -> !sbp.tensor<4x6xf32, @p>{{$}}
// GENERIC:       "sbp.dropout"(%{{.*}}) <{p = 1.000000e-01 : f32}> : (!sbp.tensor<4x6xf32, @p>) -> !sbp.tensor<4x6xf32, @p>{{$}}
// GENERIC:       "sbp.concat"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}> : (!sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p>) -> !sbp.tensor<4x12xf32, @p>{{$}}
// GENERIC:       "sbp.slice"(%{{.*}}) <{start = array<i64: 0, 1>, stop = array<i64: 4, 12>, step = array<i64: 1, 2>}> : (!sbp.tensor<4x12xf32, @p>) -> !sbp.tensor<4x6xf32, @p>{{$}}
func.func @ops(%x: !sbp.tensor<4x6xf32, @p, [S(0)]>, %g: !sbp.tensor<6xf32, @p, [B]>, %t: !sbp.tensor<10x6xf32, @p, [S(0)]>, %i: !sbp.tensor<4xi64, @p, [B]>, %j: !sbp.tensor<4xi32, @p, [B]>, %c: !sbp.tensor<4x1xi1, @p, [B]>, %k: !sbp.tensor<6xui8, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.sigmoid %x : !sbp.tensor<4x6xf32, @p, [S(0)]> -> !sbp.tensor<4x6xf32, @p>
  %1 = sbp.tanh %0 : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  %2 = sbp.silu %1 : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  %3 = sbp.softmax %2 {axis = 1 : i64} : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  %4 = sbp.rms_norm %3, %g : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  %r = sbp.rms_norm %3, %g {epsilon = 1.000000e-05 : f32} : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<6xf32, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  %5 = sbp.dropout %4 {p = 1.000000e-01 : f32} : !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  %6 = sbp.embedding %t, %i : !sbp.tensor<10x6xf32, @p, [S(0)]>, !sbp.tensor<4xi64, @p, [B]> -> !sbp.tensor<4x6xf32, @p>
  %7 = sbp.concat %5, %6 {axis = 1 : i64} : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x12xf32, @p>
  %8 = sbp.slice %7 {start = array<i64: 0, 1>, stop = array<i64: 4, 12>, step = array<i64: 1, 2>} : !sbp.tensor<4x12xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  %9 = sbp.broadcast_to %c : !sbp.tensor<4x1xi1, @p, [B]> -> !sbp.tensor<4x6xi1, @p>
  %10 = sbp.where %9, %8, %6 : !sbp.tensor<4x6xi1, @p>, !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4x6xf32, @p> -> !sbp.tensor<4x6xf32, @p>
  %11 = sbp.cross_entropy %10, %j : !sbp.tensor<4x6xf32, @p>, !sbp.tensor<4xi32, @p, [B]> -> !sbp.tensor<4xf32, @p>
  %12 = sbp.broadcast_to %k : !sbp.tensor<6xui8, @p, [S(0)]> -> !sbp.tensor<2x6xui8, @p>
  %13 = sbp.cast %9 : !sbp.tensor<4x6xi1, @p> -> !sbp.tensor<4x6xi8, @p>
  func.return %11 : !sbp.tensor<4xf32, @p>
}
