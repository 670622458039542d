// Seed: to_global and boxing between SBPs, i32/i64/bf16 element types, nested tensor attrs in dicts.
sbp.placement @p "cpu" [0, 1, 2, 3]
sbp.placement @m "npu" [[0], [1]]
func.func @conv(%a: !sbp.tensor<12xi32, @p, [S(0)]>, %b: !sbp.tensor<3x5xbf16, @m, [P, S(1)]>, %c: !sbp.tensor<2x2xi64, @p, [P(sum)]>) -> !sbp.tensor<12xi32, @p, [B]> {
  %0 = sbp.to_global %a : !sbp.tensor<12xi32, @p, [S(0)]> -> !sbp.tensor<12xi32, @p, [B]>
  %1 = sbp.boxing %b : !sbp.tensor<3x5xbf16, @m, [P, S(1)]> -> !sbp.tensor<3x5xbf16, @m, [B, S(0)]>
  %2 = sbp.boxing %c {info = #sbp.nd<[S(1)]>} : !sbp.tensor<2x2xi64, @p, [P(sum)]> -> !sbp.tensor<2x2xi64, @p, [P(max)]>
  %3 = "sbp.to_global"(%a) {sbp.signature = #sbp.sig<[S(0)] -> [P]>, ty = !sbp.tensor<1xf32, @p>} : (!sbp.tensor<12xi32, @p, [S(0)]>) -> !sbp.tensor<12xi32, @p, [P]>
  func.return %0 : !sbp.tensor<12xi32, @p, [B]>
}
