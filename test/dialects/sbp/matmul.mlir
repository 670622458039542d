// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.matmul: rank >= 2, optional unit properties transpose_a / transpose_b (in the attribute
// dictionary in custom form, `<{...}>` in generic form), leading dims are broadcast batch dims.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// The four transpose variants: a is 4x10 (or 10x4 transposed), b is 10x3 (or 3x10 transposed).
// CHECK-LABEL: func.func @transpose_variants(
// CHECK-NEXT:    %{{.*}} = sbp.matmul %{{.*}}, %{{.*}} : !sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<10x3xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.matmul %{{.*}}, %{{.*}} {transpose_a} : !sbp.tensor<10x4xf32, @p, [S(1)]>, !sbp.tensor<10x3xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.matmul %{{.*}}, %{{.*}} {transpose_b} : !sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.matmul %{{.*}}, %{{.*}} {transpose_a, transpose_b} : !sbp.tensor<10x4xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [S(1)]> -> !sbp.tensor<4x3xf32, @p, [P]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "transpose_variants"
// GENERIC:       %{{.*}} = "sbp.matmul"(%{{.*}}, %{{.*}}) : (!sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<10x3xf32, @p, [B]>) -> !sbp.tensor<4x3xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.matmul"(%{{.*}}, %{{.*}}) <{transpose_a}> : (!sbp.tensor<10x4xf32, @p, [S(1)]>, !sbp.tensor<10x3xf32, @p, [B]>) -> !sbp.tensor<4x3xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.matmul"(%{{.*}}, %{{.*}}) <{transpose_b}> : (!sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [B]>) -> !sbp.tensor<4x3xf32, @p>{{$}}
// GENERIC-NEXT:  %{{.*}} = "sbp.matmul"(%{{.*}}, %{{.*}}) <{transpose_a, transpose_b}> : (!sbp.tensor<10x4xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [S(1)]>) -> !sbp.tensor<4x3xf32, @p, [P]>{{$}}
func.func @transpose_variants(%a: !sbp.tensor<4x10xf32, @p, [S(0)]>, %at: !sbp.tensor<10x4xf32, @p, [S(1)]>, %at0: !sbp.tensor<10x4xf32, @p, [S(0)]>, %b: !sbp.tensor<10x3xf32, @p, [B]>, %bt: !sbp.tensor<3x10xf32, @p, [B]>, %bt1: !sbp.tensor<3x10xf32, @p, [S(1)]>) {
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<10x3xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p>
  %1 = sbp.matmul %at, %b {transpose_a} : !sbp.tensor<10x4xf32, @p, [S(1)]>, !sbp.tensor<10x3xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p>
  %2 = sbp.matmul %a, %bt {transpose_b} : !sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p>
  %3 = sbp.matmul %at0, %bt1 {transpose_a, transpose_b} : !sbp.tensor<10x4xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [S(1)]> -> !sbp.tensor<4x3xf32, @p, [P]>
  func.return
}

// The SPEC §2.4 example, written in generic form.
// CHECK-LABEL: func.func @spec_example(
// CHECK-NEXT:    sbp.matmul %{{.*}}, %{{.*}} {transpose_b} : !sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p>{{$}}
// GENERIC-LABEL: sym_name = "spec_example"
// GENERIC:       "sbp.matmul"(%{{.*}}, %{{.*}}) <{transpose_b}> : (!sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [B]>) -> !sbp.tensor<4x3xf32, @p>{{$}}
func.func @spec_example(%0: !sbp.tensor<4x10xf32, @p, [S(0)]>, %1: !sbp.tensor<3x10xf32, @p, [B]>) {
  %2 = "sbp.matmul"(%0, %1) <{transpose_b}> : (!sbp.tensor<4x10xf32, @p, [S(0)]>, !sbp.tensor<3x10xf32, @p, [B]>) -> !sbp.tensor<4x3xf32, @p>
  func.return
}

