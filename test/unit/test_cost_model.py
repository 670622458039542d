"""OneFlow's copy costs (reference/oneflow.md §1, §3) and the α-β transition planner."""

from __future__ import annotations

import itertools
import math

import pytest

from sbpc.dialects.collectives import step_bytes_exact
from sbpc.dialects.sbp import BROADCAST, SbpAttr, partial, split
from sbpc.passes.cost.comm import PlannerCache, plan_transition, transition_time
from sbpc.passes.infer_sbp.oneflow_costs import (
    FLT_MAX,
    INT32_MAX,
    INT64_MAX,
    VALID_MAX_COPY_COST,
    cost_1d,
    dim_reduce,
    eager_nd_cost,
    eager_nd_pricer,
    eager_reads_shape,
    ibn_copy_cost_1d,
    penalty_partial_consumer,
)

B = BROADCAST
P = partial()
PMAX = partial("max")
S0, S1, S2 = split(0), split(1), split(2)


def test_constants() -> None:
    assert INT32_MAX == 2**31 - 1
    assert INT64_MAX == float(2**63 - 1)
    assert FLT_MAX == pytest.approx(3.4028235e38)
    assert VALID_MAX_COPY_COST == pytest.approx(0.8 * FLT_MAX)


# ---------------------------------------------------------------------------
# 1-D IbnCopyCost (the 1-D sort key, sbp_parallel.cpp)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("producer", "consumer", "expected"),
    [
        (S0, S0, 0.0),
        (B, B, 0.0),
        (P, P, 0.0),
        # Consumer P first: INT64_MAX whatever the producer, B included.
        (S0, P, INT64_MAX),
        (B, P, INT64_MAX),
        # Producer B (to a split): INT32_MAX, a local slice priced as ~2.1 GB.
        (B, S0, INT32_MAX),
        (B, S1, INT32_MAX),
        # Everything else costs the logical size: S->S, S->B, P->S and P->B alike.
        (S0, S1, 96.0),
        (S0, B, 96.0),
        (P, S0, 96.0),
        (P, B, 96.0),
        # P(max) is not OneFlow's, but prices like any other producer.
        (PMAX, S0, 96.0),
    ],
)
def test_ibn_copy_cost_1d(producer: SbpAttr, consumer: SbpAttr, expected: float) -> None:
    assert ibn_copy_cost_1d(producer, consumer, 96.0) == expected


def test_ibn_copy_cost_sums_are_doubles() -> None:
    # OneFlow sums per-input costs in a double: two P consumers cost 2 * INT64_MAX, no overflow.
    assert ibn_copy_cost_1d(S0, P, 1.0) + ibn_copy_cost_1d(S1, P, 1.0) == 2 * INT64_MAX


# ---------------------------------------------------------------------------
# Cost1D (ComputCopyCostBetweenTwoSbpParallel, same devices, eager)
# ---------------------------------------------------------------------------

SIZE = 256.0


@pytest.mark.parametrize(
    ("producer", "consumer", "n", "expected"),
    [
        (S0, S0, 4, 0.0),
        (P, P, 4, 0.0),
        # any -> P: Penalty4PartialInConsumer policy 2 = 4 * size * (n + n) = 8 n size.
        (S0, P, 4, 8 * 4 * SIZE),
        (B, P, 2, 8 * 2 * SIZE),
        # B -> S: 1 (a slice).
        (B, S0, 4, 1.0),
        # S(i) -> S(j): size (n-1)/n.
        (S0, S1, 4, SIZE * 3 / 4),
        # P -> S and S -> B: size (n-1).
        (P, S1, 4, SIZE * 3),
        (S1, B, 4, SIZE * 3),
        # P -> B: 2 size (n-1).
        (P, B, 4, 2 * SIZE * 3),
        (P, B, 2, 2 * SIZE),
    ],
)
def test_cost_1d_table(producer: SbpAttr, consumer: SbpAttr, n: int, expected: float) -> None:
    assert cost_1d(producer, consumer, SIZE, n) == expected


