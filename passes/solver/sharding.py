"""The reduced strategy problem as the solver package's factor problem, with compressed memory rows.

`reduce.py` leaves variables with unary costs, pair matrices and memory terms (usage over the
domain, live interval). Here the memory constraints become rows: only the maximal sets of terms
live together matter (usages are ≥ 0, so a set inside another is implied), and on an interval
line those are the segments that begin with a start and end with an end — at most one per term.
Each variable's contribution to a row is one vector over its domain; its minimum is moved into
the row's constant (one-hot choices sum to one), and a variable's runs of rows with the same
vector share one memory term. The result is a `FactorProblem` with `MemoryRow`s that `factor.py`
(elimination, HiGHS) and `budget.py` (the column-generation dual) solve as they do for
`infer-sbp{rule=global}`.

Costs are divided by `mip.MIP_UNIT` so that the MIP sees the contest's integer costs as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from sbpc.passes.solver.factor import FactorProblem, MemoryRow
from sbpc.passes.solver.mip import MIP_UNIT
from sbpc.passes.solver.reduce import Reduction


@dataclass
class Rows:
    """The memory rows over the reduced variables, each variable's part run-length encoded: per
    variable a, `spans[a]` (k × 2, row ranges [lo, hi)) and `usage[a]` (k × d_a): its usage at
    every row of span j, per choice; `constant[r]` what no choice changes. A contest variable is
    live over a few intervals, each thousands of rows long: K's 268 M row entries are 127 k here."""

    spans: list[np.ndarray]
    usage: list[np.ndarray]
    constant: np.ndarray
    limit: float

    def __post_init__(self) -> None:
        self.bounds = [[(int(lo), int(hi)) for lo, hi in s] for s in self.spans]
        """`spans` as Python pairs: the moves slice with them millions of times."""

    @staticmethod
    def from_dense(rows: list[np.ndarray], usage: list[np.ndarray], constant: np.ndarray, limit: float) -> Rows:
        """From each variable's row indices (increasing) and usage there (rows × choices)."""
        spans, runs = [], []
        for r, u in zip(rows, usage, strict=True):
            if not len(r):
                spans.append(np.zeros((0, 2), np.int64))
                runs.append(np.zeros((0, u.shape[1])))
                continue
            change = np.ones(len(r), bool)
            change[1:] = (np.diff(r) != 1) | (u[1:] != u[:-1]).any(axis=1)
            first = np.flatnonzero(change)
            last = np.append(first[1:], len(r)) - 1
            spans.append(np.stack([r[first], r[last] + 1], axis=1).astype(np.int64).reshape(-1, 2))
            runs.append(u[first].reshape(len(first), u.shape[1]))
        return Rows(spans, runs, constant, limit)

    def of(self, choice: np.ndarray) -> np.ndarray:
        """Every row's usage under `choice` (indexed like the variables)."""
        steps = np.zeros(len(self.constant) + 1)
        for a, (span, u) in enumerate(zip(self.spans, self.usage, strict=True)):
            if len(span):
                np.add.at(steps, span[:, 0], u[:, choice[a]])
                np.add.at(steps, span[:, 1], -u[:, choice[a]])
        return self.constant + np.cumsum(steps)[:-1]

    def price(self, a: int, prefix: np.ndarray) -> np.ndarray:
        """Variable a's priced usage per choice: Σ over its rows of price × usage, `prefix` the
        prices' running sums (`prefix_sums`)."""
        span = self.spans[a]
        if not len(span):
            return np.zeros(self.usage[a].shape[1])
        return (prefix[span[:, 1]] - prefix[span[:, 0]]) @ self.usage[a]

    def total(self, a: int) -> np.ndarray:
        """Variable a's usage per choice summed over its rows."""
        span = self.spans[a]
        if not len(span):
            return np.zeros(self.usage[a].shape[1])
        return (span[:, 1] - span[:, 0]).astype(float) @ self.usage[a]

    def fits(self, a: int, current: int, used: np.ndarray) -> np.ndarray:
        """Per choice of a, whether moving a there from `current` keeps its rows within the limit
        (`used`: every row's usage now)."""
        span, u = self.spans[a], self.usage[a]
        if not len(span):
            return np.ones(u.shape[1], bool)
        peak = np.array([used[lo:hi].max() for lo, hi in self.bounds[a]])
        return ((peak[:, None] + u - u[:, [current]]) <= self.limit * (1 + 1e-12)).all(axis=0)

    def move(self, a: int, old: int, new: int, used: np.ndarray) -> None:
        """`used` updated for a's move from choice `old` to `new`."""
        u = self.usage[a]
        for (lo, hi), delta in zip(self.bounds[a], (u[:, new] - u[:, old]).tolist(), strict=True):
            if delta:
                used[lo:hi] += delta

    def memberships(self) -> int:
        """Row memberships (a variable in a row) over every variable."""
        return int(sum(int((s[:, 1] - s[:, 0]).sum()) for s in self.spans))

    def entries(self) -> int:
        """Row coefficients of the rows written out (memberships × choices): a MIP's size."""
        lengths = (int((s[:, 1] - s[:, 0]).sum()) for s in self.spans)
        return int(sum(k * u.shape[1] for k, u in zip(lengths, self.usage, strict=True)))


