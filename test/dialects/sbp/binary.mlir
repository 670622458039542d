// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.sub, sbp.mul, sbp.div, sbp.maximum, sbp.minimum: same syntax and rules as sbp.add.

sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @binary(
// CHECK-NEXT:    %[[S:.*]] = sbp.sub %{{.*}}, %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %[[M:.*]] = sbp.mul %[[S]], %{{.*}} : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %[[D:.*]] = sbp.div %[[M]], %[[M]] : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %[[X:.*]] = sbp.maximum %[[D]], %{{.*}} : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %[[N:.*]] = sbp.minimum %[[X]], %{{.*}} : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<1x1xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    func.return %[[N]] : !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-LABEL: sym_name = "binary"
// GENERIC:       %{{.*}} = "sbp.sub"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.mul"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.div"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.maximum"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.minimum"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x8xf32, @p>, !sbp.tensor<1x1xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  "func.return"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> (){{$}}
func.func @binary(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<8xf32, @p, [B]>, %c: !sbp.tensor<1x1xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]> {
  %0 = sbp.sub %a, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.mul %0, %b : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.div %1, %1 : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %3 = sbp.maximum %2, %a : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %4 = sbp.minimum %3, %c : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<1x1xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  func.return %4 : !sbp.tensor<4x8xf32, @p, [S(0)]>
}

// Integer and half element types.
// CHECK-LABEL: func.func @binary_types(
// CHECK-NEXT:    sbp.sub %{{.*}}, %{{.*}} : !sbp.tensor<3xi16, @p, [S(0)]>, !sbp.tensor<3xi16, @p, [S(0)]> -> !sbp.tensor<3xi16, @p>{{$}}
// CHECK-NEXT:    sbp.mul %{{.*}}, %{{.*}} : !sbp.tensor<3xi32, @p, [P]>, !sbp.tensor<3xi32, @p, [B]> -> !sbp.tensor<3xi32, @p>{{$}}
// CHECK-NEXT:    sbp.div %{{.*}}, %{{.*}} : !sbp.tensor<3xi64, @p, [B]>, !sbp.tensor<i64, @p, [B]> -> !sbp.tensor<3xi64, @p>{{$}}
// CHECK-NEXT:    sbp.maximum %{{.*}}, %{{.*}} : !sbp.tensor<3xf16, @p, [P(max)]>, !sbp.tensor<3xf16, @p, [P(max)]> -> !sbp.tensor<3xf16, @p, [P(max)]>{{$}}
// CHECK-NEXT:    sbp.minimum %{{.*}}, %{{.*}} : !sbp.tensor<3xbf16, @p, [P(min)]>, !sbp.tensor<3xbf16, @p, [P(min)]> -> !sbp.tensor<3xbf16, @p, [P(min)]>{{$}}
// GENERIC-LABEL: sym_name = "binary_types"
// GENERIC:       "sbp.sub"(%{{.*}}, %{{.*}}) : (!sbp.tensor<3xi16, @p, [S(0)]>, !sbp.tensor<3xi16, @p, [S(0)]>) -> !sbp.tensor<3xi16, @p>{{$}}
// GENERIC-NEXT:  "sbp.mul"(%{{.*}}, %{{.*}}) : (!sbp.tensor<3xi32, @p, [P]>, !sbp.tensor<3xi32, @p, [B]>) -> !sbp.tensor<3xi32, @p>{{$}}
// GENERIC-NEXT:  "sbp.div"(%{{.*}}, %{{.*}}) : (!sbp.tensor<3xi64, @p, [B]>, !sbp.tensor<i64, @p, [B]>) -> !sbp.tensor<3xi64, @p>{{$}}
// GENERIC-NEXT:  "sbp.maximum"(%{{.*}}, %{{.*}}) : (!sbp.tensor<3xf16, @p, [P(max)]>, !sbp.tensor<3xf16, @p, [P(max)]>) -> !sbp.tensor<3xf16, @p, [P(max)]>{{$}}
// GENERIC-NEXT:  "sbp.minimum"(%{{.*}}, %{{.*}}) : (!sbp.tensor<3xbf16, @p, [P(min)]>, !sbp.tensor<3xbf16, @p, [P(min)]>) -> !sbp.tensor<3xbf16, @p, [P(min)]>{{$}}
func.func @binary_types(%a: !sbp.tensor<3xi16, @p, [S(0)]>, %b: !sbp.tensor<3xi32, @p, [P]>, %c: !sbp.tensor<3xi32, @p, [B]>, %d: !sbp.tensor<3xi64, @p, [B]>, %e: !sbp.tensor<i64, @p, [B]>, %f: !sbp.tensor<3xf16, @p, [P(max)]>, %g: !sbp.tensor<3xbf16, @p, [P(min)]>) {
  %0 = sbp.sub %a, %a : !sbp.tensor<3xi16, @p, [S(0)]>, !sbp.tensor<3xi16, @p, [S(0)]> -> !sbp.tensor<3xi16, @p>
  %1 = sbp.mul %b, %c : !sbp.tensor<3xi32, @p, [P]>, !sbp.tensor<3xi32, @p, [B]> -> !sbp.tensor<3xi32, @p>
  %2 = sbp.div %d, %e : !sbp.tensor<3xi64, @p, [B]>, !sbp.tensor<i64, @p, [B]> -> !sbp.tensor<3xi64, @p>
  %3 = sbp.maximum %f, %f : !sbp.tensor<3xf16, @p, [P(max)]>, !sbp.tensor<3xf16, @p, [P(max)]> -> !sbp.tensor<3xf16, @p, [P(max)]>
  %4 = sbp.minimum %g, %g : !sbp.tensor<3xbf16, @p, [P(min)]>, !sbp.tensor<3xbf16, @p, [P(min)]> -> !sbp.tensor<3xbf16, @p, [P(min)]>
  func.return
}
