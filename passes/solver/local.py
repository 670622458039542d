"""The anytime primal of `sbp-solve`: local search on the reduced strategy problem under memory rows.

* `Search.descend`: iterated conditional modes — each variable in turn takes its best choice given
  its neighbours' (unary + the matrix columns of the neighbours' choices), among the choices that
  keep every memory row within the limit (or, while the plan does not fit yet, priced by
  per-row penalties: soft memory, the contest winner's idea);
* `Search.pair_moves`: both ends of an edge at once (the best cell of the pair's whole table given
  the rest, then the first that fits), which leaves the single-variable optima ICM stops in;
* `improve`: a fast feasible start (ICM unconstrained, then penalties raised on the rows over
  the limit until the plan fits — faster after a round that moved nothing, and the last rise
  bisected for a cheaper plan that fits — then the feasible descent), then iterated local search: perturb
  a connected piece around a seeded random variable (LENS's component moves), descend, keep if
  better. Every loop has a work limit (`rounds`); the seeded generator makes the result a function
  of the problem and that budget; a `Stop` (its loops charge their work to its `Work` meter) only
  cuts it short.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sbpc.passes.solver.sharding import Rows, prefix_sums
from sbpc.passes.solver.work import (
    EDGE,
    HUB_NEIGHBOUR,
    NEIGHBOUR,
    TREE_MOVE,
    TREE_VARIABLE,
    VISIT,
    Stop,
)

SOFT_GROWTH = 2.0
"""Per round of the soft-memory phase of `improve`, the factor its price per byte over a row grows by:
IOPDDL N's answer at the relaxation's prices (199 rows over, the fullest by 24 %) repaired (300
rounds) in 24 s to 206.05e9; growing by 1.3, the soft phase took 65 rounds, and the repair 56 s,
to 206.10e9."""
SOFT_IDLE_GROWTH = 16.0
"""The same factor after a round that moved nothing (its prices paid for no move): an IOPDDL N answer
(3,061 rows over) spent its first 16 rounds, 10 s, so; six of N's priced answers repaired in 23-26 s
for 30-33 s, to values within 1.5 % either way."""
TREES = 4
"""Whole-graph tree moves per round of the soft-memory phase."""
SOFT_SETTLE = 3
"""Bisections of the soft-memory phase's last price rise once its plan fits (`_settle`): of six of
IOPDDL N's priced answers, one repaired to 213.6e9 for 225.5e9, the rest within 0.05 %."""
STAR_TRIES = 3
"""Hub choices a star move tries, cheapest first."""
HUB = 8
"""Neighbours from which a variable's local costs are one gather over its matrices side by side
rather than a sum over them (IOPDDL N: mean degree 1.6, but a variable's neighbour has 349 on
average, up to 2,662, and a descent re-reads a hub whenever one of them moves)."""


