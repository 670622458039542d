"""rule=global charges a value's boxing once per distinct target, as materialize-boxing shares it:
a hand-written program where that changes the optimum, the plan run and its bytes measured, the
per-edge fallback of too big a factor made visible, and the general factors in every solver."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bench.gen_gpt import gpt_stack
from sbpc import api
from sbpc.dialects.sbp import BROADCAST, split
from sbpc.passes.cost.comm import plan_transition
from sbpc.passes.infer_sbp.global_search import shared as global_shared
from sbpc.passes.infer_sbp.global_search.objective import plan_objective
from sbpc.passes.infer_sbp.global_search.search import infer_module_global
from sbpc.passes.solver.budget import lagrangian
from sbpc.passes.solver.factor import FactorProblem, MemoryRow, eliminate
from sbpc.passes.solver.mip import min_budget, solve_mip

T = "!sbp.tensor<64x128xf32, @p"
W = "!sbp.tensor<128x48xf32, @p, [S(1)]>"
R = "!sbp.tensor<64x48xf32, @p>"
THREE_CONSUMERS = f"""sbp.placement @p "cpu" [0, 1, 2, 3]
func.func @main(%x: {T}, [S(0)]>, %y: {T}, [S(0)]>, %w1: {W}, %w2: {W}, %w3: {W}) -> ({R}, {R}, {R}) {{
  %h = sbp.add %x, %y : {T}, [S(0)]>, {T}, [S(0)]> -> {T}>
  %q = sbp.matmul %h, %w1 : {T}>, {W} -> {R}
  %k = sbp.matmul %h, %w2 : {T}>, {W} -> {R}
  %v = sbp.matmul %h, %w3 : {T}>, {W} -> {R}
  func.return %q, %k, %v : {R}, {R}, {R}
}}
"""
"""`%h` (64x128 f32, [S(0)] on 4 ranks) feeds three matmuls whose weights are [S(1)]. Gathering %h
once (one all-gather, shared) beats gathering %x and %y before the add (two) and gathering the
three weights (three); charged per edge, %h's all-gather counts three times and loses."""

PIPELINE = "infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize"


def signatures(module) -> list[str]:
    return [str(op.attributes["sbp.signature"]) for op in module.walk() if "sbp.signature" in op.attributes]


def all_gather_of_h() -> tuple[float, int]:
    """The planner's (µs, bytes over all ranks) of %h: [S(0)] -> [B]."""
    plan = plan_transition((split(0),), (BROADCAST,), (64, 128), 4, (4,))
    return plan.time_us, plan.bytes_sent


def test_one_shared_all_gather_changes_the_optimum() -> None:
    module = api.parse(THREE_CONSUMERS).module
    (result,) = infer_module_global(module, None)
    matmul = "#sbp.sig<[B], [S(1)] -> [S(1)]>"
    assert signatures(module) == ["#sbp.sig<[S(0)], [S(0)] -> [S(0)]>", matmul, matmul, matmul]
    objective = plan_objective(module)
    time_us, _ = all_gather_of_h()
    assert objective.comm_s == pytest.approx(time_us * 1e-6, rel=1e-12)  # one all-gather, not three
    assert result.solution.objective == pytest.approx(objective.total_s, rel=1e-12)
    assert result.solution.lower_bound == result.solution.objective
    assert result.problem.per_edge() == []


def test_without_its_factor_the_value_is_bounded_per_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback (factor bound 0): charged per edge (upper bound), the optimum gathers %x and %y
    before the add — worse, priced exactly; charged a third of an all-gather per consumer (lower
    bound), it gathers %h once. The search keeps the better plan, exactly priced, with the lower
    bound's bound (tight here), and the report names %h."""
    shared = api.parse(THREE_CONSUMERS).module
    (exact,) = infer_module_global(shared, None)
    monkeypatch.setattr(global_shared, "MAX_SHARED_TABLE", 0)
    module = api.parse(THREE_CONSUMERS).module
    (result,) = infer_module_global(module, None)
    problem = result.problem
    assert problem.per_edge() == ["%h"] and not problem.factors().factors
    time_us, _ = all_gather_of_h()
    upper = eliminate(problem.factors())
    assert upper is not None and upper.choice != exact.solution.choice
    assert problem.value(upper.choice, problem.factors()) == pytest.approx(
        exact.solution.objective + time_us * 1e-6 + 0.36e-6, rel=1e-9)  # one more all-gather, the add replicated
    # The per-edge model prices the shared plan's one all-gather three times.
    assert problem.factors().value(exact.solution.choice) == pytest.approx(
        exact.solution.objective + 2 * time_us * 1e-6, rel=1e-12)
    assert result.solution.choice == exact.solution.choice
    assert result.solution.objective == pytest.approx(plan_objective(module).total_s, rel=1e-12)
    assert result.solution.objective == pytest.approx(exact.solution.objective, rel=1e-12)
    assert result.solution.lower_bound == pytest.approx(result.solution.objective, rel=1e-12)
    assert result.solution.solver == "elimination+bound(elimination)"
    text = api.report_text(api.parse(THREE_CONSUMERS), "global")
    assert ("global: %h's shared boxing has no exact factor (it would exceed 0 entries): bounded per "
            "consuming edge, see the gap") in text


