"""passes/solver/knapsack.py: the shared terms' knapsack against brute force on small random
problems (a lower bound always; its plan read back at exactly that bound; the optimum where the
rows' own terms cannot bind), and the `cpu` GPT stack under issue 13's budget proved by it."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from bench.gen_gpt import GptDims, gpt_stack
from sbpc import api
from sbpc.passes.solver import knapsack as knapsack_module
from sbpc.passes.solver.factor import FactorProblem, MemoryRow
from sbpc.passes.solver.knapsack import knapsack, least_rest, shared_terms
from sbpc.passes.solver.solve import solve


def random_problem(rng: random.Random, own_bytes: bool) -> FactorProblem:
    """3-7 variables, pairs and a general factor; the first two or three are "weights" (their bytes
    in every row), the others live over two rows each (`own_bytes`: with bytes that vary by choice,
    else constant)."""
    sizes = [rng.randint(1, 4) for _ in range(rng.randint(3, 7))]
    n = len(sizes)
    p = FactorProblem([np.array([rng.random() for _ in range(k)]) for k in sizes])
    for _ in range(rng.randint(2, 6)):
        u, v = rng.sample(range(n), 2)
        p.add_pair(u, v, np.array([[rng.random() for _ in range(sizes[v])] for _ in range(sizes[u])]))
    scope = tuple(rng.sample(range(n), 3))
    p.add_factor(scope, np.array([rng.random() for _ in range(int(np.prod([sizes[w] for w in scope])))]).reshape(
        [sizes[w] for w in scope]))
    weights = rng.randint(2, min(3, n - 1))
    for v in range(n):
        if v < weights or own_bytes:
            p.memory_terms.append((v, np.array([float(rng.randint(1, 40)) for _ in range(sizes[v])])))
        else:
            p.memory_terms.append((v, np.full(sizes[v], float(rng.randint(1, 40)))))
    live = [[t for t in range(weights, n) if t <= r < t + 2] for r in range(weights, n + 1)]
    p.memory = [MemoryRow(float(rng.randint(0, 5)), [*range(weights), *own]) for own in live]
    return p


def brute_force(p: FactorProblem, budget: float) -> float:
    values = [p.value(list(c)) for c in itertools.product(*[range(len(u)) for u in p.unary])
              if p.memory_peak(list(c)) <= budget]
    return min(values, default=np.inf)


def budgets(p: FactorProblem) -> list[float]:
    peaks = sorted({p.memory_peak(list(c)) for c in itertools.product(*[range(len(u)) for u in p.unary])})
    return [peaks[0], peaks[len(peaks) // 2], peaks[-1] - 1]


@pytest.mark.parametrize("own_bytes", [False, True])
@pytest.mark.parametrize("levels", [4, 512])
def test_knapsack_is_a_bound_and_its_plan_prices_at_it(
    own_bytes: bool, levels: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lower bound of the budgeted optimum, also where few levels round the bytes down; the plan
    read back costs exactly the bound; where it fits, the bound is within it."""
    monkeypatch.setattr(knapsack_module, "MAX_LEVELS", levels)
    rng = random.Random(levels * 2 + own_bytes)
    checked = exact = 0
    for _ in range(60):
        p = random_problem(rng, own_bytes)
        for budget in budgets(p):
            optimum = brute_force(p, budget)
            found = knapsack(p, budget)
            assert found is not None
            assert found.bound <= optimum + 1e-12, (found.bound, optimum)
            if found.choice is None:  # nothing fits the relaxation
                assert not np.isfinite(found.bound) and not np.isfinite(optimum)
                continue
            checked += 1
            assert p.value(found.choice) == pytest.approx(found.bound, abs=1e-12)
            assert found.fits == (p.memory_peak(found.choice) <= budget)
            if found.fits:
                exact += 1
                assert p.value(found.choice) >= optimum - 1e-12
    assert checked > 100 and exact > 30, (checked, exact)


@pytest.mark.parametrize("levels", [4, 512])
def test_knapsack_is_the_optimum_where_the_rows_own_bytes_are_fixed(
    levels: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every row's own bytes fixed, the relaxation at one byte a level is the problem: its
    bound is the optimum and its plan fits — reached from 4 levels too, where rounding overflows
    the budget and the levels are refined."""
    monkeypatch.setattr(knapsack_module, "MAX_LEVELS", levels)
    rng = random.Random(7)
    for _ in range(80):
        p = random_problem(rng, own_bytes=False)
        for budget in budgets(p):
            optimum = brute_force(p, budget)
            found = knapsack(p, budget)
            assert found is not None
            if not np.isfinite(optimum):
                assert found.choice is None and not np.isfinite(found.bound)
                continue
            assert found.fits
            assert found.bound == pytest.approx(optimum, abs=1e-12)


def test_shared_terms_and_least_rest() -> None:
    p = FactorProblem([np.zeros(2)] * 3)
    p.memory_terms = [(0, np.array([4.0, 8.0])), (1, np.array([1.0, 3.0])), (2, np.array([2.0, 5.0]))]
    p.memory = [MemoryRow(1.0, [0, 1]), MemoryRow(0.0, [0, 2]), MemoryRow(2.0, [0, 1, 1])]
    assert shared_terms(p) == [0]  # term 1 is listed twice in the last row, term 2 once only
    assert least_rest(p, [0]) == 4.0  # the last row: 2 + 1 + 1
    p.memory = []
    assert shared_terms(p) == []
    assert knapsack(p, 10.0) is None


def test_solve_proves_by_knapsack() -> None:
    """`solve` under a budget: after the dual and fixing, the knapsack on the choices left proves
    the optimum (brute force's) without HiGHS on most problems, and never gets it wrong."""
    rng = random.Random(3)
    proved = 0
    for _ in range(40):
        p = random_problem(rng, own_bytes=False)
        for budget in budgets(p)[:2]:
            found = solve(p, budget)
            optimum = brute_force(p, budget)
            if found is None:
                assert not np.isfinite(optimum)
                continue
            assert found.objective == pytest.approx(optimum, abs=1e-12)
            assert found.lower_bound == pytest.approx(optimum, abs=1e-12)
            proved += found.solver.endswith("+knapsack")
    assert proved > 10, proved


def test_cpu_gpt_stack_proved_by_the_knapsack() -> None:
    """Issue 25's stack with the `cpu` figures under ¼ of the weights + 3 MiB, at L=2: the
    knapsack's plan is the optimum (gap 0), as HiGHS's fixing path found it before."""
    dims = GptDims()
    program = api.parse(gpt_stack(2, dims, "free").replace('"npu"', '"cpu"'))
    section = api.report(program, rule="global", mem=dims.weight_bytes(2) // 4 + 3 * (1 << 20))["global"]
    assert section["solver"] == "lagrangian+fixing+knapsack(shared boxing bounded)"
    assert section["gap"] == 0.0
    assert section["objective_s"] == section["lower_bound_s"]