@dataclass
class Graph:
    """Reduced variables 0..V-1: unary costs, oriented neighbour matrices, memory rows."""

    unary: list[np.ndarray]
    near: list[list[tuple[int, np.ndarray]]]
    rows: Rows
    constant: float = 0.0

    def __post_init__(self) -> None:
        # Every term flat, so that `value` is a few gathers (it runs thousands of times a search).
        sizes = np.array([len(u) for u in self.unary], dtype=np.int64)
        self._unary_at = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self._unary = np.concatenate(self.unary) if self.unary else np.zeros(0)
        self.row_variables = sum(1 for spans in self.rows.spans if len(spans))
        """The variables in some memory row (a plan's row usages loop over them: `work.ROW_VARIABLE`)."""
        self.choosable = sizes > 1
        """Per variable, whether it has a choice (IOPDDL N: 6,166 of 24,875; the rest are
        single-strategy nodes with a memory term, which no move changes, so no descent visits them)."""
        self.movable = np.flatnonzero(self.choosable)
        """The variables with a choice: the roots of random moves."""
        ends = [(a, b, m) for a, near in enumerate(self.near) for b, m in near if a < b]
        self._a = np.array([a for a, _, _ in ends], dtype=np.int64)
        self._b = np.array([b for _, b, _ in ends], dtype=np.int64)
        self._width = sizes[self._b] if len(ends) else np.zeros(0, np.int64)
        lengths = [m.size for _, _, m in ends]
        self._pair_at = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if ends else self._a
        self._pairs = np.concatenate([m.ravel() for _, _, m in ends]) if ends else np.zeros(0)
        self.hubs: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        """Per variable with ≥ `HUB` neighbours: its matrices side by side, where each begins, and the neighbours."""
        for a, near in enumerate(self.near):
            if len(near) >= HUB:
                widths = [m.shape[1] for _, m in near]
                self.hubs[a] = (np.concatenate([m for _, m in near], axis=1),
                                np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64),
                                np.array([b for b, _ in near], dtype=np.int64))

    def around(self, variables: list[int], size: int | None = None) -> list[int]:
        """`variables`, then the neighbours with a choice of each in turn (each once) while fewer
        than `size` (all of them by default)."""
        out, seen = list(variables), set(variables)
        for a in variables:
            for b, _ in self.near[a]:
                if size is not None and len(out) >= size:
                    return out
                if self.choosable[b] and b not in seen:
                    seen.add(b)
                    out.append(b)
        return out

    def pick(self, rng: np.random.Generator) -> int:
        """A random variable with a choice (variable 0 if none has): a draw over every variable,
        one without a choice replaced by a movable one, so that a graph with few such variables
        sees the draws it would without them."""
        a = int(rng.integers(len(self.unary)))
        if len(self.unary[a]) > 1 or not len(self.movable):
            return a
        return int(self.movable[a % len(self.movable)])

    def typical_cost(self) -> float:
        """The mean over the variables of their least finite unary cost (1 if none has one): with the
        limit, the scale of a first price per byte."""
        least = [float(np.min(u[np.isfinite(u)])) for u in self.unary if np.isfinite(u).any()]
        return float(np.mean(least)) if least else 1.0

    def value(self, choice: np.ndarray) -> float:
        choice = np.asarray(choice, dtype=np.int64)
        total = self.constant + float(self._unary[self._unary_at + choice].sum())
        cells = self._pair_at + choice[self._a] * self._width + choice[self._b]
        return total + float(self._pairs[cells].sum())

    def placed(self, plan: np.ndarray, window: list[int], choice: np.ndarray,
               value: float) -> tuple[np.ndarray | None, np.ndarray | None]:
        """`plan` with the window's variables at `choice`, judged: (that plan, None) where it is
        cheaper than `value` and fits every row; (None, the rows it overflows) where it is cheaper
        and does not fit; (None, None) where it is no cheaper."""
        better = plan.copy()
        better[window] = choice
        if self.value(better) >= value:
            return None, None
        over = self.rows.of(better) > self.rows.limit * (1 + 1e-12)
        return (None, over) if over.any() else (better, None)


