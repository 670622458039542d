"""Min-sum solvers for `infer-sbp{rule=global}`: pick one choice per variable minimising
Σ unary[v][c_v] + Σ pair[u, v][c_u, c_v] + Σ factor[scope][c_scope], optionally under linear
memory budgets. General factors (scope ≥ 3) price a value shared by several consumers (one boxing
per distinct target, `passes/infer_sbp/global_search/problem.py`).

* `eliminate`: exact min-sum variable elimination (dynamic programming on the factor graph).
  Each step removes the variable whose elimination builds the smallest table (greedy min-size
  order): all factors holding it are added into one table over it and its neighbours, minimised
  over it (the argmin kept for the way back). OneFlow's degree-2 node elimination and parallel-edge
  merge (reference/oneflow.md §7) are the degree-2 and two-factors-one-scope cases. When the next
  table would exceed `max_table` entries it gives up (None; `width.py` decides that beforehand).
* `solve_mip`, `min_budget`: the same problem by HiGHS (`mip.py`).

The memory rows' Lagrangian dual is in `budget.py`; `solve`, the entry picking among these, in `solve.py`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from sbpc.passes.solver.width import elimination_order

MAX_TABLE = 2_000_000
"""The largest table elimination builds before handing the problem to HiGHS."""
MIP_GAP = 1e-9
"""HiGHS's relative gap: the µs scale's rounding only, so that gap 0 is a proof (SPEC §9)."""


@dataclass
class MemoryRow:
    """Σ over the terms `terms` (indices into `FactorProblem.memory_terms`) of bytes[v][c_v] +
    `constant` ≤ budget: one program point."""

    constant: float
    terms: list[int]


@dataclass(frozen=True)
class CoverForm:
    """A shared boxing (`passes/infer_sbp/boxings.py`) as a factor's structure, for a compact MIP
    and exact pricing: its value is Σ over targets t needed of price[rows[c_source], t] (row 0
    without a source), where t is needed if `fixed[t]` or some consumer v's choice c has
    needs[v][c, t] — each distinct target paid once, however many consumers need it."""

    source: int | None
    rows: np.ndarray
    price: np.ndarray
    needs: dict[int, np.ndarray]
    fixed: np.ndarray


def cover_targets(form: CoverForm, choice: list[int], without: int | None = None) -> np.ndarray:
    """Whether each target is needed under `choice` (optionally leaving consumer `without` out)."""
    needed = form.fixed.copy()
    for v, needs in form.needs.items():
        if v != without:
            needed |= needs[choice[v]]
    return needed


def cover_row(form: CoverForm, choice: list[int]) -> np.ndarray:
    """The price of each target from the producer's class under `choice`."""
    return form.price[form.rows[0 if form.source is None else choice[form.source]]]


def cover_value(form: CoverForm, choice: list[int]) -> float:
    """A `CoverForm`'s value under `choice`: one price per distinct target needed."""
    return float(cover_row(form, choice) @ cover_targets(form, choice))


def cover_marginal(form: CoverForm, v: int, choice: list[int]) -> np.ndarray:
    """Per choice of consumer v, the price of the targets it needs that no other use does."""
    return form.needs[v].astype(float) @ (cover_row(form, choice) * ~cover_targets(form, choice, without=v))


def cover_table(form: CoverForm) -> np.ndarray:
    """A `CoverForm` tabulated: axes the producer's choices (none without one), then each
    consumer's in ascending order. Consumers' choices with equal needs are one class until the end."""
    consumers = sorted(form.needs)
    needed = form.fixed.reshape((1,) * len(consumers) + (-1,))
    ids = []
    for axis, v in enumerate(consumers):
        classes, of = np.unique(form.needs[v], axis=0, return_inverse=True)
        shape = [1] * len(consumers) + [len(form.fixed)]
        shape[axis] = len(classes)
        needed = needed | classes.reshape(shape)
        ids.append(of.reshape(-1))
    table = np.moveaxis(needed.astype(float) @ form.price.T, -1, 0)  # (producer class, consumer classes...)
    table = table[np.ix_(form.rows, *ids)]
    return table if form.source is not None else table[0]


