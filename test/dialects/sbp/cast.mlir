// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.cast: element type conversion; the target is the result's element type, the shape is kept.

sbp.placement @p "cpu" [0, 1]

// CHECK-LABEL: func.func @cast(
// CHECK-NEXT:    %[[H:.*]] = sbp.cast %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf16, @p>{{$}}
// CHECK-NEXT:    %[[B:.*]] = sbp.cast %[[H]] : !sbp.tensor<4x8xf16, @p> -> !sbp.tensor<4x8xbf16, @p>{{$}}
// CHECK-NEXT:    %[[I:.*]] = sbp.cast %[[B]] : !sbp.tensor<4x8xbf16, @p> -> !sbp.tensor<4x8xi16, @p>{{$}}
// CHECK-NEXT:    %[[J:.*]] = sbp.cast %[[I]] : !sbp.tensor<4x8xi16, @p> -> !sbp.tensor<4x8xi32, @p>{{$}}
// CHECK-NEXT:    %[[K:.*]] = sbp.cast %[[J]] : !sbp.tensor<4x8xi32, @p> -> !sbp.tensor<4x8xi64, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %[[F:.*]] = sbp.cast %[[K]] : !sbp.tensor<4x8xi64, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.cast %[[F]] : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.cast %{{.*}} : !sbp.tensor<i32, @p, [P]> -> !sbp.tensor<f32, @p, [P]>{{$}}
// GENERIC-LABEL: sym_name = "cast"
// GENERIC:       "sbp.cast"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf16, @p>{{$}}
// GENERIC-NEXT:  "sbp.cast"(%{{.*}}) : (!sbp.tensor<4x8xf16, @p>) -> !sbp.tensor<4x8xbf16, @p>{{$}}
// GENERIC-NEXT:  "sbp.cast"(%{{.*}}) : (!sbp.tensor<4x8xbf16, @p>) -> !sbp.tensor<4x8xi16, @p>{{$}}
// GENERIC-NEXT:  "sbp.cast"(%{{.*}}) : (!sbp.tensor<4x8xi16, @p>) -> !sbp.tensor<4x8xi32, @p>{{$}}
// GENERIC-NEXT:  "sbp.cast"(%{{.*}}) : (!sbp.tensor<4x8xi32, @p>) -> !sbp.tensor<4x8xi64, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  "sbp.cast"(%{{.*}}) : (!sbp.tensor<4x8xi64, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// GENERIC-NEXT:  "sbp.cast"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p>{{$}}
// GENERIC-NEXT:  "sbp.cast"(%{{.*}}) : (!sbp.tensor<i32, @p, [P]>) -> !sbp.tensor<f32, @p, [P]>{{$}}
func.func @cast(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<i32, @p, [P]>) {
  %0 = sbp.cast %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf16, @p>
  %1 = sbp.cast %0 : !sbp.tensor<4x8xf16, @p> -> !sbp.tensor<4x8xbf16, @p>
  %2 = sbp.cast %1 : !sbp.tensor<4x8xbf16, @p> -> !sbp.tensor<4x8xi16, @p>
  %3 = sbp.cast %2 : !sbp.tensor<4x8xi16, @p> -> !sbp.tensor<4x8xi32, @p>
  %4 = sbp.cast %3 : !sbp.tensor<4x8xi32, @p> -> !sbp.tensor<4x8xi64, @p, [S(0)]>
  %5 = sbp.cast %4 : !sbp.tensor<4x8xi64, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  %6 = sbp.cast %5 : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  %7 = sbp.cast %b : !sbp.tensor<i32, @p, [P]> -> !sbp.tensor<f32, @p, [P]>
  func.return
}