class Search:
    """A plan, its row usages, and the moves."""

    def __init__(self, graph: Graph, choice: np.ndarray, used: np.ndarray | None = None):
        self.graph = graph
        self.choice = choice.copy()
        self.used = graph.rows.of(self.choice) if used is None else used.copy()
        self.penalty = np.zeros(len(self.used))

    def copy(self) -> Search:
        return Search(self.graph, self.choice, self.used)

    def local(self, a: int) -> np.ndarray:
        """Variable a's cost per choice given the rest."""
        g = self.graph
        if a in g.hubs:
            side, begins, near = g.hubs[a]
            return g.unary[a] + side[:, begins + self.choice[near]].sum(axis=1)
        total = g.unary[a].copy()
        for b, matrix in g.near[a]:
            total += matrix[:, self.choice[b]]
        return total

    def fits(self, a: int) -> np.ndarray:
        """Per choice of a, whether it keeps every row within the limit."""
        return self.graph.rows.fits(a, int(self.choice[a]), self.used)

    def move(self, a: int, c: int) -> None:
        self.graph.rows.move(a, int(self.choice[a]), c, self.used)
        self.choice[a] = c

    def descend(self, order: np.ndarray | list[int], feasible: bool, sweeps: int, stop: Stop | None) -> None:
        """ICM from the variables `order` that have a choice: a variable that moves puts its
        neighbours with a choice back on the work list; at most `sweeps` × their number + the
        neighbours' visits, a work limit."""
        g = self.graph.rows
        choosable = self.graph.choosable
        prefix = prefix_sums(self.penalty) if not feasible and self.penalty.any() else None
        queue = [a for a in order if choosable[a]]
        queued = set(queue)
        budget = sweeps * max(len(queue), 1)
        head, ticks = 0, 0.0
        near = self.graph.near
        while head < len(queue) and budget > 0:
            a = queue[head]
            head += 1
            budget -= 1
            ticks += VISIT + NEIGHBOUR * len(near[a])
            queued.discard(a)
            cost = self.local(a)
            if prefix is not None and len(g.spans[a]):
                cost = cost + g.price(a, prefix)
            now = cost[self.choice[a]]
            c = int(np.argmin(cost))
            if not cost[c] < now - 1e-9 * abs(now):
                c = -1
            elif feasible and len(g.spans[a]):  # the cheapest better choice that fits
                allowed = self.fits(a) & (cost < now - 1e-9 * abs(now))
                c = int(np.argmin(np.where(allowed, cost, np.inf))) if allowed.any() else -1
            if c >= 0:
                self.move(a, c)
                for b, _ in self.graph.near[a]:
                    if choosable[b] and b not in queued:
                        queue.append(b)
                        queued.add(b)
            if head % 1024 == 0 and stop is not None:
                stop.charge(ticks)
                ticks = 0.0
                if stop.due():
                    return
        if stop is not None:
            stop.charge(ticks)

    def pair_moves(self, stop: Stop | None) -> bool:
        """The best feasible joint change of each edge's two ends; True if any improved."""
        g = self.graph
        improved = False
        known: dict[int, np.ndarray] = {}  # local costs, until a neighbour moves (hubs: once, not per edge)

        def local(v: int) -> np.ndarray:
            if v not in known:
                known[v] = self.local(v)
            return known[v]

        for a, near in enumerate(g.near):
            for b, matrix in near:
                if b < a:
                    continue
                ca, cb = self.choice[a], self.choice[b]
                table = (local(a) - matrix[:, cb])[:, None] + (local(b) - matrix[ca, :])[None, :] + matrix
                now = table[ca, cb]
                if not table.min() < now - 1e-9 * abs(now):
                    continue
                for flat in np.argsort(table, axis=None)[:8]:
                    i, j = divmod(int(flat), table.shape[1])
                    if not table[i, j] < now - 1e-9 * abs(now):
                        break
                    old = (ca, cb)
                    self.move(a, i)
                    self.move(b, j)
                    if self.within():
                        improved = True
                        for v in (a, b):
                            known.pop(v, None)
                            for w, _ in g.near[v]:
                                known.pop(w, None)
                        break
                    self.move(b, old[1])
                    self.move(a, old[0])
            if stop is not None:
                stop.charge(VISIT + EDGE * len(near))
                if stop.due():
                    break
        return improved

    def star_moves(self, stop: Stop | None) -> bool:
        """Each hub (≥ `HUB` neighbours) with all its neighbours at once: per choice of the hub,
        each neighbour's best given the rest, priced together; the cheapest few hub choices
        tried, one kept where the plan's value falls and it fits. ICM and pair moves cannot move
        a hub whose neighbours must change with it (IOPDDL N without memory: pair moves stop at
        213.9e9, star moves then reach 189.8e9). True if any was kept."""
        g = self.graph
        improved = False
        value = g.value(self.choice)
        for a in sorted(g.hubs, key=lambda v: (-len(g.near[v]), v)):
            if stop is not None:
                stop.charge(HUB_NEIGHBOUR * len(g.near[a]))
                if stop.due():
                    break
            now = int(self.choice[a])
            total = g.unary[a].astype(float)
            picks = []
            for b, matrix in g.near[a]:
                rest = self.local(b) - matrix[now, :]
                if len(g.rows.spans[b]):
                    rest = np.where(self.fits(b), rest, np.inf)
                table = matrix + rest[None, :]
                pick = table.argmin(axis=1)
                picks.append(pick)
                total = total + table[np.arange(len(pick)), pick]
            if len(g.rows.spans[a]):
                total = np.where(self.fits(a), total, np.inf)
            for c in np.argsort(total, kind="stable")[:STAR_TRIES].tolist():
                if c == now or not np.isfinite(total[c]):
                    continue
                kept = self.choice.copy(), self.used.copy()
                self.move(a, c)
                for (b, _), pick in zip(g.near[a], picks, strict=True):
                    self.move(b, int(pick[c]))
                trial = g.value(self.choice)
                if trial < value - 1e-9 * abs(value) and self.within():
                    value, improved = trial, True
                    break
                self.choice, self.used = kept
        return improved

    def within(self) -> bool:
        return bool((self.used <= self.graph.rows.limit * (1 + 1e-12)).all())


def _tree(graph: Graph, root: int, size: int) -> tuple[list[int], dict[int, int], dict[int, np.ndarray]]:
    """A breadth-first tree of about `size` variables from `root`: order, parents, parent matrices."""
    order, parent, matrix_to = [root], {root: -1}, {}
    k = 0
    while k < len(order) and len(order) < size:
        for b, m in graph.near[order[k]]:
            if b not in parent and len(order) < size:
                parent[b], matrix_to[b] = order[k], m
                order.append(b)
        k += 1
    return order, parent, matrix_to


