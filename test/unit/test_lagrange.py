"""The memory rows' Lagrangian relaxation (passes/solver/lagrange.py) and the full `sbp-solve` path
on wide generated problems with a binding memory limit, against HiGHS's proved optimum of the
unreduced problem (one memory row per time, no reduction)."""

from __future__ import annotations

import numpy as np
import pytest

from sbpc.passes.solver.contest import _graph, solve_strategy
from sbpc.passes.solver.factor import FactorProblem, MemoryRow
from sbpc.passes.solver.lagrange import DROP, HALVE, STALE, STEP, Messages, Steps, lagrangian, split_bound
from sbpc.passes.solver.local import improve
from sbpc.passes.solver.mip import MIP_UNIT, solve_mip
from sbpc.passes.solver.reduce import reduce_problem
from sbpc.passes.solver.sharding import memory_rows
from sbpc.passes.solver.strategy import StrategyProblem, evaluate, peak_usage


def wide_problem(n: int, seed: int) -> StrategyProblem:
    """n nodes with 2–5 strategies (the cheap ones use more memory), random edges (about 1.6 per
    node, some parallel), overlapping live intervals, and a limit between the leanest plan's peak
    and the cheapest-node plan's, so memory binds."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 6, n)
    start = np.concatenate(([0], np.cumsum(sizes)))
    usages = rng.integers(1, 40, start[-1])
    costs = np.concatenate([rng.integers(0, 60, k) + (40 - usages[s:s + k]) * 2 for s, k in zip(start, sizes)])
    begin = rng.integers(0, n, n)
    intervals = np.stack([begin, begin + rng.integers(1, max(n // 4, 2), n)], axis=1)
    m = int(1.6 * n)
    edges = np.stack([rng.integers(0, n, m), rng.integers(0, n, m)], axis=1)
    edges = edges[edges[:, 0] != edges[:, 1]]
    edge_sizes = sizes[edges[:, 0]] * sizes[edges[:, 1]]
    edge_start = np.concatenate(([0], np.cumsum(edge_sizes)))
    edge_costs = rng.integers(0, 120, edge_start[-1]) * (rng.random(edge_start[-1]) < 0.7)
    problem = StrategyProblem(f"wide-{n}-{seed}", start, costs.astype(np.int64), usages.astype(np.int64),
                              intervals, edges, edge_start, edge_costs.astype(np.int64))
    lean = np.array([int(np.argmin(problem.usage(i))) for i in range(n)])
    cheap = np.array([int(np.argmin(problem.cost(i))) for i in range(n)])
    low, high = peak_usage(problem, lean), peak_usage(problem, cheap)
    problem.usage_limit = int(low + 0.35 * (high - low))
    problem.validate()
    return problem


def highs_optimum(problem: StrategyProblem) -> int:
    """The unreduced problem's optimum, proved by HiGHS (one row per interval start)."""
    factors = FactorProblem([problem.cost(i) / MIP_UNIT for i in range(problem.n)])
    for e, (u, v) in enumerate(problem.edges):
        factors.add_pair(int(u), int(v), problem.matrix(e) / MIP_UNIT)
    factors.memory_terms = [(i, problem.usage(i).astype(float)) for i in range(problem.n)]
    _, live = problem.live_at()
    factors.memory = [MemoryRow(0.0, [int(i) for i in nodes]) for nodes in live]
    found = solve_mip(factors, float(problem.usage_limit))
    assert found is not None and found.lower_bound >= found.objective - 1e-9 * abs(found.objective)
    return round(found.objective * MIP_UNIT)


def _check(n: int, seed: int) -> None:
    problem = wide_problem(n, seed)
    best = highs_optimum(problem)
    outcome = solve_strategy(problem, rounds=100)
    assert outcome.solution is not None, outcome.method
    judged = evaluate(problem, outcome.solution)
    assert judged.feasible and judged.cost == outcome.cost == best, (outcome.method, outcome.cost, best)
    assert outcome.bound <= best
    # The relaxation on its own: its bound is a lower bound (weak duality), its plan fits.
    red = reduce_problem(problem)
    variables = red.variables()
    graph = _graph(red, variables, memory_rows(red, variables, problem.usage_limit))
    for adaptive in (True, False):  # either step rule
        dual = lagrangian(graph, iterations=30, adaptive=adaptive)
        assert dual.bound <= best + 1e-6 * best
        found = improve(graph, rounds=50, start=dual.plan if dual.plan is not None else dual.relaxed,
                        prices=None if dual.plan is not None else dual.prices)
        assert found is not None
        plan = red.expand(dict(zip(variables, (int(c) for c in found[0]), strict=True)))
        judged = evaluate(problem, plan)
        assert judged.feasible and judged.cost == round(found[1]) >= best


