"""solver.anytime and rule=global's wide path (`search.solve_wide`): the plan is priced exactly and
fits, the bound holds against the exact optimum (elimination, or HiGHS under a budget), coordinate
descent never raises the objective, and HiGHS stopped by a limit keeps the plan it started from."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sbpc.passes.infer_sbp.global_search import search as global_search
from sbpc.passes.infer_sbp.global_search.objective import plan_objective
from sbpc.passes.infer_sbp.global_search.search import apply_solution, infer_module_global
from sbpc.passes.solver.anytime import Descent, anytime, pairwise_graph
from sbpc.passes.solver.factor import CoverForm, FactorProblem, MemoryRow, eliminate
from sbpc.passes.solver.mip import min_budget, solve_mip
from test.unit.test_global_search import SMALL_MESHES, build, close, programs


def random_pairwise(seed: int, n: int = 12, memory: bool = False) -> FactorProblem:
    """A chain with chords, domains 2-4, memory terms per variable over overlapping rows."""
    rng = np.random.default_rng(seed)
    unary = [rng.random(int(rng.integers(2, 5))) for _ in range(n)]
    p = FactorProblem(unary, constant=0.5)
    for v in range(1, n):
        for u in {v - 1, int(rng.integers(0, v))}:
            p.add_pair(u, v, rng.random((len(unary[u]), len(unary[v]))))
    if memory:
        p.memory_terms = [(v, rng.integers(1, 9, len(unary[v])).astype(float)) for v in range(n)]
        p.memory = [MemoryRow(float(r), list(range(r, min(r + 4, n)))) for r in range(n - 1)]
    return p


def test_pairwise_graph_prices_as_the_factor_problem() -> None:
    p = random_pairwise(0, memory=True)
    graph = pairwise_graph(p, 20.0)
    rng = np.random.default_rng(1)
    for _ in range(20):
        choice = np.array([int(rng.integers(len(u))) for u in p.unary])
        assert close(graph.value(choice), p.value(list(choice)) * 1e6)
        rows = {(row.constant, *sorted(row.terms)) for row in p.memory}
        assert len(graph.rows.of(choice)) == len(rows)
        assert close(float(graph.rows.of(choice).max()), p.memory_peak(list(choice)))


@pytest.mark.parametrize("seed", range(6))
def test_anytime_without_budget_bounds_the_optimum(seed: int) -> None:
    p = random_pairwise(seed)
    optimum = eliminate(p)
    assert optimum is not None
    found = anytime(p, p, p, None)
    assert found is not None
    assert found.lower_bound <= optimum.objective * (1 + 1e-9)
    assert found.objective >= optimum.objective * (1 - 1e-9)
    assert close(found.objective, p.value(found.choice))
    assert found.objective <= optimum.objective * 1.05  # a chain with chords: the search gets near


@pytest.mark.parametrize("seed", range(6))
def test_anytime_under_a_budget_fits_and_bounds_highs(seed: int) -> None:
    p = random_pairwise(seed, memory=True)
    free = eliminate(p)
    assert free is not None
    smallest, peak = min_budget(p), p.memory_peak(free.choice)
    budget = smallest + (peak - smallest) * 0.5
    whole = solve_mip(p, budget)
    assert whole is not None and whole.lower_bound >= whole.objective * (1 - 1e-9)
    found = anytime(p, p, p, budget)
    assert found is not None
    assert p.memory_peak(found.choice) <= budget * (1 + 1e-12)
    assert found.lower_bound <= whole.objective * (1 + 1e-9)
    assert found.objective >= whole.objective * (1 - 1e-9)


def test_descent_never_raises_the_objective_and_keeps_the_budget() -> None:
    p = random_pairwise(3, n=20, memory=True)
    budget = min_budget(p) * 1.3
    rng = np.random.default_rng(0)
    descent = Descent(p, budget)
    for _ in range(20):
        start = [int(rng.integers(len(u))) for u in p.unary]
        if p.memory_peak(start) > budget:
            continue
        after = descent.run(start)
        assert p.value(after) <= p.value(start) * (1 + 1e-12)
        assert p.memory_peak(after) <= budget * (1 + 1e-12)


def test_highs_stopped_by_a_limit_keeps_its_start() -> None:
    p = random_pairwise(5, n=40)
    start = [0] * len(p.unary)
    found = solve_mip(p, None, time_limit=1e-9, start=start)
    assert found is not None
    assert found.objective <= p.value(start) * (1 + 1e-12)
    assert found.lower_bound <= eliminate(p).objective * (1 + 1e-9)  # type: ignore[union-attr]


@pytest.mark.parametrize(("budgeted", "count"), [
    (False, 3),  # ~9 s CPU; the eight programs (~26 s) and the budgeted ones in the sweeps
    pytest.param(False, 8, marks=pytest.mark.exhaustive),
    pytest.param(True, 8, marks=pytest.mark.exhaustive),
])
def test_rule_global_wide_path_on_programs(monkeypatch: pytest.MonkeyPatch, budgeted: bool, count: int) -> None:
    """Elimination refused (as on a wide DAG): the wide path's plan is priced as it runs, fits the
    budget, costs at least the exact optimum, and its bound is at most that optimum."""
    checked = 0
    for seed, text in programs(count, 30, SMALL_MESHES, seed=41):
        problem, factors = build(text, 1.0 if budgeted else None)
        exact = eliminate(factors)
        if exact is None:
            continue
        budget = None
        if budgeted:
            smallest, peak = min_budget(factors), factors.memory_peak(exact.choice)
            if peak <= smallest:
                continue
            budget = int(smallest + (peak - smallest) * random.Random(seed).random() * 0.9) + 1
            optimum = solve_mip(problem.factors(covers=True), float(budget))
            assert optimum is not None
        else:
            optimum = exact
        module = problem.function.parent_op()
        with monkeypatch.context() as patch:
            patch.setattr(global_search, "eliminate", lambda *args, **kwargs: None)
            (result,) = infer_module_global(module, budget)
        found = result.solution
        assert "lagrangian+local search" in found.solver, (seed, found.solver)
        assert found.lower_bound <= optimum.objective * (1 + 1e-9) + 1e-15, seed  # a bound, never the cost
        assert found.objective >= optimum.objective * (1 - 1e-9) - 1e-15, seed
        got = plan_objective(module)
        assert close(got.total_s, found.objective, 1e-9), seed
        if budget is not None:
            assert got.memory_bytes <= budget, seed
        apply_solution(result.problem, found.choice)
        checked += 1
    assert checked >= (count // 2 if budgeted else count), checked  # budgeted: where the memory binds


def test_descent_prices_a_cover_as_its_value() -> None:
    """A shared boxing read as a cover: each variable's local costs, producer and consumers, are the
    objective's own differences."""
    rng = np.random.default_rng(7)
    p = random_pairwise(2, n=5)
    targets = 4
    needs = {v: rng.random((len(p.unary[v]), targets)) < 0.4 for v in (2, 3, 4)}
    rows = rng.integers(0, 2, len(p.unary[1]))
    p.covers.append(CoverForm(1, rows, rng.random((2, targets)), needs, np.array([True, False, False, False])))
    descent = Descent(p, None)
    for _ in range(10):
        choice = [int(rng.integers(len(u))) for u in p.unary]
        for v in range(len(p.unary)):
            local = descent.local(v, choice)
            values = [p.value([*choice[:v], c, *choice[v + 1:]]) for c in range(len(p.unary[v]))]
            assert np.allclose(local - local[0], np.array(values) - values[0], rtol=0, atol=1e-12)