def _tree_pick(search: Search, tree: tuple[list[int], dict[int, int], dict[int, np.ndarray]],
               price: np.ndarray) -> dict[int, int]:
    """The tree's best choices by dynamic programming given the rest (edges to the rest, and inside
    edges off the tree, at the others' current choices), rows priced by `price` per byte."""
    g, rows = search.graph, search.graph.rows
    order, parent, matrix_to = tree
    prefix = prefix_sums(price) if price.any() else None
    children: dict[int, list[int]] = {}
    for v in order[1:]:
        children.setdefault(parent[v], []).append(v)
    cost = {}
    for v in order:
        if v in g.hubs:  # all its edges by one gather, less those to its parent and children
            total = search.local(v)
            if parent[v] >= 0:
                total -= matrix_to[v][search.choice[parent[v]], :]
            for c in children.get(v, []):
                total -= matrix_to[c][:, search.choice[c]]
        else:
            total = g.unary[v].copy()
            for b, m in g.near[v]:
                if b != parent[v] and parent.get(b) != v:
                    total += m[:, search.choice[b]]
        if prefix is not None and len(rows.spans[v]):
            total += rows.price(v, prefix)
        cost[v] = total
    best = {}
    for v in reversed(order[1:]):
        table = matrix_to[v] + cost[v][None, :]
        best[v] = table.argmin(axis=1)
        cost[parent[v]] = cost[parent[v]] + table.min(axis=1)
    pick = {order[0]: int(np.argmin(cost[order[0]]))}
    for v in order[1:]:
        pick[v] = int(best[v][pick[parent[v]]])
    return pick


def soft_tree(search: Search, root: int, size: int) -> bool:
    """A tree block move under the search's row prices (soft memory): kept if the priced value
    (cost + penalty · row usage) drops."""
    g = search.graph
    tree = _tree(g, root, size)
    old = search.choice.copy()
    before = g.value(old) + float(search.penalty @ search.used)
    for v, c in _tree_pick(search, tree, search.penalty).items():
        search.move(v, c)
    if g.value(search.choice) + float(search.penalty @ search.used) < before - 1e-9 * abs(before):
        return True
    for v in tree[0]:
        search.move(v, int(old[v]))
    return False


def tree_move(search: Search, root: int, size: int, scale: float) -> list[int]:
    """A tree block move within the limit: kept if the plan is cheaper and fits. Rows the answer
    overflows are priced (`scale` per byte, quadrupled) and the tree solved again, twice. The
    tree's variables if kept, else none."""
    g, rows = search.graph, search.graph.rows
    tree = _tree(g, root, size)
    old = search.choice.copy()
    before = g.value(old)
    price = np.zeros(len(search.used))
    for _ in range(3):
        for v, c in _tree_pick(search, tree, price).items():
            search.move(v, c)
        if search.within():
            if g.value(search.choice) < before - 1e-9 * abs(before):
                return tree[0]
            break
        price = np.where(search.used > rows.limit, np.maximum(price * 4, scale), price)
        for v in tree[0]:
            search.move(v, int(old[v]))
    for v in tree[0]:
        search.move(v, int(old[v]))
    return []


def whole_tree(graph: Graph) -> float:
    """The ticks of a whole-graph tree move (`soft_tree` over every variable)."""
    return TREE_VARIABLE * len(graph.movable)


def _piece(graph: Graph, rng: np.random.Generator, size: int) -> list[int]:
    """A connected set of about `size` variables around a random one (breadth first)."""
    start = graph.pick(rng)
    seen, frontier = [start], [start]
    chosen = {start}
    while frontier and len(seen) < size:
        a = frontier.pop(0)
        for b, _ in graph.near[a]:
            if b not in chosen and len(seen) < size:
                chosen.add(b)
                seen.append(b)
                frontier.append(b)
    return seen


def _soft_round(search: Search, rng: np.random.Generator, order: np.ndarray, stop: Stop | None) -> None:
    """A round of the soft-memory phase: whole-graph tree moves, then ICM, under the search's prices."""
    for _ in range(TREES):
        soft_tree(search, search.graph.pick(rng), len(order))
    if stop is not None:
        stop.charge(TREES * whole_tree(search.graph))
    search.descend(order, feasible=False, sweeps=10, stop=stop)


