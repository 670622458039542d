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

Costs are divided by `factor.MIP_UNIT` so that the MIP sees the contest's integer costs as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sbpc.passes.solver.factor import MIP_UNIT, FactorProblem, MemoryRow
from sbpc.passes.solver.reduce import Reduction


@dataclass
class Rows:
    """The memory rows over the reduced variables: per variable a, `rows[a]` (row indices) and
    `usage[a]` (len(rows[a]) × d_a) its usage at each; `constant[r]` what no choice changes."""

    rows: list[np.ndarray]
    usage: list[np.ndarray]
    constant: np.ndarray
    limit: float

    def of(self, choice: np.ndarray) -> np.ndarray:
        """Every row's usage under `choice` (indexed like the variables)."""
        total = self.constant.copy()
        for a, (r, u) in enumerate(zip(self.rows, self.usage, strict=True)):
            if len(r):
                total[r] += u[:, choice[a]]
        return total


def memory_rows(red: Reduction, variables: list[int], limit: float | None) -> Rows:
    """The maximal live sets of `red`'s terms (restricted to its binding times) as rows."""
    assert red.terms is not None
    empty = Rows([np.zeros(0, np.int64)] * len(variables), [np.zeros((0, len(red.unary[a]))) for a in variables],
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
    binding = np.zeros(len(maximal), bool)
    at = np.searchsorted(red.times, events[maximal])
    binding = (at < len(red.times)) & (red.times[np.minimum(at, len(red.times) - 1)] < events[maximal + 1])
    times = events[maximal[binding]]
    n_rows = len(times)
    constant = np.zeros(n_rows)
    rows_of, usage_of = [], []
    for a in variables:
        t = red.terms[a]
        d = len(red.unary[a])
        if not len(t):
            rows_of.append(np.zeros(0, np.int64))
            usage_of.append(np.zeros((0, d)))
            continue
        lo, hi = np.searchsorted(times, t.start), np.searchsorted(times, t.end)
        steps = np.zeros((n_rows + 1, d))
        np.add.at(steps, lo, t.usage.T)
        np.add.at(steps, hi, -t.usage.T)
        per_row = np.cumsum(steps, axis=0)[:-1]
        base = per_row.min(axis=1)
        constant += base
        per_row -= base[:, None]
        live = np.flatnonzero(per_row.max(axis=1) > 0)
        rows_of.append(live)
        usage_of.append(per_row[live])
    return Rows(rows_of, usage_of, constant, float(limit))


def factor_problem(red: Reduction, variables: list[int], rows: Rows) -> FactorProblem:
    """`red` as a `FactorProblem` (costs / MIP_UNIT), its rows as `MemoryRow`s; the bytes of the
    limit, the constant and the terms are in the contest's units."""
    index = {a: i for i, a in enumerate(variables)}
    problem = FactorProblem([red.unary[a] / MIP_UNIT for a in variables], constant=red.constant / MIP_UNIT)
    for a in variables:
        for b, matrix in red.adj[a].items():
            if a < b:
                problem.add_pair(index[a], index[b], matrix / MIP_UNIT)
    members: list[list[int]] = [[] for _ in range(len(rows.constant))]
    for i, (r, usage) in enumerate(zip(rows.rows, rows.usage, strict=True)):
        if not len(r):
            continue
        # Runs of consecutive rows with the same vector: one term each.
        change = np.ones(len(r), bool)
        change[1:] = (np.diff(r) != 1) | (usage[1:] != usage[:-1]).any(axis=1)
        for start, stop in zip(np.flatnonzero(change), [*np.flatnonzero(change)[1:], len(r)], strict=True):
            k = len(problem.memory_terms)
            problem.memory_terms.append((i, usage[start]))
            for row in r[start:stop]:
                members[row].append(k)
    problem.memory = [MemoryRow(float(c), m) for c, m in zip(rows.constant, members, strict=True)]
    return problem
