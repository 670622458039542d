"""`anytime`: a plan and a proved bound for a factor problem too wide for exact elimination.

`infer-sbp{rule=global}` solves a function exactly by elimination where its tables stay narrow; a
wide DAG (thousands of ops whose values fan out) is not, and HiGHS cannot finish even the root LP
of such a problem in minutes (gen_dag 2000: bound ~0 after 60 s). This is the contest solver's
method (`contest.py`, wave3 §4) on the global problem's pairwise twins:

* the bound: the lower-bound twin (a shared value's boxing split among the consumers that can
  need each target, `GlobalProblem.factors(lower=True, pairwise=True)`: at most the exact cost of
  every plan) as a `local.Graph`, its memory rows kept; `lagrange.lagrangian` prices the rows and
  bounds each priced pairwise problem by exact elimination where narrow, else min-sum diffusion —
  every such bound is a bound of the exact problem (weak duality, and twin ≤ exact); without a
  budget, min-sum diffusion on the twin while `split.ascend` moves each shared value's shares
  among its consumers toward the exact covers' LP (gen_dag 2000: bound 372.7 → 471.6 µs);
* the plans: without a budget, the best TRW-S decodings met on the way;
  under one, the relaxation's plans and relaxed answers with their prices; from each, the local
  search (`local.improve`: soft-then-hard memory, pair, tree and piece moves) on both twins, and
  every candidate polished on the exact problem (`Descent`: general factors and covers read as
  they are, one boxing per distinct target; coordinate descent, then `share_moves`, a shared
  value's consumers moved together) and priced exactly; the cheapest is searched again with the
  full rounds, then by exact windows (`neighbourhood.Neighbourhoods`: a dozen variables re-solved
  by elimination, the rest held). gen_dag 2000: the decodings' best, polished, 489.9 µs; the
  windows 472.8 µs, against the bound 472.3 µs (the exact covers' LP: 472.68 µs).

Work limits (the relaxation's iterations, the search's rounds) make the answer a function of the
problem; `deadline` only cuts it short.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from sbpc.dialects.units import US_PER_SECOND
from sbpc.passes.solver.factor import (
    CoverForm,
    FactorProblem,
    Solution,
    cover_marginal,
    cover_row,
    cover_targets,
    cover_value,
    eliminate,
)
from sbpc.passes.solver.lagrange import Messages, lagrangian, split_bound
from sbpc.passes.solver.local import Graph, improve
from sbpc.passes.solver.neighbourhood import Neighbourhoods
from sbpc.passes.solver.sharding import Rows
from sbpc.passes.solver.split import ascend
from sbpc.passes.solver.work import Stop, one_blas_thread

ROUNDS = 1000
"""Local-search rounds from the best start (a tenth from each other start): the primal's work limit.
gen_dag 2000 (whole `sbp-opt` process, session 27): at 300, 477.97 µs (gap 1.19 %) in 59.1 s; at 1,000,
472.80 µs (0.11 %) in 58.9 s, the exact windows after it shorter from a better plan; `--seed 1`: 6.31 % in
52.5 s at 300, 6.00 % in 58.0 s at 1,000."""
SHARE_SWEEPS = 5
"""The most sweeps of `Descent.share_moves` (each about 0.1 s at 2000 ops)."""
FIRST_SWEEPS = 40
"""Without memory rows: min-sum diffusion sweeps on the lower twin before `split.ascend` moves its
shares (then a few sweeps after each step): its decodings are the local search's starts."""


def pairwise_graph(problem: FactorProblem, budget: float | None) -> Graph:
    """`problem` (pairs only: no general factors or covers) as a `local.Graph` in microseconds,
    its distinct memory rows (bytes) as `Rows` when a budget is given."""
    if problem.factors or problem.covers:
        raise ValueError("pairwise_graph: the problem has factors of three or more variables")
    n = len(problem.unary)
    near: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(n)]
    for (u, v), table in sorted(problem.pairs.items()):
        near[u].append((v, table * US_PER_SECOND))
        near[v].append((u, table.T * US_PER_SECOND))
    unary = [np.asarray(u, dtype=float) * US_PER_SECOND for u in problem.unary]
    return Graph(unary, near, _rows(problem, budget), problem.constant * US_PER_SECOND)


