"""`sbp-solve FILE.json[.gz] [--time-limit S] [-o SOLUTION.json]`: the planner as a solver (SPEC §9).

Reads a problem in the IOPDDL contest format (plain or gzip JSON, streamed), solves it with the
solver package `infer-sbp{rule=global}` uses (`passes/solver/contest.py`), writes the solution as
a JSON list of strategy indices (`-o`, else nothing is written) and prints last
`NAME: cost=C bound=B gap=G% time=T s` — the bound a proved lower bound, gap 0 only when it meets
the cost. The solution is checked by the contest's rule (`passes/solver/strategy.py`) before it is
written. Infeasible: exit 1 naming the smallest usage limit found. A malformed file: a located
error, exit 1. The answer is a function of the problem and the work limits; `--time-limit` only
caps the run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from sbpc.passes.solver.contest import ROUNDS, solve_strategy
from sbpc.passes.solver.iopddl import IopddlError, read_problem
from sbpc.passes.solver.strategy import evaluate
from sbpc.tools.cli import SuggestingParser, VersionAction


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = SuggestingParser(prog="sbp-solve", description=__doc__.splitlines()[0])
    parser.usage_status = 1
    parser.add_argument("input_file", help="an IOPDDL problem (.json or .json.gz)")
    parser.add_argument("--version", action=VersionAction, tool="sbp-solve",
                        help="print the version of sbpc and xDSL and exit")
    parser.add_argument("--time-limit", type=float, default=None, metavar="S",
                        help="stop after S seconds with the best plan found (default: the work limits only)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, metavar="N",
                        help=f"local-search rounds, the primal's work limit (default {ROUNDS})")
    parser.add_argument("-o", "--output", default=None, metavar="SOLUTION.json",
                        help="write the solution (a JSON list of strategy indices) here")
    args = parser.parse_args(argv)
    if args.time_limit is not None and not args.time_limit > 0:
        parser.error(f"--time-limit must be positive, not {args.time_limit}")
    if args.rounds < 0:
        parser.error(f"--rounds must be non-negative, not {args.rounds}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args = _arguments(argv)
    try:
        problem = read_problem(args.input_file)
    except IopddlError as error:
        print(f"sbp-solve: error: {error}", file=sys.stderr)
        return 1
    limit = None if args.time_limit is None else max(args.time_limit - (time.perf_counter() - started), 0.1)
    outcome = solve_strategy(problem, limit, args.rounds)
    if outcome.solution is None:
        print(f"sbp-solve: error: {problem.name}: no plan fits the usage limit {problem.usage_limit} "
              f"({outcome.method}); the smallest usage limit found is {outcome.min_limit:.0f}", file=sys.stderr)
        return 1
    judged = evaluate(problem, outcome.solution)
    assert judged.feasible and judged.cost == outcome.cost, "the solver's plan fails the contest's rule"
    if args.output is not None:
        try:
            Path(args.output).write_text(json.dumps([int(c) for c in outcome.solution]) + "\n")
        except OSError as error:
            print(f"sbp-solve: error: {args.output}: {error.strerror or error}", file=sys.stderr)
            return 1
    gap = 100 * outcome.gap
    print(f"{problem.name}: cost={judged.cost} bound={outcome.bound:.0f} gap={gap:.4g}% "
          f"time={time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
