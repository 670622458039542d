"""The memory rows' Lagrangian relaxation on the reduced strategy problem: a primal and a bound.

With a price λ_r ≥ 0 per memory row, the relaxed problem min cost + Σ_r λ_r (used_r − limit) has
no rows: a pairwise min-sum problem whose unaries carry the prices (λ[rows_a] · usage_a). For every
λ its optimum is at most the problem's (weak duality), so any lower bound of the priced pairwise
problem plus λ · (constant − limit) is a lower bound of the whole. `lagrangian` runs projected
subgradient steps (Polyak's step towards the best plan's cost, or twice the dual value before a
plan is found, times a step size set by `Steps`). Each relaxed problem is solved by exact
elimination where the pairs stay narrow, else by min-sum diffusion (`Messages`, warm-started from
the last prices' messages; its sum of minima, or the pairwise split bound, is the bound) and
TRW-S-style decoding; the decoded plan and the last answer are polished by whole-graph tree moves
and ICM under the prices (`local.soft_tree` / `Search.descend`) and the better kept. An answer
that fits every row is a plan: it descends within the rows and the cheapest is kept. The last
answer and prices start `local.improve`'s repair when none fit.

Every loop counts iterations, so the result is a function of the problem and `iterations`; a
`Stop` (the loops charge their work to its `Work` meter) only cuts it short.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sbpc.passes.solver.local import Graph, Search, soft_tree, whole_tree
from sbpc.passes.solver.sharding import prefix_sums
from sbpc.passes.solver.work import ENTRY, LEVEL, NEIGHBOUR, REPRICE, ROW_VARIABLE, SPLIT_EDGE, VISIT, Stop

ITERATIONS = 60
"""Subgradient steps: the relaxation's work limit."""
POLISH_TREES, POLISH_ROW_ENTRIES = 4, 1_000_000
"""Whole-graph tree moves polishing each relaxed answer; one where the rows' entries (each tree's
pricing work) are more than this."""
SNAPSHOT = 10
"""Steps between the relaxed answers kept as repair starts."""
HALVE = 5
"""The scheduled rule (`Steps(adaptive=False)`): the step size (a multiple of Polyak's), from 1,
halved every this many steps."""
STEP, STALE, DROP = 0.25, 5, 0.05
"""The adaptive rule (`Steps(adaptive=True)`): the first step size; halved after `STALE` steps
without a better bound; and a step whose bound falls below the best by more than `DROP` of it
overshot: the size is halved at once and the next step taken from the best bound's prices."""
FIRST_SWEEPS, MESSAGE_SWEEPS = 30, 8
"""Diffusion sweeps (forward and backward each) for the first relaxed problem and each next one."""


@dataclass
class Dual:
    """The best plan that fit the rows (None if none did), its value, the best proved bound, the
    last prices and the last relaxed answer, and snapshots of both on the way."""

    plan: np.ndarray | None
    value: float
    bound: float
    prices: np.ndarray
    relaxed: np.ndarray
    starts: list[tuple[np.ndarray, np.ndarray]]
    """Relaxed answers with their prices every `SNAPSHOT` steps and the last: starts for repairs."""


def priced_unary(graph: Graph, prices: np.ndarray) -> list[np.ndarray]:
    """Each variable's unary with its rows' prices: u_a + λ[rows_a] · usage_a."""
    rows, prefix = graph.rows, prefix_sums(prices)
    return [u + rows.price(a, prefix) if len(rows.spans[a]) else u for a, u in enumerate(graph.unary)]


