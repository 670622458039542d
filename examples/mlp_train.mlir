// A 2-layer GeLU MLP whose result is a loss (the sum of its outputs), for `autodiff` (SPEC §8): the
// weights are written without an SBP, so that after the pass `infer-sbp{rule=global}` decides the
// weights', the gradients' and the AdamW state's SBP on the 2x4 mesh.
//
//   sbp-opt examples/mlp_train.mlir -p 'autodiff{optimizer=adamw lr=0.001}' -o /tmp/mlp_step.mlir
//   sbp-run /tmp/mlp_step.mlir --check --steps 3 --pipeline 'infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize'
sbp.placement @mesh "cpu" [[0, 1, 2, 3], [4, 5, 6, 7]]
func.func @main(%x: !sbp.tensor<64x128xf32, @mesh, [S(0), B]>, %w1: !sbp.tensor<128x256xf32, @mesh>,
                %b1: !sbp.tensor<256xf32, @mesh>, %w2: !sbp.tensor<256x128xf32, @mesh>) -> !sbp.tensor<f32, @mesh> {
  %h = sbp.matmul %x, %w1 : !sbp.tensor<64x128xf32, @mesh, [S(0), B]>, !sbp.tensor<128x256xf32, @mesh>
    -> !sbp.tensor<64x256xf32, @mesh>
  %hb = sbp.add %h, %b1 : !sbp.tensor<64x256xf32, @mesh>, !sbp.tensor<256xf32, @mesh> -> !sbp.tensor<64x256xf32, @mesh>
  %a = sbp.gelu %hb : !sbp.tensor<64x256xf32, @mesh> -> !sbp.tensor<64x256xf32, @mesh>
  %o = sbp.matmul %a, %w2 : !sbp.tensor<64x256xf32, @mesh>, !sbp.tensor<256x128xf32, @mesh> -> !sbp.tensor<64x128xf32, @mesh>
  %l = sbp.reduce_sum %o {axes = array<i64: 0, 1>} : !sbp.tensor<64x128xf32, @mesh> -> !sbp.tensor<f32, @mesh>
  func.return %l : !sbp.tensor<f32, @mesh>
}
