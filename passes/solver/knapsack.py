"""`knapsack`: the optimum under a budget whose memory rows share their large terms.

A program's arguments (weights) are live at every program point, so their bytes are in every
memory row; the rest of a row is the few values live there (activations). Bounding each row's own
terms below by their least bytes leaves one constraint on the shared ones: Σ shared bytes ≤ budget
− A, where A is the largest row's least own bytes. That knapsack is solved exactly by variable
elimination with a resource axis: every table gains a last axis over the shared bytes its eliminated
variables use (in units, rounded down, so the problem is a relaxation), and adding two tables
convolves that axis (min-plus); a table's levels run from what its variables need at least to what
the rest leaves (the others' least bytes), the rest is infeasible. Its optimum is a lower bound of
the budgeted problem; its plan, read back down the elimination, is feasible when it fits every row
at its exact bytes, and then optimal if it costs exactly that bound.

Why: the memory rows' Lagrangian dual (`budget.lagrangian`) prices this knapsack linearly and stops
short of it where the layers are identical (the `cpu` GPT stack at L=24: 0.9 % below its plan, and
the plan was not the optimum), and HiGHS's branch and bound meets the layers' symmetry (L=24 not
closed in 180 s, nor the knapsack alone in 120 s at L=12). Here the layers' symmetry costs nothing:
a level is a level, whichever layers' weights used it. On that stack this proves the optimum
(1,255.67 µs, 0.6 % below the dual's plan) in one elimination.

Work limits: `MAX_LEVELS` levels (the unit grows to fit), refined up to `MOST_LEVELS` where the
rounding made the plan overflow, and `MAX_CELLS` cells per table; beyond them, or when the rows
share nothing, there is no answer (None). `budget.close_gap` runs it
on the choices reduced-cost fixing keeps (L=24: 0.9 s there, 5.6 s on every choice).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from sbpc.passes.solver.factor import FactorProblem
from sbpc.passes.solver.width import elimination_order

MAX_LEVELS, MOST_LEVELS = 512, 4096
"""The levels of the resource axis: first at most MAX_LEVELS (the unit is the largest common divisor
of the shared terms' byte counts at or above budget / MAX_LEVELS; smaller counts round down, a looser
bound); where the plan then overflows the budget by that rounding, again with twice the levels, up to
MOST_LEVELS (the L=48 stack: 128 KiB units count its 64 KiB weight shards as nothing)."""
MAX_CELLS = 20_000_000
"""The largest table (choices × levels) built before giving up (the L=24 stack's largest: 5 M)."""


@dataclass
class Knapsack:
    """The relaxation's optimum (`bound`, a lower bound of the budgeted problem) and its plan
    (`choice`), whose exact peak may still exceed the budget (`fits`); no plan (`choice` None,
    `bound` infinite) when nothing fits even the relaxation: nothing fits the budget."""

    bound: float
    choice: list[int] | None
    fits: bool


class _Infeasible(Exception):
    """Nothing fits the relaxation."""


@dataclass
class _Table:
    """A factor over `scope` with a resource axis last: entry [..., i] is the least cost using
    exactly `low + i` levels."""

    scope: tuple[int, ...]
    values: np.ndarray
    low: int
    least: int
    """Levels the variables eliminated into it need at least (the rest may leave no more)."""


def shared_terms(problem: FactorProblem) -> list[int]:
    """The memory terms listed once in every row (the arguments' bytes, live at every point)."""
    rows = problem.memory
    if not rows:
        return []
    counts = [dict.fromkeys(r.terms, 0) for r in rows]
    for count, row in zip(counts, rows, strict=True):
        for k in row.terms:
            count[k] += 1
    return sorted(k for k, n in counts[0].items() if all(c.get(k) == 1 for c in counts))


def least_rest(problem: FactorProblem, shared: list[int]) -> float:
    """The largest row's least bytes outside the shared terms: every plan has a row this full."""
    least = [float(np.min(b)) for _, b in problem.memory_terms]
    inside = set(shared)
    return max(r.constant + sum(least[k] for k in r.terms if k not in inside) for r in problem.memory)


def _unit(counts: list[int], cap: float, levels: int) -> int:
    """The resource unit for at most about `levels` levels below `cap` (see `MAX_LEVELS`)."""
    floor = cap / levels
    unit = 0
    for n in counts:
        if n >= floor:
            unit = math.gcd(unit, n)
    return max(unit, math.ceil(floor), 1)


def knapsack(problem: FactorProblem, budget: float, deadline: float | None = None) -> Knapsack | None:
    """The relaxation's optimum and plan (see the module docstring); None when the rows share no
    term, a table would exceed `MAX_CELLS`, or `deadline` (`time.perf_counter()` seconds) passes."""
    shared = shared_terms(problem)
    if not shared or problem.covers:
        return None
    cap = budget - least_rest(problem, shared)
    if cap < 0 or any(len(u) == 0 for u in problem.unary):
        return Knapsack(np.inf, None, False)
    per_var: dict[int, np.ndarray] = {}
    for k in shared:
        v, b = problem.memory_terms[k]
        per_var[v] = per_var.get(v, 0.0) + np.asarray(b, dtype=float)
    counts = sorted({int(n) for b in per_var.values() for n in b})
    finest = max(math.gcd(*counts), 1)
    levels, unit = MAX_LEVELS, _unit(counts, cap, MAX_LEVELS)
    bound = -np.inf
    while True:
        found = _at_unit(problem, per_var, cap, unit, deadline)
        if found is None or found.choice is None:
            return found
        bound = found.bound = max(bound, found.bound)
        found.fits = problem.memory_peak(found.choice) <= budget
        used = sum(float(b[found.choice[v]]) for v, b in per_var.items())
        if found.fits or used <= cap or unit <= finest:
            return found  # fits, or the rows' own bytes overflow, not the rounding
        while levels < MOST_LEVELS and _unit(counts, cap, levels) >= unit:
            levels *= 2
        finer = _unit(counts, cap, levels)
        if finer >= unit:
            return found
        unit = finer


def _at_unit(
    problem: FactorProblem, per_var: dict[int, np.ndarray], cap: float, unit: int, deadline: float | None,
) -> Knapsack | None:
    """The relaxation with the shared bytes in `unit`s (see `knapsack`)."""
    top = int(cap // unit)
    levels = {v: np.floor(b / unit).astype(np.intp) for v, b in per_var.items()}
    total_least = sum(int(lv.min()) for lv in levels.values())
    try:
        if total_least > top:
            raise _Infeasible
        done = _eliminate(problem, levels, top, total_least, deadline)
        if done is None:
            return None
        steps, roots = done
        whole = _Table((), np.zeros(1), 0, 0)
        for _, table in roots:
            whole = _convolve(whole, table, (), top)
    except _Infeasible:
        return Knapsack(np.inf, None, False)
    best = int(np.argmin(whole.values))
    choice = _read_back(problem, steps, roots, whole.low + best)
    return Knapsack(float(whole.values[best]), choice, False)


_Step = tuple[int, tuple[int, ...], list[tuple[int, _Table]], int]
"""One elimination: the variable, its table's axes (it last), the tables added (id, table), and
the id of the table it left (a root's when no variable is left)."""


def _eliminate(
    problem: FactorProblem, levels: dict[int, np.ndarray], top: int, total_least: int, deadline: float | None,
) -> tuple[list[_Step], list[tuple[int, _Table]]] | None:
    """Eliminate every variable in `width.elimination_order`: the steps and the root tables (one
    per connected component, over levels only)."""
    sizes = [len(u) for u in problem.unary]
    sequence = elimination_order(problem.unary, [*problem.pairs, *(f[0] for f in problem.factors)], MAX_CELLS)
    if sequence is None:
        return None
    tables: dict[int, _Table] = {}
    holding: list[set[int]] = [set() for _ in sizes]
    for v, unary in enumerate(problem.unary):
        cost = np.asarray(unary, dtype=float)
        lv = levels.get(v)
        if lv is None:
            tables[v] = _Table((v,), cost[:, None], 0, 0)
        else:
            low = int(lv.min())
            values = np.full((len(cost), int(lv.max()) - low + 1), np.inf)
            values[np.arange(len(cost)), lv - low] = cost
            tables[v] = _Table((v,), values, low, low)
        holding[v].add(v)
    for scope, table in [*problem.pairs.items(), *problem.factors]:
        tables[len(tables)] = _Table(scope, np.asarray(table, dtype=float)[..., None], 0, 0)
        for w in scope:
            holding[w].add(len(tables) - 1)
    steps: list[_Step] = []
    roots: list[tuple[int, _Table]] = []
    next_id = len(tables)
    for x in sequence:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        order = (*sorted({w for fid in holding[x] for w in tables[fid].scope} - {x}), x)
        # Tables without levels first: they only add; the convolutions come last, on fewer cells.
        consumed = sorted(((fid, tables.pop(fid)) for fid in holding[x]), key=lambda e: (e[1].values.shape[-1], e[0]))
        for fid, table in consumed:
            for w in table.scope:
                if w != x:
                    holding[w].discard(fid)
        least = sum(t.least for _, t in consumed)
        high = top - (total_least - least)  # the variables not eliminated here need their least levels
        total = _Table(order, np.zeros((1,) * (len(order) + 1)), 0, 0)
        for _, table in consumed:
            total = _convolve(total, table, order, high)
        total.values = np.broadcast_to(total.values, tuple(sizes[w] for w in order) + total.values.shape[-1:])
        if total.values.size > MAX_CELLS:
            return None
        reduced = _trimmed(_Table(order[:-1], total.values.min(axis=-2), total.low, least))
        steps.append((x, order, consumed, next_id))
        if reduced.scope:
            tables[next_id] = reduced
            for w in reduced.scope:
                holding[w].add(next_id)
        else:
            roots.append((next_id, reduced))
        next_id += 1
    return steps, roots


def _expand(table: _Table, order: tuple[int, ...]) -> np.ndarray:
    """`table.values` broadcastable over `order` and its level axis."""
    if table.scope == order:
        return table.values
    position = {v: i for i, v in enumerate(order)}
    perm = sorted(range(len(table.scope)), key=lambda i: position[table.scope[i]])
    moved = table.values.transpose([*perm, len(table.scope)])
    shape = [1] * len(order) + [table.values.shape[-1]]
    for i, n in zip(perm, moved.shape[:-1], strict=True):
        shape[position[table.scope[i]]] = n
    return moved.reshape(shape)


def _convolve(a: _Table, b: _Table, order: tuple[int, ...], high: int) -> _Table:
    """a ⊕ b over `order`: costs added, levels convolved (min-plus), levels above `high` cut
    (`_Infeasible` if none is left)."""
    x, y = _expand(a, order), _expand(b, order)
    if x.shape[-1] > y.shape[-1]:
        x, y = y, x
    low = a.low + b.low
    n = min(x.shape[-1] + y.shape[-1] - 1, high - low + 1)
    if n <= 0:
        raise _Infeasible
    if x.shape[-1] == 1:
        return _Table(order, x + y[..., :n], low, a.least + b.least)
    out = np.full((*np.broadcast_shapes(x.shape[:-1], y.shape[:-1]), n), np.inf)
    for i in np.flatnonzero(np.isfinite(x.reshape(-1, x.shape[-1])).any(axis=0)):
        if i >= n:
            break
        m = min(y.shape[-1], n - i)
        np.minimum(out[..., i:i + m], x[..., i:i + 1] + y[..., :m], out=out[..., i:i + m])
    return _Table(order, out, low, a.least + b.least)


def _trimmed(table: _Table) -> _Table:
    """`table` without its infeasible lowest and highest levels (`_Infeasible`: none is left)."""
    finite = np.flatnonzero(np.isfinite(table.values.reshape(-1, table.values.shape[-1])).any(axis=0))
    if len(finite) == 0:
        raise _Infeasible
    first, last = int(finite[0]), int(finite[-1])
    return _Table(table.scope, np.ascontiguousarray(table.values[..., first:last + 1]), table.low + first, table.least)


def _prefixes(parts: list[tuple[np.ndarray, int]], rows: int) -> list[tuple[np.ndarray, int]]:
    """The running min-plus convolutions of `parts` (values rows × levels, lowest level), from
    nothing: entry i holds the first i parts' least cost per total level, row by row."""
    prefix = [(np.zeros((rows, 1)), 0)]
    for values, low in parts:
        prior, prior_low = prefix[-1]
        out = np.full((rows, prior.shape[1] + values.shape[1] - 1), np.inf)
        for i in range(prior.shape[1]):
            np.minimum(out[:, i:i + values.shape[1]], prior[:, i:i + 1] + values, out=out[:, i:i + values.shape[1]])
        prefix.append((out, prior_low + low))
    return prefix


def _split(
    parts: list[tuple[np.ndarray, int]], prefix: list[tuple[np.ndarray, int]], row: int, level: int,
) -> list[int]:
    """The levels of `parts`' row `row` summing to `level` at the least total cost (`prefix`:
    their `_prefixes`)."""
    chosen: list[int] = []
    for (values, low), (prior, prior_low) in zip(reversed(parts), reversed(prefix[:-1]), strict=True):
        ks = np.arange(low, low + values.shape[1])
        at = level - ks - prior_low
        ok = (at >= 0) & (at < prior.shape[1])
        cost = np.where(ok, values[row] + prior[row, np.clip(at, 0, prior.shape[1] - 1)], np.inf)
        k = int(ks[int(np.argmin(cost))])
        chosen.append(k)
        level -= k
    return chosen[::-1]


def _read_back(problem: FactorProblem, steps: list[_Step], roots: list[tuple[int, _Table]], level: int) -> list[int]:
    """The plan of the relaxation's optimum at `level`: each step's variable and the levels of the
    tables it added, given the later steps' choices and the level of the table it left."""
    parts = [(t.values[None, :], t.low) for _, t in roots]
    assigned = dict(zip((fid for fid, _ in roots), _split(parts, _prefixes(parts, 1), 0, level), strict=True))
    choice = [0] * len(problem.unary)
    for x, _, consumed, produced in reversed(steps):
        target = assigned.pop(produced)
        k = len(problem.unary[x])
        cost = np.zeros(k)
        wide: list[tuple[int, np.ndarray, int]] = []
        for fid, table in consumed:
            values = table.values[tuple(slice(None) if w == x else choice[w] for w in table.scope)]
            values = np.broadcast_to(values if x in table.scope else values[None], (k, values.shape[-1]))
            if values.shape[-1] == 1:  # one level: its cost adds, its level is fixed
                cost = cost + values[:, 0]
                target -= table.low
                assigned[fid] = table.low
            else:
                wide.append((fid, values, table.low))
        # The wide tables' levels for every choice of x at once, then x's best choice.
        parts = [(values, low) for _, values, low in wide]
        prefix = _prefixes(parts, k)
        last, last_low = prefix[-1]
        at = target - last_low
        c = int(np.argmin(cost + (last[:, at] if 0 <= at < last.shape[1] else np.inf)))
        choice[x] = c
        levels = _split(parts, prefix, c, target)
        for (fid, _, _), s in zip(wide, levels, strict=True):
            assigned[fid] = s
    return choice
