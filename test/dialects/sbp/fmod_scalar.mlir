// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.fmod_scalar (FmodScalar): the property `other` is a typed float or integer attribute.
// Custom form: `sbp.fmod_scalar %x, VALUE : TYPE : operand type -> result type`.

sbp.placement @p "npu" [0, 1]

// CHECK-LABEL: func.func @fmod_scalar(
// CHECK-NEXT:    %[[A:.*]] = sbp.fmod_scalar %{{.*}}, 2.500000e+00 : f32 : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.fmod_scalar %{{.*}}, -1.500000e+00 : f16 : !sbp.tensor<4x8xf16, @p, [B]> -> !sbp.tensor<4x8xf16, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.fmod_scalar %{{.*}}, 3.000000e+00 : bf16 : !sbp.tensor<16xbf16, @p, [S(0)]> -> !sbp.tensor<16xbf16, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.fmod_scalar %{{.*}}, 3 : i16 : !sbp.tensor<2x3xi16, @p, [P]> -> !sbp.tensor<2x3xi16, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.fmod_scalar %{{.*}}, 7 : i32 : !sbp.tensor<i32, @p, [B]> -> !sbp.tensor<i32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.fmod_scalar %[[A]], 1.000000e-01 : f32 {sbp.hint = #sbp.sig<[S(0)] -> ?>} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "fmod_scalar"
// GENERIC:       %{{.*}} = "sbp.fmod_scalar"(%{{.*}}) <{other = 2.500000e+00 : f32}> : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.fmod_scalar"(%{{.*}}) <{other = -1.500000e+00 : f16}> : (!sbp.tensor<4x8xf16, @p, [B]>) -> !sbp.tensor<4x8xf16, @p, [B]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.fmod_scalar"(%{{.*}}) <{other = 3.000000e+00 : bf16}> : (!sbp.tensor<16xbf16, @p, [S(0)]>) -> !sbp.tensor<16xbf16, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.fmod_scalar"(%{{.*}}) <{other = 3 : i16}> : (!sbp.tensor<2x3xi16, @p, [P]>) -> !sbp.tensor<2x3xi16, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.fmod_scalar"(%{{.*}}) <{other = 7 : i32}> : (!sbp.tensor<i32, @p, [B]>) -> !sbp.tensor<i32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.fmod_scalar"(%{{.*}}) <{other = 1.000000e-01 : f32}> {sbp.hint = #sbp.sig<[S(0)] -> ?>} : (!sbp.tensor<4x8xf32, @p>) -> !sbp.tensor<4x8xf32, @p>{{$}}
func.func @fmod_scalar(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<4x8xf16, @p, [B]>, %c: !sbp.tensor<16xbf16, @p, [S(0)]>, %d: !sbp.tensor<2x3xi16, @p, [P]>, %e: !sbp.tensor<i32, @p, [B]>) {
  %0 = sbp.fmod_scalar %a, 2.5 : f32 : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.fmod_scalar %b, -1.5 : f16 : !sbp.tensor<4x8xf16, @p, [B]> -> !sbp.tensor<4x8xf16, @p, [B]>
  %2 = sbp.fmod_scalar %c, 3.0 : bf16 : !sbp.tensor<16xbf16, @p, [S(0)]> -> !sbp.tensor<16xbf16, @p, [S(0)]>
  %3 = sbp.fmod_scalar %d, 3 : i16 : !sbp.tensor<2x3xi16, @p, [P]> -> !sbp.tensor<2x3xi16, @p>
  %4 = sbp.fmod_scalar %e, 7 : i32 : !sbp.tensor<i32, @p, [B]> -> !sbp.tensor<i32, @p>
  %5 = sbp.fmod_scalar %0, 0.1 : f32 {sbp.hint = #sbp.sig<[S(0)] -> ?>} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  func.return
}

// Written in generic form by the user, printed in custom form.
// CHECK-LABEL: func.func @fmod_scalar_generic_input(
// CHECK-NEXT:    sbp.fmod_scalar %{{.*}}, 2.500000e+00 : f32 : !sbp.tensor<4x8xf32, @p, [S(1)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-LABEL: sym_name = "fmod_scalar_generic_input"
// GENERIC:       "sbp.fmod_scalar"(%{{.*}}) <{other = 2.500000e+00 : f32}> : (!sbp.tensor<4x8xf32, @p, [S(1)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
func.func @fmod_scalar_generic_input(%a: !sbp.tensor<4x8xf32, @p, [S(1)]>) {
  %0 = "sbp.fmod_scalar"(%a) <{other = 2.5 : f32}> : (!sbp.tensor<4x8xf32, @p, [S(1)]>) -> !sbp.tensor<4x8xf32, @p>
  func.return
}
