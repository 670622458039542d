"""`relink`: the variables on which good plans disagree, re-solved exactly together.

The local search's plans from different starts are local optima that agree on most variables and
differ on a few dozen to a thousand (IOPDDL M: five plans from toulbar2's answers at 10-16x the
relaxation's prices differ from the best on 43-64 variables; with two from 8x and 9x, on 992).
Path relinking (Glover) looks between such plans; here the whole window — every variable on which
some plan of the pool differs from the best, the rest held at the best plan's choices — is solved
exactly by toulbar2 (`cfn.solve_cfn`), the memory rows as hard linear constraints added as they
bind (the rows the best plan fills, then those each answer overflows), so that the answer taken
fits every row, and a proof of its optimum (over fewer rows: a relaxation) means no recombination
of the pool, nor anything else in the window, is better. The same windows re-solve the variables
live at the best plan's memory peaks together (`Pool.spread`: relinking and graph pieces keep a
peak's tensors apart) and the whole graph a connected piece at a time (`Pool.polish`).

Measured on IOPDDL M: the best of the five plans above, 49,928,483,219, relinked within the pool's
114-variable window to 49,927,723,019 in 0.05 s (optimal there); adding two from 8x and 9x one at a
time (the window grows to 992 variables), to 49,923,190,609 in 1.4 s — below the contest's best
team, 49,928,460,991, where no single, pair, star or 16-48-variable window move from any one of
the plans went.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from sbpc.passes.solver.cfn import Linear, cfn_ticks, solve_cfn
from sbpc.passes.solver.local import Graph
from sbpc.passes.solver.peak import mip_window
from sbpc.passes.solver.work import NEIGHBOUR, ROW_VARIABLE, VISIT, Stop

BACKTRACKS = 5_000
"""toulbar2's backtracks per solve of a relinking: its work limit. M's pool of seven plans relinked
(with toulbar2's default search, before `LDS`) with 2,000 a solve: 49,923,410,711 in 0.8 s;
5,000: 49,923,354,212 in 3.3 s; 100,000: 49,923,192,667 in 14 s."""
LDS = 2
"""toulbar2's limited discrepancy search for a window (`cfn.solve_cfn`): with the rows as knapsack
constraints its default hybrid best-first search can spend minutes on a few hundred backtracks
(N: a 1,500-variable window with five rows, 266 backtracks in 82 s, not proved); with LDS it
proves that window's optimum in 90 backtracks, 1 s."""
TIGHT = 1e-3
"""A relinking's first rows: those the best plan fills to within this share of the limit."""
ROW_ROUNDS = 8
"""Rounds of adding the rows an answer overflows before a relinking gives up."""
TERMS = 9_000
"""The most coefficients a window's rows may hold; a window whose rows would hold more is split in two
(`TooWide`). toulbar2's knapsack propagation costs in proportion to them at every node: IOPDDL N,
a 1,500-variable window with 5 rows (4,850 coefficients) proved optimal in 1 s; 1,338 variables
with 159 rows (103,455), 12 backtracks in 64 s. IOPDDL K (at 20,000): a 1,484-variable window with
10,259 coefficients took 86.7 s for 140 backtracks, windows of 8,400-8,900 2.6-15 s; at 9,000 K's 314
windows took 36 s in all."""
PIECE = 3
"""The fewest variables a piece re-solved has (one or two: the local search's single and pair
moves, which it has made)."""
WINDOW = 1500
"""The most variables a relinking re-solves: plans join the pool's window best first while it
stays within this (toulbar2 on all of M's 4,375 with its tight rows found nothing in 150 s)."""


ROW_WINDOWS = 4
"""Windows of the variables live at the rows the best plan fills most that `Pool.spread` re-solves:
relinking and graph pieces keep a memory peak's tensors apart; solved together, the memory moves
between them (IOPDDL N: the 994 variables live at a plan's peak, 206.33e9 to 204.63e9 in 6 s)."""
PEAK_WINDOW = 4000
"""The most variables a peak's window holds: those live at it, then their neighbours in the graph
(the choices that price the live ones' communication) while it stays within this. IOPDDL N, a
994-variable peak: alone 208.65e9 -> 206.27e9 (3 s); with neighbours to 2,500 variables 205.77e9,
to 4,000 205.65e9 (6 s); all 4,470 205.85e9 (toulbar2's backtracks spread thinner)."""
SPREAD_ROUNDS = 4
"""Passes of `Pool.spread` (the peaks move as memory is moved off them)."""
PEAK_FILL = 0.95
"""`Pool.settle`: the rows the best plan fills to this share of the limit or more are its peak."""
PEAK_MIP_WINDOW = 0
"""The most variables of `Pool.settle`'s MIP: those live at the peak, then their neighbours while
within this (0: the live ones alone)."""
SETTLE_ROUNDS = 4
"""Passes of `Pool.settle` (each: the rest, then the peak)."""
SAME_PEAK, PEAK_ROWS = 0.9, 256
"""Two rows whose live variables overlap by this share of the fewer are the same peak; `spread`
looks for peaks among this many of the fullest rows."""


class TooWide(Exception):
    """A window whose memory rows hold more than `TERMS` coefficients."""


def window_rows(graph: Graph, plan: np.ndarray, window: list[int], chosen: np.ndarray,
                used: np.ndarray | None = None) -> list[Linear]:
    """The memory rows `chosen` (a mask) as constraints on the window's choices, the rest held at
    `plan` (`used`: every row's usage under it, if known): one per stretch of rows on which the same
    spans of window variables vary with their choice (the stretch's row with the most usage from
    the rest stands for all of it), for the stretches holding a chosen row where even the window's
    largest usages could overflow.
    Coefficients are each variable's usage above its least, so that they are ≥ 0. Raises `TooWide`
    as soon as they would hold more than `TERMS` (counting every choice of each live variable)."""
    rows = graph.rows
    used = rows.of(plan) if used is None else used
    spans = [(lo, hi, i, u) for i, a in enumerate(window)
             for (lo, hi), u in zip(rows.bounds[a], rows.usage[a], strict=True) if u.max() > u.min()]
    cuts = sorted({0, len(used)} | {lo for lo, _, _, _ in spans} | {hi for _, hi, _, _ in spans})
    at = {r: k for k, r in enumerate(cuts)}
    wanted = {k for k in range(len(cuts) - 1) if chosen[cuts[k]:cuts[k + 1]].any()}
    live: dict[int, list[tuple[int, np.ndarray]]] = {k: [] for k in wanted}
    for lo, hi, i, u in spans:
        for k in wanted.intersection(range(at[lo], at[hi])):
            live[k].append((i, u))
    out, count = [], 0
    for k in sorted(wanted):
        if not live[k]:
            continue
        held = sum(float(u[plan[window[i]]]) for i, u in live[k])
        rest = float(used[cuts[k]:cuts[k + 1]].max()) - held
        least = sum(float(u.min()) for _, u in live[k])
        if rest + sum(float(u.max()) for _, u in live[k]) <= rows.limit:
            continue
        count += sum(len(u) for _, u in live[k])
        if count > TERMS:
            raise TooWide
        terms = [(i, c, float(w - u.min())) for i, u in live[k] for c, w in enumerate(u) if w > u.min()]
        out.append(Linear(terms, rows.limit - rest - least))
    return out


def solve_window(graph: Graph, plan: np.ndarray, window: list[int], backtracks: int = BACKTRACKS,
                 stop: Stop | None = None) -> np.ndarray | None:
    """`plan` with the window's choices re-solved by toulbar2 under the memory rows, if that is
    cheaper and fits; else None. The rows go in as they bind (row generation): first those the
    plan fills to within `TIGHT` of the limit, then, per round, the ones the answer overflows.
    Raises `TooWide` when they hold more than `TERMS` coefficients."""
    if stop is not None:  # the window's terms gathered, the plan's rows and value read
        gathered = sum(VISIT + NEIGHBOUR * len(graph.near[a]) for a in window)
        stop.charge(gathered + 2 * ROW_VARIABLE * graph.row_variables)
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
    used, value = rows.of(plan), graph.value(plan)
    chosen = used >= rows.limit * (1 - TIGHT)
    for _ in range(ROW_ROUNDS):
        if stop is not None and stop.due():
            return None
        linear = window_rows(graph, plan, window, chosen, used)
        left = None if stop is None else stop.seconds()
        answer = solve_cfn(unary, near, backtracks, left, linear, LDS)
        if stop is not None:
            stop.charge(cfn_ticks(unary, near, answer, linear) + ROW_VARIABLE * graph.row_variables)
        if answer is None:
            return None
        better, over = graph.placed(plan, window, answer.choice, value)
        if over is None:
            return better
        chosen |= over
    return None


def pieces(graph: Graph, variables: np.ndarray, size: int = WINDOW, roots: list[int] | None = None) -> list[list[int]]:
    """The connected components of the graph on `variables`, largest first, each one larger than
    `size` cut into breadth-first pieces of that size (from the first of `roots` in it, by default
    its least variable); none smaller than `PIECE`."""
    inside = set(variables.tolist())
    out: list[list[int]] = []
    for root in sorted(inside) if roots is None else roots:
        if root not in inside:
            continue
        inside.discard(root)
        queue, part = deque([root]), []
        while queue:
            a = queue.popleft()
            part.append(a)
            for b, _ in graph.near[a]:
                if b in inside:
                    inside.discard(b)
                    queue.append(b)
        out.extend(sorted(part[k:k + size]) for k in range(0, len(part), size))
    return sorted((part for part in out if len(part) >= PIECE), key=lambda part: (-len(part), part[0]))


class Pool:
    """Plans that fit, found from different starts, relinked with the best as they come (`relink`:
    the variables on which two plans differ re-solved together by `solve_window`, the rest held at
    the best). A window already solved around the same best plan is not solved again (the one
    record kept)."""

    def __init__(self, graph: Graph, backtracks: int = BACKTRACKS):
        self.graph = graph
        self.backtracks = backtracks
        self.plans: list[tuple[float, np.ndarray]] = []
        self._solved: tuple[bytes, frozenset[int]] | None = None
        varying = [(lo, hi, a) for a in graph.movable.tolist()
                   for (lo, hi), u in zip(graph.rows.bounds[a], graph.rows.usage[a], strict=True) if u.max() > u.min()]
        self._spans = np.array(varying, dtype=np.int64).reshape(-1, 3)
        """Per span on which a variable's usage depends on its choice: its rows [lo, hi) and the variable."""
        self._rng = np.random.default_rng(0)  # the roots of `polish`'s pieces

    def best(self) -> tuple[np.ndarray, float] | None:
        return None if not self.plans else (self.plans[0][1], self.plans[0][0])

    def _insert(self, plan: np.ndarray) -> None:
        self.plans.append((self.graph.value(plan), plan))
        self.plans.sort(key=lambda entry: entry[0])

    def add(self, plan: np.ndarray, relink: bool = True, stop: Stop | None = None) -> None:
        """Add `plan`, then (if `relink`) relink it with the best (or, if it is the best, the best
        with the next); a better plan found joins the pool."""
        self._insert(plan)
        if relink and len(self.plans) > 1:
            self.relink(plan if plan is not self.plans[0][1] else self.plans[1][1], stop)

    def relink(self, other: np.ndarray, stop: Stop | None = None) -> None:
        """Relink the best plan with `other` (any plan: one that does not fit gives its choices as
        well): the variables on which the two differ, with those on which the pool's others differ
        from the best while the window stays within `WINDOW` (best first), re-solved together; or,
        where the two alone differ on more, their difference a connected piece at a time."""
        if not self.plans:
            return
        best = self.plans[0][1]
        differ = np.flatnonzero(other != best)
        if len(differ) > WINDOW:
            self._solve(best, pieces(self.graph, differ), stop)
            return
        window = set(differ.tolist())
        for _, more in self.plans[1:]:
            grown = window | set(np.flatnonzero(more != best).tolist())
            if len(grown) <= WINDOW:
                window = grown
        if window:
            self._solve(best, [sorted(window)], stop)

    def sweep(self, stop: Stop | None = None) -> None:
        """Relink the best plan with each other plan of the pool in turn, a connected piece of their
        difference at a time, until a whole pass finds nothing better."""
        improved = True
        while improved and not (stop is not None and stop.due()):
            before = self.plans[0][0]
            for _, other in list(self.plans[1:]):
                best = self.plans[0][1]
                self._solve(best, pieces(self.graph, np.flatnonzero(other != best)), stop)
            improved = self.plans[0][0] < before

    def live(self, row: int) -> list[int]:
        """The variables whose usage at `row` depends on their choice."""
        lo, hi, a = self._spans.T
        return np.unique(a[(lo <= row) & (row < hi)]).tolist()

    def spread(self, stop: Stop | None = None) -> None:
        """Re-solve the variables live at the best plan's fullest rows together, for the
        `ROW_WINDOWS` fullest distinct peaks (a row whose live variables mostly match a peak's
        already solved is the same peak), each with its neighbours while within `PEAK_WINDOW`
        (`Graph.around`); a peak with more live variables is cut into windows of that many
        (co-live variables need not be neighbours in the graph). Again from the new best plan's
        peaks while a pass gains, at most `SPREAD_ROUNDS` passes."""
        for _ in range(SPREAD_ROUNDS):
            if not self.plans:
                return
            before = self.plans[0][0]
            used = self.graph.rows.of(self.plans[0][1])
            peaks: list[set[int]] = []
            for row in np.argsort(-used, kind="stable")[:PEAK_ROWS].tolist():
                if len(peaks) >= ROW_WINDOWS or (stop is not None and stop.due()):
                    break
                live = self.live(row)
                if not live or any(len(peak.intersection(live)) >= SAME_PEAK * min(len(peak), len(live))
                                   for peak in peaks):
                    continue
                peaks.append(set(live))
                window = sorted(self.graph.around(live, PEAK_WINDOW))
                self._solve(self.plans[0][1], [window[k:k + PEAK_WINDOW] for k in range(0, len(window), PEAK_WINDOW)],
                            stop, connected=False)
            if not self.plans[0][0] < before:
                return

    def live_at(self, chosen: np.ndarray) -> set[int]:
        """The variables whose usage depends on their choice at some row of `chosen` (a mask)."""
        lo, hi, a = self._spans.T
        reached = np.concatenate([[0], np.cumsum(chosen)])
        return set(np.unique(a[reached[hi] > reached[lo]]).tolist())

    def settle(self, stop: Stop | None = None) -> None:
        """Re-solve the best plan's two parts apart, each whole: the variables not live at its peak
        (the rows it fills to `PEAK_FILL` of the limit) by toulbar2, which no row binds there
        (`solve_window`: rows join if its answer overflows them); then those live at the peak, with
        their neighbours while within `PEAK_MIP_WINDOW`, by HiGHS under the peak's rows
        (`peak.mip_window`). Again while a pass gains, at most `SETTLE_ROUNDS` passes. IOPDDL N:
        after the relinking, spreading and polishing had stalled at 204.3e9 (205.30e9 at the
        limit), the rest re-solved together (5,039 variables, proved optimal in 246 backtracks,
        1.9 s) gave 202.75e9 and the peak's 1,129 variables 202.17e9 (3.8 s)."""
        graph = self.graph
        for _ in range(SETTLE_ROUNDS):
            if not self.plans or (stop is not None and stop.due()):
                return
            before, first = self.plans[0]
            peak = graph.rows.of(first) >= PEAK_FILL * graph.rows.limit
            live = self.live_at(peak)
            rest = [a for a in graph.movable.tolist() if a not in live]
            if rest:
                self._solve(first, [rest], stop)
            best = self.plans[0][1]
            if best is not first:  # the rest moved: the peak may have too
                peak = graph.rows.of(best) >= PEAK_FILL * graph.rows.limit
                live = self.live_at(peak)
            if live and not (stop is not None and stop.due()):
                window = sorted(graph.around(sorted(live), max(PEAK_MIP_WINDOW, len(live))))
                better = mip_window(graph, best, window, peak, stop)
                if better is not None:
                    self._insert(better)
            if not self.plans[0][0] < before:
                return

    def polish(self, stop: Stop | None = None) -> None:
        """Re-solve the best plan a piece at a time over every variable with a choice: connected
        pieces of `WINDOW` variables grown from roots in a seeded random order (each pass cuts the
        graph elsewhere)."""
        if self.plans:
            roots = self._rng.permutation(self.graph.movable).tolist()
            self._solve(self.plans[0][1], pieces(self.graph, self.graph.movable, WINDOW, roots), stop)

    def _solve(self, best: np.ndarray, windows: list[list[int]], stop: Stop | None,
               connected: bool = True) -> None:
        """Re-solve each window in turn around the best plan so far; a window whose rows are too
        wide is replaced by the connected halves of it (or, unless `connected`, its two halves)."""
        current, queue = best, deque(windows)
        while queue:
            if stop is not None and stop.due():
                break
            window = queue.popleft()
            key = (current.tobytes(), frozenset(window))
            if self._solved is not None and key[0] == self._solved[0] and key[1] <= self._solved[1]:
                continue
            try:
                better = solve_window(self.graph, current, window, self.backtracks, stop)
            except TooWide:
                half = (len(window) + 1) // 2
                parts = pieces(self.graph, np.array(window), half) if connected else [window[:half], window[half:]]
                queue.extendleft(reversed([part for part in parts if len(part) >= PIECE]))
                continue
            self._solved = key
            if better is not None:
                current = better
        if current is not best:
            self._insert(current)
