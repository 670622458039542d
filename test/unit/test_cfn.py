"""passes/solver/cfn.py (toulbar2 on a pairwise min-sum problem) against brute force, and the
priced problems' starts of `sbp-solve` (`contest.PricedStarts`) on wide generated problems
whose memory binds."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from sbpc.passes.solver import contest
from sbpc.passes.solver.cfn import CfnAnswer, Linear, cfn_ticks, solve_cfn
from sbpc.passes.solver.contest import (
    CFN_BACKTRACKS,
    CFN_WORK,
    FIRST_SCALE,
    SCALE_CLOSE,
    SCALE_SOLVES,
    SCALE_STEP,
    PricedStarts,
    Scales,
    _graph,
    cfn_backtracks,
)
from sbpc.passes.solver.lagrange import lagrangian
from sbpc.passes.solver.local import improve
from sbpc.passes.solver.reduce import reduce_problem
from sbpc.passes.solver.sharding import memory_rows
from sbpc.passes.solver.work import CONSTRAINED, CONSTRAINED_ENTRY, POSTED, SEARCHED, Stop
from test.unit.test_lagrange import highs_optimum, wide_problem


def random_pairwise(seed: int) -> tuple[list[np.ndarray], list[list[tuple[int, np.ndarray]]]]:
    """Up to 7 variables of 1–4 choices, random pairs, some entries infinite (forbidden)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    unary = [rng.integers(0, 100, int(rng.integers(1, 5))).astype(float) for _ in range(n)]
    near: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(n)]
    for a, b in itertools.combinations(range(n), 2):
        if rng.random() < 0.5:
            m = rng.integers(0, 80, (len(unary[a]), len(unary[b]))).astype(float)
            m[rng.random(m.shape) < 0.2] = np.inf
            near[a].append((b, m))
            near[b].append((a, m.T))
    return unary, near


def brute(unary: list[np.ndarray], near: list[list[tuple[int, np.ndarray]]]) -> float:
    best = np.inf
    for choice in itertools.product(*[range(len(u)) for u in unary]):
        value = sum(u[c] for u, c in zip(unary, choice, strict=True))
        value += sum(m[choice[a], choice[b]] for a, around in enumerate(near) for b, m in around if a < b)
        best = min(best, value)
    return float(best)


@pytest.mark.parametrize("seed", range(40))
def test_cfn_finds_and_proves_the_optimum(seed: int) -> None:
    unary, near = random_pairwise(seed)
    optimum = brute(unary, near)
    answer = solve_cfn(unary, near)
    if not np.isfinite(optimum):
        assert answer is None
        return
    assert answer is not None and answer.optimal
    value = sum(u[c] for u, c in zip(unary, answer.choice, strict=True))
    value += sum(m[answer.choice[a], answer.choice[b]] for a, around in enumerate(near) for b, m in around if a < b)
    assert value == answer.value == optimum == answer.lower


def test_cfn_rounds_fractional_costs() -> None:
    unary = [np.array([0.4, 0.0]), np.array([0.0, 2.6])]
    m = np.array([[0.0, 0.0], [0.0, 0.0]])
    answer = solve_cfn(unary, [[(1, m)], [(0, m.T)]])
    assert answer is not None and answer.choice.tolist() == [0, 0]  # 0.4 rounds to 0: a tie, the first


@pytest.mark.parametrize("seed", range(4))
def test_priced_starts_are_plans_that_repair(seed: int) -> None:
    """Each start is a plan of finite cost the local search repairs to fit; the bound is below the
    optimum HiGHS proves."""
    problem = wide_problem(40, seed)
    red = reduce_problem(problem)
    variables = red.variables()
    graph = _graph(red, variables, memory_rows(red, variables, problem.usage_limit))
    dual = lagrangian(graph, iterations=20)
    best = highs_optimum(problem)
    for prices in (dual.prices, np.zeros_like(dual.prices)):
        priced = PricedStarts(graph, prices, None)
        starts, bound = list(priced), priced.bound
        assert bound <= best + 1e-6 * abs(best)
        assert 1 <= len(starts) <= SCALE_SOLVES
        for choice, priced in starts:
            assert len(choice) == len(graph.unary)
            assert all(np.isfinite(u[c]) for u, c in zip(graph.unary, choice, strict=True))
            assert (priced >= 0).all()
            found = improve(graph, rounds=20, start=choice, prices=priced)
            assert found is not None and (graph.rows.of(found[0]) <= graph.rows.limit).all()
        if not prices.any() and len(starts) == 1 and not starts[0][1].any():
            assert (graph.rows.of(starts[0][0]) <= graph.rows.limit).all()  # the unpriced answer fit


@pytest.mark.parametrize(("deadline_in", "each", "expected"), [(None, None, None), (None, 7.0, None),
                                                                 (1000.0, 7.0, 7.0), (3.0, 7.0, 3.0)])
