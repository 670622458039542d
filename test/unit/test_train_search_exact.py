"""Exactness of rule=global on training steps (SPEC §8, issue 24): random forward programs
(`runtime/random_programs.py`, with the SPEC §7 ops) made one SGD or AdamW step by the `autodiff` pass,
then searched.

* Small steps (a 2-rank 1-D mesh, ≤ 3 forward ops, every argument free, so parameters, optimizer
  state and their ties are search variables; at most 10^5 plans): variable elimination's optimum
  equals the minimum over every plan of the factor problem (enumerated on the full grid), and that
  plan, written back, is priced the same by the independent evaluator `plan_objective`, as is a random
  plan.
* Larger steps (≤ 25 forward ops, meshes 2, 2x2, 2x3, some arguments free): elimination's optimum
  equals HiGHS's (`solve_mip`, run to a 1e-9 gap), whose bound holds; HiGHS's plan is priced the same
  by `plan_objective`.
* Steps with every argument's SBP given: rule=global's plan is never worse than rule=cost's, both
  priced by `plan_objective`, and the search's reported objective is its plan's.

The loss of a forward program is the sum of all its dangling float values (each summed to 0-d), so
every op reaches it; arguments given as partial are made broadcast (a caller holds no partial
parameter). The default run keeps the first programs of each sweep; `-m exhaustive` runs 200 / 30 / 60.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import sbpc
from sbpc.passes.autodiff import STEP_OPS, tied_results
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.global_search.objective import plan_objective
from sbpc.passes.infer_sbp.global_search.problem import Builder, GlobalProblem, Pricer
from sbpc.passes.infer_sbp.global_search.search import apply_solution, infer_module_global
from sbpc.passes.infer_sbp.local import functions, infer_module
from sbpc.passes.solver.factor import FactorProblem, eliminate
from sbpc.passes.solver.mip import solve_mip
from sbpc.runtime.random_programs import hierarchy_of, random_program, with_free_args

LOSS = "!sbp.tensor<f32, @mesh>"
_DEF = re.compile(r"^  (%v\d+) = (.*) -> (!sbp\.tensor<[^>]*>)$", re.M)
_RETURN = re.compile(r"^  func\.return .*$", re.M)
_RESULTS = re.compile(r"\) -> \(.*\) \{$", re.M)
_ARGUMENTS = re.compile(r"^func\.func @main\((.*)\) -> ", re.M)
MAX_PLANS = 100_000
"""The small sweep's bound on the number of plans (the product of the domains) it enumerates."""


def with_loss(text: str) -> str | None:
    """The forward program `text` returning one f32 0-d loss: the sum of every op result of element type
    f32 that no op reads (None if there is none: an integer program)."""
    body = _RETURN.split(text)[0]
    defined = _DEF.findall(body)
    read = set(re.findall(r"%v\d+\b", "\n".join(rhs for _, rhs, _ in defined)))
    leaves = [(name, ty) for name, _, ty in defined if name not in read and re.search(r"[<x]f32,", ty)]
    if not leaves:
        return None
    lines, terms = [], []
    for i, (name, ty) in enumerate(leaves):
        rank = ty.removeprefix("!sbp.tensor<").split("f32")[0].count("x")
        if rank:
            axes = ", ".join(map(str, range(rank)))
            lines.append(f"  %sum{i} = sbp.reduce_sum {name} {{axes = array<i64: {axes}>}} : {ty} -> {LOSS}")
            name = f"%sum{i}"
        terms.append(name)
    total = terms[0]
    for i, term in enumerate(terms[1:]):
        lines.append(f"  %total{i} = sbp.add {total}, {term} : {LOSS}, {LOSS} -> {LOSS}")
        total = f"%total{i}"
    lines.append(f"  func.return {total} : {LOSS}")
    ret = _RETURN.search(text)
    assert ret is not None
    text = text[: ret.start()] + "\n".join(lines) + text[ret.end() :]
    return _RESULTS.sub(f") -> {LOSS} {{", text, count=1)


def without_partial_arguments(text: str) -> str:
    """Every argument type's partial entries (P, P(max), ...) made B, at every use."""
    found = _ARGUMENTS.search(text)
    assert found is not None
    for ty in set(re.findall(r"!sbp\.tensor<[^>]*>", found.group(1))):
        text = text.replace(ty, re.sub(r"P\(\w+\)|\bP\b", "B", ty))
    return text


def training_steps(
    count: int, max_ops: int, meshes: set[tuple[int, ...]], seed: int, p_free: float,
) -> Iterator[tuple[int, str, ModuleOp]]:
    """(seed, optimizer, step) of `count` random training steps: a random float forward program on one of
    `meshes` with its loss, each argument freed with probability `p_free`, differentiated into an SGD
    (odd seeds) or AdamW (even seeds) step that updates at least one parameter."""
    rng = random.Random(seed)
    found = 0
    while found < count:
        s = rng.randrange(2**32)
        text = random_program(s, max_ops, nn=True)
        if hierarchy_of(text) not in meshes or (text := with_loss(text)) is None:
            continue
        text = without_partial_arguments(text)
        if p_free:
            text = with_free_args(text, random.Random(s), p_free)
        optimizer = "sgd lr=0.5" if s % 2 else "adamw lr=0.01 weight-decay=0.1"
        module = sbpc.compile(sbpc.parse(text), f"autodiff{{optimizer={optimizer}}}").module
        if not any(isinstance(op, STEP_OPS) for op in module.walk()):
            continue  # the loss reads no parameter
        found += 1
        yield s, optimizer, module


