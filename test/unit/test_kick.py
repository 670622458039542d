"""passes/solver/kick.py (a settled plan kicked by its peak's LP prices) and mip.memory_prices
(the LP's shadow prices of the memory rows), against LP duality and the rows."""

from __future__ import annotations

import numpy as np
import pytest

from sbpc.passes.solver.factor import FactorProblem, MemoryRow
from sbpc.passes.solver.kick import kick, peak_prices, repair
from sbpc.passes.solver.local import improve
from sbpc.passes.solver.mip import memory_prices, solve_mip
from sbpc.passes.solver.relink import PEAK_FILL, Pool
from test.unit.test_relink import fits, graph_of


def knapsack(seed: int, n: int = 12) -> FactorProblem:
    """Variables of three choices, the cheaper the larger, under one memory row."""
    rng = np.random.default_rng(seed)
    unary = [np.sort(rng.uniform(0.0, 5.0, 3)) for _ in range(n)]
    terms = [(v, np.sort(rng.uniform(1.0, 10.0, 3))[::-1].copy()) for v in range(n)]
    return FactorProblem(unary=unary, memory_terms=terms, memory=[MemoryRow(2.0, list(range(n)))])


@pytest.mark.parametrize("seed", range(10))
def test_memory_prices_meet_strong_duality(seed: int) -> None:
    """One row: the prices are one shadow price y ≥ 0 times each choice's usage, and the Lagrangian
    at y, Σ_v min_c (cost + price) - y × (budget - the row's constant), is the LP's optimum (RENS's
    bound); with the budget above every usage the prices are zero."""
    problem = knapsack(seed)
    usage = [terms for _, terms in problem.memory_terms]
    assert all(not price.any() for price in memory_prices(problem, 1e6) or [np.ones(1)])
    lean, full = 2.0 + sum(u.min() for u in usage), 2.0 + sum(u.max() for u in usage)
    budget = (lean + full) / 2
    prices = memory_prices(problem, budget)
    assert prices is not None
    ratios = np.concatenate([p / u for p, u in zip(prices, usage, strict=True)])
    y = float(ratios[0])
    assert y > 0 and np.allclose(ratios, y, rtol=1e-6)
    dual = sum(float((u + p).min()) for u, p in zip(problem.unary, prices, strict=True)) - y * (budget - 2.0)
    relaxed = solve_mip(problem, budget, rens=True)
    assert relaxed is not None
    assert dual == pytest.approx(relaxed.lower_bound, rel=1e-6, abs=1e-9)
    assert relaxed.lower_bound <= relaxed.objective + 1e-9


def settled(seed: int) -> Pool:
    graph = graph_of(60, seed)
    found = improve(graph, rounds=3)
    assert found is not None
    pool = Pool(graph)
    pool.add(found[0], relink=False)
    pool.settle()
    return pool


@pytest.mark.parametrize("seed", range(8))
def test_peak_prices_price_only_the_peak_rows(seed: int) -> None:
    """The peak's live variables' prices are ≥ 0, and zero on choices that use no more at the peak
    than the variable's least (the LP prices usage only where its rows bind)."""
    pool = settled(seed)
    graph, best = pool.graph, pool.plans[0][1]
    peak = graph.rows.of(best) >= PEAK_FILL * graph.rows.limit
    live = sorted(pool.live_at(peak))
    if not live:
        pytest.skip("no row near the limit")
    prices = peak_prices(graph, best, live, peak, graph.rows.of(best))
    assert prices is not None and len(prices) == len(live)
    for a, price in zip(live, prices, strict=True):
        assert len(price) == len(graph.unary[a]) and (price >= -1e-6 * max(1.0, price.max())).all()


@pytest.mark.parametrize("seed", range(12))
def test_kick_never_worsens_and_its_plans_fit(seed: int) -> None:
    """Kicked at each scale: the pool's best never gets dearer, always fits, and a kick that reports
    a gain left a cheaper plan."""
    pool = settled(seed)
    graph = pool.graph
    for scale in (50.0, 5.0, 500.0):
        before = pool.plans[0][0]
        gained = kick(pool, scale, 200)
        best = pool.best()
        assert best is not None and fits(graph, best[0]) and best[1] == graph.value(best[0])
        assert best[1] < before if gained else best[1] == before


@pytest.mark.parametrize(("seed", "kicked"), [(0, 4868.0), (1, 4938.0), (9, 4946.0)])
def test_a_kick_leaves_the_settled_basin(seed: int, kicked: float) -> None:
    """Where settling again changes nothing, a kick at 50x the peak's LP prices finds a cheaper plan
    that fits, and the same kick unpriced (toulbar2's answer without the prices, repaired and
    settled) does not: the prices make the move."""
    pool = settled(seed)
    before = pool.plans[0][0]
    pool.settle()
    assert pool.plans[0][0] == before
    assert kick(pool, 50.0, 200) and pool.plans[0][0] == kicked < before and fits(pool.graph, pool.plans[0][1])
    unpriced = settled(seed)
    assert not kick(unpriced, 0.0, 200) and unpriced.plans[0][0] == before


@pytest.mark.parametrize("seed", range(8))
def test_repair_fits_or_refuses(seed: int) -> None:
    """The most memory-hungry plan (each variable at its largest usage) repaired: a plan that fits
    every row, or None; a plan that fits already comes back as it is."""
    pool = settled(seed)
    graph = pool.graph
    hungry = np.array([int(np.argmax(graph.rows.total(a))) for a in range(len(graph.unary))])
    fixed = repair(pool, hungry)
    assert fixed is None or fits(graph, fixed)
    best = pool.plans[0][1]
    assert repair(pool, best) is best
