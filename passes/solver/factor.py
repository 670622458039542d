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
* `solve_mip`: the same problem as a mixed-integer program for HiGHS: one-hot binaries per
  variable, and per pair factor continuous pair variables over the factor's distinct rows and
  columns (a producer's candidates with one output SBP give one row) tied to the one-hots by
  marginal constraints (Alpa's formulation, compressed); a general factor likewise, one
  continuous variable per cell of its table compressed along every axis (choices whose slices
  are equal are one class), tied to the one-hots by one marginal row per axis class — with the
  one-hots integral the only feasible cell is the chosen one, so it is exact. A `CoverForm` factor
  (a shared boxing) is written compactly instead: y[k, t] ("class k boxed to t"), priced, bounded
  below by every consumer's pair marginals — exact at integral one-hots. With a budget, one row
  per memory constraint. It reports the incumbent, HiGHS's dual bound and the gap.
* `min_budget`: the smallest budget any choice fits (a min-max MIP), for the infeasible-`mem` error.

The memory rows' Lagrangian dual is in `budget.py`; `solve`, the entry picking among these, in `solve.py`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sbpc.dialects.units import US_PER_SECOND
from sbpc.passes.solver.width import elimination_order

MAX_TABLE = 2_000_000
"""The largest table elimination builds before handing the problem to HiGHS."""
MIP_GAP = 1e-9
"""HiGHS's relative gap: the µs scale's rounding only, so that gap 0 is a proof (SPEC §9)."""
MIP_MAX_NODES = 10_000
"""HiGHS's branch-and-bound node limit per MIP: a work limit, so that where it stops (and its plan)
is the same on every machine (the npu GPT stacks, L ≤ 48, need at most 21 nodes under a budget)."""
SIMPLEX_ITERATION_LIMIT = 1_000_000
"""HiGHS's simplex iteration limit per run: a work limit, likewise (the GPT stacks need ≤ 11,000)."""


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


# --- HiGHS ---

MIP_UNIT = US_PER_SECOND
"""The MIP's cost unit: costs arrive in seconds and HiGHS sees microseconds, so that its absolute
tolerances (1e-6 and above) stay below the differences between plans."""


def quiet_highs(time_limit: float | None = None) -> Any:
    """A HiGHS instance that prints nothing and repeats its runs: one thread (the machine is shared,
    and a parallel search's path depends on timing), a fixed random seed, work limits
    (`MIP_MAX_NODES`, `SIMPLEX_ITERATION_LIMIT`), and a wall-clock limit only if `time_limit`
    (seconds) is given."""
    import highspy

    h = highspy._core._Highs()  # the plain core: `highspy.Highs()` prints a banner on stdout
    h.setOptionValue("output_flag", False)
    h.setOptionValue("log_to_console", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    h.setOptionValue("mip_max_nodes", MIP_MAX_NODES)
    h.setOptionValue("simplex_iteration_limit", SIMPLEX_ITERATION_LIMIT)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    return h


class _Model:
    """Columns and rows collected as arrays, passed to HiGHS at once."""

    def __init__(self) -> None:
        self.costs: list[float] = []
        self.upper: list[float] = []
        self.integer: list[int] = []
        self.rows: list[tuple[float, float, list[int], list[float]]] = []

    def columns(self, costs: np.ndarray, integer: bool) -> int:
        first = len(self.costs)
        forbidden = np.isposinf(costs)  # a forbidden choice or pair (sbp-solve's infinite costs): fixed at 0
        self.costs.extend(0.0 if f else float(c) for c, f in zip(costs, forbidden, strict=True))
        self.upper.extend(0.0 if f else 1.0 for f in forbidden)
        if integer:
            self.integer.extend(range(first, first + len(costs)))
        return first

    def row(self, lower: float, upper: float, index: list[int], value: list[float]) -> None:
        self.rows.append((lower, upper, index, value))

    def solve(
        self, time_limit: float | None, rel_gap: float, start: dict[int, float] | None = None,
        presolve: bool = False,
    ) -> tuple[str, list[float], float, float]:
        h = quiet_highs(time_limit)
        h.setOptionValue("mip_rel_gap", float(rel_gap))
        # Measured: off is 5x faster on whole problems, on after reduced-cost fixing 50x (GPT L=24: 1.2 s, not 68).
        h.setOptionValue("presolve", "on" if presolve else "off")
        n = len(self.costs)
        h.addCols(n, np.array(self.costs), np.zeros(n), np.array(self.upper), 0,
                  np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        if self.integer:
            idx = np.array(self.integer, dtype=np.int32)
            h.changeColsIntegrality(len(idx), idx, np.ones(len(idx), dtype=np.uint8))
        if self.rows:
            starts, indices, values = [], [], []
            for _, _, index, value in self.rows:
                starts.append(len(indices))
                indices.extend(index)
                values.extend(value)
            h.addRows(len(self.rows), np.array([r[0] for r in self.rows]), np.array([r[1] for r in self.rows]),
                      len(indices), np.array(starts, np.int32), np.array(indices, np.int32), np.array(values))
        if start:  # a partial solution (the one-hots of a known plan): HiGHS completes it
            h.setSolution(len(start), np.array(list(start), np.int32), np.array(list(start.values())))
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        info = h.getInfo()
        solution = list(h.getSolution().col_value) if info.primal_solution_status else []
        return status, solution, float(info.objective_function_value), float(info.mip_dual_bound)


def _one_hots(model: _Model, problem: FactorProblem, with_costs: bool) -> list[int]:
    starts = []
    for table in problem.unary:
        costs = np.zeros(len(table))
        if with_costs:
            costs = np.nan_to_num(np.asarray(table, dtype=float) * MIP_UNIT, posinf=np.inf)
        first = model.columns(costs, integer=True)
        starts.append(first)
        model.row(1.0, 1.0, list(range(first, first + len(table))), [1.0] * len(table))
    return starts


def _pair_rows(model: _Model, problem: FactorProblem, starts: list[int]) -> None:
    for (u, v), table in problem.pairs.items():
        rows, row_of = np.unique(table, axis=0, return_inverse=True)
        classes, col_of = np.unique(rows, axis=1, return_inverse=True)  # (row class, column class)
        row_of, col_of = row_of.reshape(-1), col_of.reshape(-1)
        if classes.size == 1:  # a constant factor: on u's one-hots, which sum to 1
            for c in range(len(problem.unary[u])):
                model.costs[starts[u] + c] += float(classes.flat[0]) * MIP_UNIT
            continue
        a, b = classes.shape
        first = model.columns(classes.reshape(-1) * MIP_UNIT, integer=False)
        for i in range(a):  # Σ_B y[i, B] = Σ_{c in row class i} x_u[c]
            members = [starts[u] + c for c in np.flatnonzero(row_of == i)]
            model.row(0.0, 0.0, [first + i * b + j for j in range(b)] + members, [1.0] * b + [-1.0] * len(members))
        for j in range(b):
            members = [starts[v] + c for c in np.flatnonzero(col_of == j)]
            model.row(0.0, 0.0, [first + i * b + j for i in range(a)] + members, [1.0] * a + [-1.0] * len(members))


def _factor_rows(model: _Model, problem: FactorProblem, starts: list[int]) -> None:
    """General factors: one column per cell of the class-compressed table, one marginal row per
    axis class (Σ of its cells = Σ of the one-hots of its choices)."""
    for form in problem.covers:
        _cover_rows(model, form, starts)
    for i, (scope, table) in enumerate(problem.factors):
        form = problem.forms.get(i)
        if form is not None:
            _cover_rows(model, form, starts)
            continue
        classes = np.asarray(table, dtype=float)
        members: list[np.ndarray] = []
        for axis in range(len(scope)):
            moved = np.moveaxis(classes, axis, 0)
            rows, of = np.unique(moved.reshape(moved.shape[0], -1), axis=0, return_inverse=True)
            classes = np.moveaxis(rows.reshape(-1, *moved.shape[1:]), 0, axis)
            members.append(of.reshape(-1))
        if classes.size == 1:  # constant: on the first variable's one-hots, which sum to 1
            u = scope[0]
            for c in range(len(problem.unary[u])):
                model.costs[starts[u] + c] += float(classes.flat[0]) * MIP_UNIT
            continue
        first = model.columns(classes.reshape(-1) * MIP_UNIT, integer=False)
        cells = np.arange(classes.size).reshape(classes.shape)
        for axis, (v, of) in enumerate(zip(scope, members, strict=True)):
            for k in range(classes.shape[axis]):
                ones = [starts[v] + c for c in np.flatnonzero(of == k)]
                index = [first + int(i) for i in np.take(cells, k, axis=axis).reshape(-1)]
                model.row(0.0, 0.0, index + ones, [1.0] * len(index) + [-1.0] * len(ones))


def _cover_rows(model: _Model, form: CoverForm, starts: list[int]) -> None:
    """A `CoverForm` factor. y[k, t] ≥ (producer in class k and consumer v needs t) for every
    consumer v, through v's pair marginals q[k, j] over (producer class, v's need class) — Alpa's
    tight pair form — and y priced price[k, t]: at integral one-hots the smallest y is the OR over
    consumers, so the cost is one boxing per distinct target. A target a `to_global` needs is paid
    on the producer's one-hots directly (without a producer: a constant, held by z = 1)."""
    fixed = np.flatnonzero(form.fixed)
    if form.source is None:
        one = model.columns(np.array([float(form.price[0, fixed].sum()) * MIP_UNIT]), integer=False)
        model.row(1.0, 1.0, [one], [1.0])
        ones_of = [[one]]
    else:
        ones_of = [[starts[form.source] + int(c) for c in np.flatnonzero(form.rows == k)]
                   for k in range(len(form.price))]
        for k, members in enumerate(ones_of):
            for c in members:
                model.costs[c] += float(form.price[k, fixed].sum()) * MIP_UNIT
    open_targets = [t for t in range(len(form.fixed)) if not form.fixed[t]]
    y: dict[tuple[int, int], int] = {}
    for k in range(len(form.price)):
        for t in open_targets:
            if form.price[k, t] > 0:
                y[k, t] = model.columns(np.array([float(form.price[k, t]) * MIP_UNIT]), integer=False)
    if not y:
        return
    for v, needs in form.needs.items():
        classes, of = np.unique(needs, axis=0, return_inverse=True)
        of = of.reshape(-1)
        a, b = len(ones_of), len(classes)
        q = model.columns(np.zeros(a * b), integer=False)
        for k, members in enumerate(ones_of):  # Σ_j q[k, j] = producer in class k
            model.row(0.0, 0.0, [q + k * b + j for j in range(b)] + members, [1.0] * b + [-1.0] * len(members))
        for j in range(b):  # Σ_k q[k, j] = consumer in need class j
            members = [starts[v] + int(c) for c in np.flatnonzero(of == j)]
            model.row(0.0, 0.0, [q + k * b + j for k in range(a)] + members, [1.0] * a + [-1.0] * len(members))
        for (k, t), col in y.items():
            needing = [q + k * b + j for j in np.flatnonzero(classes[:, t])]
            if needing:
                model.row(0.0, np.inf, [col, *needing], [1.0] + [-1.0] * len(needing))


def _memory_rows(model: _Model, problem: FactorProblem, starts: list[int], budget: float, slack: int | None) -> None:
    """One row per distinct memory row, in units of `scale` bytes (HiGHS's tolerances are absolute)."""
    scale = max(budget, max((row.constant for row in problem.memory), default=1.0), 1.0)
    for row in problem.distinct_memory():
        coefficient: dict[int, float] = {}
        for k in row.terms:
            v, b = problem.memory_terms[k]
            for c, x in enumerate(b):
                coefficient[starts[v] + c] = coefficient.get(starts[v] + c, 0.0) + float(x) / scale
        index, value = list(coefficient), list(coefficient.values())
        if slack is not None:
            index.append(slack)
            value.append(-1.0 / scale)
            model.row(-np.inf, -row.constant / scale, index, value)
        else:
            model.row(-np.inf, (budget - row.constant) / scale, index, value)


def _decode(problem: FactorProblem, starts: list[int], solution: list[float]) -> list[int]:
    return [int(np.argmax(solution[s : s + len(t)])) for s, t in zip(starts, problem.unary, strict=True)]


def solve_mip(
    problem: FactorProblem, budget: float | None = None, time_limit: float | None = None, rel_gap: float = 1e-9,
    start: list[int] | None = None, presolve: bool = False,
) -> Solution | None:
    """The problem (under `budget` bytes at each memory row) by HiGHS from the plan `start` if given,
    with presolve if `presolve`, within its work limits and `time_limit` s (building the model included);
    None if infeasible."""
    started = time.perf_counter()
    model = _Model()
    starts = _one_hots(model, problem, with_costs=True)
    _pair_rows(model, problem, starts)
    _factor_rows(model, problem, starts)
    if budget is not None:
        _memory_rows(model, problem, starts, budget, None)
    hint = None
    if start is not None:
        hint = {starts[v] + c: float(c == start[v]) for v, t in enumerate(problem.unary) for c in range(len(t))}
    left = None if time_limit is None else max(time_limit - (time.perf_counter() - started), 1.0)
    status, solution, _, bound = model.solve(left, rel_gap, hint, presolve)
    if not solution:
        if status == "Infeasible":
            return None
        if start is None or (budget is not None and problem.memory_peak(start) > budget):
            raise RuntimeError(f"HiGHS found no solution ({status})")
        # Stopped by a limit before a plan of its own: the plan it started from (one-hots come first).
        solution = [float(c == start[v]) for v, t in enumerate(problem.unary) for c in range(len(t))]
    choice = _decode(problem, starts, solution)
    objective = problem.value(choice)
    lower = min(objective, bound / MIP_UNIT + problem.constant if np.isfinite(bound) else problem.floor())
    if status == "Optimal" and objective - lower <= 1e-9 * abs(objective):
        lower = objective  # rounding of the µs scale only: never a looser `rel_gap` (SPEC §9)
    return Solution(choice, objective, lower, "highs", time.perf_counter() - started)


def min_budget(problem: FactorProblem, time_limit: float | None = None) -> float:
    """The smallest budget some choice fits: min over choices of the largest memory row."""
    model = _Model()
    starts = _one_hots(model, problem, with_costs=False)
    peak = model.columns(np.array([1.0]), integer=False)
    model.upper[peak] = np.inf
    _memory_rows(model, problem, starts, 0.0, peak)
    status, solution, _, _ = model.solve(time_limit, 1e-9)
    if not solution:
        raise RuntimeError(f"HiGHS found no solution ({status})")
    return problem.memory_peak(_decode(problem, starts, solution))