def test_gpt_block_qkv_fan_out_is_bounded_with_gap_zero() -> None:
    """bench/gen_gpt.py, 1 layer, weights free: the LayerNorm output read by Q, K and V would need a
    9·49³-entry factor; bounded per edge instead, the plan is still proved optimal (gap 0) and its
    objective is plan_objective's."""
    module = api.parse(gpt_stack(1, weights="free")).module
    (result,) = infer_module_global(module, None)
    assert result.problem.per_edge() == ["%l0_n1"]
    assert result.solution.objective == pytest.approx(plan_objective(module).total_s, rel=1e-12)
    assert result.solution.lower_bound == pytest.approx(result.solution.objective, rel=1e-12)
    assert len(result.problem.factors().factors) == 3  # the softmax's two fan-outs and the residual


def test_the_plan_runs_and_sends_the_modelled_bytes() -> None:
    run = api.run(api.parse(THREE_CONSUMERS), pipeline=PIPELINE, seed=1)
    assert run.ok and run.checked
    _, sent = all_gather_of_h()
    assert run.bytes_sent == run.modelled_bytes == sent
    assert len(run.collectives) == 1 and run.collectives[0].startswith("all_gather")


def test_report_under_global_prices_the_shared_boxing_once() -> None:
    report = api.report(api.parse(THREE_CONSUMERS), "global")
    section = report["global"]
    time_us, _ = all_gather_of_h()
    assert section["comm_s"] == pytest.approx(time_us * 1e-6, rel=1e-12)
    assert section["objective_s"] == pytest.approx(section["compute_s"] + section["comm_s"], rel=1e-12)
    assert section["per_edge"] == []
    # Each matmul alone adds nothing to %h's all-gather the other two also need: locally, splitting
    # the weight's side is no cheaper, so no op "differs" for want of pricing the shared boxing.
    assert section["differs"] == []


def test_same_op_twice_and_a_to_global_share_one_boxing() -> None:
    """`%h * %h` needing [B] and a to_global of %h to [B]: one all-gather of %h in the model, as
    materialize-boxing makes (the product's result type forces [B] on its inputs)."""
    text = f"""sbp.placement @p "cpu" [0, 1, 2, 3]
func.func @main(%x: {T}, [S(0)]>) -> ({T}, [B]>, {T}, [B]>) {{
  %h = sbp.relu %x : {T}, [S(0)]> -> {T}>
  %m = sbp.mul %h, %h : {T}>, {T}> -> {T}, [B]>
  %g = sbp.to_global %h : {T}> -> {T}, [B]>
  func.return %m, %g : {T}, [B]>, {T}, [B]>
}}
"""
    module = api.parse(text).module
    (result,) = infer_module_global(module, None)
    assert signatures(module) == ["#sbp.sig<[S(0)] -> [S(0)]>", "#sbp.sig<[B], [B] -> [B]>", "#sbp.sig<[S(0)] -> [B]>"]
    time_us, sent = all_gather_of_h()
    assert plan_objective(module).comm_s == pytest.approx(time_us * 1e-6, rel=1e-12)
    assert result.solution.objective == pytest.approx(plan_objective(module).total_s, rel=1e-12)
    run = api.run(api.parse(text), pipeline=PIPELINE, seed=2)
    assert run.ok and run.bytes_sent == sent


def random_factor_problem(rng: random.Random) -> FactorProblem:
    sizes = [rng.randint(1, 4) for _ in range(rng.randint(3, 6))]
    problem = FactorProblem([np.array([rng.random() for _ in range(k)]) for k in sizes])
    for _ in range(rng.randint(0, 3)):
        u, v = rng.sample(range(len(sizes)), 2)
        problem.add_pair(u, v, np.array([[rng.random() for _ in range(sizes[v])] for _ in range(sizes[u])]))
    for _ in range(rng.randint(1, 3)):
        scope = tuple(rng.sample(range(len(sizes)), rng.randint(3, len(sizes))))
        table = np.round(np.array([rng.random() for _ in range(int(np.prod([sizes[w] for w in scope])))]), 1)
        problem.add_factor(scope, table.reshape([sizes[w] for w in scope]))
    return problem