class Messages:
    """A reparametrisation of min Σ unary + Σ pairs, improved by min-sum diffusion: each variable
    in order (then back) gathers its pairs' minima over the other end into its unary and spreads
    the total evenly over itself and its pairs. That changes no plan's value and never lowers the
    sum of every term's minimum, a lower bound of the optimum. New unaries (other prices) are taken
    by adding the change to the reparametrised unaries, so each relaxed problem starts from the last
    one's messages.

    The sweep is the sequential one, done a level at a time: a variable's update reads and writes
    only its own unary and pairs, so variables no earlier neighbour of which is in the same level
    (`_Level`: levels by the longest chain of neighbours in variable order) update at once, in one
    gather, segmented minimum and scatter over flat arrays, with the sequential sweep's result."""

    def __init__(self, unary: list[np.ndarray], near: list[list[tuple[int, np.ndarray]]]):
        self.near = near
        self.unary = [np.where(np.isfinite(u), u, 1e30) for u in unary]
        sizes = np.array([len(u) for u in self.unary], np.int64)
        self._at = np.concatenate([[0], np.cumsum(sizes)])
        self._theta = np.concatenate(self.unary) if self.unary else np.zeros(0)
        self.theta = [self._theta[self._at[a]:self._at[a + 1]] for a in range(len(sizes))]  # views
        depth = _depths(near)
        tables = {(a, b): m for a, around in enumerate(near) for b, m in around if a < b}
        # Pairs stored (a, b), a < b, row-major, ordered by a's level: a level's pairs to later
        # variables are one slice of the flat array, updated in place; the rest are gathered.
        keys = sorted(tables, key=lambda k: (int(depth[k[0]]), k))
        offsets = np.concatenate([[0], np.cumsum([tables[k].size for k in keys])]).astype(np.int64)
        self._flat = np.concatenate([np.where(np.isfinite(tables[k]), tables[k], 1e30).astype(float).ravel()
                                     for k in keys]) if keys else np.zeros(0)
        self.entries = len(self._flat)
        """The pair tables' entries (a sweep's work)."""
        self.pair = {k: self._flat[offsets[i]:offsets[i + 1]].reshape(tables[k].shape) for i, k in enumerate(keys)}
        self.levels = _levels(near, sizes, depth, keys, offsets, self._at)

    def reprice(self, unary: list[np.ndarray]) -> None:
        """The same pairs with these unaries."""
        fresh = [np.where(np.isfinite(u), u, 1e30) for u in unary]
        for t, f, u in zip(self.theta, fresh, self.unary, strict=True):
            t += f - u
        self.unary = fresh

    def sweep(self, sweeps: int) -> None:
        flat, theta = self._flat, self._theta
        for sweep in range(2 * sweeps):
            for level in self.levels if sweep % 2 == 0 else reversed(self.levels):
                later = flat[level.later]  # a view: updated in place
                earlier = flat[level.earlier.entries]  # a copy, written back
                total = theta[level.choices].copy()
                lows = []
                for values, part in ((later, level.later_segments), (earlier, level.earlier)):
                    # each pair's minimum over b, per choice of a, into a
                    low = np.minimum.reduceat(values, part.starts) if len(values) else values
                    total += np.bincount(part.choice, low, len(total))
                    lows.append(low)
                share = total / level.spread  # then spread evenly over a and its pairs
                theta[level.choices] = share
                later += np.repeat(share[level.later_segments.choice] - lows[0], level.later_segments.lengths)
                flat[level.earlier.entries] = earlier + np.repeat(share[level.earlier.choice] - lows[1],
                                                                  level.earlier.lengths)

    def bound(self) -> float:
        return float(sum(t.min() for t in self.theta) + sum(m.min() for m in self.pair.values()))

    def decode(self) -> np.ndarray:
        """A plan: each variable in order takes its least reparametrised unary plus the pairs to
        the variables already chosen (TRW-S's decoding)."""
        choice = np.full(len(self.theta), -1, np.int64)
        for a in range(len(self.theta)):
            total = self.theta[a].copy()
            for b, _ in self.near[a]:
                if choice[b] >= 0:
                    total += self.pair[a, b][:, choice[b]] if a < b else self.pair[b, a][choice[b], :]
            choice[a] = int(np.argmin(total))
        return choice


@dataclass
class _Segments:
    """Pair entries cut into one segment per pair and choice of a (oriented: a's choice, then b's)."""

    entries: np.ndarray
    """The segments' entries' places in the flat pairs (unused for a level's contiguous slice)."""
    starts: np.ndarray
    lengths: np.ndarray
    choice: np.ndarray
    """Per segment, the index into its level's `choices` of its choice of a."""

    @staticmethod
    def of(entries: list[np.ndarray], lengths: list[np.ndarray], choice: list[np.ndarray]) -> _Segments:
        length = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
        return _Segments(np.concatenate(entries) if entries else np.zeros(0, np.int64),
                         np.concatenate([[0], np.cumsum(length)[:-1]]).astype(np.int64) if len(length) else length,
                         length, np.concatenate(choice) if choice else np.zeros(0, np.int64))


@dataclass
class _Level:
    """Variables `Messages.sweep` updates at once: their choices' places in the flat unaries, their
    pairs to later variables (one slice of the flat pairs) and to earlier ones (gathered)."""

    choices: np.ndarray
    spread: np.ndarray
    """Per choice, its variable's pairs plus one."""
    later: slice
    later_segments: _Segments
    earlier: _Segments


def _depths(near: list[list[tuple[int, np.ndarray]]]) -> np.ndarray:
    """Per variable, the longest chain of neighbours before it in variable order."""
    depth = np.zeros(len(near), np.int64)
    for a, around in enumerate(near):
        for b, _ in around:
            if b < a:
                depth[a] = max(depth[a], depth[b] + 1)
    return depth


