"""passes/solver/sharding.py's run-length memory rows against the rows written out and the contest's
own rule (the peak usage of the expanded plan)."""

from __future__ import annotations

import numpy as np
import pytest

from sbpc.passes.solver.reduce import reduce_problem
from sbpc.passes.solver.sharding import Rows, memory_rows, prefix_sums
from sbpc.passes.solver.strategy import peak_usage
from test.unit.test_lagrange import wide_problem


def dense(rows: Rows, a: int) -> np.ndarray:
    """Variable a's usage at every row (rows × choices), written out."""
    table = np.zeros((len(rows.constant), rows.usage[a].shape[1]))
    for (lo, hi), u in zip(rows.spans[a], rows.usage[a], strict=True):
        table[lo:hi] += u
    return table


@pytest.mark.parametrize("seed", range(5))
def test_rows_judge_plans_as_the_contest_does(seed: int) -> None:
    problem = wide_problem(60, seed)
    red = reduce_problem(problem)
    variables = red.variables()
    rows = memory_rows(red, variables, problem.usage_limit)
    assert len(rows.constant) > 0
    rng = np.random.default_rng(seed)
    sizes = [len(red.unary[a]) for a in variables]
    lean = np.array([int(np.argmin(rows.total(a))) for a in range(len(variables))])
    agreed = {True: 0, False: 0}
    for trial in range(30):  # plans from the leanest (which fits) to random ones (which mostly do not)
        odd = rng.random(len(sizes)) < trial / 30
        choice = np.where(odd, [int(rng.integers(k)) for k in sizes], lean)
        used = rows.of(choice)
        written = rows.constant + sum(dense(rows, a)[:, c] for a, c in enumerate(choice))
        np.testing.assert_allclose(used, written)
        fits = bool((used <= rows.limit).all())
        plan = red.expand({a: int(c) for a, c in zip(variables, choice, strict=True)})
        assert fits == (peak_usage(problem, plan) <= problem.usage_limit)
        agreed[fits] += 1
        prices = rng.random(len(rows.constant))
        for a in range(len(variables)):  # a move: `fits` and `move` against the rows written out
            np.testing.assert_allclose(rows.price(a, prefix_sums(prices)), prices @ dense(rows, a))
            c = int(rng.integers(sizes[a]))
            after = choice.copy()
            after[a] = c
            if fits:
                assert rows.fits(a, int(choice[a]), used)[c] == bool((rows.of(after) <= rows.limit * (1 + 1e-12)).all())
            rows.move(a, int(choice[a]), c, used)
            choice = after
            np.testing.assert_allclose(used, rows.of(choice))
            fits = bool((used <= rows.limit).all())
    assert agreed[True] and agreed[False]  # both kinds of plan were judged


def test_from_dense_keeps_runs_and_gaps() -> None:
    usage = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0], [0.0, 3.0], [5.0, 0.0]])
    rows = Rows.from_dense([np.array([0, 1, 2, 3, 7]), np.zeros(0, np.int64)], [usage, np.zeros((0, 3))],
                           np.zeros(9), 10.0)
    assert rows.spans[0].tolist() == [[0, 2], [2, 4], [7, 8]]
    assert rows.usage[0].tolist() == [[1.0, 2.0], [0.0, 3.0], [5.0, 0.0]]
    assert rows.spans[1].shape == (0, 2) and rows.usage[1].shape == (0, 3)
    assert rows.memberships() == 5 and rows.entries() == 10
    assert rows.total(0).tolist() == [1 + 1 + 5, 2 + 2 + 3 + 3]
