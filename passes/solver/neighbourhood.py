"""`Neighbourhoods`: a window of variables re-solved exactly by elimination, the rest held.

The anytime primal's moves (`anytime.Descent`: one variable, or one shared value's consumers, at
a time) stop at plans a coordinated change of a dozen variables would better; the local search
on the pairwise twins does not see the exact shared boxings. A window grown breadth-first from a
seed over every term of the exact problem (pairs, tabled factors, covers) is held small enough to
eliminate: each term is folded at the held variables' choices (a pair into a unary, a factor
sliced, a cover's held consumers into its fixed targets and a held producer into its price row,
then tabulated), and the window's optimum given the rest replaces its choices where cheaper.
Seeds are every variable with a choice in a seeded random order (again, until the count of
windows, the work limit, is reached). Measured on gen_dag 2000 (no budget), from the ascent's best
start: 489.9 -> 472.8 µs in 2,000 windows (10 s), where the exact problem's LP bound is 472.68 µs
(HiGHS, interior point, 842 s); with `--seed 1`, 557.9 -> 538.3 µs.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import numpy as np

from sbpc.passes.solver.factor import CoverForm, FactorProblem, cover_table, eliminate

SHAPES = ((16, None), (32, 3))
"""Windows' shapes, taken in turn: (variables, neighbours taken from each one reached; None: all).
A window from a variable of degree 6 with all its neighbours reaches two steps; some better plans
change a path of 6-7 ops at once (gen_dag 2000, seed 1: two such moves of 8.4 µs each), which the
narrower, deeper windows reach."""
WINDOWS = 2000
"""Windows per search: its work limit."""
MAX_FOLDED = 20_000
"""The largest folded cover a window may hold (a variable that would make one larger is left out):
tabulating covers is most of a window's time (gen_dag 2000: 1,000 windows with 20,000 took 6 s
and reached 472.8 µs; with 1,000,000, 10 s for 500 windows)."""


class Neighbourhoods:
    """The exact problem's terms by variable, for growing and folding windows."""

    def __init__(self, problem: FactorProblem):
        self.problem = problem
        n = len(problem.unary)
        self.sizes = [len(u) for u in problem.unary]
        self.pairs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.factors: list[list[int]] = [[] for _ in range(n)]
        self.covers: list[list[int]] = [[] for _ in range(n)]
        near: list[set[int]] = [set() for _ in range(n)]
        for u, v in problem.pairs:
            self.pairs[u].append((u, v))
            self.pairs[v].append((u, v))
            near[u].add(v)
            near[v].add(u)
        for i, (scope, _) in enumerate(problem.factors):
            for w in scope:
                self.factors[w].append(i)
                near[w].update(scope)
        for i, form in enumerate(problem.covers):
            scope = _scope(form)
            for w in scope:
                self.covers[w].append(i)
                near[w].update(scope)
        self.near = [sorted(around - {v}) for v, around in enumerate(near)]

    def window(self, seed: int, rng: np.random.Generator, size: int = SHAPES[0][0],
               branch: int | None = None) -> list[int]:
        """Up to `size` variables breadth-first from `seed` (neighbours in random order, at most
        `branch` of each), leaving out a variable that would make a folded cover's table exceed
        `MAX_FOLDED`."""
        folded: dict[int, int] = {}  # per cover, its folded table's size so far
        got: list[int] = []
        seen, queue = {seed}, deque([seed])
        while queue and len(got) < size:
            a = queue.popleft()
            grown = {i: folded.get(i, 1) * self.sizes[a] for i in self.covers[a]}
            if any(g > MAX_FOLDED for g in grown.values()):
                continue
            folded.update(grown)
            got.append(a)
            for b in rng.permutation(self.near[a])[:branch].tolist():
                if b not in seen:
                    seen.add(b)
                    queue.append(b)
        return got

    def fold(self, window: list[int], plan: list[int]) -> FactorProblem:
        """The problem over `window` (in its order) with every other variable held at `plan`,
        less the terms that do not depend on the window."""
        problem, inside = self.problem, {v: k for k, v in enumerate(window)}
        out = FactorProblem([np.asarray(problem.unary[v], dtype=float).copy() for v in window])
        for u, v in sorted({key for w in window for key in self.pairs[w]}):
            table = problem.pairs[u, v]
            if u in inside and v in inside:
                out.add_factor((inside[u], inside[v]), table)
            elif u in inside:
                out.unary[inside[u]] += table[:, plan[v]]
            else:
                out.unary[inside[v]] += table[plan[u], :]
        for i in sorted({i for w in window for i in self.factors[w]}):
            scope, table = problem.factors[i]
            at = tuple(slice(None) if w in inside else plan[w] for w in scope)
            out.add_factor(tuple(inside[w] for w in scope if w in inside), table[at])
        for i in sorted({i for w in window for i in self.covers[w]}):
            form = _held(problem.covers[i], inside, plan)
            out.add_factor(tuple(inside[w] for w in _scope(form)), cover_table(form))
        return out

    def search(self, plan: list[int], polish: Callable[[list[int]], list[int]],
               accept: Callable[[list[int]], bool] | None = None, windows: int = WINDOWS, seed: int = 0,
               deadline: float | None = None) -> list[int]:
        """`windows` windows from random seeds, each re-solved and kept where the exact objective
        falls (and `accept`, the memory rows, holds); `polish` runs on every kept plan."""
        rng = np.random.default_rng(seed)
        plan, value = list(plan), self.problem.value(plan)
        free = np.flatnonzero(np.array(self.sizes) > 1)  # a variable without a choice is no seed
        if not len(free):
            return plan
        seeds = np.concatenate([rng.permutation(free) for _ in range(-(-windows // len(free)))])[:windows]
        for k, start in enumerate(seeds.tolist()):
            if deadline is not None and time.perf_counter() > deadline:
                break
            window = self.window(start, rng, *SHAPES[k % len(SHAPES)])
            folded = self.fold(window, plan)
            best = eliminate(folded)
            if best is None or best.objective >= folded.value([plan[v] for v in window]) - 1e-12 * abs(value):
                continue
            trial = list(plan)
            for v, c in zip(window, best.choice, strict=True):
                trial[v] = c
            if accept is not None and not accept(trial):
                continue
            trial = polish(trial)
            found = self.problem.value(trial)
            if found < value - 1e-12 * abs(value):
                plan, value = trial, found
        return plan


def _scope(form: CoverForm) -> list[int]:
    """A cover's variables in its table's axis order: the producer, then the consumers ascending."""
    return ([] if form.source is None else [form.source]) + sorted(form.needs)


def _held(form: CoverForm, inside: dict[int, int], plan: list[int]) -> CoverForm:
    """`form` with its variables outside the window held at `plan`: a held consumer's targets
    fixed, a held producer's class as the only price row."""
    fixed = form.fixed.copy()
    for v, needs in form.needs.items():
        if v not in inside:
            fixed |= needs[plan[v]]
    keep = {v: needs for v, needs in form.needs.items() if v in inside}
    if form.source is not None and form.source in inside:
        return CoverForm(form.source, form.rows, form.price, keep, fixed)
    row = form.rows[0 if form.source is None else plan[form.source]]
    return CoverForm(None, np.array([row]), form.price, keep, fixed)
