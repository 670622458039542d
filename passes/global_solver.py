"""Min-sum solvers for `infer-sbp{rule=global}`: pick one choice per variable minimising
Σ unary[v][c_v] + Σ pair[u, v][c_u, c_v] + Σ factor[scope][c_scope], optionally under linear
memory budgets. General factors (scope ≥ 3) price a value shared by several consumers (one boxing
per distinct target, `passes/global_problem.py`).

* `eliminate`: exact min-sum variable elimination (dynamic programming on the factor graph).
  Each step removes the variable whose elimination builds the smallest table (greedy min-size
  order): all factors holding it are added into one table over it and its neighbours, minimised
  over it (the argmin kept for the way back). OneFlow's degree-2 node elimination and parallel-edge
  merge (reference/oneflow.md §7) are the degree-2 and two-factors-one-scope cases; a chain or a
  tree eliminates with tables of two variables, a transformer block's residuals with three. When
  the next table would exceed `max_table` entries it gives up (returns None).
* `solve_mip`: the same problem as a mixed-integer program for HiGHS: one-hot binaries per
  variable, and per pair factor continuous pair variables over the factor's distinct rows and
  columns (a producer's candidates with one output SBP give one row) tied to the one-hots by
  marginal constraints (Alpa's formulation, compressed); a general factor likewise, one
  continuous variable per cell of its table compressed along every axis (choices whose slices
  are equal are one class), tied to the one-hots by one marginal row per axis class — with the
  one-hots integral the only feasible cell is the chosen one, so it is exact. A factor with a
  `CoverForm` (a shared boxing: Σ over needed targets of price[producer class, target]) is
  written compactly instead: y[k, t] ("class k boxed to t"), priced, bounded below by every
  consumer's pair marginals (producer class k, a need class needing t) — costs ≥ 0 push y down
  to the OR over consumers, exact at integral one-hots, and as tight per consumer as a pair. With a budget, one row per
  memory constraint. It reports the incumbent, HiGHS's dual bound and the gap.
* `lagrangian`: the memory rows relaxed with multipliers (a row's bytes are a sum of unary terms,
  so each relaxed problem is solved exactly by `eliminate`): a lower bound, and the plans within
  budget met on the way (subgradient steps, then the best multipliers scaled up until one fits).
* `solve`: elimination; under a budget the unconstrained optimum if it fits, else `lagrangian` and,
  if a gap is left, HiGHS started from its plan; the better plan and the larger bound are kept.
* `min_budget`: the smallest budget any choice fits (a min-max MIP), for the infeasible-`mem` error.

Costs are seconds; the MIP works in microseconds so that HiGHS's absolute tolerances are small.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

import numpy as np

MAX_TABLE = 2_000_000
MIP_GAP = 1e-4
"""HiGHS's relative gap under a memory budget (without one, and in tests, it runs to 1e-9)."""
"""The largest table elimination builds before handing the problem to HiGHS."""


@dataclass
class MemoryRow:
    """Σ over the terms `terms` (indices into `FactorProblem.memory_terms`) of bytes[v][c_v] +
    `constant` ≤ budget: one program point."""

    constant: float
    terms: list[int]


@dataclass(frozen=True)
class CoverForm:
    """A general factor's structure, for a compact MIP: its value is Σ over targets t needed of
    price[rows[c_source], t] (row 0 without a source), where t is needed if `fixed[t]` or some
    consumer v's choice c has needs[v][c, t]."""

    source: int | None
    rows: np.ndarray
    price: np.ndarray
    needs: dict[int, np.ndarray]
    fixed: np.ndarray


def cover_value(form: CoverForm, choice: list[int]) -> float:
    """A `CoverForm`'s value under `choice`: one price per distinct target needed."""
    needed = form.fixed.copy()
    for v, needs in form.needs.items():
        needed |= needs[choice[v]]
    row = form.price[form.rows[0 if form.source is None else choice[form.source]]]
    return float(row @ needed)


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

    def row_bytes(self, choice: list[int]) -> np.ndarray:
        """The bytes of every memory row under `choice`."""
        term = np.array([float(b[choice[v]]) for v, b in self.memory_terms])
        return np.array([row.constant + float(term[row.terms].sum()) for row in self.memory])

    def memory_peak(self, choice: list[int]) -> float:
        return float(self.row_bytes(choice).max()) if self.memory else 0.0


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


