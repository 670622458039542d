"""sbp-solve (SPEC §9): the solver (passes/solver/contest.py and its reductions) against brute force
on generated problems, the local search alone staying within the limit, and the command line:
example.json's optimum, the solution file, infeasibility with the smallest limit, located errors."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from sbpc.passes.solver.contest import _graph, solve_strategy
from sbpc.passes.solver.iopddl import read_problem
from sbpc.passes.solver.local import improve
from sbpc.passes.solver.reduce import Infeasible, reduce_problem
from sbpc.passes.solver.sharding import memory_rows
from sbpc.passes.solver.strategy import evaluate
from sbpc.tools import sbp_solve
from test.unit.test_iopddl import EXAMPLE_TEXT, brute_force, random_body


def _problem(tmp_path: Path, body: dict):  # type: ignore[no-untyped-def]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"problem": body}))
    return read_problem(path)


@pytest.mark.parametrize("seed", range(60))
def test_solver_matches_brute_force(tmp_path: Path, seed: int) -> None:
    problem = _problem(tmp_path, random_body(random.Random(seed)))
    best = brute_force(problem)
    outcome = solve_strategy(problem, rounds=20)
    if best is None:
        assert outcome.solution is None and outcome.min_limit is not None
        return
    assert outcome.solution is not None, outcome.method
    judged = evaluate(problem, outcome.solution)
    assert judged.feasible and judged.cost == best[0] == outcome.cost
    assert outcome.bound == outcome.cost and outcome.gap == 0  # proved


@pytest.mark.parametrize("seed", range(10))
def test_reduction_keeps_the_optimum(tmp_path: Path, seed: int) -> None:
    """Every plan of the reduced variables expands to a plan of the same cost; the reduced optimum
    (over all its plans within the limit) is the original's."""
    problem = _problem(tmp_path, random_body(random.Random(100 + seed)))
    best = brute_force(problem)
    try:
        red = reduce_problem(problem)
    except Infeasible:  # found by the reduction: brute force agrees
        assert best is None
        return
    variables = red.variables()
    found = None
    for choice in itertools.product(*[range(len(red.unary[a])) for a in variables]):
        plan = red.expand(dict(zip(variables, choice, strict=True)))
        judged = evaluate(problem, plan)
        value = red.value(dict(zip(variables, choice, strict=True)))
        if np.isfinite(value):
            assert judged.cost == value
        if judged.feasible and np.isfinite(value) and (found is None or value < found):
            found = value
    assert (None if best is None else best[0]) == found


def test_local_search_fits_the_limit(tmp_path: Path) -> None:
    """A chain where the cheapest strategies overflow: the plan found fits and is feasible."""
    rng = random.Random(7)
    n = 12
    body = {"name": "chain", "nodes": {"intervals": [[i, i + 4] for i in range(n)],
                                       "costs": [[rng.randint(0, 9), rng.randint(10, 40)] for _ in range(n)],
                                       "usages": [[10, 3] for _ in range(n)]},
            "edges": {"nodes": [[i, i + 1] for i in range(n - 1)],
                      "costs": [[rng.randint(0, 9) for _ in range(4)] for _ in range(n - 1)]},
            "usage_limit": 25}
    problem = _problem(tmp_path, body)
    red = reduce_problem(problem)
    variables = red.variables()
    graph = _graph(red, variables, memory_rows(red, variables, problem.usage_limit))
    found = improve(graph, rounds=50)
    assert found is not None
    plan = red.expand(dict(zip(variables, (int(c) for c in found[0]), strict=True)))
    judged = evaluate(problem, plan)
    assert judged.feasible and judged.cost == found[0 + 1]
    assert judged.cost >= brute_force(problem)[0]  # type: ignore[index]


def test_cli_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, out = tmp_path / "example.json", tmp_path / "solution.json"
    path.write_text(EXAMPLE_TEXT)
    assert sbp_solve.main([str(path), "-o", str(out), "--time-limit", "30"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("example: cost=445 bound=445 gap=0% time=")
    assert json.loads(out.read_text()) == [0, 0, 2, 1, 0]


def test_cli_infeasible(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tight.json"
    path.write_text(EXAMPLE_TEXT.replace('"usage_limit": 50', '"usage_limit": 40'))
    assert sbp_solve.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "no plan fits the usage limit 40" in err and "the smallest usage limit found is 50" in err


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"problem": {"nodes": {"intervals": [[0, 1]], "costs": [[1, x]]}}}')
    assert sbp_solve.main([str(bad)]) == 1
    assert f"sbp-solve: error: {bad}:1:" in capsys.readouterr().err
    assert sbp_solve.main([str(tmp_path / "missing.json")]) == 1
    assert "No such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as caught:
        sbp_solve.main([str(bad), "--time-limit", "0"])
    assert caught.value.code == 1
