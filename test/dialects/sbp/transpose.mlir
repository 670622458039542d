// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.transpose: result dim i is operand dim perm[i]; `perm` is an array<i64> property.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @transpose(
// CHECK-NEXT:    %{{.*}} = sbp.transpose %{{.*}} {perm = array<i64: 1, 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<8x4xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.transpose %{{.*}} {perm = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.transpose %{{.*}} {perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x8xf16, @q, [S(0), S(2)]> -> !sbp.tensor<8x2x4xf16, @q, [S(1), S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.transpose %{{.*}} {perm = array<i64: 1, 2, 0>} : !sbp.tensor<2x4x8xi64, @q, [P, B]> -> !sbp.tensor<4x8x2xi64, @q>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.transpose %{{.*}} {perm = array<i64>} : !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<f32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.transpose %{{.*}} {sbp.hint = #sbp.sig<? -> [S(0)]>, perm = array<i64: 0>} : !sbp.tensor<5xi16, @p, [S(0)]> -> !sbp.tensor<5xi16, @p>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "transpose"
// GENERIC:       "sbp.transpose"(%{{.*}}) <{perm = array<i64: 1, 0>}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<8x4xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.transpose"(%{{.*}}) <{perm = array<i64: 0, 1>}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  "sbp.transpose"(%{{.*}}) <{perm = array<i64: 2, 0, 1>}> : (!sbp.tensor<2x4x8xf16, @q, [S(0), S(2)]>) -> !sbp.tensor<8x2x4xf16, @q, [S(1), S(0)]>{{$}}
// GENERIC-NEXT:  "sbp.transpose"(%{{.*}}) <{perm = array<i64: 1, 2, 0>}> : (!sbp.tensor<2x4x8xi64, @q, [P, B]>) -> !sbp.tensor<4x8x2xi64, @q>{{$}}
// GENERIC-NEXT:  "sbp.transpose"(%{{.*}}) <{perm = array<i64>}> : (!sbp.tensor<f32, @p, [B]>) -> !sbp.tensor<f32, @p>{{$}}
// GENERIC-NEXT:  "sbp.transpose"(%{{.*}}) <{perm = array<i64: 0>}> {sbp.hint = #sbp.sig<? -> [S(0)]>} : (!sbp.tensor<5xi16, @p, [S(0)]>) -> !sbp.tensor<5xi16, @p>{{$}}
func.func @transpose(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<2x4x8xf16, @q, [S(0), S(2)]>, %c: !sbp.tensor<2x4x8xi64, @q, [P, B]>, %d: !sbp.tensor<f32, @p, [B]>, %e: !sbp.tensor<5xi16, @p, [S(0)]>) {
  %0 = sbp.transpose %a {perm = array<i64: 1, 0>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<8x4xf32, @p>
  %1 = sbp.transpose %a {perm = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  %2 = sbp.transpose %b {perm = array<i64: 2, 0, 1>} : !sbp.tensor<2x4x8xf16, @q, [S(0), S(2)]> -> !sbp.tensor<8x2x4xf16, @q, [S(1), S(0)]>
  %3 = sbp.transpose %c {perm = array<i64: 1, 2, 0>} : !sbp.tensor<2x4x8xi64, @q, [P, B]> -> !sbp.tensor<4x8x2xi64, @q>
  %4 = sbp.transpose %d {perm = array<i64>} : !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<f32, @p>
  %5 = "sbp.transpose"(%e) <{perm = array<i64: 0>}> {sbp.hint = #sbp.sig<? -> [S(0)]>} : (!sbp.tensor<5xi16, @p, [S(0)]>) -> !sbp.tensor<5xi16, @p>
  func.return
}
