"""passes/solver/relink.py (a window re-solved exactly under the memory rows; the pool's path
relinking) against brute force and HiGHS, and cfn.py's hard linear constraints against brute force."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from sbpc.passes.solver import relink
from sbpc.passes.solver.cfn import Linear, solve_cfn
from sbpc.passes.solver.contest import _graph
from sbpc.passes.solver.local import Graph, improve
from sbpc.passes.solver.reduce import reduce_problem
from sbpc.passes.solver.relink import Pool, pieces, solve_window, window_rows
from sbpc.passes.solver.sharding import memory_rows
from test.unit.test_cfn import random_pairwise
from test.unit.test_lagrange import highs_optimum, wide_problem


def graph_of(n: int, seed: int) -> Graph:
    problem = wide_problem(n, seed)
    red = reduce_problem(problem)
    variables = red.variables()
    return _graph(red, variables, memory_rows(red, variables, problem.usage_limit))


def fits(graph: Graph, plan: np.ndarray) -> bool:
    return bool((graph.rows.of(plan) <= graph.rows.limit).all())


def best_in_window(graph: Graph, plan: np.ndarray, window: list[int]) -> float:
    """The least value of a plan that fits among every choice of the window's variables (brute
    force), the rest held at `plan` (itself among them)."""
    best = graph.value(plan)
    for choice in itertools.product(*[range(len(graph.unary[a])) for a in window]):
        trial = plan.copy()
        trial[window] = choice
        if fits(graph, trial):
            best = min(best, graph.value(trial))
    return best


@pytest.mark.parametrize("seed", range(30))
def test_cfn_linear_constraint_against_brute_force(seed: int) -> None:
    unary, near = random_pairwise(seed)
    rng = np.random.default_rng(1000 + seed)
    weights = [rng.integers(0, 10, len(u)).astype(float) for u in unary]
    bound = float(rng.integers(0, 6 * len(unary)))
    terms = [(a, c, float(w)) for a, ws in enumerate(weights) for c, w in enumerate(ws)]
    best = np.inf
    for choice in itertools.product(*[range(len(u)) for u in unary]):
        if sum(weights[a][c] for a, c in enumerate(choice)) > bound:
            continue
        value = sum(u[c] for u, c in zip(unary, choice, strict=True))
        value += sum(m[choice[a], choice[b]] for a, around in enumerate(near) for b, m in around if a < b)
        best = min(best, value)
    answer = solve_cfn(unary, near, linear=[Linear(terms, bound)])
    if not np.isfinite(best):
        assert answer is None
        return
    # The optimum; its proof flag is not asserted: after a limited discrepancy search (relink's
    # windows, in the same process) toulbar2 may stop this search at its backtrack limit.
    assert answer is not None and answer.value == best and answer.lower <= best
    assert sum(weights[a][c] for a, c in enumerate(answer.choice)) <= bound


@pytest.mark.parametrize("seed", range(12))
def test_window_of_every_variable_reaches_the_optimum(seed: int) -> None:
    """With every variable in the window the rows are all there (none lost to the stretches, none
    loosened), so the answer is the problem's optimum HiGHS proves."""
    problem = wide_problem(14, seed)
    red = reduce_problem(problem)
    variables = red.variables()
    graph = _graph(red, variables, memory_rows(red, variables, problem.usage_limit))
    start = improve(graph, rounds=5)
    assert start is not None
    better = solve_window(graph, start[0], list(range(len(graph.unary))))
    plan = start[0] if better is None else better
    assert fits(graph, plan)
    assert round(graph.value(plan)) == highs_optimum(problem)