def _settle(fit: Search, last: tuple[Search, np.ndarray, np.ndarray], rng: np.random.Generator,
            order: np.ndarray, stop: Stop | None) -> Search:
    """The cheapest plan that fits among `fit` (the soft phase's first) and the rounds from the plan
    before the last price rise at a bisected part of that rise (`SOFT_SETTLE` of them): the whole
    rise may overshoot, sparing memory at any cost."""
    start, prices, rise = last
    best, best_value = fit, fit.graph.value(fit.choice)
    low, high = 0.0, 1.0
    for _ in range(SOFT_SETTLE):
        if stop is not None and stop.due():
            break
        part = (low + high) / 2
        trial = start.copy()
        trial.penalty = prices + part * rise
        _soft_round(trial, rng, order, stop)
        if not trial.within():
            low = part
            continue
        high = part
        if (value := fit.graph.value(trial.choice)) < best_value:
            best, best_value = trial, value
    return best


def improve(graph: Graph, rounds: int = 200, seed: int = 0, stop: Stop | None = None,
            start: np.ndarray | None = None, prices: np.ndarray | None = None) -> tuple[np.ndarray, float] | None:
    """The best plan within the rows found (see the module's docstring), or None if none fits.
    From `start` (a plan that fits skips the soft-memory phase) with row `prices` to begin it."""
    n = len(graph.unary)
    order = np.arange(n)
    finite = [np.isfinite(u) for u in graph.unary]
    first = np.array([int(np.argmin(u)) for u in graph.unary]) if start is None else start
    search = Search(graph, first)
    if prices is not None:
        search.penalty = prices.copy()
    rng = np.random.default_rng(seed)
    limit = graph.rows.limit
    scale = max(graph.typical_cost(), 1.0) / max(limit, 1.0)
    last: tuple[Search, np.ndarray, np.ndarray] | None = None  # before the last price rise: plan, prices, rise
    for _ in range(150):  # whole-graph trees and ICM, under row prices raised until the plan fits
        if search.within():
            break
        before = search.choice.copy()
        _soft_round(search, rng, order, stop)
        if search.within():
            if last is not None:
                search = _settle(search, last, rng, order, stop)
            break
        if stop is not None and stop.due():
            break
        over = np.maximum(search.used - limit, 0.0)
        rise = scale * (1 + over / max(limit, 1.0)) * (over > 0) * 10
        last = (search.copy(), search.penalty.copy(), rise)
        search.penalty = search.penalty + rise
        scale *= SOFT_GROWTH if (search.choice != before).any() else SOFT_IDLE_GROWTH
    if not search.within():  # the leanest plan: per variable the least usage summed over its rows
        lean = np.array([int(np.lexsort((np.where(f, u, np.inf), graph.rows.total(a), ~f))[0])
                         for a, (u, f) in enumerate(zip(graph.unary, finite, strict=True))])
        search = Search(graph, lean)
        if not search.within():
            return None
    search.penalty[:] = 0
    search.descend(order, feasible=True, sweeps=100, stop=stop)
    while search.pair_moves(stop) | search.star_moves(stop):
        search.descend(order, feasible=True, sweeps=100, stop=stop)
        if stop is not None and stop.due():
            break
    best, best_value, kept = search.choice.copy(), graph.value(search.choice), search.copy()
    base = scale * 10 * max(limit, 1.0) / max(limit, 1.0)
    for _ in range(rounds):
        if stop is not None and stop.due():
            break
        size = int(rng.integers(4, 64))
        moved = tree_move(kept, graph.pick(rng), size, base)
        if stop is not None:
            stop.charge(TREE_MOVE * size)
        if moved:  # the rest was at a descent's optimum: only bytes the tree freed could move it
            kept.descend(sorted(graph.around(moved)), feasible=True, sweeps=100, stop=stop)
            best, best_value = kept.choice.copy(), graph.value(kept.choice)
    for _ in range(rounds):
        if stop is not None and stop.due():
            break
        trial = kept.copy()
        piece = _piece(graph, rng, int(rng.integers(2, 12)))
        if stop is not None:
            stop.charge(VISIT * len(piece))
        for a in piece:  # a random feasible choice for each variable of the piece
            options = np.flatnonzero(finite[a] & trial.fits(a))
            if len(options):
                trial.move(a, int(rng.choice(options)))
        trial.descend(sorted(graph.around(piece)), feasible=True, sweeps=100, stop=stop)
        value = graph.value(trial.choice)
        if value < best_value - 1e-9 * abs(best_value) and trial.within():
            best, best_value, kept = trial.choice.copy(), value, trial
    return best, best_value