def _levels(near: list[list[tuple[int, np.ndarray]]], sizes: np.ndarray, depth: np.ndarray,
            keys: list[tuple[int, int]], offsets: np.ndarray, at: np.ndarray) -> list[_Level]:
    """The variables with pairs grouped by depth; `keys` (the pairs in storage order, by the
    depth of their first variable) start at `offsets`."""
    groups: dict[int, list[int]] = {}
    for a, around in enumerate(near):
        if around:
            groups.setdefault(int(depth[a]), []).append(a)
    where = {k: int(offsets[i]) for i, k in enumerate(keys)}
    first = np.searchsorted(depth[[k[0] for k in keys]], sorted(groups), side="left") if keys else []
    levels = []
    for d, start in zip(sorted(groups), first, strict=True):
        members = groups[d]
        base = dict(zip(members, np.cumsum([0] + [int(sizes[a]) for a in members[:-1]]).tolist(), strict=True))
        later: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        earlier: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        stop = int(start)
        while stop < len(keys) and depth[keys[stop][0]] == d:
            a, b = keys[stop]
            da, db = int(sizes[a]), int(sizes[b])
            later[0].append(np.full(da, db))
            later[1].append(base[a] + np.arange(da))
            stop += 1
        for a in members:
            da = int(sizes[a])
            for b, _ in near[a]:
                if b < a:  # stored (b, a): a's choice i is a column
                    db = int(sizes[b])
                    earlier[0].append((where[b, a] + np.arange(da)[:, None] + np.arange(db)[None, :] * da).ravel())
                    earlier[1].append(np.full(da, db))
                    earlier[2].append(base[a] + np.arange(da))
        span = slice(int(offsets[start]) if stop > start else 0, int(offsets[stop]) if stop > start else 0)
        levels.append(_Level(
            np.concatenate([np.arange(at[a], at[a + 1]) for a in members]),
            np.concatenate([np.full(int(sizes[a]), len(near[a]) + 1.0) for a in members]),
            span, _Segments.of([], later[0], later[1]), _Segments.of(earlier[0], earlier[1], earlier[2])))
    return levels


def split_bound(unary: list[np.ndarray], near: list[list[tuple[int, np.ndarray]]]) -> float:
    """A lower bound of min Σ unary + Σ pairs: every unary shared evenly over its pairs, each pair
    (and each lone variable) minimised on its own (a sum of minima is at most the minimum of the sum)."""
    total = 0.0
    for a, around in enumerate(near):
        if not around:
            total += float(unary[a].min())
        for b, m in around:
            if a < b:
                total += float((unary[a][:, None] / len(around) + m + unary[b][None, :] / len(near[b])).min())
    return total