def test_penalty_policy_2() -> None:
    assert penalty_partial_consumer(10.0, 2, 6) == 4 * 10 * 8


# ---------------------------------------------------------------------------
# Dim reduction (NdSbpsDimReduce / InOutParallelDimReduce)
# ---------------------------------------------------------------------------


def test_dim_reduce_drops_size_one_axes() -> None:
    rs, rd, rh = dim_reduce((S0, B), (S1, B), (1, 4), (8, 8))
    assert (rs, rd, rh) == ((B,), (B,), (4,))
    rs, rd, rh = dim_reduce((S0, S1), (S1, B), (1, 4), (8, 8))
    assert (rs, rd, rh) == ((S1,), (B,), (4,))


def test_dim_reduce_all_one_mesh_is_broadcast() -> None:
    assert dim_reduce((S0, P), (S1, S0), (1, 1), (8, 8)) == ((B,), (B,), (1,))


def test_dim_reduce_merges_b_and_p() -> None:
    assert dim_reduce((P, P), (B, B), (2, 2), (7,)) == ((P,), (B,), (4,))
    assert dim_reduce((B, B, B), (P, P, P), (2, 3, 2), (7,)) == ((B,), (P,), (12,))


def test_dim_reduce_needs_both_sides_to_repeat() -> None:
    assert dim_reduce((P, P), (B, S0), (2, 2), (8,)) == ((P, P), (B, S0), (2, 2))
    assert dim_reduce((B, S0), (S0, S0), (2, 2), (8, 8)) == ((B, S0), (S0, S0), (2, 2))


@pytest.mark.parametrize(
    ("extent", "merges"),
    # CanMergeSplit(e, m): e % m in {0, 1, m - 1}. [2,2]: (S0,S0) == [4]: S0 for 4, 5, 7, 8, not 6.
    [(4, True), (5, True), (6, False), (7, True), (8, True), (10, False), (11, True)],
)
def test_dim_reduce_split_merge_rule(extent: int, merges: bool) -> None:
    rs, rd, rh = dim_reduce((S0, S0), (B, B), (2, 2), (extent,))
    assert (rh == (4,)) is merges
    assert (rs, rd) == (((S0,), (B,)) if merges else ((S0, S0), (B, B)))


def test_dim_reduce_uses_held_shard_extents() -> None:
    # [2,2,2]: (S0,S0,S0) on a length-6 axis. Axes 0 and 1 cannot merge (6 % 4 = 2); once axis 1
    # starts a new reduced axis it holds the shards of 6 / 2 = 3, and 3 % (2*2) = 3 = m - 1, so
    # axes 1 and 2 merge: [2, 4] (OneFlow's NdSbpsDimReduce), not [2, 2, 2].
    assert dim_reduce((S0, S0, S0), (S0, S0, S0), (2, 2, 2), (6,)) == ((S0, S0), (S0, S0), (2, 4))
    # OneFlow's own comment: [2,4,3,7]: (S0,S1,S0,S0) on [601,301,999] holds 300/301 rows at the
    # third axis and 300 % 21 = 6 fails, so nothing merges.
    nd = (S0, S1, S0, S0)
    assert dim_reduce(nd, nd, (2, 4, 3, 7), (601, 301, 999)) == (nd, nd, (2, 4, 3, 7))


def test_dim_reduce_one_d_is_kept() -> None:
    assert dim_reduce((S0,), (B,), (4,), (6,)) == ((S0,), (B,), (4,))
    assert dim_reduce((S0,), (S1,), (1,), (6, 6)) == ((B,), (B,), (1,))


# ---------------------------------------------------------------------------
# Eager ND cost (ComputeEagerCopyCostBetweenNdSbp)
# ---------------------------------------------------------------------------


def test_eager_nd_equal_is_free() -> None:
    assert eager_nd_cost((S0, S1), (S0, S1), SIZE, (2, 2), (8, 8)) == 0.0
    # Equal after reduction too: (B, B) on [1, 4] vs (S0, B) differ only on a size-1 axis.
    assert eager_nd_cost((S0, B), (S1, B), SIZE, (1, 4), (8, 8)) == 0.0


