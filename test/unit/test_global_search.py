"""infer-sbp{rule=global}: exactness against enumeration and HiGHS, the factor model against the
independent evaluator `plan_objective`, never worse than the op-by-op rules, memory budgets, and
plans that run on the simulator."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from sbpc import api
from sbpc.dialects.units import parse_bytes
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.global_search.objective import PlanObjective, plan_objective
from sbpc.passes.infer_sbp.global_search.problem import Builder, GlobalProblem, Pricer
from sbpc.passes.infer_sbp.global_search.search import apply_solution, infer_module_global
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.infer_sbp.local import functions, infer_module
from sbpc.passes.solver.factor import FactorProblem, eliminate
from sbpc.passes.solver.mip import min_budget, solve_mip
from sbpc.runtime.random_programs import hierarchy_of, random_program, with_free_args
from sbpc.tools.sbp_run import run_captured

SMALL_MESHES = {(2,), (3,), (2, 2)}


def programs(count: int, max_ops: int, meshes: set[tuple[int, ...]], seed: int, free: bool = True):
    """`count` (seed, text) pairs of random programs on `meshes`, with free arguments if `free`."""
    rng = random.Random(seed)
    found = 0
    while found < count:
        s = rng.randrange(2**32)
        text = random_program(s, max_ops)
        if hierarchy_of(text) not in meshes:
            continue
        found += 1
        yield s, with_free_args(text, random.Random(s)) if free else text


def parse(text: str) -> ModuleOp:
    return api.parse(text).module


def build(text: str, budget: float | None = None) -> tuple[GlobalProblem, FactorProblem]:
    f = next(functions(parse(text)))
    cache = InferenceCache()
    problem = Builder(f, cache, Pricer(cache.planner), budget).build()
    return problem, problem.factors()


def enumerate_min(p: FactorProblem) -> float:
    """The minimum over every combination of choices, on the full grid."""
    n = len(p.unary)
    total = np.full([len(u) for u in p.unary], p.constant)
    for v, u in enumerate(p.unary):
        shape = [1] * n
        shape[v] = len(u)
        total = total + u.reshape(shape)
    for (u, v), t in p.pairs.items():
        shape = [1] * n
        shape[u], shape[v] = t.shape
        total = total + t.reshape(shape)
    for scope, t in p.factors:
        shape = [1] * n
        for w, k in zip(scope, t.shape, strict=True):
            shape[w] = k
        total = total + t.reshape(shape)
    return float(total.min())


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


@pytest.mark.parametrize("count", [50, pytest.param(200, marks=pytest.mark.exhaustive)])
def test_elimination_equals_enumeration_on_small_programs(count: int) -> None:
    checked = shared = 0
    for seed, text in programs(2 * count, 6, SMALL_MESHES, seed=13):
        problem, factors = build(text)
        if math.prod(len(u) for u in factors.unary) > 200_000:
            continue
        solution = eliminate(factors)
        assert solution is not None
        assert close(solution.objective, enumerate_min(factors)), (seed, text)
        # The factors are the model: the chosen plan, written back and priced by plan_objective.
        module = problem.function.parent_op()
        apply_solution(problem, solution.choice)
        assert close(plan_objective(module).total_s, solution.objective), (seed, text)
        checked += 1
        shared += bool(factors.factors)
        if checked == count:
            break
    assert checked == count
    assert shared >= count // 2  # values with several consumers: one shared-boxing factor of scope >= 3 each


def test_factor_model_matches_plan_objective_at_random_choices() -> None:
    rng = random.Random(5)
    for seed, text in programs(40, 6, SMALL_MESHES, seed=21):
        problem, factors = build(text)
        choice = [rng.randrange(len(u)) for u in factors.unary]
        module = problem.function.parent_op()
        apply_solution(problem, choice)
        assert close(plan_objective(module).total_s, factors.value(choice)), (seed, text)


@pytest.mark.parametrize("count", [12, pytest.param(50, marks=pytest.mark.exhaustive)])
def test_elimination_equals_highs_on_larger_dags(count: int) -> None:
    shared = 0
    for seed, text in programs(count, 40, SMALL_MESHES | {(2, 3)}, seed=17):
        problem, factors = build(text)
        exact = eliminate(factors)
        mip = solve_mip(factors)
        assert exact is not None and mip is not None
        assert mip.lower_bound <= exact.objective * (1 + 1e-9) + 1e-15, seed
        assert close(exact.objective, mip.objective), (seed, exact.objective, mip.objective)
        shared += bool(factors.factors)
        apply_solution(problem, mip.choice)  # HiGHS's plan, priced as it runs
        assert close(plan_objective(problem.function.parent_op()).total_s, mip.objective), seed
    assert shared >= count * 4 // 5  # DAGs with reuse: values read by several ops


def objective_of(text: str, rule: str) -> PlanObjective:
    module = parse(text)
    if rule == "global":
        infer_module_global(module, None)
        return plan_objective(module)
    infer_module(module, rule, keep_records=False)
    return plan_objective(module)


@pytest.mark.parametrize("count", [15, pytest.param(60, marks=pytest.mark.exhaustive)])
def test_never_worse_than_cost_or_oneflow(count: int) -> None:
    exact = 0
    for seed, text in programs(count, 12, SMALL_MESHES | {(2, 3)}, seed=29, free=False):
        module = parse(text)
        (result,) = infer_module_global(module, None)
        best = plan_objective(module).total_s
        # The search's reported objective is the plan's, exactly (shared boxing charged once),
        # also where a shared factor was too big (bounded per edge: a gap may be left).
        assert close(result.solution.objective, best, 1e-12), (seed, result.solution.objective, best)
        assert result.solution.lower_bound <= best * (1 + 1e-12), seed
        exact += not result.problem.per_edge()
        for rule in ("cost", "oneflow"):
            other = objective_of(text, rule).total_s
            assert best <= other * (1 + 1e-9), (seed, rule, best, other)
    assert exact >= count * 11 // 12


def test_memory_budget_is_met_or_names_the_smallest_budget() -> None:
    for seed, text in programs(12, 12, SMALL_MESHES, seed=31):
        free = objective_of(text, "global")
        budget = int(free.memory_bytes * 0.7)
        module = parse(text)
        try:
            infer_module_global(module, budget)
        except Exception as error:
            message = str(error)
            assert "is too small; the smallest budget this function fits is" in message, message
            smallest = int(message.split("fits is ")[1].split(" bytes")[0])
            assert smallest > budget
            fitted = parse(text)
            infer_module_global(fitted, smallest)
            assert plan_objective(fitted).memory_bytes <= smallest
            continue
        got = plan_objective(module)
        assert got.memory_bytes <= budget
        assert got.total_s >= free.total_s * (1 - 1e-9)  # a budget can only cost time


@pytest.mark.parametrize("count", [8, pytest.param(30, marks=pytest.mark.exhaustive)])
def test_under_a_budget_equals_highs(count: int) -> None:
    """mem between the smallest budget and the unbudgeted plan's peak: the dual, fixing and HiGHS
    on what is left give HiGHS's own optimum of the whole problem (run to the end), or a bound that
    holds; the plan fits and is priced as it runs."""
    checked = 0
    for seed, text in programs(count, 30, SMALL_MESHES | {(2, 3)}, seed=37):
        problem, factors = build(text, 1.0)  # any budget: the memory rows
        free = eliminate(factors)
        if free is None:
            continue  # too wide to eliminate: the dual does not run
        smallest, peak = min_budget(factors), factors.memory_peak(free.choice)
        if peak <= smallest:
            continue  # no budget binds
        budget = int(smallest + (peak - smallest) * random.Random(seed).random() * 0.9) + 1
        module = problem.function.parent_op()
        (result,) = infer_module_global(module, budget)
        exact = result.problem.factors(covers=True)
        whole = solve_mip(exact, float(budget), 600.0)
        assert whole is not None and whole.lower_bound >= whole.objective * (1 - 1e-9), seed
        found = result.solution
        assert found.lower_bound <= whole.objective * (1 + 1e-9) + 1e-15, seed
        assert found.objective <= whole.objective * (1 + 1e-4) + 1e-15 or found.gap > 0, seed
        if found.gap == 0:
            assert close(found.objective, whole.objective, 1e-6), (seed, found.objective, whole.objective)
        got = plan_objective(module)
        assert got.memory_bytes <= budget and close(got.total_s, found.objective, 1e-12), seed
        checked += 1
    assert checked >= count // 2


def test_mem_option() -> None:
    assert parse_bytes("4096") == 4096
    assert parse_bytes("64MiB") == 64 << 20
    assert parse_bytes("1.5KiB") == 1536
    assert InferSbpPass(rule="global", mem="2GiB").budget == 2 << 30
    with pytest.raises(ValueError, match="option of rule=global only"):
        InferSbpPass(rule="cost", mem="1MiB")
    with pytest.raises(ValueError, match="is not a size"):
        InferSbpPass(rule="global", mem="64MB")


@pytest.mark.parametrize("index", range(8))
def test_global_plans_run_on_the_simulator(tmp_path: Path, index: int) -> None:
    seed, text = list(programs(8, 8, SMALL_MESHES, seed=37))[index]
    path = tmp_path / "prog.mlir"
    path.write_text(text)
    code, output = run_captured(
        [str(path), "--check", "--pipeline", "infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize"])
    assert code == 0 and "check: OK" in output, f"seed {seed}\n{text}\n{output}"


def test_report_splits_what_each_differing_op_pays_locally() -> None:
    """examples/gpt_block.mlir, weights free: the search keeps ops replicated on the tensor axis that
    the greedy choice would split, paying compute there to avoid communication elsewhere; the report
    says so per op, compute and communication apart, and the two add up to the local extra."""
    path = Path(__file__).resolve().parents[2] / "examples" / "gpt_block.mlir"
    section = api.report(api.parse(path.read_text(), str(path)), "global")["global"]
    assert section["comm_s"] == 0.0 and section["differs"]
    for entry in section["differs"]:
        assert entry["local_extra_us"] > 0
        assert entry["compute_extra_us"] + entry["comm_extra_us"] == pytest.approx(entry["local_extra_us"], abs=1e-6)
    assert any(entry["compute_extra_us"] > 0 for entry in section["differs"])
