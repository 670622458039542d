"""`infer-sbp{rule=global mem=…}`: the search under a memory budget (SPEC §3.1).

* `lagrangian`: the memory rows' Lagrangian dual, by Dantzig–Wolfe column generation. The master
  LP (HiGHS) mixes the plans met so far — min Σ θ_j cost_j with Σ θ_j bytes_j ≤ budget at every
  distinct memory row and Σ θ_j = 1 — and its row duals λ price the bytes of the next pricing
  problem: min cost + λ·bytes, solved exactly by `eliminate` (a row's bytes are unary terms, so
  the structure is kept). Every pricing value minus λ·budget is a lower bound; the method stops
  when the master's value meets the best of them (the dual optimum) or at its limits. The duals
  are smoothed toward the best multipliers so far (Wentges) — measured on the GPT stack: the dual
  optimum in ~20 pricings, where Polyak subgradient steps stalled 1–2 % below it after 600.
* `crossover`, the primal heuristic: the master's optimum mixes plans fractionally (typically one
  layer "option" against another, the knapsack the budget poses); splicing two plans — one's
  choices before a program point, the other's after — over every point at once (difference arrays
  of the objective and of every memory row along program order) gives the integral mixes, e.g.
  some layers' weights whole and the rest sharded. Plans within budget met by the pricing count too.
* `reduced_domains`, the proof: under the dual's prices every plan within budget costs at least
  its priced value, so a choice whose min-marginal there (`min_marginals`: elimination and one
  pass back) exceeds the best plan is in no better plan and is dropped. On the GPT stack with
  issue 13's budget (L=4) 202 of 4,644 choices stay, and HiGHS proves the optimum on them in
  seconds, where on the whole problem it took ~430 s.
* `close_gap`: fixing; on the choices left, the knapsack of the rows' shared terms
  (`knapsack.knapsack`: exact where the arguments' bytes are the budget's question, as on the
  `cpu` GPT stack, whose 24 identical layers HiGHS's branch and bound did not get through in
  180 s); then, if that proved nothing, HiGHS on what is left, from the best plan. `passes/solver/solve.py`
  (`solve`) runs these: the unconstrained optimum if it fits, else `lagrangian` and `close_gap`.

Every limit here is a work limit (pricings, HiGHS nodes and simplex iterations), so a plan is a
function of the problem alone; a wall-clock `time_limit` applies only where the caller gives one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from sbpc.passes.solver.factor import MAX_TABLE, MIP_GAP, FactorProblem, Solution, cover_value, eliminate, min_marginals
from sbpc.passes.solver.knapsack import knapsack
from sbpc.passes.solver.mip import MIP_UNIT, quiet_highs, solve_mip


def program_order(problem: FactorProblem) -> list[int]:
    """Variables in program order: in index order (ops are numbered as they appear), except that a
    variable with no bytes in a program point's row of its own (a free argument: its bytes count
    at every row) and with only later neighbours comes just before its first consumer."""
    rows = problem.memory
    everywhere = set.intersection(*(set(r.terms) for r in rows)) if rows else set()
    local = {problem.memory_terms[k][0] for r in rows for k in r.terms if k not in everywhere}
    neighbours: list[set[int]] = [set() for _ in problem.unary]
    scopes = [list(s) for s in problem.pairs] + [list(s) for s, _ in problem.factors]
    scopes += [[*([] if f.source is None else [f.source]), *f.needs] for f in problem.covers]
    for scope in scopes:
        for w in scope:
            neighbours[w].update(scope)
    key = []
    for v, near in enumerate(neighbours):
        near.discard(v)
        key.append(min(near) - 0.5 if near and v not in local and min(near) > v else float(v))
    return sorted(range(len(problem.unary)), key=key.__getitem__)


class _Rows:
    """The distinct memory rows as a matrix over the terms."""

    def __init__(self, problem: FactorProblem) -> None:
        self.problem = problem
        self.rows = problem.distinct_memory()
        self.incidence = np.zeros((len(self.rows), len(problem.memory_terms)))
        for r, row in enumerate(self.rows):
            np.add.at(self.incidence[r], row.terms, 1.0)  # a term may be listed twice
        self.constant = np.array([row.constant for row in self.rows])

    def term_bytes(self, choice: list[int]) -> np.ndarray:
        return np.array([float(b[choice[v]]) for v, b in self.problem.memory_terms])

    def bytes(self, choice: list[int]) -> np.ndarray:
        return self.constant + self.incidence @ self.term_bytes(choice)


def crossover(problem: FactorProblem, first: list[int], second: list[int], budget: float,
              order: list[int], rows: _Rows | None = None) -> tuple[float, list[int]] | None:
    """The best plan `first`'s choices before a point of `order` and `second`'s from it on, over
    every point, within `budget`; None if no split fits. Exact: the objective and every memory row
    as functions of the split point, from difference arrays."""
    rows = _Rows(problem) if rows is None else rows
    n = len(order)
    pos = np.empty(n, dtype=np.intp)
    pos[order] = np.arange(n)
    step = np.zeros(n + 2)  # step[p + 1]: the objective's change once the split passes point p

    def spliced(scope: tuple[int, ...]) -> tuple[list[list[int]], list[int]]:
        """The choices of `scope` as the split passes each of its points, and those points."""
        ranked = sorted(range(len(scope)), key=lambda i: pos[scope[i]])
        current = [second[w] for w in scope]
        mixes = [list(current)]
        for i in ranked:
            current[i] = first[scope[i]]
            mixes.append(list(current))
        return mixes, [int(pos[scope[i]]) for i in ranked]

    def add(values: list[float], points: list[int]) -> None:
        step[0] += values[0]
        for p, before, after in zip(points, values, values[1:], strict=False):
            step[p + 1] += after - before

    for v, table in enumerate(problem.unary):
        add([float(table[second[v]]), float(table[first[v]])], [int(pos[v])])
    for (u, v), table in problem.pairs.items():
        mixes, points = spliced((u, v))
        add([float(table[a, b]) for a, b in mixes], points)
    for scope, table in problem.factors:
        mixes, points = spliced(scope)
        add([float(table[tuple(m)]) for m in mixes], points)
    for form in problem.covers:
        scope = tuple(sorted({*([] if form.source is None else [form.source]), *form.needs}))
        mixes, points = spliced(scope)
        values = []
        for m in mixes:
            full = list(second)
            for w, c in zip(scope, m, strict=True):
                full[w] = c
            values.append(cover_value(form, full))
        add(values, points)
    objective = problem.constant + np.cumsum(step)[: n + 1]
    if rows.rows:
        # Only the terms the two plans give different bytes change a row along the way.
        changed = [(k, int(pos[v]) + 1, float(b[first[v]]) - float(b[second[v]]))
                   for k, (v, b) in enumerate(problem.memory_terms) if b[first[v]] != b[second[v]]]
        along = np.zeros((len(rows.rows), n + 1))
        for k, point, delta in changed:
            along[:, point] += delta * rows.incidence[:, k]
        peak = (rows.bytes(second)[:, None] + np.cumsum(along, axis=1)).max(axis=0)
        objective = np.where(peak <= budget, objective, np.inf)
    best = int(np.argmin(objective))
    if not np.isfinite(objective[best]):
        return None
    choice = [first[v] if pos[v] < best else second[v] for v in range(n)]
    return problem.value(choice), choice


@dataclass
class Dual:
    """What `lagrangian` found: the best plan within budget (None if none), the best lower bound,
    and the multipliers that gave it (per distinct memory row of `rows`)."""

    plan: Solution | None
    bound: float
    multipliers: np.ndarray
    rows: _Rows

    def priced(self, problem: FactorProblem, budget: float) -> FactorProblem:
        return _priced(problem, self.rows, self.multipliers, budget)


def _priced(problem: FactorProblem, rows: _Rows, lam: np.ndarray, budget: float) -> FactorProblem:
    """min cost + λ·(bytes − budget): every row's bytes priced into the unary terms (a lower bound
    on any plan within budget for λ ≥ 0)."""
    weights = lam @ rows.incidence
    unary = list(problem.unary)
    for k in np.flatnonzero(weights):
        v, b = problem.memory_terms[k]
        unary[v] = unary[v] + weights[k] * b
    return FactorProblem(unary, problem.pairs, problem.constant + float(lam @ (rows.constant - budget)),
                         factors=problem.factors)


def lagrangian(
    problem: FactorProblem, budget: float, max_table: int = MAX_TABLE, iterations: int = 100,
    rel_gap: float = 1e-6, smoothing: float = 0.5, time_limit: float | None = None,
) -> Dual:
    """The memory rows' Lagrangian dual by column generation (see the module's docstring), with
    the best plan within budget met (pricing plans and crossovers of the master's support). It
    stops at the dual optimum or after `iterations` pricings — a work limit, so the same problem
    gives the same result on any machine — or, only if `time_limit` is given, after that many
    seconds (which also bounds each master LP)."""
    started = time.perf_counter()
    rows = _Rows(problem)
    n_rows = len(rows.rows)
    scale = max(budget, 1.0)  # the master's rows in units of the budget (HiGHS's tolerances are absolute)
    order = program_order(problem)
    master = quiet_highs(time_limit)
    none = np.zeros(0, np.int32)
    master.addRows(n_rows, np.full(n_rows, -np.inf), np.full(n_rows, budget / scale), 0, none, none, np.zeros(0))
    master.addRows(1, np.ones(1), np.ones(1), 0, none, none, np.zeros(0))  # Σ θ = 1
    plans: list[list[int]] = []
    tried: set[tuple[int, int, tuple[int, ...] | None]] = set()
    best: tuple[float, list[int]] | None = None
    bound, best_lam, lam = -np.inf, np.zeros(n_rows), np.zeros(n_rows)

    def consider(found: tuple[float, list[int]] | None) -> None:
        nonlocal best
        if found is not None and (best is None or found[0] < best[0]):
            best = found

    for _ in range(iterations):
        priced = eliminate(_priced(problem, rows, lam, budget), max_table)
        if priced is None:
            break
        choice = priced.choice
        if priced.objective > bound:
            bound, best_lam = priced.objective, lam
        cost, used = problem.value(choice), rows.bytes(choice)
        if used.max() <= budget:
            consider((cost, choice))
        if not plans:  # an artificial column (no bytes, a prohibitive cost) keeps the master feasible
            master.addCol(1e3 * (abs(cost) + 1.0) * MIP_UNIT, 0.0, np.inf, 1, np.array([n_rows], np.int32), np.ones(1))
        plans.append(choice)
        master.addCol(cost * MIP_UNIT, 0.0, np.inf, n_rows + 1, np.arange(n_rows + 1, dtype=np.int32),
                      np.append(used / scale, 1.0))
        master.run()
        mixed = master.getInfo().objective_function_value / MIP_UNIT
        solution = master.getSolution()
        support = [j for j, t in enumerate(solution.col_value[1:]) if t > 1e-9]
        for a in support:  # splice each new pair of the master's plans, and each with the best plan
            for b in [*support, -1]:
                pair = (a, b, None if b >= 0 or best is None else tuple(best[1]))
                if a == b or (b < 0 and best is None) or pair in tried:
                    continue
                tried.add(pair)
                other = plans[b] if b >= 0 else best[1]  # type: ignore[index]
                consider(crossover(problem, plans[a], other, budget, order, rows))
                consider(crossover(problem, other, plans[a], budget, order, rows))
        done = best is not None and best[0] - bound <= rel_gap * abs(best[0])
        if done or mixed - bound <= rel_gap * abs(mixed):
            break
        if time_limit is not None and time.perf_counter() - started > time_limit:
            break
        dual = np.maximum(0.0, -np.array(solution.row_dual[:n_rows])) / scale / MIP_UNIT
        lam = smoothing * best_lam + (1 - smoothing) * dual
    plan = None
    if best is not None:
        plan = Solution(best[1], best[0], min(bound, best[0]), "lagrangian", time.perf_counter() - started)
    return Dual(plan, bound, best_lam, rows)


def reduced_domains(problem: FactorProblem, dual: Dual, budget: float, incumbent: float) -> list[np.ndarray] | None:
    """Reduced-cost fixing: per variable, the choices some plan within budget cheaper than
    `incumbent` may take — those whose min-marginal of the priced problem (a lower bound on every
    plan within budget making that choice) is not above it. An empty list somewhere proves that no
    plan beats `incumbent`. `problem` must be the one `dual` priced, or a lower bound of it; None
    when its elimination is too wide."""
    marginals = min_marginals(dual.priced(problem, budget))
    if marginals is None:
        return None
    # The priced values are the plan's seconds plus λ·bytes less λ·budget, terms far larger than
    # their difference: the tolerance follows those, so rounding never drops a choice of a tie.
    tolerance = 1e-9 * abs(incumbent) + 1e-12 * float(dual.multipliers @ (dual.rows.constant + budget))
    return [np.flatnonzero(m <= incumbent + tolerance) for m in marginals]


def solve_within(problem: FactorProblem, keep: list[np.ndarray], budget: float, time_limit: float | None,
                 start: list[int]) -> Solution | None:
    """HiGHS on the choices `keep` only (`reduced_domains`), from the plan `start` (which must be in
    them); the plan and bound in the full problem's choices. None: no plan there fits."""
    if any(len(k) == 0 for k in keep):
        return None
    where = [{int(c): i for i, c in enumerate(k)} for k in keep]
    inside = [where[v].get(c) for v, c in enumerate(start)]
    found = solve_mip(problem.restricted(keep), budget, time_limit, MIP_GAP,
                      None if any(i is None for i in inside) else inside, presolve=True)  # type: ignore[arg-type]
    if found is None:
        return None
    found.choice = [int(keep[v][i]) for v, i in enumerate(found.choice)]
    return found


def close_gap(
    exact: FactorProblem, budget: float | None, plan: tuple[list[int], float] | None, bound: float,
    dual: tuple[FactorProblem, Dual] | None, time_limit: float | None = None,
) -> tuple[tuple[list[int], float] | None, float, str]:
    """After the dual, if a gap above `MIP_GAP` is left: reduced-cost fixing by `dual` (the problem
    it priced, a lower bound of `exact`, and its result) where its elimination stays narrow, the
    shared terms' knapsack on the choices left (`_knapsack_within`), and if that proves nothing
    HiGHS on them — else HiGHS on the whole of `exact` — started from `plan` (choice, objective);
    `time_limit`: seconds for each of those runs, None for their work limits only.
    Returns the better plan (None: nothing fits), the larger bound and what ran ("" if nothing)."""
    if plan is not None and _met(plan[1], bound):
        return plan, plan[1], ""
    if plan is not None and plan[1] - bound <= MIP_GAP * abs(plan[1]):
        return plan, bound, ""
    keep = None
    if plan is not None and dual is not None:
        keep = reduced_domains(dual[0], dual[1], budget, plan[1])
    if keep is not None and plan is not None and budget is not None and dual is not None:
        if any(len(k) == 0 for k in keep):
            return plan, plan[1], "+fixing"  # every plan within budget costs at least `plan`
        plan, bound, ran = _knapsack_within(exact, dual[0], keep, budget, plan, bound, time_limit)
        if ran == "proved":
            return plan, bound, "+fixing+knapsack"
        found = solve_within(exact, keep, budget, time_limit, plan[0])
        ran = "+fixing+knapsack+highs" if ran else "+fixing+highs"
        # Every plan outside `keep` costs more than `plan`: the optimum is `plan` or found there.
        bound = max(bound, plan[1] if found is None else min(plan[1], found.lower_bound))
    else:
        found = solve_mip(exact, budget, time_limit, MIP_GAP, None if plan is None else plan[0])
        ran = "+highs"
        if found is not None:
            bound = max(bound, found.lower_bound)
    if found is not None and (plan is None or found.objective < plan[1]):
        plan = (found.choice, found.objective)
    return plan, bound, ran


def _knapsack_within(
    exact: FactorProblem, relaxed: FactorProblem, keep: list[np.ndarray], budget: float,
    plan: tuple[list[int], float], bound: float, time_limit: float | None,
) -> tuple[tuple[list[int], float], float, str]:
    """The knapsack of the rows' shared terms (`knapsack.knapsack`) on `relaxed` (a lower bound of
    `exact`) over the choices `keep` — where every plan cheaper than `plan` lies, so its bound, or
    `plan`'s cost if lower, bounds the optimum. Returns the better plan, the larger bound, and
    "proved" where they meet (the knapsack's plan fits and costs exactly its bound, or nothing in
    `keep` fits its relaxation: `plan` is the optimum), "ran" where they do not, "" where the
    knapsack gave no answer (no shared terms, or past its limits)."""
    found = knapsack(relaxed.restricted(keep), budget, None if time_limit is None else time.perf_counter() + time_limit)
    if found is None:
        return plan, bound, ""
    if found.choice is None:  # no plan in `keep` fits even the relaxation
        return plan, plan[1], "proved"
    bound = max(bound, min(plan[1], found.bound))
    if found.fits:
        choice = [int(keep[v][c]) for v, c in enumerate(found.choice)]
        value = exact.value(choice)
        if value < plan[1]:
            plan = (choice, value)
    if _met(plan[1], bound):
        return plan, plan[1], "proved"
    return plan, bound, "ran"


def _met(value: float, bound: float) -> bool:
    """Whether a plan of `value` meets `bound` to rounding (the bound's sums differ from the plan's
    in the last bits): then it is proved optimal."""
    return value - bound <= 1e-12 * abs(value)