# ---------------------------------------------------------------------------
# Exact variable elimination
# ---------------------------------------------------------------------------


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
    if problem.covers:
        raise ValueError("elimination cannot read covers (factors without a table)")
    started = time.perf_counter()
    sizes = [len(u) for u in problem.unary]
    factors: dict[int, tuple[tuple[int, ...], np.ndarray]] = {}
    holding: list[set[int]] = [set() for _ in sizes]
    neighbours: list[set[int]] = [set() for _ in sizes]
    for v, table in enumerate(problem.unary):
        factors[v] = ((v,), np.asarray(table, dtype=float))
        holding[v].add(v)
    for (u, v), table in problem.pairs.items():
        fid = len(factors)
        factors[fid] = ((u, v), np.asarray(table, dtype=float))
        holding[u].add(fid)
        holding[v].add(fid)
        neighbours[u].add(v)
        neighbours[v].add(u)
    for scope, table in problem.factors:
        fid = len(factors)
        factors[fid] = (scope, np.asarray(table, dtype=float))
        for w in scope:
            holding[w].add(fid)
            neighbours[w].update(r for r in scope if r != w)
    next_id = len(factors)

    def cost(v: int) -> int:
        n = sizes[v]
        for w in neighbours[v]:
            n *= sizes[w]
        return n

    heap = [(cost(v), v) for v in range(len(sizes))]
    heapq.heapify(heap)
    done = [False] * len(sizes)
    steps: list[tuple[int, tuple[int, ...], np.ndarray]] = []
    constant = problem.constant
    while heap:
        c, x = heapq.heappop(heap)
        if done[x] or c != cost(x):
            continue  # stale entry
        if c > max_table:
            return None
        order = (*sorted(neighbours[x]), x)
        total: np.ndarray | None = None
        for fid in holding[x]:
            scope, table = factors.pop(fid)
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
        done[x] = True
        if rest:
            factors[next_id] = (rest, reduced)
            for w in rest:
                holding[w].add(next_id)
                neighbours[w].discard(x)
                neighbours[w].update(r for r in rest if r != w)
            next_id += 1
            for w in rest:
                heapq.heappush(heap, (cost(w), w))
        else:
            constant += float(reduced)
    choice = [0] * len(sizes)
    for x, rest, best in reversed(steps):
        choice[x] = int(best[tuple(choice[w] for w in rest)]) if rest else int(best)
    objective = problem.value(choice)
    return Solution(choice, objective, objective, "elimination", time.perf_counter() - started)


# ---------------------------------------------------------------------------
# HiGHS
# ---------------------------------------------------------------------------

US = 1e6
"""The MIP's cost unit: microseconds."""


class _Model:
    """Columns and rows collected as arrays, passed to HiGHS at once."""

    def __init__(self) -> None:
        self.costs: list[float] = []
        self.upper: list[float] = []
        self.integer: list[int] = []
        self.rows: list[tuple[float, float, list[int], list[float]]] = []

    def columns(self, costs: np.ndarray, integer: bool) -> int:
        first = len(self.costs)
        self.costs.extend(float(c) for c in costs)
        self.upper.extend([1.0] * len(costs))
        if integer:
            self.integer.extend(range(first, first + len(costs)))
        return first

    def row(self, lower: float, upper: float, index: list[int], value: list[float]) -> None:
        self.rows.append((lower, upper, index, value))

    def solve(
        self, time_limit: float, rel_gap: float, start: dict[int, float] | None = None,
    ) -> tuple[str, list[float], float, float]:
        import highspy

        h = highspy._core._Highs()  # the plain core: `highspy.Highs()` prints a banner on stdout
        h.setOptionValue("output_flag", False)
        h.setOptionValue("log_to_console", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("time_limit", float(time_limit))
        h.setOptionValue("mip_rel_gap", float(rel_gap))
        h.setOptionValue("presolve", "off")  # measured: 5x faster on these models (presolve dominated)
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
        costs = np.nan_to_num(np.asarray(table, dtype=float) * US) if with_costs else np.zeros(len(table))
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
                model.costs[starts[u] + c] += float(classes.flat[0]) * US
            continue
        a, b = classes.shape
        first = model.columns(classes.reshape(-1) * US, integer=False)
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
                model.costs[starts[u] + c] += float(classes.flat[0]) * US
            continue
        first = model.columns(classes.reshape(-1) * US, integer=False)
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
        one = model.columns(np.array([float(form.price[0, fixed].sum()) * US]), integer=False)
        model.row(1.0, 1.0, [one], [1.0])
        ones_of = [[one]]
    else:
        ones_of = [[starts[form.source] + int(c) for c in np.flatnonzero(form.rows == k)]
                   for k in range(len(form.price))]
        for k, members in enumerate(ones_of):
            for c in members:
                model.costs[c] += float(form.price[k, fixed].sum()) * US
    open_targets = [t for t in range(len(form.fixed)) if not form.fixed[t]]
    y: dict[tuple[int, int], int] = {}
    for k in range(len(form.price)):
        for t in open_targets:
            if form.price[k, t] > 0:
                y[k, t] = model.columns(np.array([float(form.price[k, t]) * US]), integer=False)
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
    seen: set[tuple[object, ...]] = set()
    for row in problem.memory:
        key = (row.constant, *sorted(row.terms))
        if key in seen:
            continue
        seen.add(key)
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
    problem: FactorProblem, budget: float | None = None, time_limit: float = 60.0, rel_gap: float = 1e-9,
    start: list[int] | None = None,
) -> Solution | None:
    """The problem (under `budget` bytes at each memory row) by HiGHS, from the plan `start` if
    given; None if infeasible."""
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
    status, solution, _, bound = model.solve(time_limit, rel_gap, hint)
    if not solution:
        if status == "Infeasible":
            return None
        raise RuntimeError(f"HiGHS found no solution ({status})")
    choice = _decode(problem, starts, solution)
    objective = problem.value(choice)
    lower = min(objective, (bound / US + problem.constant) if np.isfinite(bound) else objective)
    if status == "Optimal" and objective - lower <= rel_gap * abs(objective):
        lower = objective  # proved optimal to HiGHS's tolerance: the rest is rounding of the µs scale
    return Solution(choice, objective, lower, "highs", time.perf_counter() - started)


