// RUN: sbp-opt %s --split-input-file | filecheck %s
// RUN: sbp-opt %s | filecheck %s --check-prefix=WHOLE

// --split-input-file parses, verifies and prints each split-marker chunk as its own module and
// joins the outputs with split-marker lines. Without it the file is one module.

sbp.placement @p "cpu" [0, 1]

// CHECK:      builtin.module {
// CHECK-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}// {{-----$}}
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   sbp.placement @q "npu" {{\[\[}}0, 1], [2, 3]]{{$}}
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}// {{-----$}}
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   "test.op"() {sig = #sbp.sig<[S(0)] -> [B]>} : () -> (){{$}}
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NOT: {{.}}

// WHOLE:      builtin.module {
// WHOLE-NEXT:   sbp.placement @p "cpu" [0, 1]{{$}}
// WHOLE-NEXT:   sbp.placement @q "npu" {{\[\[}}0, 1], [2, 3]]{{$}}
// WHOLE-NEXT:   "test.op"() {sig = #sbp.sig<[S(0)] -> [B]>} : () -> (){{$}}
// WHOLE-NEXT: }
// WHOLE-NOT: {{-----}}

// -----

sbp.placement @q "npu" [[0, 1], [2, 3]]

// -----

"test.op"() {sig = #sbp.sig<[S(0)] -> [B]>} : () -> ()