def brute_force(problem: FactorProblem, budget: float | None = None) -> tuple[float, float]:
    """(min value within budget, min peak) over every choice."""
    best, peak = np.inf, np.inf
    for choice in np.ndindex(*[len(u) for u in problem.unary]):
        c = list(choice)
        peak = min(peak, problem.memory_peak(c))
        if budget is None or problem.memory_peak(c) <= budget:
            best = min(best, problem.value(c))
    return best, peak


def test_general_factors_in_every_solver() -> None:
    """Elimination, HiGHS, the Lagrangian bound and min_budget against brute force on random
    problems with general factors (scopes unsorted on input, sorted by add_factor)."""
    rng = random.Random(3)
    for _ in range(60):
        problem = random_factor_problem(rng)
        assert problem.factors and all(list(s) == sorted(s) and len(s) >= 3 for s, _ in problem.factors)
        best, _ = brute_force(problem)
        exact = eliminate(problem)
        mip = solve_mip(problem)
        assert exact is not None and mip is not None
        assert exact.objective == pytest.approx(best, rel=1e-12)
        assert mip.objective == pytest.approx(best, rel=1e-9)
        n = len(problem.unary)
        problem.memory_terms = [(v, np.array([float(rng.randint(1, 9)) for _ in problem.unary[v]])) for v in range(n)]
        problem.memory = [MemoryRow(1.0, list(range(n))), MemoryRow(0.0, list(range(n // 2)))]
        _, peak = brute_force(problem)
        assert min_budget(problem) == peak
        budget = peak + rng.randint(0, 6)
        best, _ = brute_force(problem, budget)
        dual = lagrangian(problem, budget)
        plan, bound = dual.plan, dual.bound
        assert bound <= best * (1 + 1e-9) + 1e-12
        if plan is not None:
            assert problem.memory_peak(plan.choice) <= budget and plan.objective >= best * (1 - 1e-9)
        within = solve_mip(problem, budget)
        assert within is not None and within.objective == pytest.approx(best, rel=1e-9)



@pytest.mark.exhaustive  # 7 s of HiGHS; the unbudgeted bounded-value tests stay in the default run
def test_under_a_budget_a_bounded_value_costs_one_mip(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same 1-layer GPT under mem = ¼ weights + 3 MiB: the plans of both bounds, priced exactly,
    then one HiGHS solve of the exact problem (the bounded value as a cover, no table), not two. The
    result is the exact problem's optimum (HiGHS run to the end on it alone agrees), fits the budget,
    and its objective is plan_objective's."""
    from sbpc.passes.solver import budget as global_budget

    budget = 3933184
    mips: list[int] = []
    real = global_budget.solve_mip

    def counting(problem: FactorProblem, *args: object, **kwargs: object):
        mips.append(len(problem.covers))
        return real(problem, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(global_budget, "solve_mip", counting)
    module = api.parse(gpt_stack(1, weights="free")).module
    (result,) = infer_module_global(module, budget)
    assert mips == [1]  # one MIP, with %l0_n1 as its one cover
    assert "shared boxing bounded" in result.solution.solver
    objective = plan_objective(module)
    assert result.solution.objective == pytest.approx(objective.total_s, rel=1e-12)
    assert objective.memory_bytes <= budget
    assert result.solution.lower_bound <= result.solution.objective
    exact = result.problem.factors(covers=True)
    alone = real(exact, float(budget), 120.0, 1e-9)
    assert alone is not None
    assert result.solution.objective == pytest.approx(alone.objective, rel=1e-6)
    assert exact.value(result.solution.choice) == pytest.approx(result.solution.objective, rel=1e-12)


def test_a_cover_is_valued_as_its_shared_boxing() -> None:
    """`FactorProblem.covers` (a factor given only by its form) prices a plan as `Shared.seconds`
    does, and elimination refuses a problem that has one."""
    module = api.parse(gpt_stack(1, weights="free")).module
    (result,) = infer_module_global(module, None)
    problem = result.problem
    assert [s.exact for s in problem.shared].count(False) == 1
    covered = problem.factors(covers=True)
    assert len(covered.covers) == 1
    rng = random.Random(3)
    for _ in range(20):
        choice = [rng.randrange(len(u)) for u in covered.unary]
        assert covered.value(choice) == pytest.approx(problem.value(choice, problem.factors()), rel=1e-12)
    with pytest.raises(ValueError, match="covers"):
        eliminate(covered)
