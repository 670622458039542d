"""`kick`: leave a settled plan's basin by re-solving the whole problem with its memory peak priced.

`relink.Pool.settle` re-solves a plan's memory peak and the rest of it apart, each whole; where it
stalls, the plan is a block-coordinate optimum, and a better plan may differ from it on a few
hundred peak choices that only pay once the rest has moved too (IOPDDL N: plans settled at
211.62e9 and 202.35e9 differ on 761 variables, ~130 of them live at the peak; the better plan's
peak choices in the worse plan, the rest held, cost 1.57e12 more). A kick moves both at once:
the LP relaxation of the peak's window (`peak.window_problem`, the rest held) prices each choice's
usage at the peak by the rows' shadow prices (`mip.memory_prices`); toulbar2 solves the whole
problem with those prices, times `scale`, on the window's unaries (memory made soft where it
binds, as the priced starts do with the Lagrangian's prices); HiGHS's RENS repairs the answer
under the rows it fills or overflows (`peak.mip_window`); and the repaired plan is settled in a
pool of its own. It replaces the best plan only where it ends cheaper.

Measured on N, each kicked once at `SCALES[0]`: three settled plans, 202.35e9 -> 200.80e9, 203.71e9
(the plan N's run at its limit had ended on) -> 201.47e9, 211.62e9 -> 204.18e9 (at 100: 202.90e9);
the unsettled best of the pool N's run at its limit had (209.93e9) -> 201.47e9 in 23 s (LP 0.9 s,
toulbar2 5 s, repair 4 s, settling 14 s), where settling it alone stops at 204.06e9. The response
to the scale is not monotone (from 203.71e9: 20 -> 204.32e9, 30 -> 217.6e9, 100 -> an overflow
too wide to repair), so the scales are tried in turn, the best of the settled answers kept.
"""

from __future__ import annotations

import math

import numpy as np

from sbpc.passes.solver.cfn import cfn_ticks, solve_cfn
from sbpc.passes.solver.local import Graph
from sbpc.passes.solver.mip import MIP_UNIT, memory_prices
from sbpc.passes.solver.peak import mip_ticks, mip_window, window_problem
from sbpc.passes.solver.relink import PEAK_FILL, Pool
from sbpc.passes.solver.work import ROW_VARIABLE, Stop

SCALES = (50.0, 100.0, 20.0)
"""The multiples of the peak's LP prices a kick tries, in turn (measured on N: module docstring)."""


def peak_prices(graph: Graph, plan: np.ndarray, live: list[int], peak: np.ndarray, used: np.ndarray,
                stop: Stop | None = None) -> list[np.ndarray] | None:
    """Per variable of `live` (those live at the `peak` rows, a mask), what each of its choices'
    usage there costs at the LP relaxation's optimum of the window, the rest held at `plan` (`used`:
    its row usages; in the graph's cost unit); None where the window is too large for HiGHS or its
    LP did not solve."""
    problem = window_problem(graph, plan, live, peak, used)
    if problem is None:
        return None
    prices = memory_prices(problem, graph.rows.limit, None if stop is None else stop.seconds())
    if stop is not None:
        stop.charge(mip_ticks(problem) + ROW_VARIABLE * graph.row_variables)
    return None if prices is None else [price * MIP_UNIT for price in prices]


def repair(pool: Pool, plan: np.ndarray, stop: Stop | None = None) -> np.ndarray | None:
    """`plan` made to fit every row, or None: HiGHS's RENS over the variables live at the rows it
    fills to `relink.PEAK_FILL` or overflows, under those rows and those its answers overflow (every
    such row is over window variables alone: `peak.mip_window`, any plan that fits taken)."""
    graph = pool.graph
    rows = graph.rows
    used = rows.of(plan)
    if (used <= rows.limit).all():
        return plan
    chosen = used >= PEAK_FILL * rows.limit
    try:
        return mip_window(graph, plan, sorted(pool.live_at(chosen)), chosen, stop, math.inf)
    except RuntimeError:  # HiGHS stopped by its limit before a plan
        return None


def kick(pool: Pool, scale: float, backtracks: int, stop: Stop | None = None) -> bool:
    """Kick the pool's best plan at `scale` times its peak's LP prices (module docstring), with
    toulbar2's `backtracks`; whether the pool's best plan is now a cheaper one."""
    if not pool.plans or (stop is not None and stop.due()):
        return False
    graph = pool.graph
    value, best = pool.plans[0]
    used = graph.rows.of(best)
    peak = used >= PEAK_FILL * graph.rows.limit
    live = sorted(pool.live_at(peak))
    prices = peak_prices(graph, best, live, peak, used, stop) if live else None
    if prices is None or (stop is not None and stop.due()):
        return False
    unary = list(graph.unary)
    for a, price in zip(live, prices, strict=True):
        unary[a] = graph.unary[a] + scale * price
    answer = solve_cfn(unary, graph.near, backtracks, None if stop is None else stop.seconds())
    if stop is not None:
        stop.charge(cfn_ticks(unary, graph.near, answer) + ROW_VARIABLE * graph.row_variables)
    if answer is None:
        return False
    fitted = repair(pool, answer.choice, stop)
    if fitted is None:
        return False
    kicked = Pool(graph, pool.backtracks)
    kicked.add(fitted, relink=False)
    kicked.settle(stop)
    found = kicked.best()
    if found is None or not found[1] < value:
        return False
    pool.add(found[0], relink=False)
    return True
