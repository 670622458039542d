// Seed: hints and signatures, 0-d tensors, unknown SBPs on results.
sbp.placement @p "cpu" [0, 1]
sbp.placement @q "npu" [[0, 1], [2, 3]]
func.func @hints(%a: !sbp.tensor<4x4xf32, @q, [S(0), B]>, %s: !sbp.tensor<f32, @p, [B]>, %t: !sbp.tensor<f32, @p, [P(min)]>) -> !sbp.tensor<4x4xf32, @q> {
  %0 = sbp.add %a, %a {sbp.hint = #sbp.sig<?, [S(0), B] -> ?>} : !sbp.tensor<4x4xf32, @q, [S(0), B]>, !sbp.tensor<4x4xf32, @q, [S(0), B]> -> !sbp.tensor<4x4xf32, @q>
  %1 = sbp.mul %s, %t {sbp.signature = #sbp.sig<[B], [P(min)] -> [P(min)]>} : !sbp.tensor<f32, @p, [B]>, !sbp.tensor<f32, @p, [P(min)]> -> !sbp.tensor<f32, @p>
  %2 = sbp.relu %0 {sbp.hint = #sbp.sig<[S(0), B] -> [S(1), P(max)]>} : !sbp.tensor<4x4xf32, @q> -> !sbp.tensor<4x4xf32, @q>
  %3 = sbp.exp %s {sbp.hint = #sbp.sig<? -> [B]>, note = "free text"} : !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<f32, @p>
  func.return %0 : !sbp.tensor<4x4xf32, @q>
}