@pytest.mark.parametrize("seed", range(20))
def test_window_against_brute_force(seed: int) -> None:
    """A window of a few variables, the rest held at the leanest plan: the best plan that fits among
    every choice of the window's variables (enumerated), or the plan itself when it is that best."""
    graph = graph_of(30, seed)
    plan = np.array([int(np.lexsort((u, graph.rows.total(a)))[0]) for a, u in enumerate(graph.unary)])
    assert fits(graph, plan)
    rng = np.random.default_rng(seed)
    movable = [a for a in range(len(graph.unary)) if len(graph.unary[a]) > 1]
    window = sorted(rng.choice(movable, size=min(5, len(movable)), replace=False).tolist())
    best = best_in_window(graph, plan, window)
    better = solve_window(graph, plan, window)
    if better is None:
        assert best == graph.value(plan)
    else:
        assert fits(graph, better) and graph.value(better) == best
        held = np.setdiff1d(np.arange(len(plan)), window)
        assert (better[held] == plan[held]).all()


def test_window_rows_drop_rows_that_cannot_overflow() -> None:
    """Under a limit no choice can reach, the window has no constraints; under the tightest, every
    stretch its variables span is one."""
    graph = graph_of(30, 0)
    plan = improve(graph, rounds=5)
    assert plan is not None
    window = [a for a in range(len(graph.unary)) if len(graph.unary[a]) > 1][:6]
    loose = dataclasses.replace(graph.rows, limit=float(np.inf))
    everywhere = np.ones(len(graph.rows.constant), bool)
    assert window_rows(Graph(graph.unary, graph.near, loose, graph.constant), plan[0], window, everywhere) == []
    assert window_rows(graph, plan[0], window, everywhere)


@pytest.mark.parametrize("seed", range(6))
def test_pool_keeps_the_best_plan_that_fits(seed: int) -> None:
    """Plans from different local-search seeds: the pool's best fits and is no worse than any of
    them (relinking only ever adds a better plan)."""
    graph = graph_of(40, seed)
    pool = Pool(graph)
    values = []
    for k in range(4):
        found = improve(graph, rounds=3, seed=k)
        assert found is not None
        values.append(found[1])
        pool.add(found[0])
    best = pool.best()
    assert best is not None
    assert fits(graph, best[0]) and best[1] == graph.value(best[0]) <= min(values)
    assert [v for v, _ in pool.plans] == sorted(v for v, _ in pool.plans)


def test_pieces_are_connected_and_bounded() -> None:
    """A path 0-1-2-3-4-5 and a pair 7-8 (variable 6 left out): two components, the path cut into
    breadth-first pieces of three; a piece smaller than `PIECE` is dropped."""
    unary = [np.zeros(2) for _ in range(9)]
    near: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(9)]
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (7, 8)]:
        near[a].append((b, np.zeros((2, 2))))
        near[b].append((a, np.zeros((2, 2))))
    rows = graph_of(10, 0).rows
    graph = Graph(unary, near, dataclasses.replace(rows, spans=[rows.spans[0][:0]] * 9,
                                                   usage=[np.zeros((0, 2))] * 9))
    assert pieces(graph, np.array([0, 1, 2, 3, 4, 5, 7, 8])) == [[0, 1, 2, 3, 4, 5]]
    assert pieces(graph, np.array([0, 1, 2, 3, 4, 5, 7, 8]), size=3) == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("seed", range(4))