def _rows(problem: FactorProblem, budget: float | None) -> Rows:
    """The distinct memory rows as `Rows`: per variable its rows and usage there, each row's
    per-variable minimum moved into its constant (one choice per variable)."""
    n = len(problem.unary)
    memory = problem.distinct_memory() if budget is not None else []
    usage: list[dict[int, np.ndarray]] = [{} for _ in range(n)]
    constant = np.array([row.constant for row in memory], dtype=float)
    for r, row in enumerate(memory):
        for k in row.terms:
            v, b = problem.memory_terms[k]
            have = usage[v].get(r)
            usage[v][r] = np.asarray(b, dtype=float) if have is None else have + b
    rows_of, usage_of = [], []
    for v in range(n):
        at = sorted(usage[v])
        table = np.array([usage[v][r] for r in at]).reshape(len(at), len(problem.unary[v]))
        base = table.min(axis=1) if len(at) else np.zeros(0)
        constant[at] += base
        rows_of.append(np.array(at, dtype=np.int64))
        usage_of.append(table - base[:, None])
    return Rows.from_dense(rows_of, usage_of, constant, float("inf") if budget is None else float(budget))


Exact = Callable[[list[np.ndarray]], tuple[float, np.ndarray] | None]


def _exact(problem: FactorProblem) -> Exact | None:
    """The priced pairwise problem by elimination, if narrow enough (else None: diffusion)."""
    if eliminate(FactorProblem(problem.unary, problem.pairs)) is None:
        return None
    pairs = {key: table * US_PER_SECOND for key, table in problem.pairs.items()}

    def solve(unary: list[np.ndarray]) -> tuple[float, np.ndarray] | None:
        found = eliminate(FactorProblem(unary, pairs))
        return None if found is None else (found.objective, np.array(found.choice))
    return solve


