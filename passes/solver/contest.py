"""`solve_strategy`: the solver of `sbp-solve` (SPEC §9) on a `StrategyProblem`.

1. `reduce.reduce_problem`: exact reductions (infinite costs, followers, dominance, degree ≤ 2,
   the memory rows that can bind); an all-infinite node, or usages whose minimum already exceeds
   the limit, is infeasibility, reported with the smallest usage limit found.
2. Without binding memory rows the reduced problem is a plain min-sum problem: exact elimination
   (`factor.eliminate`) where it stays narrow.
3. Otherwise the memory rows' Lagrangian relaxation (`lagrange.lagrangian`: subgradient prices,
   each relaxed pairwise problem by elimination or min-sum diffusion) gives a proved bound (weak
   duality) and a start — a plan that fits, or the last relaxed answer with its prices; where
   HiGHS will not run on the whole problem, toulbar2 (`cfn.solve_cfn`) solves the problem priced
   at multiples of those prices (memory made soft, the contest winner's method) for more starts —
   from which `local.improve` repairs and searches, the plans so found relinked (`relink.Pool`:
   the variables on which they differ re-solved together under the rows), the best plan kicked out of
   its basin (`kick.kick`: the whole problem re-solved with its peak priced by the LP's shadow
   prices, repaired, settled apart), its memory peak and the rest of it re-solved apart, each whole
   (`Pool.settle`: toulbar2 for the rest, which no row binds, HiGHS's RENS for the peak under its
   rows); then where the reduced problem is small
   enough HiGHS (`mip.solve_mip` over the compressed rows of `sharding.py`) runs from it to
   optimality or its limits; its dual bound is the proof. Where the rows are too many, HiGHS runs
   on a subset grown by the rows its answers violate (`_row_generation`): a relaxation, so its
   bound holds, and an answer that fits every row is a plan. The bound is the best of these, the
   Lagrangian's and the optimum without memory (elimination) or the pairwise split bound.

Costs are the contest's integers, so a bound is rounded up to the next integer: the plan is proved
optimal when the bound reaches its cost (never by a MIP's relative-gap tolerance). Work limits
(Lagrangian iterations, local-search rounds, toulbar2's backtracks) and, for the phases that share
a time limit, a tick budget (`work.Work`: `TICKS_PER_SECOND` of the limit's value, its phases
ending at shares of it) make the answer a function of the problem and the limit's value; the wall
clock only caps each phase, `CLOCK_SLACK` of the limit after its share (on a much slower or busier
machine it ends them first). HiGHS (B, G, V's proofs; A, C, D's row generation) runs to its time limit.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from sbpc.passes.solver.cfn import CfnAnswer, cfn_ticks, solve_cfn
from sbpc.passes.solver.factor import FactorProblem, eliminate
from sbpc.passes.solver.kick import SCALES as KICK_SCALES
from sbpc.passes.solver.kick import kick
from sbpc.passes.solver.lagrange import Dual, lagrangian, priced_unary, split_bound
from sbpc.passes.solver.local import Graph, improve
from sbpc.passes.solver.mip import MIP_UNIT, solve_mip
from sbpc.passes.solver.reduce import INFINITE, Infeasible, Reduction, reduce_problem
from sbpc.passes.solver.relink import Pool
from sbpc.passes.solver.sharding import Rows, factor_problem, memory_rows, with_rows
from sbpc.passes.solver.strategy import StrategyProblem, evaluate, peak_usage
from sbpc.passes.solver.work import Stop, Work, one_blas_thread

MIP_PAIR_ENTRIES = 1_000_000
"""HiGHS runs on the reduced problem when its pair matrices hold at most this many entries (V:
0.7 M; A, C, D: 0.13 M; above it, K's 1.3 M, one MIP over a subset of the rows ran 60-100 s
without bettering the local search, which the relaxation then does instead) and"""
MIP_ROW_ENTRIES = 2_000_000
"""its memory rows at most this many coefficients."""
TICKS_PER_SECOND = 0.85e6
"""The tick budget per second of the time limit's planned share (`TIME_MARGIN`): a tick is about a
microsecond of this machine's time (`work.py`), so the phases end by their tick marks a little
before the clock's, and the run is the same from run to run."""
CLOCK_SLACK = 0.1
"""Of the planned span, how far past its tick mark's share of it the clock caps a phase (at most the
span's end): under a load that slows the run by less, the tick marks end every phase."""
TIME_MARGIN = 0.9
"""Of a time limit, the share the solver plans for: building a HiGHS model, expanding and judging
the plan run after the last check of the clock."""
PROOF_MARGIN = 0.1
"""Of a time limit, what HiGHS leaves unused where it runs on the whole reduced problem (B, G, V:
there it proves; the plan comes before it): HiGHS looks at the clock between phases of its search,
and on V (1.65 M columns) it stopped 2-20 s past its limit, which put V's whole run at 290-299 s
of its 300."""
ROUNDS = 3000
"""Local-search rounds (perturb a piece, descend): the primal's work limit."""
PRIMAL_SHARE, SMALL_PRIMAL_SHARE = 0.4, 0.15
"""Of a time limit, the share the local search may take when HiGHS runs after it (on a subset of
the rows, or, for a small reduced problem, on all of them: there HiGHS is the proof)."""
LAGRANGE_SHARE, REPAIR_SHARE = 0.4, 0.25
"""Of a time limit, the most the Lagrangian relaxation may take (it stops at its iteration count
first where it is fast), and the least left to the local search after it. Where row generation
follows (A, C, D), the relaxation does not run: HiGHS's answers there depend on its share of
the time (D fell from below the best team to 1.01x and, with a tenth for the relaxation, 2.2x)."""
FIRST_SCALE, SCALE_STEP, SCALE_CLOSE, SCALE_SOLVES = 1.0, math.sqrt(10.0), 1.25, 10
"""The multiples of the relaxation's prices at which toulbar2 solves the priced problem (`Scales`):
the first; the factor down while answers fit the rows and up while they overflow; the ratio of the
least fitting to the greatest overflowing scale at which the search between them stops; the most
solves."""
CFN_BACKTRACKS, CFN_WORK = 5_000, 6_500_000
"""toulbar2's backtracks per priced problem: at most `CFN_BACKTRACKS`, and at most `CFN_WORK` divided
by the variables (a backtrack's work grows with them): N (24,875 variables) 261, K (5,172) 1,256, M
(4,375) 1,485, L (734) 5,000. Its answers after the first hundreds of backtracks are within a few tenths
of a percent of the later ones (N at 10x: 1,000 within 0.15 % of 5,000; at 1x, 523 within 0.001 % of
1,046), and the time saved buys more starts, each with its answer so far, that relink to better plans:
from 26 M to 13 M, N 205.61e9 to 205.33e9 and K 2.2341e9 to 2.2240e9 (a fourth start each); to 6.5 M, N
205.30e9, K 2.2074e9, and M, whose solves had ended at the clock's `CFN_EACH` cap (7 ms a backtrack),
now ends by its ticks: 49.922e9 for 49.918e9, still below the contest's best team (49.928e9; M's
answers after 1,000 backtracks repaired to 52.4e9 and 56.5e9 at 10x and 100x in an earlier code)."""
CFN_SHARE = 0.8
"""Of a time limit, the point after which no further priced problem is started."""
CFN_EACH = 0.12
"""Of a time limit, the most one priced problem may take: toulbar2's time to its backtracks
varies with the prices (N at 10x: 21 s from one relaxation's, 125 s from one stopped earlier on a
slower run), and its answer after the first seconds is within a few tenths of a percent of
the last; more starts, each with its best answer so far, relink to better plans."""
SPREAD_SHARE = 0.15
"""Of a time limit, what the repairs of the starts leave to re-solving the best plan's memory
peaks (`relink.Pool.spread`) and the local search and relinking after it."""
KICK_SHARE = 0.15
"""Of a time limit, what the repairs of the starts leave to the first kick (`kick.kick`) before
`SPREAD_SHARE`: N's takes 23 s from its pool's best (209.93e9 to 201.47e9), and where a kick does
not gain (M: 29 s), the settling, spreading and polishing of the best plan still have their share."""
POLISH_GAIN = 1e-4
"""The least relative gain of a pass of re-solving the best plan's peaks and pieces for another."""
ROWS_FIRST, ROWS_ADDED, ROW_ROUNDS = 64, 64, 30
"""Row generation: the rows HiGHS starts with, the most violated added per round, the rounds."""