def prefix_sums(prices: np.ndarray) -> np.ndarray:
    """Running sums of per-row prices, so that a span's total is two reads (`Rows.price`)."""
    return np.concatenate([[0.0], np.cumsum(prices)])


def memory_rows(red: Reduction, variables: list[int], limit: float | None) -> Rows:
    """The maximal live sets of `red`'s terms (restricted to its binding times) as rows."""
    assert red.terms is not None
    empty = Rows([np.zeros((0, 2), np.int64)] * len(variables), [np.zeros((0, len(red.unary[a]))) for a in variables],
                 np.zeros(0), float("inf") if limit is None else float(limit))
    starts = [red.terms[a].start for a in variables]
    if limit is None or not sum(len(s) for s in starts):
        return empty
    ends = np.concatenate([red.terms[a].end for a in variables])
    all_starts = np.concatenate(starts)
    events = np.unique(np.concatenate([all_starts, ends]))
    begins = np.zeros(len(events), bool)
    begins[np.searchsorted(events, all_starts)] = True
    finishes = np.zeros(len(events), bool)
    finishes[np.searchsorted(events, ends)] = True
    # Segment i is [events[i], events[i + 1]): maximal iff a term starts at its left and one ends at its right.
    maximal = np.flatnonzero(begins[:-1] & finishes[1:])
    at = np.searchsorted(red.times, events[maximal])
    binding = (at < len(red.times)) & (red.times[np.minimum(at, len(red.times) - 1)] < events[maximal + 1])
    times = events[maximal[binding]]
    n_rows = len(times)
    base_steps = np.zeros(n_rows + 1)
    spans, runs = [], []
    for a in variables:
        t = red.terms[a]
        d = len(red.unary[a])
        if not len(t):
            spans.append(np.zeros((0, 2), np.int64))
            runs.append(np.zeros((0, d)))
            continue
        lo, hi = np.searchsorted(times, t.start), np.searchsorted(times, t.end)
        cuts = np.unique(np.concatenate([lo, hi, [0, n_rows]]))  # the usage is constant between cuts
        steps = np.zeros((len(cuts), d))
        np.add.at(steps, np.searchsorted(cuts, lo), t.usage.T)
        np.add.at(steps, np.searchsorted(cuts, hi), -t.usage.T)
        per_piece = np.cumsum(steps, axis=0)[:-1]
        base = per_piece.min(axis=1)  # one choice per variable: each row's least usage is a constant
        np.add.at(base_steps, cuts[:-1], base)
        np.add.at(base_steps, cuts[1:], -base)
        per_piece -= base[:, None]
        live = np.flatnonzero((per_piece.max(axis=1) > 0) & (cuts[1:] > cuts[:-1]))
        span = np.stack([cuts[:-1][live], cuts[1:][live]], axis=1).astype(np.int64).reshape(-1, 2)
        usage = per_piece[live]
        if len(live) > 1:  # neighbouring pieces with the same usage: one span
            keep = np.ones(len(live), bool)
            keep[1:] = (span[1:, 0] != span[:-1, 1]) | (usage[1:] != usage[:-1]).any(axis=1)
            last = np.append(np.flatnonzero(keep)[1:], len(live)) - 1
            span = np.stack([span[keep, 0], span[last, 1]], axis=1)
            usage = usage[keep]
        spans.append(span)
        runs.append(usage)
    return Rows(spans, runs, np.cumsum(base_steps)[:-1], float(limit))


def factor_problem(red: Reduction, variables: list[int]) -> FactorProblem:
    """`red` as a `FactorProblem` (costs / MIP_UNIT), without memory rows (`with_rows` adds them
    where HiGHS runs); the bytes of the limit, the constant and the terms are in the contest's units."""
    index = {a: i for i, a in enumerate(variables)}
    problem = FactorProblem([red.unary[a] / MIP_UNIT for a in variables], constant=red.constant / MIP_UNIT)
    for a in variables:
        for b, matrix in red.adj[a].items():
            if a < b:
                problem.add_pair(index[a], index[b], matrix / MIP_UNIT)
    return problem


def with_rows(problem: FactorProblem, rows: Rows, which: Iterable[int]) -> FactorProblem:
    """A copy of `problem` with the rows `which` (of `rows`) as its `MemoryRow`s, over one memory
    term per variable's span."""
    span = np.concatenate([np.zeros((0, 2), np.int64), *rows.spans])
    return dataclasses.replace(
        problem, memory_terms=[(i, run) for i, usage in enumerate(rows.usage) for run in usage],
        memory=[MemoryRow(float(rows.constant[r]), np.flatnonzero((span[:, 0] <= r) & (r < span[:, 1])).tolist())
                for r in which])