class Descent:
    """Coordinate descent on the exact problem (general factors and covers included): each
    variable in turn takes its cheapest choice given the others', within the memory rows; and
    moves of a shared value's consumers together (`share_moves`, over `shared`)."""

    def __init__(self, problem: FactorProblem, budget: float | None, shared: list[CoverForm] | None = None):
        self.problem = problem
        self.shared = shared or []
        n = len(problem.unary)
        self.pairs: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(n)]
        for (u, v), table in problem.pairs.items():
            self.pairs[u].append((v, table))
            self.pairs[v].append((u, table.T))
        self.factors: list[list[int]] = [[] for _ in range(n)]
        for i, (scope, _) in enumerate(problem.factors):
            for w in scope:
                self.factors[w].append(i)
        self.covers: list[list[int]] = [[] for _ in range(n)]
        for i, form in enumerate(problem.covers):
            for w in {*form.needs, *([] if form.source is None else [form.source])}:
                self.covers[w].append(i)
        self.rows = _rows(problem, budget)

    def local(self, v: int, choice: list[int]) -> np.ndarray:
        """The objective's terms that depend on v, for each of its choices (others as in `choice`),
        up to a constant in v's choice."""
        total = np.asarray(self.problem.unary[v], dtype=float).copy()
        for w, table in self.pairs[v]:
            total += table[:, choice[w]]
        for i in self.factors[v]:
            scope, table = self.problem.factors[i]
            index = tuple(slice(None) if w == v else choice[w] for w in scope)
            total += table[index]
        for i in self.covers[v]:
            form = self.problem.covers[i]
            if v == form.source and v not in form.needs:  # the producer: its class's price of what is needed
                total += form.price[form.rows] @ cover_targets(form, choice).astype(float)
                continue
            if v != form.source:  # a consumer: the targets only it adds (the rest does not depend on v)
                total += cover_marginal(form, v, choice)
                continue
            trial = list(choice)  # both ends of the value (not made by sbp programs): each choice priced
            for c in range(len(total)):
                trial[v] = c
                total[c] += cover_value(form, trial)
        return total

    def run(self, choice: list[int], sweeps: int = 20) -> list[int]:
        """Sweeps in variable order until no variable improves (or `sweeps` passes)."""
        choice, rows = list(choice), self.rows
        used = rows.of(np.array(choice))
        for _ in range(sweeps):
            moved = False
            for v in range(len(choice)):
                cost = self.local(v, choice)
                if len(rows.spans[v]):
                    cost = np.where(rows.fits(v, choice[v], used), cost, np.inf)
                best = int(np.argmin(cost))
                if cost[best] < cost[choice[v]] - 1e-12 * max(abs(cost[choice[v]]), 1e-12):
                    rows.move(v, choice[v], best, used)
                    choice[v], moved = best, True
            if not moved:
                break
        return choice

    def share_moves(self, choice: list[int], sweeps: int = SHARE_SWEEPS) -> list[int]:
        """Each shared value's targets in turn dropped (every consumer needing the target takes its
        cheapest choice that does not) or adopted (every consumer that can need it re-chooses with
        it paid), kept where the exact objective falls, then coordinate descent again; sweeps until
        none is kept. One consumer at a time cannot make such a move: two uses of an argument both
        boxed to a second target pay it once (gen_dag 2000: 480.68 -> 476.90 µs in one move)."""
        choice, rows = list(choice), self.rows
        bounded = bool(len(rows.constant))
        for _ in range(sweeps):
            kept, least = False, 1e-12 * max(abs(self.problem.value(choice)), 1e-12)
            used = rows.of(np.array(choice)) if bounded else None
            at: dict[int, np.ndarray] = {}  # `local` at `choice`, per consumer
            for form in self.shared:
                for target in self._share_targets(form, choice, at):
                    found = self._share_move(form, int(target), choice, at, used)
                    if found is not None and found[1] < -least:
                        choice, kept, at = self.run(found[0]), True, {}
                        used = rows.of(np.array(choice)) if bounded else None
            if not kept:
                break
        return choice

    def _share_targets(self, form: CoverForm, choice: list[int], at: dict[int, np.ndarray]) -> np.ndarray:
        """The targets whose `_share_move` can move a consumer: the ones needed (dropped), and the
        ones some consumer's cheapest choice needing it, less its price, beats its choice now
        (adopted); `at` as in `_share_move`."""
        row = cover_row(form, choice)
        needed = form.fixed.copy()
        adopt = np.zeros(len(needed), bool)
        for v, needs in form.needs.items():
            local = at.get(v)
            if local is None:
                local = at[v] = self.local(v, choice)
            needed |= needs[choice[v]]
            cheapest = np.where(needs, local[:, None], np.inf).min(axis=0)
            adopt |= cheapest - row < local[choice[v]] - 1e-12 * max(abs(local[choice[v]]), 1e-300)
        return np.flatnonzero(~form.fixed & (needed | adopt))

    def _share_move(self, form: CoverForm, target: int, choice: list[int], at: dict[int, np.ndarray],
                    used: np.ndarray | None) -> tuple[list[int], float] | None:
        """`share_moves`' move of `target` from `choice` and the exact objective's change (each
        consumer's change priced given the ones before it, so the sum is exact), None if no
        consumer moves; `at`: `local` at `choice`, filled as read."""
        needed = form.fixed[target] or any(needs[choice[v], target] for v, needs in form.needs.items())
        price = float(cover_row(form, choice)[target])
        trial: list[int] | None = None  # copied at the first consumer that moves
        change = 0.0
        for v, needs in form.needs.items():
            able = needs[:, target]
            now = choice[v] if trial is None else trial[v]
            if not able.any() or (needed and not able[now]):
                continue
            if trial is not None:
                local = self.local(v, trial)
            else:
                local = at.get(v)
                if local is None:
                    local = at[v] = self.local(v, choice)
            if needed:
                cost = np.where(able, np.inf, local)
            else:  # paid by the first consumer that takes it, which the others then see
                paid = trial is not None and any(form.needs[w][trial[w], target] for w in form.needs if w != v)
                cost = local if paid else local - np.where(able, price, 0.0)
            if used is not None and len(self.rows.spans[v]):
                cost = np.where(self.rows.fits(v, now, used), cost, np.inf)
            best = int(np.argmin(cost))
            if best != now and np.isfinite(cost[best]):
                if trial is None:
                    trial, used = list(choice), None if used is None else used.copy()
                change += float(local[best] - local[now])
                if used is not None:
                    self.rows.move(v, now, best, used)
                trial[v] = best
        return None if trial is None else (trial, change)


