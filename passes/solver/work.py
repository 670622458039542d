"""`Work`: a solve's deterministic clock, in ticks, with the wall clock only as a cap.

The contest solver's phases (the Lagrangian relaxation, toulbar2's priced starts, their repairs,
relinking and re-solving windows) used to end at shares of the time limit read from the wall
clock, so where a phase stopped, and so the plan, changed from run to run with the machine's load
(IOPDDL N: 202.8e9-211.7e9 from one code). Instead every loop charges the work it does to the
solve's `Work` meter, in ticks of about a microsecond of this machine's time (the constants below,
measured on the IOPDDL instances), and a phase ends at a tick count: the plan is a function of the
problem and the tick budget (the solver derives it from the time limit's value, not the clock's).
The wall clock stays as a cap (`Stop.deadline`): on a slower or busier machine it ends a phase
first, as before, and the run stays within its limit.

A tick is charged per unit of each kind of work: a variable visited by a descent (plus its
neighbours read), an edge tried by a pair move, a hub's neighbour in a star move, a variable and a
strategy of a tree move, a level and a pair-table entry of a diffusion pass, a variable's rows read,
a toulbar2 solve per pair-table entry posted and per backtrack and variable or row coefficient.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from threadpoolctl import threadpool_limits

VISIT, NEIGHBOUR = 2.6, 0.65
"""A descent's visit of a variable (or a decoding's), and each neighbour read for its local cost
(measured on IOPDDL K, L, M, N: 1.8-2.8x the time of 6 and 1.5)."""
EDGE = 5.0
"""An edge's joint table tried by a pair move (K, L, M, N: 7-22 µs)."""
HUB_NEIGHBOUR = 40.0
"""A hub's neighbour re-chosen per hub choice by a star move (K, M, N: 54-75 µs)."""
TREE_VARIABLE = 17.0
"""A whole-graph tree move (the soft-memory phase, the relaxation's polish): per variable with a
choice (IOPDDL K, L, M 17-20 µs; N 4.2 µs a variable, 17 a variable with a choice, one in four)."""
TREE_MOVE = 70.0
"""A variable of a local tree move within the limit (up to three solves, the rows judged each time:
K, L, M 47-50 µs, N 127 where the trees meet its hubs)."""
LEVEL, ENTRY = 15.0, 0.008
"""A diffusion pass (forward or back) per level of variables updated at once, and per pair-table
entry (fitted to N, K: 1,095 / 1,602 levels, 4.4 M / 1.3 M entries, 51 / 34 ms a pass; M, 586 and
2.4 M, 35 ms, a quarter more than this)."""
SPLIT_EDGE, REPRICE = 6.5, 3.5
"""The pairwise split bound per edge (IOPDDL K, M, N: 5.9-7.5 µs), and a relaxation's repricing of
its messages per variable (3.4-4.0 µs)."""
ROW_VARIABLE = 5.0
"""A variable in some row, its rows read once (a plan's row usages, the priced unaries: a loop over
those variables; IOPDDL N 29 ms for 5,685 of them, K 20 ms for 5,166)."""
POSTED, SEARCHED, CONSTRAINED = 0.3, 0.2, 0.7
"""toulbar2: per pair-table entry posted, per backtrack and variable, and per backtrack and
coefficient of the linear rows (IOPDDL N's windows without rows: 0.3 µs an entry; K's with rows:
36 s for 49 M coefficient-backtracks). Its time varies several fold with the costs alone (L's priced
problems, 734 variables and 2.3 M entries, took 1.7-21 s; M's 5 ms a backtrack): the estimate keeps
the run deterministic, and the clock caps what it misses."""
CONSTRAINED_ENTRY = 0.0015
"""toulbar2 with linear rows: per backtrack and pair-table entry, on top of the above (each
backtrack's propagation of a knapsack row reaches the pair tables of its variables). IOPDDL N's
relinking windows of 1,022-1,486 variables, 0.73-1.06 M entries, one or two rows, 5,000 backtracks:
9.7-23 s, where the terms above charge 3.9-4.8 M ticks (4.6-5.6 s), 1.1-3.4 ns an entry-backtrack
short."""

MIP_ENTRY, MIP_COEFFICIENT = 8.0, 0.6
"""HiGHS's RENS on a window (`peak.mip_window`: an LP, then a MIP over the choices it leaves open),
per pair-table entry and per memory-row coefficient (a term's choice in a distinct row): IOPDDL N's
peak, 2.95 M coefficients with 0.26 M entries 4.2 s, 1.2 M 7.7 s, 2.65 M 26.4 s."""


@dataclass
class Work:
    """Ticks charged so far (`spent`) by a solve's loops."""

    spent: float = 0.0

    def charge(self, ticks: float) -> None:
        self.spent += ticks


@dataclass(frozen=True)
class Stop:
    """Where a phase ends: when `work` has been charged `at` ticks, or the wall clock
    (`time.perf_counter()`) passes `deadline`, whichever comes first (None: no such limit)."""

    work: Work
    at: float | None = None
    deadline: float | None = None

    def due(self) -> bool:
        return (self.at is not None and self.work.spent > self.at) or (
            self.deadline is not None and time.perf_counter() > self.deadline)

    def charge(self, ticks: float) -> None:
        self.work.charge(ticks)

    def seconds(self) -> float | None:
        """The wall-clock seconds left before the cap (at least one), for the external solvers' own
        time limits; None without a cap."""
        return None if self.deadline is None else max(self.deadline - time.perf_counter(), 1.0)

    def before(self, ticks: float, seconds: float) -> Stop:
        """The stop `ticks` and `seconds` earlier."""
        return Stop(self.work, None if self.at is None else self.at - ticks,
                    None if self.deadline is None else self.deadline - seconds)

    @staticmethod
    def clock(deadline: float | None) -> Stop | None:
        """A stop by the wall clock alone (the callers whose loops have their own work limits)."""
        return None if deadline is None else Stop(Work(), None, deadline)


P = ParamSpec("P")
R = TypeVar("R")


def one_blas_thread(solve: Callable[P, R]) -> Callable[P, R]:
    """`solve` run with numpy's BLAS on one thread (threadpoolctl): a dot product over more than a
    few thousand entries (the relaxation's prices times the rows' slack) is split among BLAS's
    threads, which changes its rounding, so the relaxation's path, and the plan, would depend on the
    machine's cores (IOPDDL K: bound 2,009,965,834 and 2.204e9-2.207e9 on one thread; 1,998,515,082
    and 2.342e9 on two). The other solvers (HiGHS, toulbar2) run on one thread already."""
    return threadpool_limits.wrap(limits=1, user_api="blas")(solve)
