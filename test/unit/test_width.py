"""passes/solver/width.py: the greedy min-table elimination order, against the rule written plainly
(every variable's table recomputed at every step), and `eliminate` on that order against enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sbpc.passes.solver.factor import FactorProblem, eliminate
from sbpc.passes.solver.width import elimination_order


def plain_order(sizes: list[int], scopes: list[tuple[int, ...]], max_table: int) -> list[int] | None:
    neighbours = [set() for _ in sizes]
    for scope in scopes:
        for w in scope:
            neighbours[w].update(r for r in scope if r != w)
    left, order = set(range(len(sizes))), []
    while left:
        table, x = min((math.prod(sizes[w] for w in {v, *neighbours[v]}), v) for v in left)
        if table > max_table:
            return None
        order.append(x)
        left.discard(x)
        for w in neighbours[x]:
            neighbours[w] |= neighbours[x] - {w}
            neighbours[w].discard(x)
    return order


def random_problem(seed: int, n: int) -> FactorProblem:
    rng = np.random.default_rng(seed)
    problem = FactorProblem([rng.random(int(rng.integers(1, 5))) for _ in range(n)])
    for _ in range(int(rng.integers(n, 3 * n))):
        u, v = sorted(int(x) for x in rng.choice(n, 2, replace=False))
        if (u, v) not in problem.pairs:
            problem.add_pair(u, v, rng.random((len(problem.unary[u]), len(problem.unary[v]))))
    for _ in range(int(rng.integers(0, 3))):
        scope = tuple(sorted(int(x) for x in rng.choice(n, 3, replace=False)))
        problem.factors.append((scope, rng.random(tuple(len(problem.unary[w]) for w in scope))))
    return problem


@pytest.mark.parametrize("seed", range(40))
def test_the_order_is_the_greedy_rule(seed: int) -> None:
    problem = random_problem(seed, int(np.random.default_rng(seed).integers(4, 30)))
    scopes = [*problem.pairs, *(scope for scope, _ in problem.factors)]
    sizes = [len(u) for u in problem.unary]
    for max_table in (8, 30, 100, 1000, 10**6):
        order = elimination_order(problem.unary, scopes, max_table)
        assert order == plain_order(sizes, scopes, max_table)
        assert (eliminate(problem, max_table) is None) == (order is None)


def test_a_clique_is_too_wide_and_a_chain_is_not() -> None:
    domains = [range(4)] * 12
    clique = list(itertools.combinations(range(12), 2))
    assert elimination_order(domains, clique, 10**6) is None  # the first table alone is 4^12
    assert elimination_order(domains, [(i, i + 1) for i in range(11)], 16) == list(range(12))


@pytest.mark.parametrize("seed", range(20))
def test_elimination_on_that_order_is_exact(seed: int) -> None:
    problem = random_problem(seed, 7)
    best = min(problem.value(list(c)) for c in itertools.product(*(range(len(u)) for u in problem.unary)))
    found = eliminate(problem)
    assert found is not None and found.objective == pytest.approx(best)
