"""Exact reductions of a `StrategyProblem` (wave3 §4's techniques), for `passes/solver/sharding.py`.

The reduced problem has variables (leaders), each with a domain, a unary cost vector, pair cost
matrices to its neighbours, and memory terms (a usage vector over the domain and the live
interval [a, b) of the original node it came from). Every step keeps the optimum:

* infinite-cost pruning: a strategy of infinite node cost (≥ `INFINITE`, the contest's 10^18), or
  one whose row of some edge matrix is all infinite (arc consistency, repeated), is dropped;
* followers: when each strategy of u admits exactly one finite entry of an edge (u, v), v's
  strategy is a function of u's — v is merged into u: its unary, its other edges and its memory
  terms are re-indexed by u's strategy (CostGraph::Simplify's following nodes);
* parallel edges are summed into one matrix;
* memory rows: a time at which even the largest usages of the live nodes fit the limit constrains
  nothing; a memory term live only at such times is dropped (its variable is memory-free there);
* dominated strategies: s is dropped when another strategy of the same variable costs no more in
  the unary, in every pair row and in every memory term (StrategyShaverForProblem);
* degree ≤ 2 elimination of memory-free variables: a leaf is minimised into its neighbour's unary,
  a variable between two others into a pair matrix between them (OneFlow's node elimination), the
  argmin kept for the way back.

`Reduction.expand` maps a choice of the reduced variables back to a solution of the original.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from sbpc.passes.solver.strategy import StrategyProblem

INFINITE = 1e18
"""Costs at or above this are forbidden (the contest writes 10^18 for an impossible strategy)."""
MAX_PAIR = 1 << 16
"""The largest pair matrix degree-2 elimination builds."""
MAX_PROFILE = 1 << 24
"""The largest d × d × profile comparison (one boolean array) dominance pruning makes for one variable."""


class Infeasible(Exception):
    """Every strategy of some node is excluded by infinite costs."""


@dataclass
class Terms:
    """A variable's memory terms: usage[:, j] over its domain, live over [start[j], end[j])."""

    usage: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def restricted(self, keep: np.ndarray) -> Terms:
        return Terms(self.usage[keep], self.start, self.end)

    def columns(self, keep: np.ndarray) -> Terms:
        return Terms(self.usage[:, keep], self.start[keep], self.end[keep])

    def __len__(self) -> int:
        return len(self.start)


def _no_terms(d: int) -> Terms:
    return Terms(np.zeros((d, 0)), np.zeros(0, np.int64), np.zeros(0, np.int64))