// Batched (same batch dims), broadcast batch (1 vs 2, missing dims), transposes with batch.
// CHECK-LABEL: func.func @batched(
// CHECK-NEXT:    sbp.matmul %{{.*}}, %{{.*}} : !sbp.tensor<2x4x10xf16, @q, [S(0), S(1)]>, !sbp.tensor<2x10x3xf16, @q, [S(0), B]> -> !sbp.tensor<2x4x3xf16, @q>{{$}}
// CHECK-NEXT:    sbp.matmul %{{.*}}, %{{.*}} : !sbp.tensor<2x4x10xf16, @q, [S(0), S(1)]>, !sbp.tensor<10x3xf16, @q, [B, B]> -> !sbp.tensor<2x4x3xf16, @q>{{$}}
// CHECK-NEXT:    sbp.matmul %{{.*}}, %{{.*}} : !sbp.tensor<5x1x4x10xbf16, @q, [B, B]>, !sbp.tensor<2x10x3xbf16, @q, [B, S(0)]> -> !sbp.tensor<5x2x4x3xbf16, @q>{{$}}
// CHECK-NEXT:    sbp.matmul %{{.*}}, %{{.*}} {transpose_a, transpose_b} : !sbp.tensor<1x10x4xi32, @q, [B, S(2)]>, !sbp.tensor<6x3x10xi32, @q, [S(0), B]> -> !sbp.tensor<6x4x3xi32, @q, [S(0), S(1)]>{{$}}
// GENERIC-LABEL: sym_name = "batched"
// GENERIC:       "sbp.matmul"(%{{.*}}, %{{.*}}) : (!sbp.tensor<2x4x10xf16, @q, [S(0), S(1)]>, !sbp.tensor<2x10x3xf16, @q, [S(0), B]>) -> !sbp.tensor<2x4x3xf16, @q>{{$}}
// GENERIC-NEXT:  "sbp.matmul"(%{{.*}}, %{{.*}}) : (!sbp.tensor<2x4x10xf16, @q, [S(0), S(1)]>, !sbp.tensor<10x3xf16, @q, [B, B]>) -> !sbp.tensor<2x4x3xf16, @q>{{$}}
// GENERIC-NEXT:  "sbp.matmul"(%{{.*}}, %{{.*}}) : (!sbp.tensor<5x1x4x10xbf16, @q, [B, B]>, !sbp.tensor<2x10x3xbf16, @q, [B, S(0)]>) -> !sbp.tensor<5x2x4x3xbf16, @q>{{$}}
// GENERIC-NEXT:  "sbp.matmul"(%{{.*}}, %{{.*}}) <{transpose_a, transpose_b}> : (!sbp.tensor<1x10x4xi32, @q, [B, S(2)]>, !sbp.tensor<6x3x10xi32, @q, [S(0), B]>) -> !sbp.tensor<6x4x3xi32, @q, [S(0), S(1)]>{{$}}
func.func @batched(%a: !sbp.tensor<2x4x10xf16, @q, [S(0), S(1)]>, %b: !sbp.tensor<2x10x3xf16, @q, [S(0), B]>, %c: !sbp.tensor<10x3xf16, @q, [B, B]>, %d: !sbp.tensor<5x1x4x10xbf16, @q, [B, B]>, %e: !sbp.tensor<2x10x3xbf16, @q, [B, S(0)]>, %f: !sbp.tensor<1x10x4xi32, @q, [B, S(2)]>, %g: !sbp.tensor<6x3x10xi32, @q, [S(0), B]>) {
  %0 = sbp.matmul %a, %b : !sbp.tensor<2x4x10xf16, @q, [S(0), S(1)]>, !sbp.tensor<2x10x3xf16, @q, [S(0), B]> -> !sbp.tensor<2x4x3xf16, @q>
  %1 = sbp.matmul %a, %c : !sbp.tensor<2x4x10xf16, @q, [S(0), S(1)]>, !sbp.tensor<10x3xf16, @q, [B, B]> -> !sbp.tensor<2x4x3xf16, @q>
  %2 = sbp.matmul %d, %e : !sbp.tensor<5x1x4x10xbf16, @q, [B, B]>, !sbp.tensor<2x10x3xbf16, @q, [B, S(0)]> -> !sbp.tensor<5x2x4x3xbf16, @q>
  %3 = sbp.matmul %f, %g {transpose_a, transpose_b} : !sbp.tensor<1x10x4xi32, @q, [B, S(2)]>, !sbp.tensor<6x3x10xi32, @q, [S(0), B]> -> !sbp.tensor<6x4x3xi32, @q, [S(0), S(1)]>
  func.return
}

// Properties and discardable attributes together; other element types.
// CHECK-LABEL: func.func @with_attrs(
// CHECK-NEXT:    sbp.matmul %{{.*}}, %{{.*}} {sbp.hint = #sbp.sig<[S(0)], ? -> ?>, transpose_b} : !sbp.tensor<4x8xi64, @p, [S(0)]>, !sbp.tensor<2x8xi64, @p, [B]> -> !sbp.tensor<4x2xi64, @p>{{$}}
// CHECK-NEXT:    sbp.matmul %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : !sbp.tensor<4x8xi16, @p, [S(0)]>, !sbp.tensor<8x2xi16, @p, [B]> -> !sbp.tensor<4x2xi16, @p, [S(0)]>{{$}}
// GENERIC-LABEL: sym_name = "with_attrs"
// GENERIC:       "sbp.matmul"(%{{.*}}, %{{.*}}) <{transpose_b}> {sbp.hint = #sbp.sig<[S(0)], ? -> ?>} : (!sbp.tensor<4x8xi64, @p, [S(0)]>, !sbp.tensor<2x8xi64, @p, [B]>) -> !sbp.tensor<4x2xi64, @p>{{$}}
// GENERIC-NEXT:  "sbp.matmul"(%{{.*}}, %{{.*}}) {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : (!sbp.tensor<4x8xi16, @p, [S(0)]>, !sbp.tensor<8x2xi16, @p, [B]>) -> !sbp.tensor<4x2xi16, @p, [S(0)]>{{$}}
func.func @with_attrs(%a: !sbp.tensor<4x8xi64, @p, [S(0)]>, %b: !sbp.tensor<2x8xi64, @p, [B]>, %c: !sbp.tensor<4x8xi16, @p, [S(0)]>, %d: !sbp.tensor<8x2xi16, @p, [B]>) {
  %0 = sbp.matmul %a, %b {transpose_b, sbp.hint = #sbp.sig<[S(0)], ? -> ?>} : !sbp.tensor<4x8xi64, @p, [S(0)]>, !sbp.tensor<2x8xi64, @p, [B]> -> !sbp.tensor<4x2xi64, @p>
  %1 = sbp.matmul %c, %d {sbp.signature = #sbp.sig<[S(0)], [B] -> [S(0)]>} : !sbp.tensor<4x8xi16, @p, [S(0)]>, !sbp.tensor<8x2xi16, @p, [B]> -> !sbp.tensor<4x2xi16, @p, [S(0)]>
  func.return
}