def test_eager_nd_reduced_to_1d_uses_cost_1d() -> None:
    # (P,P) -> (B,B) on 2x2 reduces to [4]: P -> B = 2 size (4 - 1).
    assert eager_nd_cost((P, P), (B, B), SIZE, (2, 2), (8, 8)) == 2 * SIZE * 3
    # (S0,S0) -> (B,B): mergeable for 8 rows ([4]: S0 -> B = 3 size), not for 6 rows.
    assert eager_nd_cost((S0, S0), (B, B), SIZE, (2, 2), (8, 8)) == 3 * SIZE
    assert eager_nd_cost((S0, S0), (B, B), SIZE, (2, 2), (6, 8)) == 1 + 3 * SIZE + 3 * SIZE


def test_eager_nd_prices_every_axis_with_total_devices() -> None:
    # (S0, B) -> (B, B) on 2x2: only mesh axis 0 all-gathers among 2 ranks, but OneFlow prices
    # it as S -> B over all 4 devices: 1 + size * 3 (not size * 1).
    assert eager_nd_cost((S0, B), (B, B), SIZE, (2, 2), (8, 8)) == 1 + SIZE * 3
    # The same on 2x4 (8 devices): 1 + 7 size.
    assert eager_nd_cost((S0, B), (B, B), SIZE, (2, 4), (8, 8)) == 1 + SIZE * 7


def test_eager_nd_admitted_b_s0_to_s0_s0_quirk() -> None:
    # "(B, S0) -> (S0, S0) will give a cost 0" (sbp_infer_util.cpp): the per-axis sum is B -> S0
    # (1, a slice) + S0 -> S0 (0), although the data must really move ((1 - 1/m) T). The later
    # "same tensor axis split earlier" special case adds the logical size back once.
    per_axis = cost_1d(B, S0, SIZE, 4) + cost_1d(S0, S0, SIZE, 4)
    assert per_axis == 1.0
    assert eager_nd_cost((B, S0), (S0, S0), SIZE, (2, 2), (8, 8)) == 1.0 + per_axis + SIZE
    # OneFlow's example 1 of that case: (S1,S0,S1,S0) -> (S0,S0,S0,S0) on [2,2,2,2]:
    # 1 + 2 * size * 15/16 + size.
    src, dst = (S1, S0, S1, S0), (S0, S0, S0, S0)
    assert eager_nd_cost(src, dst, SIZE, (2, 2, 2, 2), (8, 8)) == 1 + 2 * SIZE * 15 / 16 + SIZE


def test_eager_nd_partial_consumer_double_penalty() -> None:
    # An axis turning into P pays Cost1D's penalty and the extra ND penalty: 1 + 2 * 8 * 4 * size.
    assert eager_nd_cost((S0, S1), (S0, P), SIZE, (2, 2), (8, 8)) == 1 + 2 * 8 * 4 * SIZE


def test_eager_nd_slices_are_cheap() -> None:
    assert eager_nd_cost((B, B), (S0, S1), SIZE, (2, 2), (8, 8)) == 3.0
    assert eager_nd_cost((S0, P), (S0, S0), SIZE, (2, 2), (8, 8)) == 1 + SIZE * 3


# ---------------------------------------------------------------------------
# α-β planner
# ---------------------------------------------------------------------------


def _eager_reference(src: tuple, dst: tuple, size: float, hierarchy: tuple, shape: tuple) -> float:
    """ComputeEagerCopyCostBetweenNdSbp summed directly (the pricer must equal it bit for bit)."""
    rs, rd, rh = dim_reduce(src, dst, hierarchy, shape)
    if rs == rd:
        return 0.0
    total_n = math.prod(hierarchy)
    if len(rh) == 1:
        return cost_1d(rs[0], rd[0], size, rh[0])
    total, normal = 1.0, True
    for i, (a, b) in enumerate(zip(rs, rd)):
        total += cost_1d(a, b, size, total_n)
        if b == P and a != b:
            total += penalty_partial_consumer(size, total_n, total_n)
        if a == b and a not in (B, P) and any(rs[j] != rd[j] and a in (rs[j], rd[j]) for j in range(i)):
            normal = False
    return total + size if not normal else total


