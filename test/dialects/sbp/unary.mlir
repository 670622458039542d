// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.relu, sbp.neg, sbp.exp: result has the operand's shape and element type.

sbp.placement @p "cpu" [0, 1]
sbp.placement @r "cpu" [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]

// CHECK-LABEL: func.func @unary(
// CHECK-NEXT:    %[[R:.*]] = sbp.relu %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %[[N:.*]] = sbp.neg %[[R]] : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %[[E:.*]] = sbp.exp %[[N]] : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    func.return %[[E]] : !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-LABEL: sym_name = "unary"
// GENERIC:       %{{.*}} = "sbp.relu"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.neg"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.exp"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
func.func @unary(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]> {
  %0 = sbp.relu %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.neg %0 : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %2 = sbp.exp %1 : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  func.return %2 : !sbp.tensor<4x8xf32, @p, [S(0)]>
}

// Other element types, 0-d, a 3-D mesh, partial inputs.
// CHECK-LABEL: func.func @unary_types(
// CHECK-NEXT:    sbp.relu %{{.*}} : !sbp.tensor<8xf16, @p, [P(max)]> -> !sbp.tensor<8xf16, @p, [P(max)]>{{$}}
// CHECK-NEXT:    sbp.neg %{{.*}} : !sbp.tensor<i64, @p, [P]> -> !sbp.tensor<i64, @p, [P]>{{$}}
// CHECK-NEXT:    sbp.exp %{{.*}} : !sbp.tensor<2x4x8xbf16, @r, [S(0), S(1), S(2)]> -> !sbp.tensor<2x4x8xbf16, @r>{{$}}
// CHECK-NEXT:    sbp.neg %{{.*}} : !sbp.tensor<3xi16, @p, [S(0)]> -> !sbp.tensor<3xi16, @p>{{$}}
// CHECK-NEXT:    sbp.relu %{{.*}} : !sbp.tensor<3xi32, @p, [B]> -> !sbp.tensor<3xi32, @p>{{$}}
// GENERIC-LABEL: sym_name = "unary_types"
// GENERIC:       "sbp.relu"(%{{.*}}) : (!sbp.tensor<8xf16, @p, [P(max)]>) -> !sbp.tensor<8xf16, @p, [P(max)]>{{$}}
// GENERIC-NEXT:  "sbp.neg"(%{{.*}}) : (!sbp.tensor<i64, @p, [P]>) -> !sbp.tensor<i64, @p, [P]>{{$}}
// GENERIC-NEXT:  "sbp.exp"(%{{.*}}) : (!sbp.tensor<2x4x8xbf16, @r, [S(0), S(1), S(2)]>) -> !sbp.tensor<2x4x8xbf16, @r>{{$}}
// GENERIC-NEXT:  "sbp.neg"(%{{.*}}) : (!sbp.tensor<3xi16, @p, [S(0)]>) -> !sbp.tensor<3xi16, @p>{{$}}
// GENERIC-NEXT:  "sbp.relu"(%{{.*}}) : (!sbp.tensor<3xi32, @p, [B]>) -> !sbp.tensor<3xi32, @p>{{$}}
func.func @unary_types(%a: !sbp.tensor<8xf16, @p, [P(max)]>, %b: !sbp.tensor<i64, @p, [P]>, %c: !sbp.tensor<2x4x8xbf16, @r, [S(0), S(1), S(2)]>, %d: !sbp.tensor<3xi16, @p, [S(0)]>, %e: !sbp.tensor<3xi32, @p, [B]>) {
  %0 = sbp.relu %a : !sbp.tensor<8xf16, @p, [P(max)]> -> !sbp.tensor<8xf16, @p, [P(max)]>
  %1 = sbp.neg %b : !sbp.tensor<i64, @p, [P]> -> !sbp.tensor<i64, @p, [P]>
  %2 = sbp.exp %c : !sbp.tensor<2x4x8xbf16, @r, [S(0), S(1), S(2)]> -> !sbp.tensor<2x4x8xbf16, @r>
  %3 = sbp.neg %d : !sbp.tensor<3xi16, @p, [S(0)]> -> !sbp.tensor<3xi16, @p>
  %4 = sbp.relu %e : !sbp.tensor<3xi32, @p, [B]> -> !sbp.tensor<3xi32, @p>
  func.return
}
