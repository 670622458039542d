"""Issue 13's P2 re-run: with `links` set to DTensor's CPU-mesh constants (every axis 87.7 × 0.22
GB/s, 2.7 µs per hop), `plan_transition` (what `lower-boxing{planner=optimal}` runs) is no slower
than torch's own `DTensorRedistributePlanner` on all 512 pairs over {S(0), S(1), B, P}² on 2×2 and
2×4, both priced by DTensor's formulas (bench/dtensor_planner.py). Without links, sbpc's default
constants (DTensor's intra-host 87.7 GB/s, 0.6 µs) choose 11 plans that DTensor's formulas on a
CPU mesh price 0.7–15.7 % higher. On latency-bound tensors (≤ ~100 KB) DTensor's 1 µs all-to-all
penalty alone separates the planners (see the test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.dtensor_planner import dtensor_cpu_links, dtensor_session, dtensor_step_us, p2_pairs, worse
from sbpc.passes.cost.comm import PlannerCache, make_step

SHAPE, ELT = (1024, 1024), 4
PLANNER = PlannerCache()


@pytest.fixture(scope="module")
def session() -> Iterator[None]:
    with dtensor_session():
        yield


@pytest.mark.parametrize("hierarchy", [(2, 2), (2, 4)])
def test_optimal_is_no_slower_than_dtensor_dijkstra_on_every_pair(hierarchy: tuple[int, ...], session: None) -> None:
    results = p2_pairs(hierarchy, SHAPE, ELT, True, PLANNER)
    assert len(results) == 256
    assert worse(results) == []
    assert sum(r.optimal_us < r.dtensor_us - 1e-6 for r in results) > 50  # strictly better on many


def test_without_links_sbpc_constants_lose_eleven_pairs(session: None) -> None:
    losing = [worse(p2_pairs(h, SHAPE, ELT, False, PLANNER)) for h in [(2, 2), (2, 4)]]
    assert [len(w) for w in losing] == [6, 5]
    ratios = [r.optimal_us / r.dtensor_us for w in losing for r in w]
    assert 1.006 < min(ratios) and max(ratios) < 1.16


@pytest.mark.parametrize("hierarchy", [(2, 2), (2, 4)])
@pytest.mark.parametrize("shape", [(64, 64)])
def test_on_small_tensors_only_dtensors_all_to_all_penalty_separates_them(
    hierarchy: tuple[int, ...], shape: tuple[int, ...], session: None
) -> None:
    """Latency-bound tensors: DTensor adds 1 us to every all-to-all "to favor allgather" (it has no
    all-to-all cost yet); sbpc's planner does not, so where its all-to-all beats gather + slice by
    less than 1 us DTensor's pricing calls it slower. Every such pair uses an all-to-all, loses by
    at most 1 us per all-to-all, and with the penalty left out of both prices none is slower."""
    with_penalty = worse(p2_pairs(hierarchy, shape, ELT, True, PLANNER))
    assert with_penalty  # the penalty does flip pairs here (64x64: 38 on 2x2, 50 on 2x4)
    for r in with_penalty:
        a2a = sum(1 for s in r.optimal.steps if s.kind == "all_to_all")
        assert a2a >= 1 and r.optimal_us - r.dtensor_us <= a2a * 1.0 + 1e-9
    assert worse(p2_pairs(hierarchy, shape, ELT, True, PLANNER, a2a_penalty=False)) == []


@pytest.mark.parametrize("hierarchy", [(2, 2), (2, 4)])
def test_our_dtensor_formulas_price_every_dtensor_edge_as_torch_does(hierarchy: tuple[int, ...],
                                                                     session: None) -> None:
    """Every edge of DTensor's 256 plans, as one of our steps, priced by `dtensor_step_us`, equals the
    cost torch's `one_step_redistribute_cost` gave it; and the kinds cover every collective."""
    links = dtensor_cpu_links(len(hierarchy))
    kinds = set()
    for result in p2_pairs(hierarchy, SHAPE, ELT, True, PLANNER):
        src, dst, plan = result.src, result.dst, result.dtensor
        assert plan.states[0] == src and plan.states[-1] == dst
        for (kind, axis, before, after), torch_us in zip(plan.steps(hierarchy), plan.edge_us, strict=True):
            step = make_step(kind, before, after, (axis,), SHAPE, ELT, hierarchy)
            assert dtensor_step_us(step, SHAPE, ELT, hierarchy, links) == pytest.approx(torch_us, rel=1e-12)
            kinds.add(kind)
    assert kinds == {"all_gather", "all_reduce", "reduce_scatter", "all_to_all", "all_slice", "to_partial"}