@pytest.mark.parametrize("hierarchy", [(2, 2), (2, 4), (1, 4), (4, 1), (2, 1, 2), (2, 2, 2), (3, 2)])
def test_eager_pricer_reads_the_shape_only_where_declared(hierarchy: tuple[int, ...]) -> None:
    """`eager_nd_pricer` equals the direct sum for every pair of ND-SBPs; where `eager_reads_shape`
    is false its price is the same for every shape (so it may be shared across shapes)."""
    entries = (B, P, S0, S1)
    nds = list(itertools.product(entries, repeat=len(hierarchy)))
    shapes = [(8, 8), (6, 10), (3, 5), (12, 7)]
    for src in nds:
        for dst in nds:
            prices = {shape: eager_nd_pricer(src, dst, hierarchy, shape)(SIZE) for shape in shapes}
            for shape, price in prices.items():
                assert price == _eager_reference(src, dst, SIZE, hierarchy, shape)
                assert price == eager_nd_cost(src, dst, SIZE, hierarchy, shape)
            if not eager_reads_shape(src, dst):
                assert len(set(prices.values())) == 1, (src, dst)


def test_eager_reads_shape_where_a_split_merge_depends_on_extents() -> None:
    # (S0, S0) -> (S1, S1) on 2x2 merges the S0 axes only if the held extents allow it.
    assert eager_reads_shape((S0, S0), (S1, S1))
    assert eager_nd_cost((S0, S0), (S1, S1), SIZE, (2, 2), (8, 8)) != eager_nd_cost(
        (S0, S0), (S1, S1), SIZE, (2, 2), (6, 8))
    assert not eager_reads_shape((S0, B), (S1, B))


def test_b_to_s_is_a_free_all_slice() -> None:
    plan = plan_transition((B,), (S0,), (8, 4), 4, (2,))
    assert [s.kind for s in plan.steps] == ["all_slice"]
    assert plan.time_us == 0.0
    assert plan.bytes_sent == 0
    plan = plan_transition((B, B), (S0, S1), (8, 4), 4, (2, 2))
    assert {s.kind for s in plan.steps} == {"all_slice"}
    assert plan.time_us == 0.0


def test_pp_to_bb_on_2x2() -> None:
    plan = plan_transition((P, P), (B, B), (8, 4), 4, (2, 2))
    assert plan.steps
    assert all(s.kind == "all_reduce" for s in plan.steps)
    assert plan.steps[-1].dst == (B, B)
    assert 0 < plan.time_us < math.inf
    # One all-reduce over the 4 ranks (merged mesh axes): 2 L (n-1)/n per rank, L = 128 bytes.
    assert plan.bytes_sent == 4 * 2 * 128 * 3 // 4


