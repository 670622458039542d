"""`infer-sbp{rule=global}`: the whole-program optimum (SPEC §3.1), function by function.

Each function becomes a factor problem (`passes/infer_sbp/global_search/problem.py`), solved exactly by variable
elimination or, with a memory budget or when elimination would build too large a table, by HiGHS
with its bound (`passes/solver/factor.py`), under a budget after the Lagrangian dual
(`passes/solver/budget.py`); then every free argument, result type and signature
is written back and the function type updated. No decision is shared between repeated layers:
each op is its own variable (elimination is linear in the program's length anyway).

A budget no choice fits is a located error at the function naming the smallest budget that fits.

Solutions are memoised in the `InferenceCache` (`solutions`) by `problem_key` — the values the
problem is built from — so that `sbp-opt --sbp-report`, whose report solves a clone, and the pass
after it, given the pass's cache, solve each function once: the second applies the first's choice
(the same problem, so the same write-back) and reports the first's solve time.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from io import StringIO

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import PlacementOp
from sbpc.dialects.sbp import NdSbpAttr, SignatureAttr
from sbpc.dialects.sbp_ops import BoxingOp, ToGlobalOp
from sbpc.dialects.sbp_syntax import SbpPrinter
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.dialects.units import human_bytes
from sbpc.passes.autodiff import return_in_argument_layouts
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.global_search.problem import Builder, GlobalProblem, Pricer
from sbpc.passes.infer_sbp.local import check_explicit, functions
from sbpc.passes.solver.anytime import anytime
from sbpc.passes.solver.budget import Dual, close_gap, lagrangian
from sbpc.passes.solver.factor import MIP_GAP, FactorProblem, Solution, eliminate
from sbpc.passes.solver.mip import min_budget
from sbpc.passes.solver.solve import solve


@dataclass
class FunctionResult:
    """What the report reads of one function's search."""

    problem: GlobalProblem
    solution: Solution
    greedy: list[int | None] = field(default_factory=list)
    """Per variable, the best local (op-by-op) choice given the others' global choices (ops only)."""


def problem_key(f: func.FuncOp, budget: int | None, time_limit: float | None = None) -> tuple[object, ...]:
    """Everything a function's solution depends on, as values: the rule, the budget, the time limit
    (None: none, the solution a function of the rest), the printed function (its types, properties,
    hints and result requirements) and the printed placements around it (hierarchies, device types
    and links)."""
    text = StringIO()
    printer = SbpPrinter(stream=text)
    scope = f.parent_op()
    for op in () if scope is None else (o for region in scope.regions for block in region.blocks for o in block.ops):
        if isinstance(op, PlacementOp):
            printer.print_op(op)
            text.write("\n")
    printer.print_op(f)
    return ("global", budget, time_limit, text.getvalue())


def search_function(
    f: func.FuncOp, cache: InferenceCache, pricer: Pricer, budget: int | None, time_limit: float | None = None,
) -> FunctionResult:
    """Build, solve (or take the memoised solution of the same problem) and write back one function;
    `time_limit`: seconds per HiGHS run (None: work limits only)."""
    if len(cache.candidates) + len(cache.fitting) >= cache.max_decisions:
        cache.clear()  # the cache's bound (rule=global makes no decisions, only candidate lists)
    key = problem_key(f, budget, time_limit)
    problem = Builder(f, cache, pricer, budget).build()
    solution = cache.solutions.get(key)
    if solution is None:
        try:
            solution = solve_function(problem, budget, time_limit)
        except RuntimeError as why:  # HiGHS stopped by time-limit with no plan, and none was known
            raise OpError(f, f"func.func @{f.sym_name.data}: no plan found within time-limit={time_limit} s ({why}); "
                          "raise time-limit, or leave it out (work limits only)") from None
        if solution is None:
            smallest = min_budget(problem.factors(), time_limit)
            raise OpError(
                f, f"func.func @{f.sym_name.data}: mem={budget} bytes ({human_bytes(budget or 0)}) is too small; the "
                f"smallest budget this function fits is {int(smallest)} bytes ({human_bytes(smallest)})")
        cache.remember_solution(key, solution)
    solution = dataclasses.replace(solution, choice=list(solution.choice))  # the memo's copy stays as solved
    apply_solution(problem, solution.choice)
    return FunctionResult(problem, solution)