@dataclass
class Outcome:
    """A plan (original strategies) with its cost and a proved lower bound, or infeasibility with
    the smallest usage limit found (`min_limit`)."""

    solution: np.ndarray | None
    cost: float
    bound: float
    seconds: float
    method: str
    min_limit: float | None = None

    @property
    def gap(self) -> float:
        if self.solution is None or self.cost <= 0:
            return 0.0
        return max(0.0, (self.cost - self.bound) / self.cost)


def smallest_limit(problem: StrategyProblem) -> float:
    """The peak of the plan taking each node's smallest finite-cost usage (a usage limit some plan
    meets when no edge forbids it; below the per-node minima no plan fits)."""
    choice = np.zeros(problem.n, np.int64)
    for i in range(problem.n):
        usage = problem.usage(i).astype(float)
        usage[problem.cost(i) >= INFINITE] = np.inf
        choice[i] = int(np.argmin(usage))
    return float(peak_usage(problem, choice))


def _graph(red: Reduction, variables: list[int], rows) -> Graph:  # type: ignore[no-untyped-def]
    index = {a: i for i, a in enumerate(variables)}
    near = [[(index[b], m) for b, m in sorted(red.adj[a].items())] for a in variables]
    return Graph([red.unary[a] for a in variables], near, rows, red.constant)


