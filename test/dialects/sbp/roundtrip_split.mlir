// RUN: SBP_ROUNDTRIP | filecheck %s
// RUN: sbp-opt %s --split-input-file | filecheck %s

// Several independent modules in one file (split markers), round-tripped through the generic form
// chunk by chunk with the SBP_ROUNDTRIP substitution; each chunk has its own placements.

sbp.placement @p "cpu" [0, 1]
func.func @first(%a: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
  %0 = sbp.relu %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  func.return %0 : !sbp.tensor<4xf32, @p>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// CHECK-NEXT:   func.func @first(%{{.*}}: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {
// CHECK-NEXT:     %{{.*}} = sbp.relu %{{.*}} : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>{{$}}
// CHECK-NEXT:     func.return %{{.*}} : !sbp.tensor<4xf32, @p>{{$}}
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}// {{-----$}}

// -----

// The same symbol may be reused in another chunk.
sbp.placement @p "npu" [[0, 1], [2, 3]]
func.func @second(%a: !sbp.tensor<4x4xbf16, @p, [S(1), S(1)]>) {
  %0 = sbp.all_gather %a {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x4xbf16, @p, [S(1), S(1)]> -> !sbp.tensor<4x4xbf16, @p, [B, B]>
  func.return
}

// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   sbp.placement @p "npu" {{\[\[}}0, 1], [2, 3]]{{$}}
// CHECK-NEXT:   func.func @second(%{{.*}}: !sbp.tensor<4x4xbf16, @p, [S(1), S(1)]>) {
// CHECK-NEXT:     %{{.*}} = sbp.all_gather %{{.*}} {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<4x4xbf16, @p, [S(1), S(1)]> -> !sbp.tensor<4x4xbf16, @p, [B, B]>{{$}}
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}// {{-----$}}

// -----

"test.op"() {sig = #sbp.sig<?, [P(max)] -> [B]>, l = #sbp.layout<(2,2):(1,2)>} : () -> ()

// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   "test.op"() {sig = #sbp.sig<?, [P(max)] -> [B]>, l = #sbp.layout<(2,2):(1,2)>} : () -> (){{$}}
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NOT: {{.}}