def test_priced_starts_give_each_solve_at_most_its_share(
        deadline_in: float | None, each: float | None, expected: float | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A priced problem's time limit is what is left before the deadline, at most `each` seconds (none
    without a deadline: no clock in a search the user did not limit)."""
    problem = wide_problem(30, 1)
    red = reduce_problem(problem)
    variables = red.variables()
    graph = _graph(red, variables, memory_rows(red, variables, problem.usage_limit))
    limits: list[float | None] = []

    def solve(unary, near, backtracks, time_limit=None):  # type: ignore[no-untyped-def]
        limits.append(time_limit)
        return solve_cfn(unary, near, backtracks)

    monkeypatch.setattr(contest, "solve_cfn", solve)
    stop = Stop.clock(None if deadline_in is None else time.perf_counter() + deadline_in)
    starts = list(PricedStarts(graph, np.ones(len(graph.rows.constant)), stop, each))
    assert starts and len(starts) == len(limits)
    for limit in limits:
        assert (limit is None) if expected is None else (limit is not None and 1.0 <= limit <= expected + 1e-9)



@pytest.mark.parametrize(("variables", "expected"), [(30, CFN_BACKTRACKS), (CFN_WORK // CFN_BACKTRACKS, CFN_BACKTRACKS),
                                                     (CFN_WORK // 1000, 1000), (2 * CFN_WORK, 1)])
def test_priced_problems_share_a_work_budget_among_the_variables(variables: int, expected: int) -> None:
    """`CFN_BACKTRACKS` backtracks, fewer where the variables are so many that `CFN_WORK` divided by
    them is less (at least one): a work limit, not the clock."""
    assert cfn_backtracks(variables) == expected


def test_priced_starts_solve_with_that_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = wide_problem(30, 1)
    red = reduce_problem(problem)
    graph = _graph(red, red.variables(), memory_rows(red, red.variables(), problem.usage_limit))
    given: list[int] = []

    def solve(unary, near, backtracks, time_limit=None):  # type: ignore[no-untyped-def]
        given.append(backtracks)
        return solve_cfn(unary, near, backtracks)

    monkeypatch.setattr(contest, "solve_cfn", solve)
    starts = list(PricedStarts(graph, np.ones(len(graph.rows.constant)), None))
    assert starts and len(given) == len(starts) and set(given) == {cfn_backtracks(len(graph.unary))}


def _scales(fits) -> list[float]:  # type: ignore[no-untyped-def]
    scales, tried = Scales(), []
    while (scale := scales.next()) is not None:
        tried.append(scale)
        scales.tell(scale, fits(scale))
    return tried


@pytest.mark.parametrize("threshold", [0.013, 0.7, 1.0, 2.5, 9.0, 10.0, 31.0, 300.0])
def test_scales_close_in_on_the_least_that_fits(threshold: float) -> None:
    """Answers fit from some multiple of the prices on: the search starts at `FIRST_SCALE`, goes by
    decades toward it, then halves the bracket (in log) until the least fitting scale is within
    `SCALE_CLOSE` of the greatest overflowing one."""
    tried = _scales(lambda scale: scale >= threshold)
    assert tried[0] == FIRST_SCALE and len(set(tried)) == len(tried) <= SCALE_SOLVES
    fit = min(s for s in tried if s >= threshold)
    over = max(s for s in tried if s < threshold)
    assert over < threshold <= fit <= SCALE_CLOSE * over


@pytest.mark.parametrize("fits", [True, False])
def test_scales_stop_after_their_solves(fits: bool) -> None:
    tried = _scales(lambda scale: fits)
    factor = 1 / SCALE_STEP if fits else SCALE_STEP
    assert tried == pytest.approx([FIRST_SCALE * factor ** k for k in range(SCALE_SOLVES)])


def test_priced_starts_take_the_scales_their_answers_call_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each answer's fit decides the next multiple of the prices (`Scales`)."""
    problem = wide_problem(40, 2)
    red = reduce_problem(problem)
    graph = _graph(red, red.variables(), memory_rows(red, red.variables(), problem.usage_limit))
    prices = np.ones(len(graph.rows.constant))
    starts = list(PricedStarts(graph, prices, None))
    fitted = {float(p[0]): bool((graph.rows.of(c) <= graph.rows.limit).all()) for c, p in starts}
    assert [float(p[0]) for _, p in starts] == _scales(lambda scale: fitted[scale])
    assert len(set(fitted.values())) == 2  # this problem's answers fit at some scales, not at others


def test_a_solve_under_rows_is_charged_per_backtrack_for_its_pair_tables() -> None:
    """`cfn_ticks`: with a knapsack row, each backtrack also pays `CONSTRAINED_ENTRY` per pair-table
    entry (its propagation reaches them); without rows, only the entries posted and the variables
    searched are charged."""
    unary, near = random_pairwise(3)
    entries = sum(m.size for around in near for _, m in around) / 2
    assert entries > 0
    row = Linear([(0, 0, 1.0), (1, 0, 1.0)], 1.0)
    searched = CfnAnswer(np.zeros(len(unary), np.int64), 0.0, False, 0.0, backtracks=10)
    free = cfn_ticks(unary, near, searched)
    assert free == pytest.approx(POSTED * entries + 10 * SEARCHED * len(unary))
    bound = cfn_ticks(unary, near, searched, [row])
    assert bound - free == pytest.approx(10 * (2 * CONSTRAINED + entries * CONSTRAINED_ENTRY))
    assert cfn_ticks(unary, near, None, [row]) == pytest.approx(POSTED * entries)
