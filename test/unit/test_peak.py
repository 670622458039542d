"""passes/solver/peak.py (a window re-solved by HiGHS's RENS under the memory rows), mip.py's RENS
mode, and relink.Pool.settle, against brute force and HiGHS's exact MIP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sbpc.passes.solver import peak
from sbpc.passes.solver.local import improve
from sbpc.passes.solver.mip import MIP_UNIT, solve_mip
from sbpc.passes.solver.peak import mip_window, window_problem
from sbpc.passes.solver.relink import Pool
from test.unit.test_relink import best_in_window, fits, graph_of


def lean_plan(graph) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Each variable's least-usage choice (cheapest among those): a plan that fits."""
    return np.array([int(np.lexsort((u, graph.rows.total(a)))[0]) for a, u in enumerate(graph.unary)])


@pytest.mark.parametrize("seed", range(12))
def test_window_problem_prices_plans_as_the_graph_does(seed: int) -> None:
    """Every choice of a small window: the window problem's value plus the rest's equals the graph's
    value, and its rows hold exactly where the graph's chosen rows do."""
    graph = graph_of(30, seed)
    plan = lean_plan(graph)
    movable = [a for a in range(len(graph.unary)) if len(graph.unary[a]) > 1]
    window = sorted(np.random.default_rng(seed).choice(movable, size=min(4, len(movable)), replace=False).tolist())
    used = graph.rows.of(plan)
    chosen = np.ones(len(used), bool)
    problem = window_problem(graph, plan, window, chosen, used)
    assert problem is not None
    offset = graph.value(plan) - problem.value([int(plan[a]) for a in window]) * MIP_UNIT
    for choice in itertools.product(*[range(len(graph.unary[a])) for a in window]):
        trial = plan.copy()
        trial[window] = choice
        assert problem.value(list(choice)) * MIP_UNIT + offset == pytest.approx(graph.value(trial), rel=1e-12)
        within = all(row.constant + sum(float(problem.memory_terms[k][1][choice[problem.memory_terms[k][0]]])
                                        for k in row.terms) <= graph.rows.limit for row in problem.memory)
        assert within == fits(graph, trial)


@pytest.mark.parametrize("seed", range(20))
def test_mip_window_against_brute_force(seed: int) -> None:
    """A window of five, the rest held at the leanest plan: the answer (if any) fits every row, keeps
    the rest, is cheaper than the plan and no cheaper than the best choice of the window that fits
    (RENS is a heuristic: it need not reach that best)."""
    graph = graph_of(30, seed)
    plan = lean_plan(graph)
    assert fits(graph, plan)
    movable = [a for a in range(len(graph.unary)) if len(graph.unary[a]) > 1]
    window = sorted(np.random.default_rng(seed).choice(movable, size=min(5, len(movable)), replace=False).tolist())
    best = best_in_window(graph, plan, window)
    tight = graph.rows.of(plan) >= 0.9 * graph.rows.limit  # rows join as the answers overflow them
    better = mip_window(graph, plan, window, tight)
    if better is None:
        return
    held = np.setdiff1d(np.arange(len(plan)), window)
    assert fits(graph, better) and (better[held] == plan[held]).all()
    assert best <= graph.value(better) < graph.value(plan)


@pytest.mark.parametrize("seed", range(8))
def test_rens_bound_holds_and_plan_fits(seed: int) -> None:
    """On a whole problem: RENS's plan is no better than the exact MIP's optimum, fits the budget,
    and its bound (the LP relaxation's) is no higher than that optimum."""
    graph = graph_of(24, seed)
    plan = lean_plan(graph)
    everything = list(range(len(graph.unary)))
    problem = window_problem(graph, plan, everything, np.ones(len(graph.rows.constant), bool), graph.rows.of(plan))
    assert problem is not None
    exact = solve_mip(problem, graph.rows.limit)
    rens = solve_mip(problem, graph.rows.limit, start=[int(c) for c in plan], presolve=True, rens=True)
    assert exact is not None and rens is not None
    slack = 1e-9 * abs(exact.objective)
    assert rens.lower_bound <= exact.objective + slack <= rens.objective + 2 * slack
    assert problem.memory_peak(rens.choice) <= graph.rows.limit * (1 + 1e-9)
    assert rens.objective <= problem.value([int(c) for c in plan]) + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_settle_keeps_the_best_plan_that_fits(seed: int) -> None:
    """From a local-search plan: settling never worsens the pool's best, which still fits."""
    graph = graph_of(40, seed)
    found = improve(graph, rounds=3)
    assert found is not None
    pool = Pool(graph)
    pool.add(found[0])
    pool.settle()
    best = pool.best()
    assert best is not None and fits(graph, best[0]) and best[1] == graph.value(best[0]) <= found[1]


def test_live_at_a_mask_is_the_union_of_the_rows() -> None:
    graph = graph_of(30, 1)
    pool = Pool(graph)
    mask = np.zeros(len(graph.rows.constant), bool)
    mask[::3] = True
    assert pool.live_at(mask) == {a for row in np.flatnonzero(mask).tolist() for a in pool.live(int(row))}


def test_window_problem_too_large_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the size limits no problem is built and the window is left as it is."""
    graph = graph_of(30, 2)
    plan = lean_plan(graph)
    everything = list(range(len(graph.unary)))
    rows = np.ones(len(graph.rows.constant), bool)
    assert window_problem(graph, plan, everything, rows, graph.rows.of(plan)) is not None
    monkeypatch.setattr(peak, "MAX_COEFFICIENTS", 1)
    assert window_problem(graph, plan, everything, rows, graph.rows.of(plan)) is None
    assert mip_window(graph, plan, everything, rows) is None


@pytest.mark.parametrize("seed", range(6))
def test_settle_improves_the_leanest_plan(seed: int) -> None:
    """The leanest plan (every variable at its least usage) leaves memory unspent: settling it finds a
    cheaper plan that still fits."""
    graph = graph_of(40, seed)
    plan = lean_plan(graph)
    pool = Pool(graph)
    pool.add(plan, relink=False)
    pool.settle()
    best = pool.best()
    assert best is not None and fits(graph, best[0]) and best[1] < graph.value(plan)
