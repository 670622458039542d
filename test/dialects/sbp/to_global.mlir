// RUN: sbp-opt %s | filecheck %s
// RUN: sbp-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: sbp-opt %s --print-op-generic | sbp-opt | filecheck %s

// sbp.to_global: a user-requested conversion to the result type's SBP; shape and element
// type are kept, any SBP change is allowed.

sbp.placement @p "cpu" [0, 1]
sbp.placement @q "cpu" [[0, 1], [2, 3]]

// CHECK-LABEL: func.func @to_global(
// CHECK-NEXT:    %[[A:.*]] = sbp.to_global %{{.*}} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_global %[[A]] : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_global %{{.*}} : !sbp.tensor<4x8xf16, @q, [P, S(0)]> -> !sbp.tensor<4x8xf16, @q, [S(1), B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_global %{{.*}} : !sbp.tensor<4x8xf16, @q, [P, S(0)]> -> !sbp.tensor<4x8xf16, @q, [P, S(0)]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_global %{{.*}} : !sbp.tensor<i64, @p, [P(max)]> -> !sbp.tensor<i64, @p, [B]>{{$}}
// CHECK-NEXT:    %{{.*}} = sbp.to_global %[[A]] {sbp.signature = #sbp.sig<[B] -> [S(0)]>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
// CHECK-NEXT:    func.return
// GENERIC-LABEL: sym_name = "to_global"
// GENERIC:       "sbp.to_global"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [S(0)]>) -> !sbp.tensor<4x8xf32, @p, [B]>{{$}}
// GENERIC-NEXT:  "sbp.to_global"(%{{.*}}) : (!sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [S(1)]>{{$}}
// GENERIC-NEXT:  "sbp.to_global"(%{{.*}}) : (!sbp.tensor<4x8xf16, @q, [P, S(0)]>) -> !sbp.tensor<4x8xf16, @q, [S(1), B]>{{$}}
// GENERIC-NEXT:  "sbp.to_global"(%{{.*}}) : (!sbp.tensor<4x8xf16, @q, [P, S(0)]>) -> !sbp.tensor<4x8xf16, @q, [P, S(0)]>{{$}}
// GENERIC-NEXT:  "sbp.to_global"(%{{.*}}) : (!sbp.tensor<i64, @p, [P(max)]>) -> !sbp.tensor<i64, @p, [B]>{{$}}
// GENERIC-NEXT:  "sbp.to_global"(%{{.*}}) {sbp.signature = #sbp.sig<[B] -> [S(0)]>} : (!sbp.tensor<4x8xf32, @p, [B]>) -> !sbp.tensor<4x8xf32, @p, [S(0)]>{{$}}
func.func @to_global(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<4x8xf16, @q, [P, S(0)]>, %c: !sbp.tensor<i64, @p, [P(max)]>) {
  %0 = sbp.to_global %a : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p, [B]>
  %1 = sbp.to_global %0 : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(1)]>
  %2 = sbp.to_global %b : !sbp.tensor<4x8xf16, @q, [P, S(0)]> -> !sbp.tensor<4x8xf16, @q, [S(1), B]>
  %3 = sbp.to_global %b : !sbp.tensor<4x8xf16, @q, [P, S(0)]> -> !sbp.tensor<4x8xf16, @q, [P, S(0)]>
  %4 = sbp.to_global %c : !sbp.tensor<i64, @p, [P(max)]> -> !sbp.tensor<i64, @p, [B]>
  %5 = sbp.to_global %0 {sbp.signature = #sbp.sig<[B] -> [S(0)]>} : !sbp.tensor<4x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p, [S(0)]>
  func.return
}

// The usual way to require an SBP at a function boundary.
// CHECK-LABEL: func.func @boundary(%{{.*}}: !sbp.tensor<4x8xbf16, @p, [S(0)]>) -> !sbp.tensor<4x8xbf16, @p, [B]> {
// CHECK-NEXT:    %[[E:.*]] = sbp.exp %{{.*}} : !sbp.tensor<4x8xbf16, @p, [S(0)]> -> !sbp.tensor<4x8xbf16, @p>{{$}}
// CHECK-NEXT:    %[[G:.*]] = sbp.to_global %[[E]] : !sbp.tensor<4x8xbf16, @p> -> !sbp.tensor<4x8xbf16, @p, [B]>{{$}}
// CHECK-NEXT:    func.return %[[G]] : !sbp.tensor<4x8xbf16, @p, [B]>{{$}}
// GENERIC-LABEL: sym_name = "boundary"
// GENERIC:       "sbp.to_global"(%{{.*}}) : (!sbp.tensor<4x8xbf16, @p>) -> !sbp.tensor<4x8xbf16, @p, [B]>{{$}}
func.func @boundary(%a: !sbp.tensor<4x8xbf16, @p, [S(0)]>) -> !sbp.tensor<4x8xbf16, @p, [B]> {
  %0 = sbp.exp %a : !sbp.tensor<4x8xbf16, @p, [S(0)]> -> !sbp.tensor<4x8xbf16, @p>
  %1 = sbp.to_global %0 : !sbp.tensor<4x8xbf16, @p> -> !sbp.tensor<4x8xbf16, @p, [B]>
  func.return %1 : !sbp.tensor<4x8xbf16, @p, [B]>
}