def solve_function(problem: GlobalProblem, budget: int | None, time_limit: float | None = None) -> Solution | None:
    """One function's plan and bound, by the method its width and budget allow: exact elimination
    (with the per-edge lower bound where a shared value is charged per edge), the Lagrangian dual
    and HiGHS under a budget, `solve_wide` where elimination is too wide. None: nothing fits."""
    factors = problem.factors()
    upper = eliminate(problem.factors(pairwise=True))  # the per-edge upper twin's optimum, if narrow
    if upper is None:  # too wide for elimination, even per edge
        return solve_wide(problem, budget, None, time_limit)
    if budget is None:
        solution = eliminate(factors)
        if solution is None:
            return solve_wide(problem, budget, upper, time_limit)
        return bound_per_edge(problem, factors, solution, time_limit) if problem.per_edge() else solution
    if problem.per_edge():
        return solve_bounded_with_budget(problem, factors, budget, time_limit)
    return solve(factors, float(budget), time_limit=time_limit)


TWINS = "elimination(per-edge twins)"
HIGHS_MAX_CHOICES = 20_000
"""A wide problem goes on to HiGHS (from the anytime plan) when its variables have at most this
many choices in all: above it HiGHS does not finish the root LP in minutes (gen_dag 2000: 44,821)."""


def solve_wide(
    problem: GlobalProblem, budget: int | None, upper_optimum: Solution | None, time_limit: float | None = None,
) -> Solution | None:
    """A function too wide for elimination: without a budget, where its per-edge twins stay narrow
    (`upper_optimum`: the upper twin's, None where too wide), the better of their optima (priced
    exactly) and the lower twin's as the bound; else
    `solver.anytime`'s plan (priced exactly) and the lower-bound twin's proved bound; then, where
    the problem is small enough and a gap is left, HiGHS on the exact problem from that plan
    (`time_limit`: seconds for each part). None: no plan within the budget was found."""
    started = time.perf_counter()
    exact = problem.factors(covers=True)
    upper, lower = problem.factors(pairwise=True), problem.factors(lower=True, pairwise=True)
    # Without a budget, the twins' optima where narrow: the lower one's is a bound.
    lower_optimum = eliminate(lower) if budget is None and upper_optimum is not None else None
    if upper_optimum is not None and lower_optimum is not None:
        value, choice = min((exact.value(t.choice), t.choice) for t in (upper_optimum, lower_optimum))
        found = Solution(choice, value, min(value, lower_optimum.objective), TWINS, time.perf_counter() - started)
    else:
        deadline = None if time_limit is None else started + time_limit
        found = anytime(exact, upper, lower, None if budget is None else float(budget), deadline,
                        shared=[s.form for s in problem.shared],
                        split=[s.form for s in problem.shared if not s.pairwise])
    if sum(len(u) for u in exact.unary) > HIGHS_MAX_CHOICES or (found is not None and found.gap <= MIP_GAP):
        return found
    plan = None if found is None else (found.choice, found.objective)
    bound = -np.inf if found is None else found.lower_bound
    plan, bound, ran = close_gap(exact, float(budget) if budget is not None else None, plan, bound, None, time_limit)
    if plan is None:
        return None
    solver = (found.solver if found is not None else "") + ran
    return Solution(plan[0], plan[1], min(plan[1], bound), solver.lstrip("+"), time.perf_counter() - started)