def test_too_wide_windows_are_split(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for a few coefficients only, windows are split until their rows fit (or dropped):
    the pool's best still fits and is no worse than its plans."""
    monkeypatch.setattr(relink, "TERMS", 40)
    graph = graph_of(40, seed)
    lean = np.array([int(np.lexsort((u, graph.rows.total(a)))[0]) for a, u in enumerate(graph.unary)])
    found = improve(graph, rounds=3)
    assert found is not None
    pool = Pool(graph)
    pool.add(found[0])
    pool.relink(lean)
    with pytest.raises(relink.TooWide):
        relink.window_rows(graph, lean, list(range(len(graph.unary))), np.ones(len(graph.rows.constant), bool))
    best = pool.best()
    assert best is not None and fits(graph, best[0]) and best[1] <= found[1]


@pytest.mark.parametrize("seed", range(10))
def test_cfn_linear_constraint_with_large_costs(seed: int) -> None:
    """Costs of 1e12 and more (IOPDDL's are up to 1e11) under a knapsack row are scaled down for
    toulbar2: the answer is still the optimum, its value the costs' as given (not the scaled ones)
    and its bound below it."""
    unary, near = random_pairwise(seed)
    unary = [u * 1e12 for u in unary]
    near = [[(b, m * 1e12) for b, m in around] for around in near]
    rng = np.random.default_rng(2000 + seed)
    weights = [rng.integers(0, 10, len(u)).astype(float) for u in unary]
    bound = float(rng.integers(0, 6 * len(unary)))
    best, best_choice = np.inf, None
    for choice in itertools.product(*[range(len(u)) for u in unary]):
        if sum(weights[a][c] for a, c in enumerate(choice)) > bound:
            continue
        value = sum(u[c] for u, c in zip(unary, choice, strict=True))
        value += sum(m[choice[a], choice[b]] for a, around in enumerate(near) for b, m in around if a < b)
        if value < best:
            best, best_choice = value, choice
    terms = [(a, c, float(w)) for a, ws in enumerate(weights) for c, w in enumerate(ws)]
    answer = solve_cfn(unary, near, linear=[Linear(terms, bound)])
    if best_choice is None:
        assert answer is None
        return
    assert answer is not None and answer.value == best and answer.lower <= best


@pytest.mark.parametrize("seed", range(6))
def test_live_variables_are_those_whose_usage_varies_at_the_row(seed: int) -> None:
    graph = graph_of(30, seed)
    pool = Pool(graph)
    for row in range(len(graph.rows.constant)):
        expected = sorted({a for a in range(len(graph.unary)) if len(graph.unary[a]) > 1
                           for (lo, hi), u in zip(graph.rows.bounds[a], graph.rows.usage[a], strict=True)
                           if lo <= row < hi and u.max() > u.min()})
        assert pool.live(row) == expected


@pytest.mark.parametrize("seed", range(6))
def test_spread_and_polish_keep_the_best_plan_that_fits(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`spread` re-solves the variables live at the fullest rows (distinct peaks only) with their
    neighbours; it and `polish` (pieces over every variable with a choice) leave a best plan that
    fits and is no worse."""
    graph = graph_of(40, seed)
    found = improve(graph, rounds=3)
    assert found is not None
    pool = Pool(graph)
    pool.add(found[0])
    windows: list[list[int]] = []
    solve = pool._solve
    monkeypatch.setattr(pool, "_solve", lambda best, ws, deadline, connected=True: (
        windows.extend(ws), solve(best, ws, deadline, connected)))
    pool.spread()
    peaks = [set(w) for w in windows]
    assert len(peaks) <= relink.ROW_WINDOWS * relink.SPREAD_ROUNDS
    lives = [set(pool.live(r)) for r in range(len(graph.rows.constant))]
    grown = [live | {b for a in live for b, _ in graph.near[a] if graph.choosable[b]} for live in lives if live]
    assert all(peak in grown for peak in peaks)
    pool.polish()
    best = pool.best()
    assert best is not None and fits(graph, best[0]) and best[1] <= found[1]
    assert set().union(*windows[len(peaks):]) <= set(graph.movable.tolist())


@pytest.mark.parametrize("size", [1, 5, 12, 100])
def test_around_is_the_variables_then_their_neighbours_within_size(size: int) -> None:
    graph = graph_of(40, 3)
    pool = Pool(graph)
    live = pool.live(int(np.argmax(graph.rows.of(np.zeros(len(graph.unary), np.int64)))))
    window = graph.around(live, size)
    neighbours = {b for a in live for b, _ in graph.near[a] if graph.choosable[b]} - set(live)
    assert window[:len(live)] == live and len(set(window)) == len(window)
    assert set(window[len(live):]) <= neighbours
    assert len(window) == max(len(live), min(size, len(live) + len(neighbours)))
