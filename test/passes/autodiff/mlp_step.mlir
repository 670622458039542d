// RUN: sbp-opt %s -p 'autodiff{optimizer=sgd lr=0.5}' | filecheck %s --check-prefix=SGD
// RUN: sbp-opt %s -p 'autodiff{optimizer=adamw lr=0.001 params=w}' | filecheck %s --check-prefix=ADAMW
// RUN: sbp-opt %s -p 'autodiff{optimizer=sgd},infer-sbp' | filecheck %s --check-prefix=SBP

// A relu layer with a broadcast bias and a summed loss: the step's backward ops follow the forward ops,
// with SBP-free types; gradients are forward ops where they are ones (matmuls with transpose flags, the
// bias's reduce_sum). An updated parameter is returned in its argument's SBP (sbp.to_global), the layout
// the next step takes it in.

sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>, %w: !sbp.tensor<4x4xf32, @p, [B]>,
                %b: !sbp.tensor<4xf32, @p, [B]>) -> (!sbp.tensor<f32, @p>, !sbp.tensor<8x4xf32, @p>) {
  %h = sbp.matmul %x, %w : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<4x4xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  %hb = sbp.add %h, %b : !sbp.tensor<8x4xf32, @p>, !sbp.tensor<4xf32, @p, [B]> -> !sbp.tensor<8x4xf32, @p>
  %r = sbp.relu %hb : !sbp.tensor<8x4xf32, @p> -> !sbp.tensor<8x4xf32, @p>
  %l = sbp.reduce_sum %r {axes = array<i64: 0, 1>} : !sbp.tensor<8x4xf32, @p> -> !sbp.tensor<f32, @p>
  func.return %l, %r : !sbp.tensor<f32, @p>, !sbp.tensor<8x4xf32, @p>
}

// SGD:      func.func @main(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>, %w: !sbp.tensor<4x4xf32, @p, [B]>, %b: !sbp.tensor<4xf32, @p, [B]>) -> (!sbp.tensor<f32, @p>, !sbp.tensor<4x4xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]>)
// SGD-SAME: attributes {sbp.train_step = {optimizer = "sgd", params = array<i64: 1, 2>, names = ["w", "b"], state = array<i64>, lr = 5.000000e-01 : f64}}
// SGD:        %l = sbp.reduce_sum %r
// SGD-NEXT:   %0 = sbp.ones_like %l : !sbp.tensor<f32, @p> -> !sbp.tensor<f32, @p>
// SGD-NEXT:   %1 = sbp.reduce_sum_grad %0 {axes = array<i64: 0, 1>} : !sbp.tensor<f32, @p> -> !sbp.tensor<8x4xf32, @p>
// SGD-NEXT:   %2 = sbp.relu_grad %1, %hb : !sbp.tensor<8x4xf32, @p>, !sbp.tensor<8x4xf32, @p> -> !sbp.tensor<8x4xf32, @p>
// SGD-NEXT:   %3 = sbp.reduce_sum %2 {axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p> -> !sbp.tensor<4xf32, @p>
// SGD-NEXT:   %4 = sbp.matmul %x, %2 {transpose_a} : !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p> -> !sbp.tensor<4x4xf32, @p>
// SGD-NEXT:   %5 = sbp.sgd_update %w, %4 {lr = 5.000000e-01 : f64} : !sbp.tensor<4x4xf32, @p, [B]>, !sbp.tensor<4x4xf32, @p> -> !sbp.tensor<4x4xf32, @p>
// SGD-NEXT:   %6 = sbp.sgd_update %b, %3 {lr = 5.000000e-01 : f64} : !sbp.tensor<4xf32, @p, [B]>, !sbp.tensor<4xf32, @p> -> !sbp.tensor<4xf32, @p>
// SGD-NEXT:   %7 = sbp.to_global %5 : !sbp.tensor<4x4xf32, @p> -> !sbp.tensor<4x4xf32, @p, [B]>
// SGD-NEXT:   %8 = sbp.to_global %6 : !sbp.tensor<4xf32, @p> -> !sbp.tensor<4xf32, @p, [B]>
// SGD-NEXT:   func.return %l, %7, %8 : !sbp.tensor<f32, @p>, !sbp.tensor<4x4xf32, @p, [B]>, !sbp.tensor<4xf32, @p, [B]>

// params=w only: b gets no gradient; the moments of w are two more arguments (typed as w) and results.
// ADAMW:      func.func @main(%x: !sbp.tensor<8x4xf32, @p, [S(0)]>, %w: !sbp.tensor<4x4xf32, @p, [B]>, %b: !sbp.tensor<4xf32, @p, [B]>, %w_m: !sbp.tensor<4x4xf32, @p, [B]>, %w_v: !sbp.tensor<4x4xf32, @p, [B]>) -> (!sbp.tensor<f32, @p>, !sbp.tensor<4x4xf32, @p, [B]>, !sbp.tensor<4x4xf32, @p, [B]>, !sbp.tensor<4x4xf32, @p, [B]>)
// ADAMW-SAME: optimizer = "adamw", params = array<i64: 1>, names = ["w"], state = array<i64: 3, 4>
// ADAMW-NOT:  sbp.reduce_sum %{{[0-9]+}} {axes = array<i64: 0>}
// ADAMW:      %[[G:[0-9]+]] = sbp.matmul %x, %{{[0-9]+}} {transpose_a}
// ADAMW-NEXT: %[[M:[0-9]+]] = sbp.adam_moment1 %w_m, %[[G]] {beta = 9.000000e-01 : f64}
// ADAMW-NEXT: %[[V:[0-9]+]] = sbp.adam_moment2 %w_v, %[[G]] {beta = 9.990000e-01 : f64}
// ADAMW-NEXT: %[[W:[0-9]+]] = sbp.adamw_update %w, %[[M]], %[[V]] {lr = 1.000000e-03 : f64, weight_decay = 0.000000e+00 : f64, beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, step = 1 : i64}
// ADAMW-NEXT: %[[W2:[0-9]+]] = sbp.to_global %[[W]]
// ADAMW-NEXT: %[[M2:[0-9]+]] = sbp.to_global %[[M]]
// ADAMW-NEXT: %[[V2:[0-9]+]] = sbp.to_global %[[V]]
// ADAMW-NEXT: func.return %l, %[[W2]], %[[M2]], %[[V2]]

// The weight's gradient from S(0) activations is a partial sum; the update takes B (w's SBP).
// SBP: %4 = sbp.matmul %x, %2 {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [P]>, transpose_a}
// SBP: %5 = sbp.sgd_update %w, %4 {sbp.signature = #sbp.sig<[B], [B] -> [B]>, lr = 1.000000e-02 : f64}
