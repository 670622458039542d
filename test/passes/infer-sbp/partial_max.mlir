// RUN: sbp-opt %s --infer-sbp="rule=cost" | filecheck %s --check-prefix=COST
// RUN: sbp-opt %s --infer-sbp | filecheck %s --check-prefix=ONEFLOW

// Partial max/min (P(max), P(min)) exist only under rule=cost: the extremum rules OneFlow lacks.
// maximum/minimum keep P(max)/P(min); monotone increasing unary ops (relu, exp, add_scalar) keep
// them; neg swaps them; reduce_max/min over a split axis produce them; transpose passes them on.
// rule=oneflow never produces P(max)/P(min): its lists have no such signature, so a P(max) input
// is converted (priced as an ordinary P -> S / P -> B at `size`).

sbp.placement @p "cpu" [0, 1]

// COST-LABEL: func.func @pmax(
// COST-SAME:    -> (!sbp.tensor<8x4xf32, @p, [P(max)]>, !sbp.tensor<8x4xf32, @p, [P(max)]>, !sbp.tensor<8x4xf32, @p, [P(min)]>, !sbp.tensor<4xf32, @p, [P(max)]>, !sbp.tensor<4xf32, @p, [P(min)]>, !sbp.tensor<8x4xf32, @p, [P(min)]>, !sbp.tensor<8x4xf32, @p, [P(max)]>, !sbp.tensor<4x8xf32, @p, [P(max)]>)
// COST:         sbp.maximum %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[P(max)], [P(max)] -> [P(max)]>} : {{.*}} -> !sbp.tensor<8x4xf32, @p, [P(max)]>
// COST:         sbp.relu %{{.*}} {sbp.signature = #sbp.sig<[P(max)] -> [P(max)]>} : {{.*}} -> !sbp.tensor<8x4xf32, @p, [P(max)]>
// COST:         sbp.neg %{{.*}} {sbp.signature = #sbp.sig<[P(max)] -> [P(min)]>} : {{.*}} -> !sbp.tensor<8x4xf32, @p, [P(min)]>
// COST:         sbp.reduce_max %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [P(max)]>, axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p, [P(max)]>
// COST:         sbp.reduce_min %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [P(min)]>, axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p, [P(min)]>
// COST:         sbp.minimum %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[P(min)], [P(min)] -> [P(min)]>} : {{.*}} -> !sbp.tensor<8x4xf32, @p, [P(min)]>
// COST:         sbp.exp %{{.*}} {sbp.signature = #sbp.sig<[P(max)] -> [P(max)]>} : {{.*}} -> !sbp.tensor<8x4xf32, @p, [P(max)]>
// COST:         sbp.transpose %{{.*}} {sbp.signature = #sbp.sig<[P(max)] -> [P(max)]>, perm = array<i64: 1, 0>} : {{.*}} -> !sbp.tensor<4x8xf32, @p, [P(max)]>

