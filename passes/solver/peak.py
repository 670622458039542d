"""`mip_window`: the variables live at a plan's memory peak re-solved together by HiGHS under its rows.

Where the memory binds at one peak (IOPDDL N: rows 2,400-4,400 of 24,032 within a fifth of the
limit; at the fullest, 80 % of it is usage no choice changes and 992 variables' choices share the
rest), the choices there form a knapsack-like problem over a thousand variables and hundreds of
rows. toulbar2's propagation of such rows is weak (the peak's windows of `relink.Pool.spread` gained
0.005 % where this gains 0.3 %); HiGHS's LP relaxation of the window, the rest of the plan held, is
within 0.13 % of the window's optimum. HiGHS proves that optimum in 56 s on N, most of it in its root
cuts; RENS (Berthold: the MIP over the choices the LP relaxation leaves above zero) finds a plan
within 0.007 % of it in 3.8 s (`mip.solve_mip(rens=True)`).

Rows go in as they bind, as in `relink.solve_window`: the ones given, then those each answer
overflows; an answer is taken only if it fits every row and is cheaper.
"""

from __future__ import annotations

import numpy as np

from sbpc.passes.solver.factor import FactorProblem, MemoryRow
from sbpc.passes.solver.local import Graph
from sbpc.passes.solver.mip import MIP_UNIT, solve_mip
from sbpc.passes.solver.work import MIP_COEFFICIENT, MIP_ENTRY, NEIGHBOUR, ROW_VARIABLE, VISIT, Stop

ROW_ROUNDS = 4
"""Rounds of adding the rows an answer overflows before the window gives up."""
MAX_ENTRIES, MAX_COEFFICIENTS = 500_000, 8_000_000
"""The largest window problem HiGHS is given: pair-table entries and memory-row coefficients (IOPDDL
N's peak: 0.26 M and 3.9 M (2.95 M merged), 4.2 s; M's 0.31 M and 0.05 M, 1.3 s; K's, 3,728 variables live on a
plateau of 1,618 rows within 1 % of the limit: 0.87 M and 18.5 M, its LP alone 35 s, and with 64
of the rows still 18 s, each round of rows added as much again)."""


def window_problem(graph: Graph, plan: np.ndarray, window: list[int], chosen: np.ndarray,
                   used: np.ndarray) -> FactorProblem | None:
    """The window's choices as a factor problem, the rest held at `plan`: its costs in the MIP's
    unit, and the `chosen` rows (a mask; `used`, every row's usage under the plan) over one memory
    term per window variable's span, each row's usage from the rest its constant; of the rows over
    the same terms only the one with the largest constant (it implies the others). None where it
    would hold more than `MAX_ENTRIES` pair-table entries or `MAX_COEFFICIENTS` row coefficients
    (before that merging), found before it is built."""
    index = {a: i for i, a in enumerate(window)}
    inside = [(i, j, matrix) for i, a in enumerate(window) for b, matrix in graph.near[a]
              if (j := index.get(b, -1)) > i]
    rows = graph.rows
    which = np.flatnonzero(chosen)
    spans = []
    for i, a in enumerate(window):
        for (lo, hi), usage in zip(rows.bounds[a], rows.usage[a], strict=True):
            first, last = (int(k) for k in np.searchsorted(which, [lo, hi]))
            if first < last:
                spans.append((i, first, last, usage))
    coefficients = sum((last - first) * len(usage) for _, first, last, usage in spans)
    if sum(matrix.size for _, _, matrix in inside) > MAX_ENTRIES or coefficients > MAX_COEFFICIENTS:
        return None
    unary = []
    for a in window:
        costs = np.array(graph.unary[a], dtype=float)
        for b, matrix in graph.near[a]:
            if b not in index:
                costs = costs + matrix[:, plan[b]]
        unary.append(costs / MIP_UNIT)
    pairs = {(i, j): np.asarray(matrix, dtype=float) / MIP_UNIT for i, j, matrix in inside}
    held = used[which].astype(float)
    terms: list[tuple[int, np.ndarray]] = []
    members: list[list[int]] = [[] for _ in which]
    for i, first, last, usage in spans:
        held[first:last] -= float(usage[plan[window[i]]])
        for k in range(first, last):
            members[k].append(len(terms))
        terms.append((i, np.asarray(usage, dtype=float)))
    tightest: dict[tuple[int, ...], float] = {}  # rows with the same terms: the fullest implies the rest
    for c, m in zip(held, members, strict=True):
        key = tuple(m)
        tightest[key] = max(tightest.get(key, -np.inf), float(c))
    memory = [MemoryRow(c, list(m)) for m, c in tightest.items()]
    return FactorProblem(unary=unary, pairs=pairs, memory_terms=terms, memory=memory)


def mip_ticks(problem: FactorProblem) -> float:
    """The work of a RENS solve of `problem` (`work.MIP_ENTRY`, `MIP_COEFFICIENT`)."""
    entries = sum(table.size for table in problem.pairs.values())
    coefficients = sum(len(problem.memory_terms[k][1]) for row in problem.memory for k in row.terms)
    return MIP_ENTRY * entries + MIP_COEFFICIENT * coefficients


def mip_window(graph: Graph, plan: np.ndarray, window: list[int], chosen: np.ndarray,
               stop: Stop | None = None, value: float | None = None) -> np.ndarray | None:
    """`plan` with the window's choices re-solved by HiGHS (RENS) under the `chosen` rows (a mask),
    and the rows its answers overflow, if that is cheaper than `value` (by default the plan's; a
    plan that overflows is repaired with `math.inf`) and fits every row; else None (also where the
    window's problem is larger than `MAX_ENTRIES` or `MAX_COEFFICIENTS`)."""
    rows = graph.rows
    used = rows.of(plan)
    value = graph.value(plan) if value is None else value
    chosen = chosen.copy()
    if stop is not None:  # the window's terms gathered, the plan's rows and value read
        gathered = sum(VISIT + NEIGHBOUR * len(graph.near[a]) for a in window)
        stop.charge(gathered + 2 * ROW_VARIABLE * graph.row_variables)
    for _ in range(ROW_ROUNDS):
        if stop is not None and stop.due():
            return None
        problem = window_problem(graph, plan, window, chosen, used)
        if problem is None:
            return None
        found = solve_mip(problem, rows.limit, None if stop is None else stop.seconds(), 1e-9,
                          [int(plan[a]) for a in window], presolve=True, rens=True)
        if stop is not None:
            stop.charge(mip_ticks(problem) + ROW_VARIABLE * graph.row_variables)
        if found is None:
            return None
        better, over = graph.placed(plan, window, found.choice, value)
        if over is None:
            return better
        chosen |= over
    return None