class Steps:
    """The subgradient step size, by one of two rules. Adaptive (the textbook rule): from `STEP`,
    halved when the bound stops rising and, on an overshoot, at once, stepping again from the best
    bound's prices. Scheduled: from 1, halved every `HALVE` steps — longer early steps that wander
    further from the last prices. On the IOPDDL problems the adaptive rule's bounds are higher (N
    185e9 for 160e9-167e9, M 46.5e9 for 42.6e9, L 1.911e9 for 1.901e9) and so are its prices' plans
    (K 2.30e9 for 2.40e9 the same day), but on V the scheduled rule's prices pass a plan that
    repairs to the optimum (1,617,084) while every adaptive start repairs to 2.47e6 and the run ends
    at 2,320,200. `solve_strategy` takes the scheduled rule where HiGHS follows on the whole problem
    (its proof does not need the relaxation's bound) and the adaptive rule on the large problems,
    where the bound and the priced starts are the relaxation's. Where diffusion gives the bound (not
    the relaxed optimum), a repricing dips it and the adaptive rule reads the dip as an overshoot: on
    M the size falls to 4e-9 by step 25, the prices freeze, and the bound rises from 29e9 to 46.5e9
    on the sweeps alone (without the overshoot test: 46.56e9, the relaxation's plan 50.11e9 for
    50.24e9)."""

    def __init__(self, adaptive: bool):
        self.adaptive = adaptive
        self.size = STEP if adaptive else 1.0
        self.best, self.stale = -math.inf, 0
        self.at_best: tuple[np.ndarray, np.ndarray] | None = None

    def after(self, step: int, dual: float, prices: np.ndarray, g: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """The size of the step after `step` (whose bound was `dual`, at `prices`, subgradient `g`),
        and the bound, prices and subgradient to step from."""
        if not self.adaptive:
            if step % HALVE == HALVE - 1:
                self.size /= 2
            return dual, prices, g
        if self.at_best is not None and dual < self.best - DROP * abs(self.best):  # overshot
            self.size, self.stale = self.size / 2, 0
            return self.best, *self.at_best
        if self.at_best is None or dual > self.best + 1e-9 * abs(self.best):
            self.best, self.stale, self.at_best = dual, 0, (prices, g)
        else:
            self.stale += 1
            if self.stale >= STALE:
                self.size, self.stale = self.size / 2, 0
        return dual, prices, g


Exact = Callable[[list[np.ndarray]], tuple[float, np.ndarray] | None]
"""The priced pairwise problem's optimum (less the constant) and plan, or None where it cannot."""


def lagrangian(graph: Graph, iterations: int = ITERATIONS, stop: Stop | None = None,
               exact: Exact | None = None, seed: int = 0, adaptive: bool = True) -> Dual:
    """Projected subgradient on the row prices (module docstring), its step size by `Steps(adaptive)`.
    `exact(unary)`, when given, is the priced pairwise problem's optimum without the constant and
    its plan (None where it cannot)."""
    rows, n = graph.rows, len(graph.unary)
    limit, slack = rows.limit, rows.constant - rows.limit
    order = np.arange(n)
    rng = np.random.default_rng(seed)
    prices = np.zeros(len(slack))
    search = Search(graph, np.array([int(np.argmin(u)) for u in graph.unary]))
    plan, value, bound = None, math.inf, -math.inf
    passing: Messages | None = None
    starts: list[tuple[np.ndarray, np.ndarray]] = []
    trees = POLISH_TREES if rows.memberships() <= POLISH_ROW_ENTRIES else 1
    edges = sum(len(around) for around in graph.near)
    steps = Steps(adaptive)
    for step in range(iterations):
        if stop is not None and stop.due():
            break
        unary = priced_unary(graph, prices)
        solved = exact(unary) if exact is not None else None
        candidates = [search]
        if solved is not None:
            low = solved[0]
            candidates.append(Search(graph, solved[1]))
        else:
            repriced = passing is not None
            if passing is None:
                passing = Messages(unary, graph.near)
            else:
                passing.reprice(unary)
            sweeps = FIRST_SWEEPS if step == 0 else MESSAGE_SWEEPS
            passing.sweep(sweeps)
            low = max(passing.bound(), split_bound(unary, graph.near))
            if stop is not None:  # the repricing, the sweeps, the split bound and the decoding's visits
                stop.charge(REPRICE * n * repriced
                            + 2 * sweeps * (LEVEL * len(passing.levels) + ENTRY * passing.entries)
                            + SPLIT_EDGE * edges / 2 + VISIT * n + NEIGHBOUR * edges)
            candidates.append(Search(graph, passing.decode()))
        for trial in candidates:
            trial.penalty = prices
            for _ in range(trees):
                soft_tree(trial, graph.pick(rng), n)
            if stop is not None:
                stop.charge(trees * whole_tree(graph))
            trial.descend(order, feasible=False, sweeps=10, stop=stop)
        search = min(candidates, key=lambda t: graph.value(t.choice) + float(prices @ t.used))
        if stop is not None:  # the priced unaries and the candidates' row usages
            stop.charge(ROW_VARIABLE * graph.row_variables * (1 + len(candidates)))
        over = search.used - limit
        dual = graph.constant + low + float(prices @ slack)
        bound = max(bound, dual)
        if (over <= limit * 1e-12).all():
            trial = search.copy()
            trial.descend(order, feasible=True, sweeps=100, stop=stop)
            if graph.value(trial.choice) < value:
                plan, value = trial.choice.copy(), graph.value(trial.choice)
        if step % SNAPSHOT == SNAPSHOT - 1:
            starts.append((search.choice.copy(), prices.copy()))
        g = np.where((prices <= 0) & (over < 0), 0.0, over)
        dual, prices, g = steps.after(step, dual, prices, g)
        norm = float(g @ g)
        if norm <= 0:
            break  # every priced row fits with zero slack: the relaxed answer is optimal for λ
        target = value if math.isfinite(value) else dual + max(abs(dual), 1.0)
        prices = np.maximum(prices + steps.size * max(target - dual, 1e-6 * abs(dual) + 1e-9) / norm * g, 0.0)
    search.penalty = np.zeros(len(slack))
    if not starts or not np.array_equal(starts[-1][0], search.choice):
        starts.append((search.choice.copy(), prices.copy()))
    return Dual(plan, value, bound, prices, search.choice.copy(), starts)
