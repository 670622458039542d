"""passes/solver/budget.py: the column-generation dual, the crossover, reduced-cost fixing and the
budgeted `solve` (passes/solver/solve.py), each against brute force on small random problems; the
GPT stack under issue 13's budget proved optimal; deterministic limits and the `time-limit` option."""

from __future__ import annotations

import ast
import itertools
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.arg_spec import parse_spec

from bench.gen_gpt import gpt_stack
from sbpc import api
from sbpc.passes.infer_sbp.global_search.search import infer_module_global
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.infer_sbp.report_pass import ReportPass
from sbpc.passes.solver.budget import crossover, lagrangian, program_order, reduced_domains
from sbpc.passes.solver.factor import CoverForm, FactorProblem, MemoryRow, min_marginals
from sbpc.passes.solver.solve import solve


def random_problem(rng: random.Random, covers: bool = False) -> FactorProblem:
    """Up to 6 variables; pairs, a general factor, maybe a cover; a free-argument-like variable
    (bytes at every row) and per-point rows over the others."""
    sizes = [rng.randint(1, 4) for _ in range(rng.randint(3, 6))]
    n = len(sizes)
    p = FactorProblem([np.array([rng.random() for _ in range(k)]) for k in sizes])
    for _ in range(rng.randint(1, 4)):
        u, v = rng.sample(range(n), 2)
        p.add_pair(u, v, np.array([[rng.random() for _ in range(sizes[v])] for _ in range(sizes[u])]))
    scope = tuple(rng.sample(range(n), 3))
    p.add_factor(scope, np.array([rng.random() for _ in range(int(np.prod([sizes[w] for w in scope])))]).reshape(
        [sizes[w] for w in scope]))
    if covers:
        source, *users = rng.sample(range(n), 3)
        classes, targets = rng.randint(1, 3), 3
        p.covers.append(CoverForm(
            source, np.array([rng.randrange(classes) for _ in range(sizes[source])]),
            np.array([[rng.random() for _ in range(targets)] for _ in range(classes)]),
            {u: np.array([[rng.random() < 0.5 for _ in range(targets)] for _ in range(sizes[u])]) for u in users},
            np.array([rng.random() < 0.2 for _ in range(targets)])))
    p.memory_terms = [(v, np.array([float(rng.randint(1, 9)) for _ in range(sizes[v])])) for v in range(n)]
    everywhere = [0]
    p.memory = [MemoryRow(1.0, everywhere + [t for t in range(1, n) if t <= r < t + 2]) for r in range(1, n)]
    return p


def plans(p: FactorProblem) -> list[list[int]]:
    return [list(c) for c in itertools.product(*[range(len(u)) for u in p.unary])]


def test_program_order_puts_a_free_argument_before_its_consumer() -> None:
    p = FactorProblem([np.zeros(2) for _ in range(4)])
    p.add_pair(0, 3, np.zeros((2, 2)))
    p.add_pair(1, 2, np.zeros((2, 2)))
    p.add_pair(2, 3, np.zeros((2, 2)))
    p.memory_terms = [(v, np.ones(2)) for v in range(4)]
    p.memory = [MemoryRow(0.0, [0, 1, 2]), MemoryRow(0.0, [0, 1, 3])]  # 0 and 1 count everywhere
    assert program_order(p) == [1, 2, 0, 3]


def test_crossover_is_the_best_split_within_budget() -> None:
    rng = random.Random(7)
    for _ in range(60):
        p = random_problem(rng, covers=rng.random() < 0.5)
        every = plans(p)
        first, second = rng.choice(every), rng.choice(every)
        order = program_order(p)
        budget = float(rng.randint(5, 25))
        spliced = [[first[v] if order.index(v) < s else second[v] for v in range(len(first))]
                   for s in range(len(order) + 1)]
        fitting = [p.value(c) for c in spliced if p.memory_peak(c) <= budget]
        found = crossover(p, first, second, budget, order)
        if not fitting:
            assert found is None
            continue
        assert found is not None
        value, choice = found
        assert value == pytest.approx(min(fitting), rel=1e-12)
        assert p.value(choice) == value and p.memory_peak(choice) <= budget


def test_min_marginal_is_the_best_plan_with_each_choice() -> None:
    rng = random.Random(11)
    for _ in range(40):
        p = random_problem(rng)
        every = plans(p)
        marginals = min_marginals(p)
        assert marginals is not None
        for v, marginal in enumerate(marginals):
            for c in range(len(p.unary[v])):
                assert marginal[c] == pytest.approx(min(p.value(x) for x in every if x[v] == c), rel=1e-12)