@dataclass
class FactorProblem:
    """Domains are `len(unary[v])`; `pairs[(u, v)]` (u < v) has shape (k_u, k_v); each of
    `factors` is (scope, table): scope ≥ 3 ascending variables, table axes in scope order. Memory:
    terms (variable, bytes per choice), shared by the rows (program points) they are live at."""

    unary: list[np.ndarray]
    pairs: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    constant: float = 0.0
    memory_terms: list[tuple[int, np.ndarray]] = field(default_factory=list)
    memory: list[MemoryRow] = field(default_factory=list)
    factors: list[tuple[tuple[int, ...], np.ndarray]] = field(default_factory=list)
    forms: dict[int, CoverForm] = field(default_factory=dict)
    """Optional compact MIP forms of general factors, by index in `factors` (the table rules)."""
    covers: list[CoverForm] = field(default_factory=list)
    """Terms without a table, for HiGHS only (`solve_mip`, `value`): a factor too large to tabulate,
    given exactly by its form. Elimination cannot read them (`eliminate` refuses such a problem)."""

    def add_pair(self, u: int, v: int, table: np.ndarray) -> None:
        """Add a factor over (u, v) (parallel factors are summed)."""
        if u == v:
            self.unary[u] = self.unary[u] + np.diagonal(table)
            return
        if u > v:
            u, v, table = v, u, table.T
        found = self.pairs.get((u, v))
        self.pairs[u, v] = table if found is None else found + table

    def add_factor(self, scope: tuple[int, ...], table: np.ndarray, form: CoverForm | None = None) -> None:
        """Add a factor over distinct variables `scope` (table axes in that order): kept as a
        unary, a pair or a general factor by its size, its scope sorted; `form` is its structure
        for the MIP, if known."""
        order = sorted(range(len(scope)), key=scope.__getitem__)
        scope, table = tuple(scope[i] for i in order), np.transpose(table, order)
        if len(scope) == 0:
            self.constant += float(table)
        elif len(scope) == 1:
            self.unary[scope[0]] = self.unary[scope[0]] + table
        elif len(scope) == 2:
            self.add_pair(scope[0], scope[1], table)
        else:
            if form is not None:
                self.forms[len(self.factors)] = form
            self.factors.append((scope, table))

    def value(self, choice: list[int]) -> float:
        total = self.constant + sum(float(t[c]) for t, c in zip(self.unary, choice, strict=True))
        total += sum(float(t[choice[u], choice[v]]) for (u, v), t in self.pairs.items())
        total += sum(float(t[tuple(choice[w] for w in scope)]) for scope, t in self.factors)
        return total + sum(cover_value(form, choice) for form in self.covers)

    def floor(self) -> float:
        """A bound no plan is below: every term at its own minimum (cover prices are ≥ 0)."""
        tables = [*self.unary, *self.pairs.values(), *(t for _, t in self.factors)]
        return self.constant + sum(float(np.min(t)) for t in tables)

    def row_bytes(self, choice: list[int]) -> np.ndarray:
        """The bytes of every memory row under `choice`."""
        term = np.array([float(b[choice[v]]) for v, b in self.memory_terms])
        return np.array([row.constant + float(term[row.terms].sum()) for row in self.memory])

    def memory_peak(self, choice: list[int]) -> float:
        return float(self.row_bytes(choice).max()) if self.memory else 0.0

    def distinct_memory(self) -> list[MemoryRow]:
        """The memory rows without repeats (program points with the same constant and terms)."""
        seen: dict[tuple[object, ...], MemoryRow] = {}
        for row in self.memory:
            seen.setdefault((row.constant, *sorted(row.terms)), row)
        return list(seen.values())

    def restricted(self, keep: list[np.ndarray]) -> FactorProblem:
        """The same problem over the choices `keep[v]` of each variable v (choice i of the result
        is choice keep[v][i] here)."""

        def form(f: CoverForm) -> CoverForm:
            rows = f.rows if f.source is None else f.rows[keep[f.source]]
            return CoverForm(f.source, rows, f.price, {v: n[keep[v]] for v, n in f.needs.items()}, f.fixed)

        out = FactorProblem([u[k] for u, k in zip(self.unary, keep, strict=True)], constant=self.constant)
        out.pairs = {(u, v): t[np.ix_(keep[u], keep[v])] for (u, v), t in self.pairs.items()}
        out.factors = [(scope, t[np.ix_(*(keep[w] for w in scope))]) for scope, t in self.factors]
        out.forms = {i: form(f) for i, f in self.forms.items()}
        out.covers = [form(f) for f in self.covers]
        out.memory_terms = [(v, b[keep[v]]) for v, b in self.memory_terms]
        out.memory = self.memory
        return out


@dataclass
class Solution:
    choice: list[int]
    objective: float
    lower_bound: float
    solver: str
    solve_s: float

    @property
    def gap(self) -> float:
        """Relative gap between the objective and the bound (0 when proved optimal)."""
        if self.objective <= 0:
            return 0.0
        return max(0.0, (self.objective - self.lower_bound) / self.objective)


# --- Exact variable elimination ---

def _expand(scope: tuple[int, ...], table: np.ndarray, order: tuple[int, ...]) -> np.ndarray:
    """`table` over `scope` as an array broadcastable over `order` (a superset of scope)."""
    position = {v: i for i, v in enumerate(order)}
    perm = sorted(range(len(scope)), key=lambda i: position[scope[i]])
    moved = table.transpose(perm) if perm != list(range(len(scope))) else table
    placed = sorted(scope, key=position.__getitem__)
    shape = [1] * len(order)
    for v, n in zip(placed, moved.shape, strict=True):
        shape[position[v]] = n
    return moved.reshape(shape)


