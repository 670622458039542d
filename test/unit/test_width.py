"""passes/solver/width.py decides, from the structure alone, what `factor._eliminate` does."""

from __future__ import annotations

import numpy as np
import pytest

from sbpc.passes.solver.factor import FactorProblem, _eliminate
from sbpc.passes.solver.width import elimination_fits


@pytest.mark.parametrize("seed", range(40))
def test_the_walk_agrees_with_elimination(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 30))
    problem = FactorProblem([rng.random(int(rng.integers(1, 6))) for _ in range(n)])
    for _ in range(int(rng.integers(n, 3 * n))):
        u, v = sorted(int(x) for x in rng.choice(n, 2, replace=False))
        if (u, v) not in problem.pairs:
            problem.add_pair(u, v, rng.random((len(problem.unary[u]), len(problem.unary[v]))))
    for _ in range(int(rng.integers(0, 3))):
        scope = tuple(sorted(int(x) for x in rng.choice(n, 3, replace=False)))
        problem.factors.append((scope, rng.random(tuple(len(problem.unary[w]) for w in scope))))
    scopes = [*problem.pairs, *(scope for scope, _ in problem.factors)]
    verdicts = set()
    for max_table in (8, 30, 100, 1000, 10**6):
        fits = elimination_fits(problem.unary, scopes, max_table)
        assert fits == (_eliminate(problem, max_table) is not None)
        verdicts.add(fits)
    assert verdicts == {True, False} or len(problem.unary) < 6