@one_blas_thread
def anytime(
    exact: FactorProblem, upper: FactorProblem, lower: FactorProblem, budget: float | None,
    deadline: float | None = None, rounds: int = ROUNDS, shared: list[CoverForm] | None = None,
    split: list[CoverForm] | None = None,
) -> Solution | None:
    """The cheapest plan found for `exact` (within `budget` at its memory rows) and the
    lower-bound twin's proved bound; None when no plan within the budget was found. `shared`: the
    shared boxings (`Descent.share_moves`); `split`: the ones `lower` charges at
    `split.lower_split` (none: its shares stay)."""
    started = time.perf_counter()
    stop = Stop.clock(deadline)  # the loops' own limits bound the work; the clock only caps
    descent = Descent(exact, budget, shared)
    low = pairwise_graph(lower, budget)
    high = pairwise_graph(upper, budget)
    starts: list[tuple[np.ndarray, np.ndarray | None]] = []
    if budget is None:  # no rows to price: diffusion on the twin while its shares move (`split.ascend`)
        messages, low_bound = Messages(low.unary, low.near), split_bound(low.unary, low.near)
        messages.sweep(FIRST_SWEEPS)
        ascent = ascend(messages, split or [], exact.value, descent.run, low.constant, deadline)
        starts += [(np.array(choice), None) for _, choice in ascent.plans]
        bound = (low.constant + max(low_bound, ascent.bound)) / US_PER_SECOND
    else:
        dual = lagrangian(low, exact=_exact(lower), stop=stop)
        bound = dual.bound / US_PER_SECOND
        if dual.plan is not None:
            starts.append((dual.plan, None))
        starts += [(choice, prices) for choice, prices in reversed(dual.starts)]
    best: tuple[float, list[int]] | None = None

    def fits(plan: list[int]) -> bool:
        return budget is None or exact.memory_peak(plan) <= budget * (1 + 1e-12)

    def polish(plan: list[int]) -> list[int]:
        return descent.share_moves(descent.run(plan))

    def consider(choice: np.ndarray) -> None:
        nonlocal best
        plan = [int(c) for c in choice]
        if not fits(plan):
            return
        plan = polish(plan)
        value = exact.value(plan)
        if best is None or value < best[0]:
            best = (value, plan)

    screen = max(rounds // 10, 1)
    for k, (choice, prices) in enumerate(starts):
        if k and deadline is not None and time.perf_counter() > deadline:
            break
        consider(choice)
        for graph in (low, high):
            found = improve(graph, rounds=screen, stop=stop, start=choice, prices=prices)
            if found is not None:
                consider(found[0])
    if best is None:
        found = improve(high, rounds=rounds, stop=stop)
        if found is None:
            return None
        consider(found[0])
    if best is None:
        return None
    for graph in (low, high):
        last = improve(graph, rounds=rounds, stop=stop, start=np.array(best[1]))
        if last is not None:
            consider(last[0])
    windows = Neighbourhoods(exact).search(best[1], polish, accept=None if budget is None else fits,
                                           deadline=deadline)
    consider(np.array(windows))
    value, plan = best
    return Solution(plan, value, min(value, bound), "lagrangian+local search+windows",
                    time.perf_counter() - started)