@dataclass
class Reduction:
    """The reduced problem and the way back to the original's strategies.

    A merged node keeps a link to the variable it follows (its choice per that variable's
    choice): merging is O(1) in what the follower had merged before, and the memory terms of a
    variable's whole group are gathered once (`gather_terms`) after the follower merging."""

    problem: StrategyProblem
    unary: dict[int, np.ndarray]
    adj: dict[int, dict[int, np.ndarray]]
    """adj[a][b]: the (d_a, d_b) cost matrix of the pair; adj[b][a] is its transpose."""
    own: dict[int, np.ndarray]
    """Per node, its original strategy per choice of its own (restricted) domain."""
    link: dict[int, tuple[int, np.ndarray]] = field(default_factory=dict)
    """Per merged node, (the variable it follows, its choice per that variable's choice)."""
    children: dict[int, list[int]] = field(default_factory=dict)
    terms: dict[int, Terms] | None = None
    """Per variable, its group's memory terms (None until `gather_terms`)."""
    constant: float = 0.0
    steps: list[tuple[int, tuple[int, ...], list[np.ndarray], np.ndarray]] = field(default_factory=list)
    """Eliminations in order: (variable, its neighbours then, their `own` then (later restrictions
    renumber their domains), the argmin over their choices)."""
    times: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """The times whose memory rows may bind (some choice can exceed the limit there)."""

    def variables(self) -> list[int]:
        return sorted(self.unary)

    def restrict(self, a: int, keep: np.ndarray) -> None:
        """Keep only the strategies `keep` (a mask or indices) of variable a."""
        self.unary[a] = self.unary[a][keep]
        for b, matrix in self.adj[a].items():
            self.adj[a][b] = matrix[keep]
            self.adj[b][a] = self.adj[a][b].T
        self.own[a] = self.own[a][keep]
        for c in self.children.get(a, ()):
            self.link[c] = (a, self.link[c][1][keep])
        if self.terms is not None:
            self.terms[a] = self.terms[a].restricted(keep)

    def add_pair(self, a: int, b: int, matrix: np.ndarray) -> None:
        if a == b:
            self.unary[a] = self.unary[a] + np.diagonal(matrix)
            return
        found = self.adj[a].get(b)
        self.adj[a][b] = matrix if found is None else found + matrix
        self.adj[b][a] = self.adj[a][b].T

    def remove_pair(self, a: int, b: int) -> np.ndarray:
        del self.adj[b][a]
        return self.adj[a].pop(b)

    def merge(self, v: int, u: int, f: np.ndarray) -> list[int]:
        """Variable v's choice is f[u's choice]: fold v into u. Returns u's neighbours whose
        matrix with u changed."""
        matrix = self.remove_pair(u, v)
        self.unary[u] = self.unary[u] + self.unary.pop(v)[f] + matrix[np.arange(len(f)), f]
        moved = list(self.adj[v])
        for w in moved:
            self.add_pair(u, w, self.remove_pair(v, w)[f])
        del self.adj[v]
        self.link[v] = (u, f)
        self.children.setdefault(u, []).append(v)
        if self.terms is not None:
            mine, theirs = self.terms[u], self.terms.pop(v)
            self.terms[u] = Terms(np.hstack([mine.usage, theirs.usage[f]]), np.concatenate([mine.start, theirs.start]),
                                  np.concatenate([mine.end, theirs.end]))
        return [w for w in moved if w != u]

    def group(self, a: int) -> list[tuple[int, np.ndarray]]:
        """The nodes variable a decides, each with its own choice per choice of a."""
        out = [(a, np.arange(len(self.own[a])))]
        k = 0
        while k < len(out):
            v, m = out[k]
            out.extend((c, self.link[c][1][m]) for c in self.children.get(v, ()))
            k += 1
        return out

    def gather_terms(self) -> None:
        """Every variable's memory terms: the usages of its group's live nodes."""
        p = self.problem
        self.terms = {}
        for a in self.unary:
            cols, starts, ends = [], [], []
            for v, m in self.group(a):
                start, end = (int(x) for x in p.intervals[v])
                if end > start:
                    cols.append(p.usage(v)[self.own[v][m]].astype(float))
                    starts.append(start)
                    ends.append(end)
            d = len(self.unary[a])
            self.terms[a] = Terms(np.array(cols).T.reshape(d, len(cols)), np.array(starts, np.int64),
                                  np.array(ends, np.int64)) if cols else _no_terms(d)

    def eliminate(self, v: int) -> None:
        """Minimise a memory-free variable of degree ≤ 2 out (see the module's docstring)."""
        near = tuple(sorted(self.adj[v]))
        unary = self.unary.pop(v)
        if not near:
            best = np.array(int(np.argmin(unary)))
            self.constant += float(unary[best])
        elif len(near) == 1:
            table = self.remove_pair(near[0], v) + unary[None, :]
            best = table.argmin(axis=1)
            self.unary[near[0]] = self.unary[near[0]] + table[np.arange(len(best)), best]
        else:
            a, b = near
            table = self.remove_pair(a, v)[:, :, None] + unary[None, :, None] + self.remove_pair(v, b)[None, :, :]
            best = table.argmin(axis=1)
            self.add_pair(a, b, np.take_along_axis(table, best[:, None, :], axis=1)[:, 0, :])
        del self.adj[v]
        if self.terms is not None:
            del self.terms[v]
        self.steps.append((v, near, [self.own[w] for w in near], best))

    def expand(self, choice: dict[int, int]) -> np.ndarray:
        """The original problem's solution from a choice of every remaining variable."""
        out = np.zeros(self.problem.n, np.int64)

        def place(a: int, c: int) -> None:
            for v, m in self.group(a):
                out[v] = self.own[v][m[c]]

        for a, c in choice.items():
            place(a, c)
        for v, near, owns, best in reversed(self.steps):
            at = tuple(int(np.flatnonzero(own == out[w])[0]) for w, own in zip(near, owns, strict=True))
            place(v, int(best[at]) if near else int(best))
        return out

    def value(self, choice: dict[int, int]) -> float:
        """The reduced objective (= the original's at `expand(choice)`)."""
        total = self.constant + sum(float(self.unary[a][c]) for a, c in choice.items())
        for a, near in self.adj.items():
            for b, matrix in near.items():
                if a < b:
                    total += float(matrix[choice[a], choice[b]])
        return total


