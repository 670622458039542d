"""passes/solver/iopddl.py and strategy.py: the streaming reader against `json` (plain, gzip, any
layout, chunk boundaries anywhere), located errors, the contest's evaluator on example.json
(by hand and by enumeration), and the solver package knowing no IR."""

from __future__ import annotations

import ast
import gzip
import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from sbpc.passes.solver import iopddl
from sbpc.passes.solver.iopddl import IopddlError, read_problem
from sbpc.passes.solver.strategy import ProblemError, evaluate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "iopddl" / "example.json"
EXAMPLE_TEXT = """{"problem": {"name": "example",
  "nodes": {"intervals": [[30, 70], [40, 70], [50, 120], [110, 140], [110, 150]],
            "costs": [[15], [55, 65], [25, 45, 35], [85, 75], [95]],
            "usages": [[10], [25, 25], [15, 20, 15], [10, 10], [15]]},
  "edges": {"nodes": [[0, 1], [0, 2], [1, 3], [2, 4], [3, 4]],
            "costs": [[30, 40], [50, 10, 40], [90, 10, 20, 80], [60, 20, 30], [70, 60]]},
  "usage_limit": 50}}"""


def random_body(rng: random.Random) -> dict:
    """A random problem as the contest's JSON object (small: for brute force)."""
    n = rng.randint(1, 5)
    sizes = [rng.randint(1, 3) for _ in range(n)]
    big = 10**18
    costs = [[rng.choice([rng.randint(0, 50), rng.randint(0, 50), big]) for _ in range(k)] for k in sizes]
    usages = [[rng.randint(0, 20) for _ in range(k)] for k in sizes]
    intervals = []
    for _ in range(n):
        a = rng.randint(0, 8)
        intervals.append([a, a + rng.randint(0, 6)])
    edges, edge_costs = [], []
    for _ in range(rng.randint(0, 2 * n)):
        u, v = rng.randrange(n), rng.randrange(n)
        if u == v:
            continue
        edges.append([u, v])
        if rng.random() < 0.3:  # a follower: one finite entry per row
            cells = [big] * (sizes[u] * sizes[v])
            for r in range(sizes[u]):
                cells[r * sizes[v] + rng.randrange(sizes[v])] = rng.randint(0, 30)
            edge_costs.append(cells)
        else:
            edge_costs.append([rng.choice([rng.randint(0, 40)] * 5 + [big]) for _ in range(sizes[u] * sizes[v])])
    body = {"name": f"random-{rng.random():.6f}", "nodes": {"intervals": intervals, "costs": costs, "usages": usages},
            "edges": {"nodes": edges, "costs": edge_costs}}
    if rng.random() < 0.8:
        body["usage_limit"] = rng.randint(5, 60)
    return body


def brute_force(problem) -> tuple[int, list[int]] | None:  # type: ignore[no-untyped-def]
    best = None
    for choice in itertools.product(*[range(int(k)) for k in problem.sizes()]):
        judged = evaluate(problem, list(choice))
        if judged.feasible and judged.cost < 10**18 and (best is None or judged.cost < best[0]):
            best = (judged.cost, list(choice))
    return best


def test_example_cost_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "example.json"
    path.write_text(EXAMPLE_TEXT)
    p = read_problem(path)
    assert (p.name, p.n, p.m, p.usage_limit) == ("example", 5, 5, 50)
    # [0, 0, 2, 1, 0]: nodes 15 + 55 + 35 + 75 + 95, edges 30 + 40 + 10 + 30 + 60.
    judged = evaluate(p, [0, 0, 2, 1, 0])
    assert (judged.cost, judged.peak, judged.feasible) == (445, 50, True)
    # Strategy 1 of node 2 uses 20: at t = 50..69 nodes 0, 1, 2 are live, 10 + 25 + 20 = 55 > 50.
    assert evaluate(p, [0, 0, 1, 1, 0]) == type(judged)(415, 55, False)
    # At t = 110 node 2 (until 120) and nodes 3, 4 are live; node 1 ended at 70: [a, b) is half open.
    assert evaluate(p, [0, 0, 0, 0, 0]).peak == 50
    assert brute_force(p) == (445, [0, 0, 2, 1, 0])