def test_swapped_splits_on_2x2_reachable() -> None:
    plan = plan_transition((S0, S1), (S1, S0), (8, 4), 4, (2, 2))
    assert plan.steps
    assert plan.steps[0].src == (S0, S1)
    assert plan.steps[-1].dst == (S1, S0)
    for a, b in zip(plan.steps, plan.steps[1:], strict=False):
        assert a.dst == b.src
    assert 0 < plan.time_us < math.inf


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_all_reduce_bytes(n: int) -> None:
    # P -> B all-reduce: each rank sends 2 L (n-1)/n bytes, L its local bytes.
    shape, elt = (8 * n, 4), 4
    local = 8 * n * 4 * elt
    sent = step_bytes_exact("all_reduce", (P,), (B,), (0,), shape, (n,), elt)
    assert set(sent.values()) == {2 * local * (n - 1) // n}
    plan = plan_transition((P,), (B,), shape, elt, (n,))
    assert [s.kind for s in plan.steps] == ["all_reduce"]
    assert plan.bytes_sent == n * 2 * local * (n - 1) // n


def test_all_gather_and_reduce_scatter_bytes() -> None:
    # S(0) -> B: each rank sends its shard to the n - 1 others; P -> S(0): (n - 1)/n of L.
    shape, elt, n = (8, 4), 4, 2
    gather = step_bytes_exact("all_gather", (S0,), (B,), (0,), shape, (n,), elt)
    assert set(gather.values()) == {4 * 4 * elt}
    scatter = step_bytes_exact("reduce_scatter", (P,), (S0,), (0,), shape, (n,), elt)
    assert set(scatter.values()) == {8 * 4 * elt // 2}


def test_planner_prefers_fewer_bytes() -> None:
    # P -> S(0) is one reduce-scatter, cheaper than all-reduce then slice.
    plan = plan_transition((P,), (S0,), (8, 4), 4, (2,))
    assert [s.kind for s in plan.steps] == ["reduce_scatter"]
    # P(max) -> P(sum) has no single step: reduce the max (to a split, the cheapest), then
    # re-partial locally.
    plan = plan_transition((PMAX,), (P,), (8, 4), 4, (2,))
    assert [s.kind for s in plan.steps] == ["reduce_scatter", "to_partial"]


def test_links_price_merged_axes_at_slowest_bandwidth_and_largest_latency() -> None:
    from sbpc.passes.cost.comm import DEFAULT_MODEL, step_time

    model = DEFAULT_MODEL.with_links([(25.0, 10.0), (196.0, 1.5)])
    assert DEFAULT_MODEL.with_links(None) is DEFAULT_MODEL
    # all_reduce over 4 ranks: 2·3 hops. Inner axis alone, then both axes merged (8 ranks, 14 hops).
    assert step_time("all_reduce", 1e6, 4, model, (1,)) == pytest.approx(6.6 + 6 * 1.5 + 1e6 / 196e3)
    assert step_time("all_reduce", 1e6, 8, model, (0, 1)) == pytest.approx(6.6 + 14 * 10.0 + 1e6 / 25e3)
    assert step_time("all_reduce", 1e6, 8, DEFAULT_MODEL, (0, 1)) == pytest.approx(6.6 + 14 * 0.6 + 1e6 / 87.7e3)


# ---------------------------------------------------------------------------
# The planner's cache: an owned object with a bound
# ---------------------------------------------------------------------------


def test_planner_cache_keeps_its_bound_and_plans_alike() -> None:
    """Past `max_searches` searches the planner's cache is cleared before the next one; plans
    through a bounded cache, a shared one and fresh ones (no cache passed) are equal."""
    hierarchy = (2, 2)
    pairs = [((S0, B), (B, S0)), ((P, B), (B, B)), ((S1, S0), (S0, S1)), ((B, P), (S0, S1))]
    bounded, shared = PlannerCache(max_searches=2), PlannerCache()
    for src, dst in pairs:
        fresh = plan_transition(src, dst, (8, 8), 4, hierarchy)
        assert plan_transition(src, dst, (8, 8), 4, hierarchy, cache=bounded) == fresh
        assert plan_transition(src, dst, (8, 8), 4, hierarchy, cache=shared) == fresh
        assert transition_time(src, dst, (8, 8), 4, hierarchy, cache=shared) == fresh.time_us
        assert len(bounded.searches) <= 2
    assert len(shared.searches) == len(pairs)
    assert plan_transition((P, B), (B, B), (8, 8), 4, hierarchy).steps[0].kind == "all_reduce"
    shared.clear()
    assert shared.size() == 0



def test_each_lower_boxing_pass_owns_its_planner_cache() -> None:
    from sbpc.passes.lower_boxing import LowerBoxingPass

    first, second = LowerBoxingPass(), LowerBoxingPass()
    assert isinstance(first.cache, PlannerCache) and first.cache is not second.cache
