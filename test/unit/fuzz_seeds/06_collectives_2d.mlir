// Seed: collectives on a 2-D mesh, generic form, touching one or both mesh axes.
sbp.placement @q "npu" [[0, 1, 2], [3, 4, 5]]
func.func @coll2(%x: !sbp.tensor<6x12xf32, @q, [S(0), S(1)]>, %y: !sbp.tensor<6x12xf32, @q, [P, B]>, %z: !sbp.tensor<6x12xf32, @q, [S(1), S(1)]>) -> !sbp.tensor<6x12xf32, @q, [B, B]> {
  %0 = "sbp.all_gather"(%z) <{mesh_axes = array<i64: 0, 1>}> : (!sbp.tensor<6x12xf32, @q, [S(1), S(1)]>) -> !sbp.tensor<6x12xf32, @q, [B, B]>
  %1 = "sbp.all_reduce"(%y) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<6x12xf32, @q, [P, B]>) -> !sbp.tensor<6x12xf32, @q, [B, B]>
  %2 = "sbp.reduce_scatter"(%y) <{mesh_axes = array<i64: 0>}> : (!sbp.tensor<6x12xf32, @q, [P, B]>) -> !sbp.tensor<6x12xf32, @q, [S(1), B]>
  %3 = "sbp.all_to_all"(%x) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<6x12xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<6x12xf32, @q, [S(0), S(0)]>
  %4 = "sbp.all_slice"(%0) <{mesh_axes = array<i64: 1>}> : (!sbp.tensor<6x12xf32, @q, [B, B]>) -> !sbp.tensor<6x12xf32, @q, [B, S(1)]>
  %5 = "sbp.to_partial"(%1) <{mesh_axes = array<i64: 0, 1>}> : (!sbp.tensor<6x12xf32, @q, [B, B]>) -> !sbp.tensor<6x12xf32, @q, [P(max), P(max)]>
  "func.return"(%0) : (!sbp.tensor<6x12xf32, @q, [B, B]>) -> ()
}