def _start(problem: StrategyProblem) -> Reduction:
    costs = problem.node_costs.astype(float)
    costs[problem.node_costs >= INFINITE] = np.inf
    edge_costs = problem.edge_costs.astype(float)
    edge_costs[problem.edge_costs >= INFINITE] = np.inf
    sizes = problem.sizes()
    red = Reduction(problem, {}, {}, {})
    for i in range(problem.n):
        s, e = problem.node_start[i], problem.node_start[i + 1]
        red.unary[i] = costs[s:e]
        red.adj[i] = {}
        red.own[i] = np.arange(e - s)
    for k, (u, v) in enumerate(problem.edges):
        matrix = edge_costs[problem.edge_start[k] : problem.edge_start[k + 1]].reshape(sizes[u], sizes[v])
        red.add_pair(int(u), int(v), matrix)
    return red


def _consistent(red: Reduction, queue: deque[int], only: dict[int, list[int]] | None = None) -> None:
    """Arc consistency on the infinite costs, from the variables in `queue`: a strategy with an
    infinite unary or an all-infinite row of a pair goes. `only[a]`: the neighbours whose matrix
    with a changed (a's other rows were checked before); without it, all of them."""
    only = {} if only is None else dict(only)
    queued = set(queue)
    while queue:
        a = queue.popleft()
        queued.discard(a)
        if a not in red.unary:
            continue
        keep = np.isfinite(red.unary[a])
        which = only.pop(a, None)
        for b in red.adj[a] if which is None else which:
            matrix = red.adj[a].get(b)
            if matrix is not None:
                keep &= np.isfinite(matrix).any(axis=1)
        if not keep.any():
            raise Infeasible(f"node {a}: every strategy has an infinite cost")
        if not keep.all():
            red.restrict(a, keep)
            for b in red.adj[a]:
                if b not in queued:
                    queue.append(b)
                    queued.add(b)
                    only[b] = [a]
                elif b in only:
                    only[b].append(a)


def _follower(matrix: np.ndarray) -> np.ndarray | None:
    """f with matrix's only finite entry of row r at column f[r], if every row has just one."""
    finite = np.isfinite(matrix)
    if (finite.sum(axis=1) == 1).all():
        return finite.argmax(axis=1)
    return None


def _merge_from(red: Reduction, u: int, seen: dict[tuple[int, int], np.ndarray]) -> bool:
    """Merge every follower of u into it, then restore arc consistency; True if any merged.
    `seen` holds the matrices already found not to make a follower (a changed matrix is a new
    array), so that a hub is not rescanned. When the two follow each other (a bijection), the one
    with fewer neighbours is merged into the other, so a hub's edges are not moved again and again."""
    changed: list[int] = []
    merged = False
    for v in list(red.adj.get(u, ())):
        matrix = red.adj[u].get(v) if u in red.adj else None
        if matrix is None or seen.get((u, v)) is matrix:
            continue
        f = _follower(matrix)
        if f is None:
            seen[u, v] = matrix
            continue
        back = _follower(matrix.T) if len(red.adj[v]) > len(red.adj[u]) else None
        if back is not None:  # u follows v too: merge u into v and carry on from v
            red.merge(u, v, back)
            _consistent(red, deque([v]), {v: list(red.adj[v])})
            _merge_from(red, v, seen)
            return True
        changed.extend(red.merge(v, u, f))
        merged = True
    if changed:
        _consistent(red, deque([u]), {u: changed})
    return merged


