"""`solve_cfn`: a pairwise min-sum problem solved by toulbar2, the field's cost-function-network solver.

The contest's winner made memory soft (per-node penalties) and solved each penalised problem as a
cost function network with toulbar2; sbpc's own min-sum primal (diffusion decoding, ICM, pair and
star moves) is far weaker on the large instances. Measured on IOPDDL M without memory rows:
toulbar2 proves the optimum 45,867,303,770 in 3,356 backtracks (45 s), where the local search from
the diffusion's decoding stops at 49.0e9 and the diffusion bound after 320 sweeps is 45.6e9; on N
it reaches 164.8e9 in 40 s (the local search: 182.1e9).

Costs go in as integers (toulbar2's costs are 64-bit integers): the contest's costs are integers;
priced unaries are rounded, which moves a plan's priced value by at most half a unit per variable,
so a priced answer is a start, never a bound. Infinite entries become the problem's top (a cost no
plan reaches). toulbar2's options are process-wide: every call sets the ones it relies on.

The work limit is a count of backtracks (`BACKTRACKS`), so the answer is a function of the
problem; a time limit only caps it. Hard linear constraints over the choices (memory rows held
exactly, `Linear`) go in as toulbar2's generalized linear (knapsack) constraints: integer
coefficients, rounded up, and right-hand sides rounded down, so an answer satisfies the rows as
given.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytoulbar2

from sbpc.passes.solver.work import CONSTRAINED, CONSTRAINED_ENTRY, POSTED, SEARCHED

BACKTRACKS = 5_000
"""Backtracks per solve: the work limit (IOPDDL M without memory: the proof took 3,356)."""
TOP = float(2**60)
"""Above any plan's cost: forbidden entries, and the initial upper bound."""
KNAPSACK_COSTS = 1e8
"""With linear constraints, the largest finite cost toulbar2 is given: larger costs are scaled down
to it. toulbar2's knapsack propagation shifts costs between the constraint and the variables in
steps that do not grow with the costs: an IOPDDL N window (1,500 variables, 3 rows) with costs up to
2.9e11 stayed in its preprocessing for minutes (0 nodes); scaled to 2.9e9 or less, solved in 0.1 s
(at 1.4e10: 7 s)."""


@dataclass
class Linear:
    """Σ over `terms` (variable, choice, coefficient ≥ 0) of the coefficient where the variable takes
    that choice ≤ `bound`."""

    terms: list[tuple[int, int, float]]
    bound: float


@dataclass
class CfnAnswer:
    """toulbar2's best plan, its value (integer costs), whether it is proved optimal, and the
    proved lower bound (valid for the problem as given to toulbar2)."""

    choice: np.ndarray
    value: float
    optimal: bool
    lower: float
    backtracks: int = 0
    """toulbar2's backtracks to it (the search's work, charged by the callers to their `Work`)."""


def _integral(costs: np.ndarray) -> list[int]:
    return np.where(np.isfinite(costs), np.minimum(np.round(costs), TOP), TOP).astype(np.int64).tolist()


def solve_cfn(unary: list[np.ndarray], near: list[list[tuple[int, np.ndarray]]], backtracks: int = BACKTRACKS,
              time_limit: float | None = None, linear: Sequence[Linear] = (), lds: int = 0) -> CfnAnswer | None:
    """The least Σ unary + Σ pairs found within `backtracks` (and `time_limit` seconds) under the
    `linear` constraints, or None if toulbar2 found no plan of finite cost that satisfies them.
    `near[a]` holds (b, matrix a × b) for both ends. `lds` > 0: limited discrepancy search up to
    that many discrepancies before the complete depth-first search (toulbar2's `-l`), instead of
    its hybrid best-first search."""
    largest = max([_largest(costs) for costs in unary]
                  + [_largest(matrix) for around in near for _, matrix in around] + [0.0])
    scale = min(1.0, KNAPSACK_COSTS / largest) if linear and largest > 0 else 1.0
    try:  # toulbar2 raises its Contradiction (while posting or solving) when no plan is below the top
        cfn = pytoulbar2.CFN(TOP, verbose=-1)
        pytoulbar2.tb2.option.backtrackLimit = int(backtracks)
        pytoulbar2.tb2.option.lds = int(lds)
        pytoulbar2.tb2.option.hbfs = 0 if lds else 1  # toulbar2 turns it off for LDS and leaves it off
        for a, costs in enumerate(unary):
            cfn.AddVariable(f"x{a}", range(len(costs)))
        for a, costs in enumerate(unary):  # a single choice's cost goes in as a constant
            cfn.AddFunction([a], _integral(scale * np.asarray(costs, dtype=float)))
        functions = len(unary)
        for a, around in enumerate(near):
            for b, matrix in around:
                if a < b:
                    cfn.AddFunction([a, b], _integral(scale * np.asarray(matrix, dtype=float).ravel()))
                    functions += 1
        for row in linear:
            if row.bound < 0:
                return None
            terms = [(a, c, math.ceil(w)) for a, c, w in row.terms if w > 0]
            if terms:
                cfn.AddGeneralizedLinearConstraint(terms, "<=", math.floor(row.bound))
        seconds = 0 if time_limit is None else max(math.ceil(time_limit), 1)
        started = time.process_time()
        try:
            found = cfn.Solve(timeLimit=seconds)
        finally:  # toulbar2's alarm outlives a solve that ends first: it fired later, during the
            if seconds:  # local search, and printed "Time limit expired" on stdout (IOPDDL M)
                cfn.CFN.timerStop()
    except pytoulbar2.tb2.Contradiction:
        return None
    if found is None:
        return None
    choice = np.array(found[0], dtype=np.int64)
    value = float(found[1])
    if value >= TOP:
        return None
    # A search that ended before its backtrack and time limits was complete: its plan is optimal
    # (after a complete search toulbar2's reported dual bound can lag behind the proof).
    done = int(cfn.GetNbBacktracks())
    complete = done < backtracks and (not seconds or time.process_time() - started < seconds)
    lower = value if complete else float(cfn.GetDDualBound())
    if scale == 1.0:
        return CfnAnswer(choice, value, lower >= value, min(lower, value), done)
    # Scaled: the value from the costs as given; each rounded entry is within half a unit of the
    # scaled one, so the bound loses half a unit per function.
    exact = sum(float(costs[choice[a]]) for a, costs in enumerate(unary)) + sum(
        float(matrix[choice[a], choice[b]]) for a, around in enumerate(near) for b, matrix in around if a < b)
    bound = (min(lower, value) - 0.5 * functions) / scale
    return CfnAnswer(choice, exact, bound >= exact, min(bound, exact), done)


def _largest(costs: np.ndarray) -> float:
    finite = np.abs(np.asarray(costs, dtype=float))
    finite = finite[np.isfinite(finite) & (finite < TOP)]
    return float(finite.max()) if finite.size else 0.0


def cfn_ticks(unary: list[np.ndarray], near: list[list[tuple[int, np.ndarray]]], answer: CfnAnswer | None,
              linear: Sequence[Linear] = ()) -> float:
    """A toulbar2 solve's work (`work.POSTED`, `SEARCHED`, `CONSTRAINED`, `CONSTRAINED_ENTRY`) on
    this problem."""
    entries = sum(matrix.size for around in near for _, matrix in around) / 2
    terms = sum(len(row.terms) for row in linear)
    backtracks = 0 if answer is None else answer.backtracks
    searched = SEARCHED * len(unary) + (CONSTRAINED * terms + CONSTRAINED_ENTRY * entries if terms else 0.0)
    return POSTED * entries + backtracks * searched
