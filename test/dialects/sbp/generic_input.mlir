// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt --print-op-generic | filecheck %s --check-prefix=GENERIC

// A program written entirely in generic form (properties in `<{...}>`) is printed in custom form,
// and generic printing of it is a fixed point.

"builtin.module"() ({
  "sbp.placement"() <{sym_name = "p", device_type = "npu", hierarchy = array<i64: 2, 2>, ranks = array<i64: 0, 1, 2, 3>}> : () -> ()
  "func.func"() <{sym_name = "main", function_type = (!sbp.tensor<8x16xf32, @p, [S(0), B]>, !sbp.tensor<16x4xf32, @p, [B, S(1)]>) -> !sbp.tensor<8xf32, @p>}> ({
  ^bb0(%x: !sbp.tensor<8x16xf32, @p, [S(0), B]>, %w: !sbp.tensor<16x4xf32, @p, [B, S(1)]>):
    %0 = "sbp.matmul"(%x, %w) : (!sbp.tensor<8x16xf32, @p, [S(0), B]>, !sbp.tensor<16x4xf32, @p, [B, S(1)]>) -> !sbp.tensor<8x4xf32, @p, [S(0), S(1)]>
    %1 = "sbp.fmod_scalar"(%0) <{other = 2.5 : f32}> : (!sbp.tensor<8x4xf32, @p, [S(0), S(1)]>) -> !sbp.tensor<8x4xf32, @p>
    %2 = "sbp.all_gather"(%0) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<8x4xf32, @p, [S(0), S(1)]>) -> !sbp.tensor<8x4xf32, @p, [S(0), B]>
    %3 = "sbp.reduce_sum"(%2) <{axes = array<i64: 1>}> {sbp.hint = #sbp.sig<? -> [S(0), B]>} : (!sbp.tensor<8x4xf32, @p, [S(0), B]>) -> !sbp.tensor<8xf32, @p>
    "func.return"(%3) : (!sbp.tensor<8xf32, @p>) -> ()
  }) : () -> ()
}) : () -> ()

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @p "npu" {{\[\[}}0, 1], [2, 3]]{{$}}
// CHECK-NEXT:   func.func @main(%x: !sbp.tensor<8x16xf32, @p, [S(0), B]>, %w: !sbp.tensor<16x4xf32, @p, [B, S(1)]>) -> !sbp.tensor<8xf32, @p> {
// CHECK-NEXT:     %0 = sbp.matmul %x, %w : !sbp.tensor<8x16xf32, @p, [S(0), B]>, !sbp.tensor<16x4xf32, @p, [B, S(1)]> -> !sbp.tensor<8x4xf32, @p, [S(0), S(1)]>{{$}}
// CHECK-NEXT:     %1 = sbp.fmod_scalar %0, 2.500000e+00 : f32 : !sbp.tensor<8x4xf32, @p, [S(0), S(1)]> -> !sbp.tensor<8x4xf32, @p>{{$}}
// CHECK-NEXT:     %2 = sbp.all_gather %0 {mesh_axes = array<i64: 1>} : !sbp.tensor<8x4xf32, @p, [S(0), S(1)]> -> !sbp.tensor<8x4xf32, @p, [S(0), B]>{{$}}
// CHECK-NEXT:     %3 = sbp.reduce_sum %2 {sbp.hint = #sbp.sig<? -> [S(0), B]>, axes = array<i64: 1>} : !sbp.tensor<8x4xf32, @p, [S(0), B]> -> !sbp.tensor<8xf32, @p>{{$}}
// CHECK-NEXT:     func.return %3 : !sbp.tensor<8xf32, @p>{{$}}
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "sbp.placement"() <{sym_name = "p", device_type = "npu", hierarchy = array<i64: 2, 2>, ranks = array<i64: 0, 1, 2, 3>}> : () -> (){{$}}
// GENERIC-NEXT:   "func.func"() <{sym_name = "main", function_type = (!sbp.tensor<8x16xf32, @p, [S(0), B]>, !sbp.tensor<16x4xf32, @p, [B, S(1)]>) -> !sbp.tensor<8xf32, @p>}> ({
// GENERIC-NEXT:   ^bb0(%x: !sbp.tensor<8x16xf32, @p, [S(0), B]>, %w: !sbp.tensor<16x4xf32, @p, [B, S(1)]>):
// GENERIC-NEXT:     %0 = "sbp.matmul"(%x, %w) : (!sbp.tensor<8x16xf32, @p, [S(0), B]>, !sbp.tensor<16x4xf32, @p, [B, S(1)]>) -> !sbp.tensor<8x4xf32, @p, [S(0), S(1)]>{{$}}
// GENERIC-NEXT:     %1 = "sbp.fmod_scalar"(%0) <{other = 2.500000e+00 : f32}> : (!sbp.tensor<8x4xf32, @p, [S(0), S(1)]>) -> !sbp.tensor<8x4xf32, @p>{{$}}
// GENERIC-NEXT:     %2 = "sbp.all_gather"(%0) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<8x4xf32, @p, [S(0), S(1)]>) -> !sbp.tensor<8x4xf32, @p, [S(0), B]>{{$}}
// GENERIC-NEXT:     %3 = "sbp.reduce_sum"(%2) <{axes = array<i64: 1>}> {sbp.hint = #sbp.sig<? -> [S(0), B]>} : (!sbp.tensor<8x4xf32, @p, [S(0), B]>) -> !sbp.tensor<8xf32, @p>{{$}}
// GENERIC-NEXT:     "func.return"(%3) : (!sbp.tensor<8xf32, @p>) -> (){{$}}
// GENERIC-NEXT:   }) : () -> ()
// GENERIC-NEXT: }) : () -> ()