def cfn_backtracks(variables: int) -> int:
    """toulbar2's backtracks for a priced problem of this many variables (`CFN_WORK`)."""
    return max(min(CFN_BACKTRACKS, CFN_WORK // max(variables, 1)), 1)


class Scales:
    """The multiples of the relaxation's prices toulbar2's priced problems take, in turn: from
    `FIRST_SCALE` (the relaxation's own problem), up by `SCALE_STEP` while the answers overflow the
    rows and down while they fit, then the geometric midpoint of the greatest scale whose answer
    overflowed and the least whose answer fit, until they are within `SCALE_CLOSE` (at most
    `SCALE_SOLVES` solves). The starts sought are the answers near the limit: priced too high, memory
    is spared at any cost; too low, the repair moves much of it. Measured on the relaxation's prices
    (the fullest row's fill by the answer, its value; repaired): K at 1x 103 %, 2.15e9, repaired
    2.26e9, its best start, at 3x 94 % (3.02e9), at 10x 97 % (3.61e9, repaired 3.30e9); N at 1x
    120 %, 3x 106 %, 10x 92 % — N's best start is 1x or 10x depending on the step at which the
    relaxation's prices are taken (repaired 206.1e9-222.4e9 either way). The fixed order before (10x,
    100x, 1x, 30x, ...) reached K's 1x only in runs far over the limit (K 2.26e9-2.36e9 at 180 s;
    with this search 2.2655e9 in three runs)."""

    def __init__(self) -> None:
        self.fit, self.over = math.inf, 0.0
        """The least scale whose answer fit, the greatest whose answer overflowed (0: none yet)."""
        self.solves = 0

    def next(self) -> float | None:
        """The next scale, or None when the search is done."""
        if self.solves >= SCALE_SOLVES:
            return None
        if not self.solves:
            return FIRST_SCALE
        if not self.over:
            return self.fit / SCALE_STEP
        if math.isinf(self.fit):
            return self.over * SCALE_STEP
        return math.sqrt(self.over * self.fit) if self.fit > SCALE_CLOSE * self.over else None

    def tell(self, scale: float, fits: bool) -> None:
        """Whether the answer at `scale` fit the rows."""
        self.solves += 1
        if fits:
            self.fit = min(self.fit, scale)
        else:
            self.over = max(self.over, scale)


class PricedStarts:
    """toulbar2's answers to the problem priced at the relaxation's prices times each of the
    multiples `Scales` picks (memory made soft, the contest winner's idea), with those prices: repair starts,
    solved one at a time as they are iterated (each is repaired and relinked before the next is
    solved), none started once `stop` is due. `bound`: the best Lagrangian bound their proved lower
    bounds give (weak duality, as in `lagrange.lagrangian`; less half a unit per variable for the
    priced unaries' rounding). Where the prices are all zero, the rows the unpriced answer
    overflows are priced at the mean cost per byte instead."""

    def __init__(self, graph: Graph, prices: np.ndarray, stop: Stop | None, each: float | None = None):
        self.graph, self.prices, self.stop, self.each = graph, prices, stop, each
        self.backtracks = cfn_backtracks(len(graph.unary))
        self.bound = -math.inf
        self.count = 0
        """Answers given so far."""

    def _seconds(self) -> float | None:
        """A solve's time limit: what is left before the stop's clock, at most `each`."""
        left = None if self.stop is None else self.stop.seconds()
        return left if self.each is None or left is None else min(left, self.each)

    def _solve(self, unary: list[np.ndarray]) -> CfnAnswer | None:
        answer = solve_cfn(unary, self.graph.near, self.backtracks, self._seconds())
        if self.stop is not None:
            self.stop.charge(cfn_ticks(unary, self.graph.near, answer))
        return answer

    def _lagrangian_bound(self, answer: CfnAnswer, priced: np.ndarray) -> float:
        graph = self.graph
        slack = graph.rows.constant - graph.rows.limit
        return graph.constant + answer.lower - 0.5 * len(graph.unary) + float(priced @ slack)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        graph, rows, prices, stop = self.graph, self.graph.rows, self.prices, self.stop
        scales = Scales()
        while (scale := scales.next()) is not None:
            if stop is not None and stop.due():
                return
            if not prices.any():
                answer = self._solve(graph.unary)
                if answer is None:
                    return
                self.bound = max(self.bound, self._lagrangian_bound(answer, prices))
                over = rows.of(answer.choice) > rows.limit
                if not over.any():
                    self.count += 1
                    yield answer.choice, prices
                    return
                prices = over * max(graph.typical_cost() / max(rows.limit, 1.0), 1e-12)
            answer = self._solve(priced_unary(graph, scale * prices))
            if answer is None:
                return
            self.bound = max(self.bound, self._lagrangian_bound(answer, scale * prices))
            scales.tell(scale, bool((rows.of(answer.choice) <= rows.limit).all()))
            self.count += 1
            yield answer.choice, scale * prices


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.perf_counter(), 1.0)


def _repair(graph: Graph, dual: Dual, rounds: int, stop: Stop | None, screened: Stop | None,
            first: Iterable[tuple[np.ndarray, np.ndarray]], kicks: bool = False,
            kicking: Stop | None = None) -> tuple[np.ndarray, float] | None:
    """The local search from each start (`first`, then the relaxation's best plan, and its
    relaxed answers with their prices, repaired to fit and descended, without the rounds: on
    IOPDDL N a tenth of them took 9 s a start for 0.005 %, and the time buys a third start, 208.1e9
    to 205.8e9), until `screened` is due; after each, the plan found relinked with the best
    (`relink.Pool`: where they differ, re-solved together); then the best plan's memory peak and
    the rest of it re-solved apart (`Pool.settle`: on N 208.10e9 to 202.35e9 in 8 s; settling each
    start as it joins the pool instead, 203.98e9), the variables live at its peaks re-solved together
    (`Pool.spread`) and the best re-solved a piece at a time (`Pool.polish`), each pass after a
    kick (`kick.kick`, where `kicks`: N from the 209.93e9 pool 201.47e9 in 23 s, where settling
    stalls at 203.71e9), again while that gains (one that does not: the next of `kick.SCALES`,
    a pass only after a kick that gains); the local search from the best plan with all the
    rounds, and, in the time left, the best relinked with each plan in turn (`Pool.sweep`)."""
    pool = Pool(graph)
    if dual.plan is not None:
        pool.add(dual.plan, relink=False)
    starts: Iterable[tuple[np.ndarray, np.ndarray | None]] = itertools.chain(
        first, [(dual.plan, None)] if dual.plan is not None else [], reversed(dual.starts))
    for choice, prices in starts:
        trial = improve(graph, rounds=0, stop=screened, start=choice, prices=prices)
        if trial is not None:
            pool.add(trial[0], relink=screened is None or not screened.due(), stop=screened)
        if screened is not None and screened.due():  # before the next start is solved
            break
    scales, passes = list(KICK_SCALES) if kicks else [], 0
    while pool.plans and not (stop is not None and stop.due()):
        before = pool.plans[0][0]
        kicked = bool(scales) and kick(pool, scales[0], cfn_backtracks(len(graph.unary)), kicking or stop)
        if kicked or not scales or not passes:  # a plan not yet passed over
            pool.settle(stop)
            pool.spread(stop)
            pool.polish(stop)
            passes += 1
        if not pool.plans[0][0] < before * (1 - POLISH_GAIN):
            if len(scales) < 2:
                break
            scales.pop(0)
    found = pool.best()
    if found is None or (stop is not None and stop.due()):
        return found
    last = improve(graph, rounds=rounds, stop=stop, start=found[0])
    if last is not None and last[1] < found[1]:
        pool.add(last[0], relink=False)
    pool.sweep(stop)
    return pool.best()


def _exact(factors: FactorProblem) -> Callable[[list[np.ndarray]], tuple[float, np.ndarray] | None]:
    """The priced pairwise problem solved by elimination (the memory-free problem's structure,
    narrow enough): its optimum less the constant, and its plan."""
    def solve(unary: list[np.ndarray]) -> tuple[float, np.ndarray] | None:
        priced = dataclasses.replace(factors, unary=[u / MIP_UNIT for u in unary], constant=0.0, memory=[],
                                     memory_terms=[])
        found = eliminate(priced)
        return None if found is None else (found.objective * MIP_UNIT, np.array(found.choice))
    return solve


def _ceil(bound: float) -> float:
    """An integer-cost problem's bound rounded up (less the float sums' rounding)."""
    if not math.isfinite(bound):
        return bound
    return float(math.ceil(bound - 1e-9 * max(abs(bound), 1.0)))


@one_blas_thread
def solve_strategy(problem: StrategyProblem, time_limit: float | None = None, rounds: int = ROUNDS) -> Outcome:
    """The best plan found and a proved lower bound (module docstring)."""
    started = time.perf_counter()
    deadline = None if time_limit is None else started + TIME_MARGIN * time_limit
    try:
        red = reduce_problem(problem)
    except Infeasible as why:
        return Outcome(None, math.inf, math.inf, time.perf_counter() - started, f"infeasible: {why}",
                       smallest_limit(problem))
    variables = red.variables()
    rows = memory_rows(red, variables, problem.usage_limit)
    factors = factor_problem(red, variables)  # the rows added where HiGHS runs (`with_rows`)
    integral = all(np.issubdtype(x.dtype, np.integer) for x in (problem.node_costs, problem.edge_costs))
    tidy = _ceil if integral else (lambda b: b)

    def outcome(choice: np.ndarray, bound: float, method: str) -> Outcome:
        solution = red.expand({a: int(c) for a, c in zip(variables, choice, strict=True)})
        judged = evaluate(problem, solution)
        cost = float(judged.cost)
        return Outcome(solution, cost, min(cost, tidy(bound)), time.perf_counter() - started, method)

    free = eliminate(factors)  # the optimum without memory: exact, or a bound under the limit
    if free is not None and (not len(rows.constant) or (rows.of(np.array(free.choice)) <= rows.limit).all()):
        return outcome(np.array(free.choice), free.objective * MIP_UNIT, "elimination")
    graph = _graph(red, variables, rows)
    bound = graph.constant + split_bound(graph.unary, graph.near) if free is None else free.objective * MIP_UNIT
    pairs = sum(m.size for m in factors.pairs.values())
    small = pairs <= MIP_PAIR_ENTRIES and rows.entries() <= MIP_ROW_ENTRIES
    share = SMALL_PRIMAL_SHARE if small else PRIMAL_SHARE if pairs <= MIP_PAIR_ENTRIES else 1.0
    span = None if deadline is None else deadline - started
    work = Work()

    def stop(part: float, later: float = 0.0) -> Stop | None:
        """The stop at `part` of the planned span from the start, or (if later) `later` of it from
        now: as ticks and, the cap, on the clock."""
        if span is None:
            return None
        ticks = TICKS_PER_SECOND * span
        cap = max(started + (part + CLOCK_SLACK) * span, time.perf_counter() + (later + CLOCK_SLACK) * span)
        return Stop(work, max(part * ticks, work.spent + later * ticks), min(cap, started + span))

    first: PricedStarts | None = None  # toulbar2's starts
    if not small and pairs <= MIP_PAIR_ENTRIES:  # row generation follows: its answers are the plans
        found = improve(graph, rounds=rounds, stop=stop(share))
    else:
        dual = lagrangian(graph, exact=None if free is None else _exact(factors), adaptive=not small,
                          stop=stop(LAGRANGE_SHARE))
        primal_end = stop(share, REPAIR_SHARE)
        bound = max(bound, dual.bound)
        if not small:
            first = PricedStarts(graph, dual.prices, stop(CFN_SHARE), None if span is None else CFN_EACH * span)
        screened = kicking = primal_end
        if primal_end is not None and span is not None and not small:  # small: HiGHS follows
            kicking = primal_end.before(SPREAD_SHARE * TICKS_PER_SECOND * span, SPREAD_SHARE * span)
            screened = kicking.before(KICK_SHARE * TICKS_PER_SECOND * span, KICK_SHARE * span)
        found = _repair(graph, dual, rounds, primal_end, screened, first if first is not None else [], not small,
                        kicking)
        bound = max(bound, -math.inf if first is None else first.bound)
    method = "lagrangian+toulbar2+local search" if first is not None and first.count else "lagrangian+local search"
    plan = None if found is None else found[0]
    left = _left(deadline)
    if small:  # the whole reduced problem, memory rows and all
        budget = rows.limit if len(rows.constant) else None
        start = None if plan is None else [int(c) for c in plan]
        if left is not None and time_limit is not None:
            left = max(left - PROOF_MARGIN * time_limit, 1.0)
        exact = solve_mip(with_rows(factors, rows, range(len(rows.constant))), budget, left, 1e-9, start)
        if exact is not None:
            bound = max(bound, exact.lower_bound * MIP_UNIT)
            if plan is None or exact.objective * MIP_UNIT < graph.value(plan):
                plan = np.array(exact.choice)
            method += "+highs"
        elif plan is None:
            return Outcome(None, math.inf, math.inf, time.perf_counter() - started, "infeasible (HiGHS)",
                           smallest_limit(problem))
    elif pairs <= MIP_PAIR_ENTRIES and plan is not None:  # rows added as they are violated
        plan, cut_bound = _row_generation(factors, rows, graph, plan, deadline)
        bound = max(bound, cut_bound)
        method += "+highs rows"
    if plan is None:
        return Outcome(None, math.inf, bound, time.perf_counter() - started, "no plan found within the limit",
                       smallest_limit(problem))
    return outcome(plan, bound, method)


def _row_generation(factors: FactorProblem, rows: Rows, graph: Graph, plan: np.ndarray,
                    deadline: float | None) -> tuple[np.ndarray, float]:
    """HiGHS on a growing subset of the memory rows, from `plan` (which fits them all): start with
    the rows tightest under the plan, add the most violated rows of each MIP's answer, keep the
    answers that fit every row. Fewer rows relax the problem, so every MIP's dual bound is a bound
    of the whole; a MIP proved optimal whose answer fits every row is the optimum."""
    best, best_value, bound = plan, graph.value(plan), -math.inf
    chosen = set(np.argsort(-rows.of(plan), kind="stable")[:ROWS_FIRST].tolist())
    for _ in range(ROW_ROUNDS):
        if deadline is not None and time.perf_counter() > deadline - 1.0:
            break
        left = _left(deadline)
        subset = with_rows(factors, rows, sorted(chosen))
        try:
            found = solve_mip(subset, rows.limit, left, 1e-9, [int(c) for c in best])
        except RuntimeError:  # stopped by the time limit before HiGHS held a plan
            break
        if found is None:
            break
        bound = max(bound, found.lower_bound * MIP_UNIT)
        choice = np.array(found.choice)
        used = rows.of(choice)
        over = np.flatnonzero(used > rows.limit * (1 + 1e-12))
        if not len(over):
            if graph.value(choice) < best_value:
                best, best_value = choice, graph.value(choice)
            break
        fresh = [int(r) for r in over[np.argsort(-used[over], kind="stable")] if int(r) not in chosen]
        if not fresh:
            break
        chosen.update(fresh[:ROWS_ADDED])
    return best, bound