// ONEFLOW-LABEL: func.func @pmax(
// ONEFLOW-SAME:    -> (!sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<4xf32, @p, [S(0)]>, !sbp.tensor<4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<8x4xf32, @p, [S(0)]>, !sbp.tensor<4x8xf32, @p, [S(0)]>)
// ONEFLOW:         sbp.maximum %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>}
// ONEFLOW:         sbp.relu %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>}
// ONEFLOW:         sbp.neg %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>}
// reduce_max over the split axis: OneFlow has no S(0) -> P(max); S(1) -> S(0) and B -> B tie at
// `size`, the earlier one wins.
// ONEFLOW:         sbp.reduce_max %{{.*}} {sbp.signature = #sbp.sig<[S(1)] -> [S(0)]>, axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p, [S(0)]>
// ONEFLOW:         sbp.reduce_min %{{.*}} {sbp.signature = #sbp.sig<[S(1)] -> [S(0)]>, axes = array<i64: 0>}
// ONEFLOW:         sbp.minimum %{{.*}}, %{{.*}} {sbp.signature = #sbp.sig<[S(0)], [S(0)] -> [S(0)]>}
// ONEFLOW:         sbp.exp %{{.*}} {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>}
// ONEFLOW:         sbp.transpose %{{.*}} {sbp.signature = #sbp.sig<[S(1)] -> [S(0)]>, perm = array<i64: 1, 0>}
// ONEFLOW:         func.return
func.func @pmax(%a: !sbp.tensor<8x4xf32, @p, [P(max)]>, %b: !sbp.tensor<8x4xf32, @p, [P(max)]>,
                %s: !sbp.tensor<8x4xf32, @p, [S(0)]>, %m: !sbp.tensor<8x4xf32, @p, [P(min)]>)
    -> (!sbp.tensor<8x4xf32, @p>, !sbp.tensor<8x4xf32, @p>, !sbp.tensor<8x4xf32, @p>, !sbp.tensor<4xf32, @p>,
        !sbp.tensor<4xf32, @p>, !sbp.tensor<8x4xf32, @p>, !sbp.tensor<8x4xf32, @p>, !sbp.tensor<4x8xf32, @p>) {
  %0 = sbp.maximum %a, %b : !sbp.tensor<8x4xf32, @p, [P(max)]>, !sbp.tensor<8x4xf32, @p, [P(max)]> -> !sbp.tensor<8x4xf32, @p>
  %1 = sbp.relu %a : !sbp.tensor<8x4xf32, @p, [P(max)]> -> !sbp.tensor<8x4xf32, @p>
  %2 = sbp.neg %a : !sbp.tensor<8x4xf32, @p, [P(max)]> -> !sbp.tensor<8x4xf32, @p>
  %3 = sbp.reduce_max %s {axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  %4 = sbp.reduce_min %s {axes = array<i64: 0>} : !sbp.tensor<8x4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>
  %5 = sbp.minimum %m, %m : !sbp.tensor<8x4xf32, @p, [P(min)]>, !sbp.tensor<8x4xf32, @p, [P(min)]> -> !sbp.tensor<8x4xf32, @p>
  %6 = sbp.exp %a : !sbp.tensor<8x4xf32, @p, [P(max)]> -> !sbp.tensor<8x4xf32, @p>
  %7 = sbp.transpose %a {perm = array<i64: 1, 0>} : !sbp.tensor<8x4xf32, @p, [P(max)]> -> !sbp.tensor<4x8xf32, @p>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : !sbp.tensor<8x4xf32, @p>, !sbp.tensor<8x4xf32, @p>, !sbp.tensor<8x4xf32, @p>, !sbp.tensor<4xf32, @p>,
        !sbp.tensor<4xf32, @p>, !sbp.tensor<8x4xf32, @p>, !sbp.tensor<8x4xf32, @p>, !sbp.tensor<4x8xf32, @p>
}

// A chain stays partial until something needs the value: maximum -> relu -> reduce_max keeps P(max).
// COST-LABEL: func.func @chain(
// COST-SAME:    -> !sbp.tensor<8xf32, @p, [P(max)]>
// COST:         sbp.maximum {{.*}} -> !sbp.tensor<8x4xf32, @p, [P(max)]>
// COST:         sbp.relu {{.*}}#sbp.sig<[P(max)] -> [P(max)]>
// COST:         sbp.reduce_max {{.*}}#sbp.sig<[P(max)] -> [P(max)]>
// ONEFLOW-LABEL: func.func @chain(
// ONEFLOW-SAME:    -> !sbp.tensor<8xf32, @p, [S(0)]>
func.func @chain(%a: !sbp.tensor<8x4xf32, @p, [P(max)]>, %b: !sbp.tensor<8x4xf32, @p, [P(max)]>) -> !sbp.tensor<8xf32, @p> {
  %0 = sbp.maximum %a, %b : !sbp.tensor<8x4xf32, @p, [P(max)]>, !sbp.tensor<8x4xf32, @p, [P(max)]> -> !sbp.tensor<8x4xf32, @p>
  %1 = sbp.relu %0 : !sbp.tensor<8x4xf32, @p> -> !sbp.tensor<8x4xf32, @p>
  %2 = sbp.reduce_max %1 {axes = array<i64: 1>} : !sbp.tensor<8x4xf32, @p> -> !sbp.tensor<8xf32, @p>
  func.return %2 : !sbp.tensor<8xf32, @p>
}
