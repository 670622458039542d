// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.add_scalar and sbp.mul_scalar: the property `scalar` is a typed float or integer attribute.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @scalar_ops(
// CHECK-NEXT:    %[[A:.*]] = sbp.add_scalar %{{.*}}, 1.000000e+00 : f32 : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.mul_scalar %[[A]], 2.500000e+00 : f32 : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.add_scalar %{{.*}}, 3 : i32 : !sbp.tensor<5xi32, @p, [B]> -> !sbp.tensor<5xi32, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.mul_scalar %{{.*}}, -7 : i64 : !sbp.tensor<5xi64, @p, [P]> -> !sbp.tensor<5xi64, @p, [P]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.add_scalar %{{.*}}, 5 : i16 : !sbp.tensor<i16, @p, [B]> -> !sbp.tensor<i16, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.mul_scalar %{{.*}}, 5.000000e-01 : f16 : !sbp.tensor<2x2xf16, @q, [S(0), S(1)]> -> !sbp.tensor<2x2xf16, @q>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.add_scalar %{{.*}}, -2.000000e+00 : bf16 {sbp.hint = #sbp.sig<[S(0), P] -> ?>} : !sbp.tensor<2x2xbf16, @q, [S(0), P]> -> !sbp.tensor<2x2xbf16, @q>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "scalar_ops"
// GENERIC:       %{{.*}} = "sbp.add_scalar"(%{{.*}}) <{scalar = 1.000000e+00 : f32}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.mul_scalar"(%{{.*}}) <{scalar = 2.500000e+00 : f32}> : (!sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.add_scalar"(%{{.*}}) <{scalar = 3 : i32}> : (!sbp.tensor<5xi32, @p, [B]>) -> !sbp.tensor<5xi32, @p, [B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.mul_scalar"(%{{.*}}) <{scalar = -7 : i64}> : (!sbp.tensor<5xi64, @p, [P]>) -> !sbp.tensor<5xi64, @p, [P]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.add_scalar"(%{{.*}}) <{scalar = 5 : i16}> : (!sbp.tensor<i16, @p, [B]>) -> !sbp.tensor<i16, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.mul_scalar"(%{{.*}}) <{scalar = 5.000000e-01 : f16}> : (!sbp.tensor<2x2xf16, @q, [S(0), S(1)]>) -> !sbp.tensor<2x2xf16, @q>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.add_scalar"(%{{.*}}) <{scalar = -2.000000e+00 : bf16}> {sbp.hint = #sbp.sig<[S(0), P] -> ?>} : (!sbp.tensor<2x2xbf16, @q, [S(0), P]>) -> !sbp.tensor<2x2xbf16, @q>{{$}}
func.func @scalar_ops(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<5xi32, @p, [B]>, %c: !sbp.tensor<5xi64, @p, [P]>, %d: !sbp.tensor<i16, @p, [B]>, %e: !sbp.tensor<2x2xf16, @q, [S(0), S(1)]>, %f: !sbp.tensor<2x2xbf16, @q, [S(0), P]>) {
  %0 = sbp.add_scalar %a, 1.0 : f32 : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.mul_scalar %0, 2.5 : f32 : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  %2 = sbp.add_scalar %b, 3 : i32 : !sbp.tensor<5xi32, @p, [B]> -> !sbp.tensor<5xi32, @p, [B]>
  %3 = sbp.mul_scalar %c, -7 : i64 : !sbp.tensor<5xi64, @p, [P]> -> !sbp.tensor<5xi64, @p, [P]>
  %4 = sbp.add_scalar %d, 5 : i16 : !sbp.tensor<i16, @p, [B]> -> !sbp.tensor<i16, @p>
  %5 = sbp.mul_scalar %e, 0.5 : f16 : !sbp.tensor<2x2xf16, @q, [S(0), S(1)]> -> !sbp.tensor<2x2xf16, @q>
  %6 = sbp.add_scalar %f, -2.0 : bf16 {sbp.hint = #sbp.sig<[S(0), P] -> ?>} : !sbp.tensor<2x2xbf16, @q, [S(0), P]> -> !sbp.tensor<2x2xbf16, @q>
  func.return
}

// Generic input with the scalar property.
// CHECK-LABEL: func.func @scalar_generic_input(
// CHECK-NEXT:    sbp.add_scalar %{{.*}}, 3 : i32 : !sbp.tensor<5xi32, @p, [B]> -> !sbp.tensor<5xi32, @p>{{$}}
// CHECK-NEXT:    sbp.mul_scalar %{{.*}}, 2.500000e+00 : f32 : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>{{$}}
// GENERIC-LABEL: sym_name = "scalar_generic_input"
// GENERIC:       "sbp.add_scalar"(%{{.*}}) <{scalar = 3 : i32}> : (!sbp.tensor<5xi32, @p, [B]>) -> !sbp.tensor<5xi32, @p>{{$}}
// GENERIC-NEXT:  "sbp.mul_scalar"(%{{.*}}) <{scalar = 2.500000e+00 : f32}> : (!sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p>{{$}}
func.func @scalar_generic_input(%a: !sbp.tensor<5xi32, @p, [B]>, %b: !sbp.tensor<4xf32, @p, [S(0)]>) {
  %0 = "sbp.add_scalar"(%a) <{scalar = 3 : i32}> : (!sbp.tensor<5xi32, @p, [B]>) -> !sbp.tensor<5xi32, @p>
  %1 = "sbp.mul_scalar"(%b) <{scalar = 2.5 : f32}> : (!sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p>
  func.return
}