def eliminate(problem: FactorProblem, max_table: int = MAX_TABLE) -> Solution | None:
    """The exact optimum by variable elimination, or None if some table would exceed `max_table`."""
    started = time.perf_counter()
    done = _eliminate(problem, max_table)
    if done is None:
        return None
    steps = done[0]
    choice = [0] * len(problem.unary)
    for x, rest, best in reversed(steps):
        choice[x] = int(best[tuple(choice[w] for w in rest)]) if rest else int(best)
    objective = problem.value(choice)
    return Solution(choice, objective, objective, "elimination", time.perf_counter() - started)


def min_marginals(problem: FactorProblem, max_table: int = MAX_TABLE) -> list[np.ndarray] | None:
    """Per variable v and choice c, the least objective of any plan with v = c — for every variable
    at once: the elimination, then messages back down its cliques (min-sum belief propagation on
    the elimination's tree: a clique's min-marginal less what a factor it received brings is what
    the rest of the problem costs given that factor's scope). None if some table would exceed
    `max_table`."""
    done = _eliminate(problem, max_table, record=True)
    if done is None:
        return None
    _, constant, cliques, first_message = done
    sizes = [len(u) for u in problem.unary]
    outside: dict[int, np.ndarray] = {}
    marginals: list[np.ndarray] = [np.zeros(0)] * len(sizes)
    for x, order, consumed, produced, value in reversed(cliques):
        total = np.zeros(tuple(sizes[w] for w in order))
        for _, scope, table in consumed:
            total = total + _expand(scope, table, order)
        if produced is None:  # a root: the other components' optima are the rest
            total = total + (constant - value)
        else:
            total = total + _expand(order[:-1], outside.pop(produced), order)
        marginals[x] = total.min(axis=tuple(range(len(order) - 1))) if len(order) > 1 else total
        for fid, scope, table in consumed:
            if fid < first_message:
                continue  # a factor of the problem: nothing below it
            drop = tuple(i for i, w in enumerate(order) if w not in scope)
            kept = [w for w in order if w in scope]
            found = np.transpose(total.min(axis=drop) if drop else total, [kept.index(w) for w in scope])
            with np.errstate(invalid="ignore"):
                rest = found - table
            outside[fid] = np.where(np.isnan(rest), 0.0, rest)  # inf − inf: no plan there either way
    return marginals


Steps = list[tuple[int, tuple[int, ...], np.ndarray]]
"""Per eliminated variable, in order: it, the variables its argmin table is over, that table."""
Clique = tuple[int, tuple[int, ...], list[tuple[int, tuple[int, ...], np.ndarray]], int | None, float]
"""One elimination step for `min_marginals`: the variable, its table's axes (it last), the factors
added into it (id, scope, table), the id of the factor it left (None: a scalar, which follows)."""


def _eliminate(
    problem: FactorProblem, max_table: int, record: bool = False,
) -> tuple[Steps, float, list[Clique], int] | None:
    """Eliminate every variable: the steps, the optimum, and with `record` the cliques and the id
    of the first factor an elimination made."""
    if problem.covers:
        raise ValueError("elimination cannot read covers (factors without a table)")
    sizes = [len(u) for u in problem.unary]
    sequence = elimination_order(problem.unary, [*problem.pairs, *(f[0] for f in problem.factors)], max_table)
    if sequence is None:
        return None  # decided on the structure, before any table is built
    factors: dict[int, tuple[tuple[int, ...], np.ndarray]] = {}
    holding: list[set[int]] = [set() for _ in sizes]
    for v, table in enumerate(problem.unary):
        factors[v] = ((v,), np.asarray(table, dtype=float))
        holding[v].add(v)
    for scope, table in [*problem.pairs.items(), *problem.factors]:
        fid = len(factors)
        factors[fid] = (scope, np.asarray(table, dtype=float))
        for w in scope:
            holding[w].add(fid)
    first_message = next_id = len(factors)
    steps: Steps = []
    cliques: list[Clique] = []
    constant = problem.constant
    for x in sequence:
        order = (*sorted({w for fid in holding[x] for w in factors[fid][0]} - {x}), x)
        total: np.ndarray | None = None
        consumed = []
        for fid in holding[x]:
            scope, table = factors.pop(fid)
            if record:
                consumed.append((fid, scope, table))
            part = _expand(scope, table, order)
            total = part if total is None else total + part
            for w in scope:
                if w != x:
                    holding[w].discard(fid)
        assert total is not None
        total = np.broadcast_to(total, tuple(sizes[v] for v in order))
        best = total.argmin(axis=-1)
        reduced = np.take_along_axis(total, best[..., None], axis=-1)[..., 0]
        rest = order[:-1]
        steps.append((x, rest, best))
        if record:
            cliques.append((x, order, consumed, next_id if rest else None, 0.0 if rest else float(reduced)))
        if rest:
            factors[next_id] = (rest, reduced)
            for w in rest:
                holding[w].add(next_id)
            next_id += 1
        else:
            constant += float(reduced)
    return steps, constant, cliques, first_message