def solve_bounded_with_budget(
    problem: GlobalProblem, factors: FactorProblem, budget: int, time_limit: float | None = None,
) -> Solution | None:
    """Under a budget, where shared values are charged per edge: plans from the upper bound
    (`factors`) and its lower-bound twin — each one's elimination optimum if it fits, else its
    Lagrangian dual's plan — priced exactly, the twin's bound kept; then, if a gap is left,
    `close_gap` on the exact problem (those values as `covers`): reduced-cost fixing by the twin's
    dual and one HiGHS solve of what is left, started from the best plan. One MIP, where solving
    both bounds as plans would take two. None: nothing fits."""
    started = time.perf_counter()
    plans: list[list[int]] = []
    bound = -np.inf
    fixing: tuple[FactorProblem, Dual] | None = None
    solver = "elimination"
    for fp, is_lower in ((factors, False), (problem.factors(lower=True), True)):
        exact = eliminate(fp)
        if exact is None:
            continue  # too wide to eliminate: HiGHS alone
        if fp.memory_peak(exact.choice) <= budget:
            plans.append(exact.choice)
            bound = max(bound, exact.objective) if is_lower else bound
            continue
        dual, solver = lagrangian(fp, float(budget), time_limit=time_limit), "lagrangian"
        if dual.plan is not None:
            plans.append(dual.plan.choice)
        if is_lower:
            bound, fixing = max(bound, dual.bound), (fp, dual)
    values = [problem.value(c, factors) for c in plans]
    best = (plans[int(np.argmin(values))], min(values)) if plans else None
    plan, bound, ran = close_gap(problem.factors(covers=True), float(budget), best, bound, fixing, time_limit)
    if plan is None:
        return None
    return Solution(plan[0], plan[1], min(plan[1], bound), f"{solver}{ran}(shared boxing bounded)",
                    time.perf_counter() - started)


def bound_per_edge(
    problem: GlobalProblem, factors: FactorProblem, solution: Solution, time_limit: float | None = None,
) -> Solution:
    """Without a budget, where shared values are charged per edge (`GlobalProblem.per_edge`),
    `solution` optimises an upper bound: solve the matching lower bound too (`solve`, elimination
    where it stays narrow), keep whichever plan is cheaper priced exactly, and report that exact
    objective with the lower bound's bound (a gap where the two differ). Under a budget,
    `solve_bounded_with_budget` instead."""
    started = time.perf_counter()
    lower = solve(problem.factors(lower=True), time_limit=time_limit)
    plans = [solution.choice] + ([] if lower is None else [lower.choice])
    exact = [problem.value(c, factors) for c in plans]
    best = int(np.argmin(exact))
    bound = -np.inf if lower is None else lower.lower_bound
    solver = f"{solution.solver}+bound({lower.solver if lower is not None else 'none'})"
    return Solution(plans[best], exact[best], min(exact[best], bound), solver,
                    solution.solve_s + time.perf_counter() - started)


def apply_solution(problem: GlobalProblem, choice: list[int]) -> None:
    """Type every free argument and op result and set every signature as `choice` says."""
    f = problem.function
    for var, c in zip(problem.variables, choice, strict=True):
        if var.kind == "arg":
            arg = f.body.block.args[var.index]
            assert isinstance(arg.type, GlobalTensorType)
            Rewriter.replace_value_with_new_type(arg, arg.type.with_sbp(var.choices[c]))  # type: ignore[arg-type]
            continue
        op = var.anchor
        ins, outs = var.choices[c]  # type: ignore[misc]
        for r, nd in zip(op.results, outs, strict=True):
            ty = r.type
            assert isinstance(ty, GlobalTensorType)
            if ty.nd_sbp is None:
                Rewriter.replace_value_with_new_type(r, ty.with_sbp(nd))
        op.attributes["sbp.signature"] = SignatureAttr(list(ins), list(outs))
    for op in f.body.block.ops:
        if isinstance(op, ToGlobalOp | BoxingOp | CollectiveOp):
            check_explicit(op)
    f.update_function_type()
    return_in_argument_layouts(f)  # a step's updated parameters and state leave in their arguments' SBP


def infer_module_global(
    module: ModuleOp, budget: int | None, cache: InferenceCache | None = None, pricer: Pricer | None = None,
    time_limit: float | None = None,
) -> list[FunctionResult]:
    """rule=global on every function of `module` (`time_limit`: seconds per HiGHS run, or None)."""
    cache = InferenceCache() if cache is None else cache
    pricer = Pricer(cache.planner) if pricer is None else pricer
    return [search_function(f, cache, pricer, budget, time_limit) for f in functions(module)]


def free_arguments(result: FunctionResult) -> dict[str, NdSbpAttr]:
    """Each free argument's chosen ND-SBP, by its name (`%x`) or its position."""
    f = result.problem.function
    chosen: dict[str, NdSbpAttr] = {}
    for var, c in zip(result.problem.variables, result.solution.choice, strict=True):
        if var.kind == "arg":
            arg = f.body.block.args[var.index]
            chosen[f"%{arg.name_hint}" if arg.name_hint else str(var.index)] = var.choices[c]  # type: ignore[assignment]
    return chosen
