"""`relink`: the variables on which good plans disagree, re-solved exactly together.

The local search's plans from different starts are local optima that agree on most variables and
differ on a few dozen to a thousand (IOPDDL M: five plans from toulbar2's answers at 10-16x the
relaxation's prices differ from the best on 43-64 variables; with two from 8x and 9x, on 992).
Path relinking (Glover) looks between such plans; here the whole window — every variable on which
some plan of the pool differs from the best, the rest held at the best plan's choices — is solved
exactly by toulbar2 (`cfn.solve_cfn`), the memory rows as hard linear constraints added as they
bind (the rows the best plan fills, then those each answer overflows), so that the answer taken
fits every row, and a proof of its optimum (over fewer rows: a relaxation) means no recombination
of the pool, nor anything else in the window, is better.

Measured on IOPDDL M: the best of the five plans above, 49,928,483,219, relinked within the pool's
114-variable window to 49,927,723,019 in 0.05 s (optimal there); adding two from 8x and 9x one at a
time (the window grows to 992 variables), to 49,923,354,212 in 3.3 s — below the contest's best
team, 49,928,460,991, where no single, pair, star or 16-48-variable window move from any one of
the plans went.
"""

from __future__ import annotations

import numpy as np

from sbpc.passes.solver.cfn import Linear, solve_cfn
from sbpc.passes.solver.local import Graph

BACKTRACKS = 5_000
"""toulbar2's backtracks per solve of a relinking: its work limit. M's pool of seven plans relinked
with 2,000 a solve: 49,923,410,711 in 0.8 s; 5,000: 49,923,354,212 in 3.3 s; 100,000:
49,923,192,667 in 14 s."""
TIGHT = 1e-3
"""A relinking's first rows: those the best plan fills to within this share of the limit."""
ROW_ROUNDS = 8
"""Rounds of adding the rows an answer overflows before a relinking gives up."""
TERMS = 1_000_000
"""The most coefficients a relinking's rows may hold (beyond that, building them in Python and
toulbar2's propagation outweigh the window; IOPDDL K: 1,000 random variables' rows hold 5.5 M)."""
WINDOW = 1500
"""The most variables a relinking re-solves: plans join the pool's window best first while it
stays within this (toulbar2 on all of M's 4,375 with its tight rows found nothing in 150 s)."""


def window_rows(graph: Graph, plan: np.ndarray, window: list[int], chosen: np.ndarray) -> list[Linear]:
    """The memory rows `chosen` (a mask) as constraints on the window's choices, the rest held at
    `plan`: one per stretch of rows on which the same spans of window variables vary with their
    choice (the stretch's row with the most usage from the rest stands for all of it), for the
    stretches holding a chosen row where even the window's largest usages could overflow.
    Coefficients are each variable's usage above its least, so that they are ≥ 0."""
    rows = graph.rows
    used = rows.of(plan)
    spans = [(lo, hi, i, u) for i, a in enumerate(window)
             for (lo, hi), u in zip(rows.bounds[a], rows.usage[a], strict=True) if u.max() > u.min()]
    cuts = sorted({0, len(used)} | {lo for lo, _, _, _ in spans} | {hi for _, hi, _, _ in spans})
    at = {r: k for k, r in enumerate(cuts)}
    wanted = {k for k in range(len(cuts) - 1) if chosen[cuts[k]:cuts[k + 1]].any()}
    live: dict[int, list[tuple[int, np.ndarray]]] = {k: [] for k in wanted}
    for lo, hi, i, u in spans:
        for k in wanted.intersection(range(at[lo], at[hi])):
            live[k].append((i, u))
    out = []
    for k in sorted(wanted):
        if not live[k]:
            continue
        held = sum(float(u[plan[window[i]]]) for i, u in live[k])
        rest = float(used[cuts[k]:cuts[k + 1]].max()) - held
        least = sum(float(u.min()) for _, u in live[k])
        if rest + sum(float(u.max()) for _, u in live[k]) <= rows.limit:
            continue
        terms = [(i, c, float(w - u.min())) for i, u in live[k] for c, w in enumerate(u) if w > u.min()]
        out.append(Linear(terms, rows.limit - rest - least))
    return out


def solve_window(graph: Graph, plan: np.ndarray, window: list[int], backtracks: int = BACKTRACKS,
                 time_limit: float | None = None) -> np.ndarray | None:
    """`plan` with the window's choices re-solved by toulbar2 under the memory rows, if that is
    cheaper and fits; else None. The rows go in as they bind (row generation): first those the
    plan fills to within `TIGHT` of the limit, then, per round, the ones the answer overflows."""
    index = {a: i for i, a in enumerate(window)}
    unary = []
    near: list[list[tuple[int, np.ndarray]]] = [[] for _ in window]
    for i, a in enumerate(window):
        costs = np.array(graph.unary[a], dtype=float)
        for b, matrix in graph.near[a]:
            if b in index:
                near[i].append((index[b], matrix))
            else:
                costs = costs + matrix[:, plan[b]]
        unary.append(costs)
    rows = graph.rows
    chosen = rows.of(plan) >= rows.limit * (1 - TIGHT)
    for _ in range(ROW_ROUNDS):
        linear = window_rows(graph, plan, window, chosen)
        if sum(len(row.terms) for row in linear) > TERMS:
            return None
        answer = solve_cfn(unary, near, backtracks, time_limit, linear)
        if answer is None:
            return None
        better = plan.copy()
        better[window] = answer.choice
        if graph.value(better) >= graph.value(plan):
            return None
        over = rows.of(better) > rows.limit * (1 + 1e-12)
        if not over.any():
            return better
        chosen |= over
    return None


class Pool:
    """Plans that fit, found from different starts; each added one relinks the pool: the best plan
    with every variable on which the others differ from it re-solved together (`solve_window`).
    The others join the window best first, each while it stays within `WINDOW` variables. A
    window already solved around the same best plan is not solved again (the one record kept)."""

    def __init__(self, graph: Graph, backtracks: int = BACKTRACKS):
        self.graph = graph
        self.backtracks = backtracks
        self.plans: list[tuple[float, np.ndarray]] = []
        self._solved: tuple[bytes, frozenset[int]] | None = None

    def best(self) -> tuple[np.ndarray, float] | None:
        return None if not self.plans else (self.plans[0][1], self.plans[0][0])

    def _insert(self, plan: np.ndarray) -> None:
        self.plans.append((self.graph.value(plan), plan))
        self.plans.sort(key=lambda entry: entry[0])

    def add(self, plan: np.ndarray, relink: bool = True, time_limit: float | None = None) -> None:
        """Add `plan`, then (if `relink`) relink the pool; a better plan found joins it."""
        self._insert(plan)
        if not relink or len(self.plans) < 2:
            return
        best, window = self.plans[0][1], set[int]()
        for _, other in self.plans[1:]:
            grown = window | set(np.flatnonzero(other != best).tolist())
            if len(grown) <= WINDOW:
                window = grown
        key = (best.tobytes(), frozenset(window))
        if not window or (self._solved is not None and key[0] == self._solved[0] and key[1] <= self._solved[1]):
            return
        self._solved = key
        better = solve_window(self.graph, best, sorted(window), self.backtracks, time_limit)
        if better is not None:
            self._insert(better)
