// Seed: local storage layouts on !sbp.tensor (flat, column-major, hierarchical, with offset).
sbp.placement @p "cpu" [0, 1]
sbp.placement @one "cpu" [0]
func.func @lay(%a: !sbp.tensor<8x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>>, %b: !sbp.tensor<4x8xf16, @one, [B], layout = #sbp.layout<(4,8):(1,4)>>) -> !sbp.tensor<8x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>> {
  %0 = sbp.relu %a : !sbp.tensor<8x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>> -> !sbp.tensor<8x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>>
  %1 = sbp.neg %b : !sbp.tensor<4x8xf16, @one, [B], layout = #sbp.layout<(4,8):(1,4)>> -> !sbp.tensor<4x8xf16, @one, [B], layout = #sbp.layout<((2,2),(2,4)):((1,4),(2,8)), offset = 3>>
  %2 = sbp.to_global %a : !sbp.tensor<8x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>> -> !sbp.tensor<8x8xf32, @p, [B], layout = #sbp.layout<(8,8):(8,1)>>
  %3 = sbp.exp %a : !sbp.tensor<8x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>> -> !sbp.tensor<8x8xf32, @p>
  func.return %0 : !sbp.tensor<8x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(8,1)>>
}