def test_shared_example_matches() -> None:
    assert brute_force(read_problem(EXAMPLE)) == (445, [0, 0, 2, 1, 0])


@pytest.mark.parametrize("seed", range(6))
def test_reader_matches_json(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    body = random_body(rng)
    text = json.dumps({"problem": body}, indent=rng.choice([None, 1]))
    monkeypatch.setattr(iopddl, "CHUNK", rng.randint(1, 9))  # chunk boundaries inside numbers, keys, lists
    plain, packed = tmp_path / "p.json", tmp_path / "p.json.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        p = read_problem(path)
        assert p.name == body["name"] and p.usage_limit == body.get("usage_limit")
        assert [p.cost(i).tolist() for i in range(p.n)] == body["nodes"]["costs"]
        assert [p.usage(i).tolist() for i in range(p.n)] == body["nodes"]["usages"]
        assert p.intervals.tolist() == body["nodes"]["intervals"]
        assert p.edges.reshape(-1, 2).tolist() == body["edges"]["nodes"]
        assert [p.matrix(e).reshape(-1).tolist() for e in range(p.m)] == body["edges"]["costs"]


P = '{"problem": {"nodes": {"intervals": '


@pytest.mark.parametrize(("text", "message"), [
    (P + '[[0, 1]], "costs": [[1 2]], "usages": [[1, 2]]}}}', "1:57: expected integers separated by commas"),
    (P + '[[0, 1]], "costs": [[1, -2]], "usages": [[1, 2]]}}}', "1:61: expected a non-negative integer, found '-'"),
    (P + '[[0, 1]],\n "costs": [[1, 2],], "usages": [[1, 2]]}}}', "2:12: expected lists separated by commas"),
    (P + '[[0, 1]], "costs": [[1, 2]], "usages": [[1, 2]]}, "usage_limit": "x"}}', "usage_limit is 'x'"),
    (P + '[[0, 1]], "costs": [[1, 2]], "usages": [[1, 2]]}, "edges": {"nodes": [[0, 1]], "costs": [[1]]}}}',
     "edge 0 names node [0, 1] of 1"),
    (P + '[[0, 1]], "costs": [[1, 2]]', "expected ',', found the end of the file"),
    (P + '[[0, 1, 2]], "costs": [[1]], "usages": [[1]]}}}', "nodes.intervals[0] has 3 entries, not 2"),
    (P + '[[0, 1]], "costs": [[1]], "usages": [[1, 2]]}}}', "differ in shape"),
    (P + '[[0, 1]], "costs": [[99999999999999999999]], "usages": [[1]]}}}', "above 2**63 - 1"),
    (P + '[[0, 1]], "costs": [[[1]]], "usages": [[1]]}}}', "nested deeper"),
    ('{"problem": {"nodes": {"costs": [[1]], "usages": [[1]]}}}', 'has no "intervals"'),
    ('[1, 2]', "expected '{', found '['"),
])
def test_located_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(IopddlError) as caught:
        read_problem(path)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_bad_solutions() -> None:
    p = iopddl.read_stream(__import__("io").BytesIO(EXAMPLE_TEXT.encode()), "example.json")
    with pytest.raises(ProblemError, match="node 2: strategy 3 of 3"):
        evaluate(p, [0, 0, 3, 0, 0])
    with pytest.raises(ProblemError, match="5 entries, this one 4"):
        evaluate(p, [0, 0, 0, 0])
    assert np.array_equal(p.sizes(), [1, 2, 3, 2, 1])


def test_solver_package_knows_no_ir() -> None:
    """passes/solver is IR-free: no xDSL, no dialect but the units table, no other pass."""
    for path in sorted((ROOT / "passes" / "solver").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith("xdsl"), (path.name, name)
                if name.startswith("sbpc."):
                    assert name.startswith(("sbpc.passes.solver", "sbpc.dialects.units")), (path.name, name)