def min_budget(problem: FactorProblem, time_limit: float = 60.0) -> float:
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


def lagrangian(
    problem: FactorProblem, budget: float, max_table: int = MAX_TABLE, iterations: int = 60, rel_gap: float = 1e-6,
) -> tuple[Solution | None, float]:
    """Lagrangian relaxation of the memory rows, each relaxed problem solved exactly by elimination:
    min f(c) + Σ_r λ_r (bytes_r(c) - budget) is a lower bound for every λ ≥ 0 (a row's bytes are a
    sum of unary terms, so the relaxed problem keeps its structure); λ follows Polyak subgradient
    steps. Returns the best plan within budget met on the way (None if none) and the best bound."""
    started = time.perf_counter()
    terms, rows = problem.memory_terms, problem.memory
    incidence = np.zeros((len(rows), len(terms)))
    for r, row in enumerate(rows):
        incidence[r, row.terms] = 1.0
    consts = np.array([row.constant for row in rows])
    lam = np.zeros(len(rows))
    best: list[int] | None = None
    best_value, bound = np.inf, -np.inf
    theta, stall = 2.0, 0
    best_lam: np.ndarray | None = None

    def relax(lam: np.ndarray) -> Solution | None:
        weights = lam @ incidence
        unary = list(problem.unary)
        for k in np.flatnonzero(weights):
            v, b = terms[k]
            unary[v] = unary[v] + weights[k] * b
        return eliminate(FactorProblem(unary, problem.pairs, problem.constant + float(lam @ (consts - budget)),
                                       factors=problem.factors), max_table)

    for _ in range(iterations):
        found = relax(lam)
        if found is None:
            break
        if found.objective > bound * (1 + 1e-12) + 1e-18:
            bound, stall, best_lam = found.objective, 0, lam
        else:
            stall += 1
            if stall >= 4:
                theta, stall = theta / 2, 0
        excess = problem.row_bytes(found.choice) - budget
        if excess.max() <= 0:
            value = problem.value(found.choice)
            if value < best_value:
                best, best_value = found.choice, value
        if best is not None and best_value - bound <= rel_gap * abs(best_value):
            break
        direction = np.where((lam > 0) | (excess > 0), excess, 0.0)
        norm = float(direction @ direction)
        if norm == 0:
            break  # λ is optimal for this relaxation
        target = best_value if best is not None else found.objective + abs(found.objective) * 0.5 + 1e-12
        lam = np.maximum(0.0, lam + theta * (target - found.objective) / norm * direction)
    if best_lam is not None and (best is None or best_value - bound > rel_gap * abs(best_value)):
        # The multipliers of the best bound, scaled up until the relaxed plan fits: a primal
        # heuristic along the path of plans the relaxation trades memory for time on.
        for scale in (1.05, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 100.0):
            found = relax(best_lam * scale)
            if found is None:
                break
            if problem.memory_peak(found.choice) <= budget:
                value = problem.value(found.choice)
                if value < best_value:
                    best, best_value = found.choice, value
                break
    elapsed = time.perf_counter() - started
    if best is None:
        return None, bound
    return Solution(best, best_value, min(bound, best_value), "lagrangian", elapsed), bound


def solve(
    problem: FactorProblem, budget: float | None = None, max_table: int = MAX_TABLE, time_limit: float = 60.0,
) -> Solution | None:
    """The optimum, or a plan with a proved bound (None: no plan fits `budget`).

    Without a budget: exact elimination, HiGHS if it gets too wide. With one: the unconstrained
    optimum if it fits (exact); else the Lagrangian relaxation, and HiGHS (time-limited) when that
    leaves a gap or finds no plan within budget; the better plan and the larger bound are kept."""
    started = time.perf_counter()
    exact = eliminate(problem, max_table)
    if exact is not None and (budget is None or problem.memory_peak(exact.choice) <= budget):
        return exact
    if budget is None:
        return solve_mip(problem, None, time_limit)
    relaxed, bound = lagrangian(problem, budget, max_table) if exact is not None else (None, -np.inf)
    if relaxed is not None and relaxed.gap <= 1e-6:
        relaxed.solve_s = time.perf_counter() - started
        return relaxed
    mip = solve_mip(problem, budget, time_limit, MIP_GAP, None if relaxed is None else relaxed.choice)
    if mip is None:
        return relaxed
    if relaxed is not None and relaxed.objective < mip.objective:
        mip.choice, mip.objective = relaxed.choice, relaxed.objective
    mip.lower_bound = min(mip.objective, max(mip.lower_bound, bound))
    mip.solver = "lagrangian+highs" if relaxed is not None else "highs"
    mip.solve_s = time.perf_counter() - started
    return mip
