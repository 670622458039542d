"""The min-sum problems of `factor.py` solved by HiGHS, the mixed-integer programming solver.

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

HiGHS runs on one thread with a fixed seed and work limits, so its answers repeat.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from sbpc.dialects.units import US_PER_SECOND
from sbpc.passes.solver.factor import CoverForm, FactorProblem, Solution

MIP_MAX_NODES = 10_000
"""HiGHS's branch-and-bound node limit per MIP: a work limit, so that where it stops (and its plan)
is the same on every machine (the npu GPT stacks, L ≤ 48, need at most 21 nodes under a budget)."""
SIMPLEX_ITERATION_LIMIT = 1_000_000
"""HiGHS's simplex iteration limit per run: a work limit, likewise (the GPT stacks need ≤ 11,000)."""

MIP_UNIT = US_PER_SECOND
"""The MIP's cost unit: costs arrive in seconds and HiGHS sees microseconds, so that its absolute
tolerances (1e-6 and above) stay below the differences between plans."""


RENS_ZERO = 1e-6
"""An LP relaxation's value at or below which `solve_mip(rens=True)` takes a choice as ruled out."""


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

    def restrict_to_relaxation(self, time_limit: float | None, keep: dict[int, float] | None) -> float:
        """Bound at zero the integer columns the LP relaxation puts there (but those `keep` sets to
        one); the relaxation's value (-inf where it did not solve)."""
        integer, self.integer = self.integer, []
        try:
            status, solution, value, _ = self.solve(time_limit, 1.0)
        finally:
            self.integer = integer
        if status != "Optimal" or not solution:
            return -np.inf
        held = {c for c, x in (keep or {}).items() if x > 0.5}
        for c in integer:
            if solution[c] <= RENS_ZERO and c not in held:
                self.upper[c] = 0.0
        return value

    def solve(
        self, time_limit: float | None, rel_gap: float, start: dict[int, float] | None = None,
        presolve: bool = False,
    ) -> tuple[str, list[float], float, float]:
        h = self.highs(time_limit, presolve)
        h.setOptionValue("mip_rel_gap", float(rel_gap))
        if start:  # a partial solution (the one-hots of a known plan): HiGHS completes it
            h.setSolution(len(start), np.array(list(start), np.int32), np.array(list(start.values())))
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        info = h.getInfo()
        solution = list(h.getSolution().col_value) if info.primal_solution_status else []
        return status, solution, float(info.objective_function_value), float(info.mip_dual_bound)

    def highs(self, time_limit: float | None, presolve: bool) -> Any:
        """A HiGHS instance (`quiet_highs`) holding the model."""
        h = quiet_highs(time_limit)
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
        return h


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


def _built(problem: FactorProblem, budget: float | None) -> tuple[_Model, list[int], int]:
    """The problem as a model (with its memory rows under `budget`, if given): the model, each
    variable's first one-hot column, and the index of the first memory row."""
    model = _Model()
    starts = _one_hots(model, problem, with_costs=True)
    _pair_rows(model, problem, starts)
    _factor_rows(model, problem, starts)
    first = len(model.rows)
    if budget is not None:
        _memory_rows(model, problem, starts, budget, None)
    return model, starts, first


def _decode(problem: FactorProblem, starts: list[int], solution: list[float]) -> list[int]:
    return [int(np.argmax(solution[s : s + len(t)])) for s, t in zip(starts, problem.unary, strict=True)]


def solve_mip(
    problem: FactorProblem, budget: float | None = None, time_limit: float | None = None, rel_gap: float = 1e-9,
    start: list[int] | None = None, presolve: bool = False, rens: bool = False,
) -> Solution | None:
    """The problem (under `budget` bytes at each memory row) by HiGHS from the plan `start` if given,
    with presolve if `presolve`, within its work limits and `time_limit` s (building the model included);
    None if infeasible. `rens`: only over the choices the LP relaxation leaves above zero (and the
    start's), a heuristic (RENS, Berthold): its plan need not be the optimum, its bound is the LP's."""
    started = time.perf_counter()
    model, starts, _ = _built(problem, budget)
    hint = None
    if start is not None:
        hint = {starts[v] + c: float(c == start[v]) for v, t in enumerate(problem.unary) for c in range(len(t))}
    left = None if time_limit is None else max(time_limit - (time.perf_counter() - started), 1.0)
    relaxed = model.restrict_to_relaxation(left, hint) if rens else None
    status, solution, _, bound = model.solve(left, rel_gap, hint, presolve)
    if relaxed is not None and solution:  # the restricted MIP's own bound holds for it alone
        status, bound = "Feasible", relaxed
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


def memory_prices(problem: FactorProblem, budget: float, time_limit: float | None = None) -> list[np.ndarray] | None:
    """What each choice's memory costs at the LP relaxation's optimum under `budget` (in the
    problem's cost unit): per variable and choice, the sum over the memory rows of the row's shadow
    price times the choice's usage there. None where the LP did not solve to optimality. Where the
    memory binds, the rows that bind in the LP price the choices that fill them; the rest are free."""
    model, starts, first = _built(problem, budget)
    model.integer = []
    h = model.highs(time_limit, presolve=False)
    h.run()
    if h.modelStatusToString(h.getModelStatus()) != "Optimal":
        return None
    price = np.zeros(len(model.costs))
    for (_, _, index, value), dual in zip(model.rows[first:], h.getSolution().row_dual[first:], strict=True):
        if dual:  # ≤ 0 on a binding ≤ row: its usage is worth -dual a unit
            price[index] -= dual * np.array(value)
    return [price[s:s + len(t)] / MIP_UNIT for s, t in zip(starts, problem.unary, strict=True)]


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
