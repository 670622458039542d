sbp.placement @p "npu" [0]
func.func @main(%a: !sbp.tensor<100x1000xf32, @p, [B]>, %b: !sbp.tensor<1000xf32, @p, [B]>,
                %c: !sbp.tensor<1000x1000xf16, @p, [B]>, %d: !sbp.tensor<1000x1xf16, @p, [B]>,
                %e: !sbp.tensor<1000x1000xf16, @p, [B], layout = #sbp.layout<(1000,1000):(1,1000)>>,
                %f: !sbp.tensor<1000x1000xf32, @p, [B], layout = #sbp.layout<(1000,1000):(1,1000)>>,
                %g: !sbp.tensor<1000x1000xf32, @p, [B], layout = #sbp.layout<(1000,1000):(1,1000)>>,
                %h: !sbp.tensor<1000x1000xbf16, @p, [B], layout = #sbp.layout<(1000,1000):(2000,1)>>,
                %i: !sbp.tensor<1000x1000xbf16, @p, [B], layout = #sbp.layout<(1000,1000):(2000,1)>>,
                %j: !sbp.tensor<1000000xi16, @p, [B]>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<100x1000xf32, @p, [B]>, !sbp.tensor<1000xf32, @p, [B]> -> !sbp.tensor<100x1000xf32, @p>
  %1 = sbp.fmod %c, %d : !sbp.tensor<1000x1000xf16, @p, [B]>, !sbp.tensor<1000x1xf16, @p, [B]> -> !sbp.tensor<1000x1000xf16, @p>
  %2 = sbp.fmod_scalar %e, 2.5 : f16 : !sbp.tensor<1000x1000xf16, @p, [B], layout = #sbp.layout<(1000,1000):(1,1000)>> -> !sbp.tensor<1000x1000xf16, @p>
  %3 = sbp.fmod %f, %g : !sbp.tensor<1000x1000xf32, @p, [B], layout = #sbp.layout<(1000,1000):(1,1000)>>, !sbp.tensor<1000x1000xf32, @p, [B], layout = #sbp.layout<(1000,1000):(1,1000)>> -> !sbp.tensor<1000x1000xf32, @p>
  %4 = sbp.fmod %h, %i : !sbp.tensor<1000x1000xbf16, @p, [B], layout = #sbp.layout<(1000,1000):(2000,1)>>, !sbp.tensor<1000x1000xbf16, @p, [B], layout = #sbp.layout<(1000,1000):(2000,1)>> -> !sbp.tensor<1000x1000xbf16, @p>
  %5 = sbp.fmod_scalar %j, 3 : i16 : !sbp.tensor<1000000xi16, @p, [B]> -> !sbp.tensor<1000000xi16, @p>
  func.return
}