def _merge_followers(red: Reduction, seen: dict[tuple[int, int], np.ndarray]) -> None:
    queue = deque(red.variables())
    while queue:
        u = queue.popleft()
        if u in red.unary and _merge_from(red, u, seen) and u in red.unary:
            queue.append(u)


def _relevant_times(red: Reduction, limit: float | None) -> None:
    """Keep the memory terms live at some time whose largest usage can exceed `limit`."""
    assert red.terms is not None
    if limit is None:
        red.terms = {a: _no_terms(len(u)) for a, u in red.unary.items()}
        return
    everything = list(red.terms.values())
    starts = np.concatenate([t.start for t in everything])
    if not len(starts):
        return
    ends = np.concatenate([t.end for t in everything])
    high = np.concatenate([t.usage.max(axis=0) for t in everything])
    low = np.concatenate([t.usage.min(axis=0) for t in everything])
    times = np.unique(starts)

    def over_time(values: np.ndarray) -> np.ndarray:
        steps = np.zeros(len(times) + 1)
        np.add.at(steps, np.searchsorted(times, starts), values)
        np.add.at(steps, np.searchsorted(times, ends), -values)
        return np.cumsum(steps)[:-1]

    top, base = over_time(high), over_time(low)
    if base.max() > limit:
        raise Infeasible(f"the smallest usages peak at {base.max():.0f} > {limit}")
    binding = top > limit
    red.times = times[binding]
    count = np.concatenate(([0], np.cumsum(binding)))
    for a, t in red.terms.items():
        live = count[np.searchsorted(times, t.end)] > count[np.searchsorted(times, t.start)]
        red.terms[a] = t.columns(live)


def _dominance(red: Reduction, a: int) -> bool:
    """Drop the dominated strategies of a; True if any went."""
    d = len(red.unary[a])
    if d < 2:
        return False
    assert red.terms is not None
    width = 1 + sum(m.shape[1] for m in red.adj[a].values()) + len(red.terms[a])
    if d * d * width > MAX_PROFILE:
        return False
    profile = np.concatenate([red.unary[a][:, None], *red.adj[a].values(), red.terms[a].usage], axis=1)
    no_worse = (profile[:, None, :] <= profile[None, :, :]).all(axis=2)  # [s, t]: s ≤ t everywhere
    np.fill_diagonal(no_worse, False)
    equal = no_worse & no_worse.T
    # t goes if some s is no worse and better somewhere, or equal to t and before it
    dominated = (no_worse & ~equal).any(axis=0) | np.triu(equal, 1).any(axis=0)
    if not dominated.any():
        return False
    red.restrict(a, ~dominated)
    return True


def _eliminable(red: Reduction, a: int) -> bool:
    near = red.adj[a]
    assert red.terms is not None
    if len(red.terms[a]) or len(near) > 2:
        return False
    if len(near) == 2:
        b, c = near
        return len(red.unary[b]) * len(red.unary[c]) <= MAX_PAIR
    return True


def reduce_problem(problem: StrategyProblem) -> Reduction:
    """All the reductions of the module's docstring, repeated while any applies."""
    red = _start(problem)
    _consistent(red, deque(red.variables()))
    seen: dict[tuple[int, int], np.ndarray] = {}
    _merge_followers(red, seen)
    red.gather_terms()
    _relevant_times(red, problem.usage_limit)
    queue = deque(red.variables())
    queued = set(queue)

    def again(variables: list[int]) -> None:
        for b in variables:
            if b in red.unary and b not in queued:
                queue.append(b)
                queued.add(b)

    while queue:
        a = queue.popleft()
        queued.discard(a)
        if a not in red.unary:
            continue
        merged = _merge_from(red, a, seen)
        if a not in red.unary:
            continue
        if _dominance(red, a):  # only the pairs with a changed (a lost strategies)
            _consistent(red, deque(red.adj[a]), {b: [a] for b in red.adj[a]})
            merged = True
        if _eliminable(red, a):
            near = list(red.adj[a])
            red.eliminate(a)
            again(near)
        elif merged:
            again([a, *red.adj[a]])
    return red
