// RUN: sbp-opt %s --print-op-generic | filecheck %s
// RUN: sbp-opt %s --print-op-generic | sbp-opt --print-op-generic | filecheck %s

// --print-op-generic prints every op in generic form: quoted name, operands, properties in
// `<{...}>`, discardable attributes in `{...}`, and a function type.

sbp.placement @p "cpu" [0, 1]
func.func @f(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<8x2xf32, @p, [B]>) -> !sbp.tensor<4x2xf32, @p> {
  %0 = sbp.matmul %a, %b {sbp.hint = #sbp.sig<[S(0)], [B] -> ?>} : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8x2xf32, @p, [B]> -> !sbp.tensor<4x2xf32, @p>
  %1 = sbp.mul_scalar %0, 3 : i32 : !sbp.tensor<4x2xf32, @p> -> !sbp.tensor<4x2xf32, @p>
  func.return %1 : !sbp.tensor<4x2xf32, @p>
}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "sbp.placement"() <{sym_name = "p", device_type = "cpu", hierarchy = array<i64: 2>, ranks = array<i64: 0, 1>}> : () -> (){{$}}
// CHECK-NEXT:   "func.func"() <{sym_name = "f", function_type = (!sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8x2xf32, @p, [B]>) -> !sbp.tensor<4x2xf32, @p>}> ({
// CHECK-NEXT:   ^bb0(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<8x2xf32, @p, [B]>):
// CHECK-NEXT:     %0 = "sbp.matmul"(%a, %b) {sbp.hint = #sbp.sig<[S(0)], [B] -> ?>} : (!sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8x2xf32, @p, [B]>) -> !sbp.tensor<4x2xf32, @p>{{$}}
// CHECK-NEXT:     %1 = "sbp.mul_scalar"(%0) <{scalar = 3 : i32}> : (!sbp.tensor<4x2xf32, @p>) -> !sbp.tensor<4x2xf32, @p>{{$}}
// CHECK-NEXT:     "func.return"(%1) : (!sbp.tensor<4x2xf32, @p>) -> (){{$}}
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT: }) : () -> ()