def test_adaptive_steps_halve_when_stale_and_step_back_on_overshoot() -> None:
    steps = Steps(adaptive=True)
    assert steps.size == STEP
    prices, g = np.array([1.0]), np.array([2.0])
    assert steps.after(0, 100.0, prices, g)[0] == 100.0  # the best so far
    for k in range(1, STALE + 1):  # no better bound (and no overshoot) for STALE steps: halved
        assert steps.size == STEP
        steps.after(k, 100.0 - k * DROP, np.array([9.0]), g)
    assert steps.size == STEP / 2
    # a fall of more than DROP of the best: halved at once, stepping from the best bound's prices
    dual, back, grad = steps.after(STALE + 1, 100.0 * (1 - 2 * DROP), np.array([5.0]), np.array([7.0]))
    assert (dual, back.tolist(), grad.tolist(), steps.size) == (100.0, [1.0], [2.0], STEP / 4)


def test_scheduled_steps_halve_every_few_steps() -> None:
    steps = Steps(adaptive=False)
    prices, g = np.array([3.0]), np.array([1.0])
    sizes = []
    for k in range(2 * HALVE):
        dual, back, _ = steps.after(k, -float(k), prices, g)  # a falling bound changes nothing else
        assert dual == -float(k) and back is prices
        sizes.append(steps.size)
    assert sizes == [1.0] * (HALVE - 1) + [0.5] * HALVE + [0.25]


def test_wide_problem_matches_highs() -> None:
    _check(40, 2)


@pytest.mark.exhaustive
@pytest.mark.parametrize(("n", "seed"), [(60, 1), (100, 3), (150, 4), (200, 5)])
def test_wide_problems_match_highs(n: int, seed: int) -> None:
    _check(n, seed)


def test_diffusion_bounds_and_decodes_a_tree() -> None:
    """On a tree, diffusion's bound never exceeds the optimum (brute force), rises from the split
    bound's start, and reaches it; the decoded plan is then optimal."""
    rng = np.random.default_rng(0)
    unary = [rng.integers(0, 20, 3).astype(float) for _ in range(5)]
    edges = [(0, 1), (1, 2), (1, 3), (3, 4)]
    tables = {e: rng.integers(0, 30, (3, 3)).astype(float) for e in edges}
    near: list[list[tuple[int, np.ndarray]]] = [[] for _ in unary]
    for (a, b), m in tables.items():
        near[a].append((b, m))
        near[b].append((a, m.T))

    def value(choice: tuple[int, ...]) -> float:
        return sum(u[c] for u, c in zip(unary, choice, strict=True)) + sum(
            m[choice[a], choice[b]] for (a, b), m in tables.items())

    best = min(value(tuple(int(x) for x in np.unravel_index(k, (3,) * 5))) for k in range(3 ** 5))
    passing = Messages(unary, near)
    assert passing.bound() <= best
    passing.sweep(50)
    assert split_bound(unary, near) <= best
    assert passing.bound() == pytest.approx(best)
    assert value(tuple(int(c) for c in passing.decode())) == best
    shifted = [u + 5 for u in unary]  # new unaries: the same messages, every plan 25 dearer
    passing.reprice(shifted)
    passing.sweep(50)
    assert passing.bound() == pytest.approx(best + 25)


def _sequential_diffusion(unary: list[np.ndarray], near: list[list[tuple[int, np.ndarray]]], sweeps: int
                          ) -> tuple[list[np.ndarray], dict[tuple[int, int], np.ndarray]]:
    """Min-sum diffusion by its definition: one variable at a time, in order, then back."""
    theta = [u.astype(float).copy() for u in unary]
    pair = {(a, b): m.astype(float).copy() for a, around in enumerate(near) for b, m in around if a < b}
    for sweep in range(2 * sweeps):
        for a in range(len(near)) if sweep % 2 == 0 else range(len(near) - 1, -1, -1):
            if not near[a]:
                continue
            views = [pair[a, b] if a < b else pair[b, a].T for b, _ in near[a]]
            total = theta[a].copy()
            for m in views:
                low = m.min(axis=1)
                m -= low[:, None]
                total += low
            theta[a] = total / (len(views) + 1)
            for m in views:
                m += theta[a][:, None]
    return theta, pair


@pytest.mark.parametrize("seed", range(6))
def test_level_sweeps_are_the_sequential_diffusion(seed: int) -> None:
    """`Messages.sweep` updates a level of variables at once; the result is the sequential one."""
    rng = np.random.default_rng(seed)
    n = 30
    unary = [rng.integers(0, 50, int(rng.integers(1, 6))).astype(float) for _ in range(n)]
    edges = sorted({tuple(sorted(int(x) for x in rng.choice(n, 2, replace=False))) for _ in range(45)})
    near: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(n)]
    for a, b in rng.permutation(np.array(edges)).tolist():  # neighbours listed in no particular order
        m = rng.integers(0, 80, (len(unary[a]), len(unary[b]))).astype(float)
        near[a].append((b, m))
        near[b].append((a, m.T))
    theta, pair = _sequential_diffusion(unary, near, 7)
    passing = Messages(unary, near)
    passing.sweep(7)
    for mine, reference in zip(passing.theta, theta, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-9)
    for key, reference in pair.items():
        np.testing.assert_allclose(passing.pair[key], reference, rtol=1e-12, atol=1e-9)
