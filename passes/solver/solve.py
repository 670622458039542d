"""`solve`: the solver's entry, with or without a memory budget.

It picks among the methods of the package: exact elimination (`factor.eliminate`); HiGHS when
elimination would build too large a table (`mip.solve_mip`); under a budget the unconstrained
optimum if it fits, else the Lagrangian dual (`budget.lagrangian`), then reduced-cost fixing and
HiGHS on what is left (`budget.close_gap`).
"""

from __future__ import annotations

import time

import numpy as np

from sbpc.passes.solver.budget import close_gap, lagrangian
from sbpc.passes.solver.factor import MAX_TABLE, FactorProblem, Solution, eliminate
from sbpc.passes.solver.mip import solve_mip
from sbpc.passes.solver.work import one_blas_thread


@one_blas_thread
def solve(
    problem: FactorProblem, budget: float | None = None, max_table: int = MAX_TABLE,
    time_limit: float | None = None,
) -> Solution | None:
    """The optimum, or a plan with a proved bound (None: no plan fits `budget`).

    Without a budget: exact elimination, HiGHS if it gets too wide. With one: the unconstrained
    optimum if it fits (exact); else the Lagrangian dual, then (`close_gap`) reduced-cost fixing
    and HiGHS on what is left, or HiGHS alone when elimination is too wide. Work limits only,
    unless `time_limit` (seconds, for the dual's loop and each HiGHS run) is given."""
    started = time.perf_counter()
    exact = eliminate(problem, max_table)
    if exact is not None and (budget is None or problem.memory_peak(exact.choice) <= budget):
        return exact
    if budget is None:
        return solve_mip(problem, None, time_limit)
    dual = lagrangian(problem, budget, max_table, time_limit=time_limit) if exact is not None else None
    plan = None if dual is None or dual.plan is None else (dual.plan.choice, dual.plan.objective)
    bound = -np.inf if dual is None else dual.bound
    plan, bound, ran = close_gap(problem, budget, plan, bound, None if dual is None else (problem, dual), time_limit)
    if plan is None:
        return None
    solver = ("lagrangian" if dual is not None else "") + ran
    return Solution(plan[0], plan[1], min(plan[1], bound), solver.lstrip("+"), time.perf_counter() - started)