def build(module: ModuleOp) -> tuple[GlobalProblem, FactorProblem]:
    cache = InferenceCache()
    problem = Builder(next(functions(module)), cache, Pricer(cache.planner), None).build()
    return problem, problem.factors()


def enumerated_min(p: FactorProblem) -> float:
    """The minimum of the factor problem over every plan: each factor broadcast onto the full grid
    of all variables' choices, summed, minimised."""
    grid = [len(u) for u in p.unary]
    total = np.full(grid, p.constant)

    def spread(scope: tuple[int, ...], table: np.ndarray) -> np.ndarray:
        shape = [1] * len(grid)
        for v, k in zip(scope, table.shape, strict=True):
            shape[v] = k
        return table.reshape(shape)

    for v, unary in enumerate(p.unary):
        total = total + spread((v,), unary)
    for scope, table in [*p.pairs.items(), *p.factors]:
        total = total + spread(scope, table)
    assert not p.covers  # terms without a table are never built without a memory budget
    return float(total.min())


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def priced_alike(module: ModuleOp, problem: GlobalProblem, factors: FactorProblem, choice: list[int]) -> bool:
    """`choice`, written back into `module`, costs what the factor problem says (shared boxings priced
    per edge, an upper bound, excepted)."""
    apply_solution(problem, choice)
    return bool(problem.per_edge()) or close(plan_objective(module).total_s, factors.value(choice), 1e-12)


@pytest.mark.parametrize("count", [20, pytest.param(200, marks=pytest.mark.exhaustive)])
def test_elimination_equals_enumeration_on_small_steps(count: int) -> None:
    checked = shared = adamw = tied = 0
    rng = random.Random(3)
    for seed, optimizer, module in training_steps(8 * count, 3, {(2,)}, seed=41, p_free=1.0):
        problem, factors = build(module)
        if math.prod(len(u) for u in factors.unary) > MAX_PLANS:
            continue
        solution = eliminate(factors)
        assert solution is not None
        assert close(solution.objective, enumerated_min(factors)), (seed, optimizer)
        assert close(solution.objective, factors.value(solution.choice)), seed
        other = module.clone()
        other_problem, other_factors = build(other)
        guess = [rng.randrange(len(u)) for u in other_factors.unary]
        assert priced_alike(other, other_problem, other_factors, guess), (seed, optimizer, "random plan")
        assert priced_alike(module, problem, factors, solution.choice), (seed, optimizer, "optimum")
        checked += 1
        shared += bool(factors.factors)
        adamw += optimizer.startswith("adamw")
        tied += bool(tied_results(problem.function))
        if checked == count:
            break
    assert checked == count
    assert tied == count  # every step carries its parameters (and state) to the next
    assert shared >= count // 2 and count // 4 <= adamw <= count * 3 // 4


@pytest.mark.parametrize("count", [4, pytest.param(30, marks=pytest.mark.exhaustive)])
def test_elimination_equals_highs_on_larger_steps(count: int) -> None:
    checked = too_wide = 0
    for seed, optimizer, module in training_steps(4 * count, 25, {(2,), (2, 2), (2, 3)}, seed=43, p_free=0.5):
        problem, factors = build(module)
        exact = eliminate(factors)
        if exact is None:
            too_wide += 1  # too wide to eliminate: rule=global's HiGHS path, not this comparison
            continue
        mip = solve_mip(factors)
        assert mip is not None
        assert mip.lower_bound <= exact.objective * (1 + 1e-9) + 1e-15, (seed, optimizer)
        assert close(exact.objective, mip.objective), (seed, optimizer, exact.objective, mip.objective)
        assert priced_alike(module, problem, factors, mip.choice), (seed, optimizer)
        checked += 1
        if checked == count:
            break
    assert checked == count, (checked, too_wide)


@pytest.mark.parametrize("count", [6, pytest.param(60, marks=pytest.mark.exhaustive)])
def test_global_never_worse_than_cost_on_steps(count: int) -> None:
    better = 0
    for seed, optimizer, module in training_steps(count, 16, {(2,), (2, 2), (2, 3)}, seed=47, p_free=0.0):
        local = module.clone()
        (result,) = infer_module_global(module, None)
        best = plan_objective(module).total_s
        assert close(result.solution.objective, best, 1e-12), (seed, optimizer, result.solution.objective, best)
        assert result.solution.lower_bound <= best * (1 + 1e-12), seed
        infer_module(local, "cost", keep_records=False)
        cost = plan_objective(local).total_s
        assert best <= cost * (1 + 1e-9), (seed, optimizer, best, cost)
        better += best < cost * (1 - 1e-9)
    assert better >= count // 2  # the search does find better plans, not only equal ones
