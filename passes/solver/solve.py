"""`solve`: the solver's entry, with or without a memory budget.

It picks among the methods of the package: exact elimination (`factor.eliminate`); HiGHS when
elimination would build too large a table (`factor.solve_mip`); under a budget the unconstrained
optimum if it fits, else the knapsack of the rows' shared terms (`knapsack.knapsack`: the optimum
where its plan fits), else the Lagrangian dual (`budget.lagrangian`), then reduced-cost fixing and
HiGHS on what is left (`budget.close_gap`).
"""

from __future__ import annotations

import time

import numpy as np

from sbpc.passes.solver.budget import close_gap, lagrangian
from sbpc.passes.solver.factor import MAX_TABLE, FactorProblem, Solution, eliminate, solve_mip
from sbpc.passes.solver.knapsack import Knapsack, knapsack


def proved(value: float, bound: float) -> bool:
    """Whether a plan of `value` meets `bound` to rounding (the bound's sums differ from the plan's
    in the last bits): then it is the optimum, gap 0."""
    return value - bound <= 1e-12 * abs(value)


def knapsack_relaxation(problem: FactorProblem, budget: float, time_limit: float | None = None) -> Knapsack | None:
    """`knapsack.knapsack` within `time_limit` seconds (None: its work limits only)."""
    return knapsack(problem, budget, None if time_limit is None else time.perf_counter() + time_limit)


def solve(
    problem: FactorProblem, budget: float | None = None, max_table: int = MAX_TABLE,
    time_limit: float | None = None,
) -> Solution | None:
    """The optimum, or a plan with a proved bound (None: no plan fits `budget`).

    Without a budget: exact elimination, HiGHS if it gets too wide. With one: the unconstrained
    optimum if it fits (exact); else the shared terms' knapsack, whose plan is the optimum if it
    fits and prices at its bound; else the Lagrangian dual, then (`close_gap`) reduced-cost fixing
    and HiGHS on what is left, or HiGHS alone when elimination is too wide. Work limits only,
    unless `time_limit` (seconds, for the dual's loop and each HiGHS run) is given."""
    started = time.perf_counter()
    exact = eliminate(problem, max_table)
    if exact is not None and (budget is None or problem.memory_peak(exact.choice) <= budget):
        return exact
    if budget is None:
        return solve_mip(problem, None, time_limit)
    relaxed = knapsack_relaxation(problem, budget, time_limit) if exact is not None else None
    if relaxed is not None and relaxed.fits:
        value = problem.value(relaxed.choice)
        if proved(value, relaxed.bound):
            return Solution(relaxed.choice, value, value, "knapsack", time.perf_counter() - started)
    dual = lagrangian(problem, budget, max_table, time_limit=time_limit) if exact is not None else None
    plans = [] if dual is None or dual.plan is None else [(dual.plan.choice, dual.plan.objective)]
    if relaxed is not None and relaxed.fits:
        plans.append((relaxed.choice, problem.value(relaxed.choice)))
    plan = min(plans, key=lambda p: p[1]) if plans else None
    bound = max(-np.inf if dual is None else dual.bound, -np.inf if relaxed is None else relaxed.bound)
    plan, bound, ran = close_gap(problem, budget, plan, bound, None if dual is None else (problem, dual), time_limit)
    if plan is None:
        return None
    solver = ("knapsack+" if relaxed is not None else "") + ("lagrangian" if dual is not None else "") + ran
    return Solution(plan[0], plan[1], min(plan[1], bound), solver.lstrip("+"), time.perf_counter() - started)