def test_fixing_keeps_every_choice_of_every_cheaper_plan_within_budget() -> None:
    rng = random.Random(13)
    checked = 0
    for _ in range(60):
        p = random_problem(rng)
        every = plans(p)
        budget = float(rng.randint(8, 25))
        fitting = sorted((p.value(c), c) for c in every if p.memory_peak(c) <= budget)
        if not fitting:
            continue
        dual = lagrangian(p, budget)
        assert dual.bound <= fitting[0][0] * (1 + 1e-9) + 1e-12
        incumbent = fitting[len(fitting) // 3][0]
        keep = reduced_domains(p, dual, budget, incumbent)
        assert keep is not None
        for value, c in fitting:
            if value <= incumbent:
                assert all(c[v] in keep[v] for v in range(len(c)))
        restricted = p.restricted(keep)
        for value, c in [(value, c) for value, c in fitting if value <= incumbent][:3]:
            inside = [int(np.flatnonzero(keep[v] == c[v])[0]) for v in range(len(c))]
            assert restricted.value(inside) == pytest.approx(value, rel=1e-12)
            assert restricted.memory_peak(inside) == p.memory_peak(c)
        checked += 1
    assert checked >= 30


def test_solve_under_a_budget_equals_enumeration() -> None:
    """`solve` (the dual, fixing, HiGHS on what is left) equals enumeration, its bound holds."""
    rng = random.Random(17)
    for _ in range(40):
        p = random_problem(rng)
        every = plans(p)
        budget = float(rng.randint(8, 25))
        fitting = [p.value(c) for c in every if p.memory_peak(c) <= budget]
        found = solve(p, budget)
        if not fitting:
            assert found is None
            continue
        assert found is not None and p.memory_peak(found.choice) <= budget
        assert found.objective == pytest.approx(min(fitting), rel=1e-9)
        assert found.lower_bound <= min(fitting) * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("layers", [2, pytest.param(4, marks=pytest.mark.exhaustive)])
def test_gpt_stack_under_issue_13_budget_is_proved_optimal(layers: int) -> None:
    """Free weights, mem = ¼ weights + 3 MiB: the dual, fixing and HiGHS prove the plan optimal
    (at L=4 HiGHS alone needed ~430 s to)."""
    module = api.parse(gpt_stack(layers, weights="free")).module
    budget = {2: 4720640, 4: 6295552}[layers]
    (result,) = infer_module_global(module, budget)
    solution = result.solution
    assert "fixing" in solution.solver
    assert solution.gap == 0.0
    assert result.problem.factors().memory_peak(solution.choice) <= budget
    assert solution.objective == pytest.approx({2: 3.4471216602052445e-05, 4: 8.445072200684149e-05}[layers],
                                               rel=1e-9)


# ---------------------------------------------------------------------------
# Deterministic plans: work limits, and `time-limit=` only where the user asks
# ---------------------------------------------------------------------------


def test_time_limit_is_an_option_of_rule_global_in_seconds() -> None:
    assert InferSbpPass(rule="global").time_limit is None
    assert InferSbpPass.from_spec(parse_spec("infer-sbp{rule=global time-limit=5}")).time_limit == 5.0
    assert ReportPass.from_spec(parse_spec("report{rule=global time-limit=2.5}")).infer.time_limit == 2.5
    with pytest.raises(ValueError, match="rule=global only"):
        InferSbpPass(rule="cost", time_limit=1.0)
    with pytest.raises(ValueError, match="positive number of seconds"):
        InferSbpPass(rule="global", time_limit=0)


def test_a_generous_time_limit_gives_the_plan_of_none() -> None:
    """Without `time-limit` the search stops on work limits only; a limit it never reaches changes
    nothing (the plan is the same as with none)."""
    text = gpt_stack(1, weights="free")
    plans = [str(api.compile(api.parse(text, "g.mlir"), f"infer-sbp{{rule=global mem=3932160{extra}}}").module)
             for extra in ("", " time-limit=600")]
    assert plans[0] == plans[1]


def test_the_solver_package_knows_no_ir() -> None:
    """passes/solver/ is IR-free: numpy, highspy, pytoulbar2, threadpoolctl, the units and itself (and the
    standard library)."""
    allowed = {"numpy", "highspy", "pytoulbar2", "threadpoolctl", "sbpc.dialects.units", "sbpc.passes.solver",
               "__future__"}
    for path in (Path(__file__).resolve().parents[2] / "passes" / "solver").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                ok = name.split(".")[0] in sys.stdlib_module_names or any(
                    name == a or name.startswith(a + ".") for a in allowed)
                assert ok, f"{path.name} imports {name}"
