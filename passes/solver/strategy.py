"""The strategy problem (the IOPDDL contest's sharding problem, SPEC §9) and its evaluator.

Each node chooses one strategy; a strategy has a cost and a usage (bytes). Each node is live over
a half-open interval [a, b) of time; at every time t the usages of the nodes live at t may not
exceed the usage limit. Each edge (u, v) adds an entry of its cost matrix, row-major over its two
nodes: costs[k_u · s_u + s_v] for the strategies s_u, s_v chosen. The objective is the sum of the
chosen node costs and edge entries. This is the contest's rule (google/iopddl's evaluator), written
here from it: `evaluate` is the one judge of a solution, for `sbp-solve` and its tests.

Ragged per-node (and per-edge) data is held flat: `node_costs[node_start[i]:node_start[i + 1]]`
are node i's strategy costs, so a 65k-node problem is a handful of numpy arrays, not millions of
Python objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class ProblemError(ValueError):
    """An inconsistent problem or solution (the message names the node or edge)."""


@dataclass
class StrategyProblem:
    """Nodes with strategies (cost, usage) and live intervals, edges with cost matrices, an
    optional usage limit. Costs and usages are int64 when the input's are integers (exact sums)."""

    name: str
    node_start: np.ndarray
    """n + 1 offsets into `node_costs` / `node_usages`."""
    node_costs: np.ndarray
    node_usages: np.ndarray
    intervals: np.ndarray
    """(n, 2): node i is live at every time t with intervals[i, 0] ≤ t < intervals[i, 1]."""
    edges: np.ndarray
    """(m, 2) node indices."""
    edge_start: np.ndarray
    """m + 1 offsets into `edge_costs`."""
    edge_costs: np.ndarray
    usage_limit: int | float | None = None

    @property
    def n(self) -> int:
        return len(self.node_start) - 1

    @property
    def m(self) -> int:
        return len(self.edges)

    def sizes(self) -> np.ndarray:
        """The number of strategies of every node."""
        return np.diff(self.node_start)

    def cost(self, i: int) -> np.ndarray:
        return self.node_costs[self.node_start[i] : self.node_start[i + 1]]

    def usage(self, i: int) -> np.ndarray:
        return self.node_usages[self.node_start[i] : self.node_start[i + 1]]

    def matrix(self, e: int) -> np.ndarray:
        """Edge e's cost matrix, shape (k_u, k_v)."""
        u, v = self.edges[e]
        k = self.sizes()
        return self.edge_costs[self.edge_start[e] : self.edge_start[e + 1]].reshape(int(k[u]), int(k[v]))

    def validate(self) -> None:
        """Raise `ProblemError` naming the first node or edge whose data does not fit the rest."""
        n, sizes = self.n, self.sizes()
        if len(self.node_usages) != len(self.node_costs):
            raise ProblemError("nodes: costs and usages have different numbers of strategies")
        bad = np.flatnonzero(sizes <= 0)
        if len(bad):
            raise ProblemError(f"node {int(bad[0])} has no strategy")
        if self.intervals.shape != (n, 2):
            raise ProblemError(f"nodes: {len(self.intervals)} intervals for {n} nodes")
        if self.m and (self.edges.min() < 0 or self.edges.max() >= n):
            e = int(np.flatnonzero((self.edges < 0).any(axis=1) | (self.edges >= n).any(axis=1))[0])
            raise ProblemError(f"edge {e} names node {self.edges[e].tolist()} of {n}")
        want = sizes[self.edges[:, 0]] * sizes[self.edges[:, 1]] if self.m else np.zeros(0, np.int64)
        bad = np.flatnonzero(np.diff(self.edge_start) != want)
        if len(bad):
            e = int(bad[0])
            u, v = (int(x) for x in self.edges[e])
            raise ProblemError(f"edge {e} [{u}, {v}]: {int(np.diff(self.edge_start)[e])} costs, "
                               f"expected {int(want[e])} ({int(sizes[u])} x {int(sizes[v])})")
        for name, values in (("node cost", self.node_costs), ("node usage", self.node_usages),
                             ("edge cost", self.edge_costs)):
            if len(values) and (not np.all(np.isfinite(values)) or values.min() < 0):
                raise ProblemError(f"a {name} is negative or not finite")

    def live_at(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """The distinct times at which the set of live nodes can change (interval starts) and, for
        each, the nodes live then. A usage peak is reached at some interval start."""
        live = self.intervals[:, 1] > self.intervals[:, 0]
        times = np.unique(self.intervals[live, 0])
        return times, [np.flatnonzero(live & (self.intervals[:, 0] <= t) & (self.intervals[:, 1] > t)) for t in times]


@dataclass(frozen=True)
class Evaluation:
    cost: int | float
    peak: int | float
    """The largest total usage at any time (0 with no live node)."""
    feasible: bool


def check_solution(problem: StrategyProblem, solution: list[int] | np.ndarray) -> np.ndarray:
    """`solution` as an index array, or `ProblemError` naming the first bad entry."""
    choice = np.asarray(solution)
    if choice.shape != (problem.n,):
        raise ProblemError(f"a solution has {problem.n} entries, this one {choice.size}")
    if choice.size and not np.issubdtype(choice.dtype, np.integer):
        raise ProblemError("a solution's entries are strategy indices (integers)")
    bad = np.flatnonzero((choice < 0) | (choice >= problem.sizes()))
    if len(bad):
        i = int(bad[0])
        raise ProblemError(f"node {i}: strategy {int(choice[i])} of {int(problem.sizes()[i])}")
    return choice.astype(np.int64)


def peak_usage(problem: StrategyProblem, choice: np.ndarray) -> int | float:
    """The largest Σ usage of the nodes live at one time, by a sweep over interval ends."""
    used = problem.node_usages[problem.node_start[:-1] + choice]
    a, b = problem.intervals[:, 0], problem.intervals[:, 1]
    live = b > a
    if not live.any():
        return 0
    times = np.concatenate([a[live], b[live]])
    deltas = np.concatenate([used[live], -used[live]])
    order = np.lexsort((deltas, times))  # at one time, ends (negative) before starts: [a, b) is half open
    running = np.cumsum(deltas[order])
    return running.max().item()


def evaluate(problem: StrategyProblem, solution: list[int] | np.ndarray) -> Evaluation:
    """The contest's rule: cost = Σ chosen node costs + Σ chosen edge entries (row-major over the
    edge's nodes); infeasible if at some time the live nodes' usages exceed the limit."""
    choice = check_solution(problem, solution)
    cost = problem.node_costs[problem.node_start[:-1] + choice].sum().item()
    if problem.m:
        u, v = problem.edges[:, 0], problem.edges[:, 1]
        index = problem.edge_start[:-1] + choice[u] * problem.sizes()[v] + choice[v]
        cost += problem.edge_costs[index].sum().item()
    peak = peak_usage(problem, choice)
    feasible = problem.usage_limit is None or peak <= problem.usage_limit
    return Evaluation(cost, peak, bool(feasible))
