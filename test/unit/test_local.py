"""passes/solver/local.py: a hub's local costs (one gather over its matrices side by side) are the
sum over its neighbours, and the local search's plans fit the rows and are priced right."""

from __future__ import annotations

import numpy as np
import pytest

from sbpc.passes.solver import local
from sbpc.passes.solver.local import HUB, Graph, Search, _settle, improve
from sbpc.passes.solver.sharding import Rows


def star(seed: int, leaves: int, ring: bool = True) -> Graph:
    """A hub (variable 0) joined to every leaf, leaves joined in a ring (unless not `ring`), one
    memory row per leaf pair holding the hub and both leaves."""
    rng = np.random.default_rng(seed)
    n = leaves + 1
    unary = [rng.integers(0, 50, int(rng.integers(2, 6))).astype(float) for _ in range(n)]
    near: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(n)]
    edges = [(0, b) for b in range(1, n)] + ([(b, b % leaves + 1) for b in range(1, n)] if ring else [])
    for a, b in edges:
        m = rng.integers(0, 40, (len(unary[a]), len(unary[b]))).astype(float)
        near[a].append((b, m))
        near[b].append((a, m.T))
    rows = [np.zeros(0, np.int64)] * n
    usage = [np.zeros((0, len(u))) for u in unary]
    rows[0], usage[0] = np.arange(leaves), np.tile(rng.integers(0, 5, len(unary[0])).astype(float), (leaves, 1))
    for b in range(1, n):
        rows[b] = np.array(sorted({b - 1, (b - 2) % leaves}))
        usage[b] = np.tile(rng.integers(0, 5, len(unary[b])).astype(float), (len(rows[b]), 1))
    return Graph(unary, near, Rows.from_dense(rows, usage, np.zeros(leaves), 9.0))


def _leanest(graph: Graph) -> Search:
    return Search(graph, np.array([int(np.argmin(graph.rows.total(a))) for a in range(len(graph.unary))]))


@pytest.mark.parametrize("seed", range(6))
def test_hub_local_costs_are_the_neighbour_sum(seed: int) -> None:
    graph = star(seed, 3 * HUB)
    assert 0 in graph.hubs and 1 not in graph.hubs
    rng = np.random.default_rng(seed)
    for _ in range(20):
        search = Search(graph, np.array([int(rng.integers(len(u))) for u in graph.unary]))
        for a in (0, 1):
            direct = graph.unary[a] + sum(m[:, search.choice[b]] for b, m in graph.near[a])
            np.testing.assert_allclose(search.local(a), direct)


@pytest.mark.parametrize("seed", range(6))
def test_improve_plans_fit_and_are_priced_right(seed: int) -> None:
    graph = star(seed, 3 * HUB)
    found = improve(graph, rounds=50)
    leanest = _leanest(graph)
    if found is None:  # only where not even the leanest plan fits
        assert not leanest.within()
        return
    choice, value = found
    assert (graph.rows.of(choice) <= graph.rows.limit).all()
    assert value == pytest.approx(graph.value(choice))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("root", [0, 1])
def test_tree_pick_is_the_tree_optimum_given_the_rest(seed: int, root: int) -> None:
    """A tree block move through the hub (or from a leaf) is the best choice of the tree's variables
    with the rest fixed (no edges between them but the tree's): by enumeration."""
    import itertools

    from sbpc.passes.solver.local import _tree, _tree_pick

    graph = star(seed, 3 * HUB, ring=False)
    rng = np.random.default_rng(seed)
    search = Search(graph, np.array([int(rng.integers(len(u))) for u in graph.unary]))
    tree = _tree(graph, root, 4)
    pick = _tree_pick(search, tree, np.zeros(len(graph.rows.constant)))
    members = tree[0]
    trial = search.choice.copy()
    for v, c in pick.items():
        trial[v] = c
    best = np.inf
    for combo in itertools.product(*(range(len(graph.unary[v])) for v in members)):
        other = search.choice.copy()
        other[members] = combo
        best = min(best, graph.value(other))
    assert graph.value(trial) == pytest.approx(best)


def coordinated_star(leaves: int) -> Graph:
    """A hub whose choice 1 is cheaper only with every leaf at its choice 1 too: from all zeros,
    no single variable nor pair gains (a leaf's 1 against the hub's 0 costs 10), the star does."""
    unary = [np.array([0.0, -2.0 * leaves])] + [np.array([0.0, 1.0]) for _ in range(leaves)]
    near: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(leaves + 1)]
    m = np.array([[0.0, 10.0], [10.0, 0.0]])
    for b in range(1, leaves + 1):
        near[0].append((b, m))
        near[b].append((0, m.T))
    empty = [np.zeros(0, np.int64)] * (leaves + 1)
    return Graph(unary, near, Rows.from_dense(empty, [np.zeros((0, 2))] * (leaves + 1), np.zeros(0), np.inf))


def test_a_star_move_moves_a_hub_with_its_leaves() -> None:
    graph = coordinated_star(2 * HUB)
    search = Search(graph, np.zeros(2 * HUB + 1, np.int64))
    search.descend(np.arange(2 * HUB + 1), feasible=True, sweeps=10, stop=None)
    assert not search.pair_moves(None) and not search.choice.any()
    assert search.star_moves(None)
    assert search.choice.tolist() == [1] * (2 * HUB + 1)
    assert graph.value(search.choice) == pytest.approx(-2.0 * HUB * 2 + 2 * HUB)


@pytest.mark.parametrize("seed", range(6))
def test_star_moves_keep_the_rows_and_never_raise_the_value(seed: int) -> None:
    graph = star(seed, 3 * HUB)
    found = improve(graph, rounds=0)
    if found is None:
        return
    search = Search(graph, found[0])
    before = graph.value(search.choice)
    search.star_moves(None)
    assert search.within() and graph.value(search.choice) <= before + 1e-9


def _cheapest(graph: Graph) -> Search:
    return Search(graph, np.array([int(np.argmin(u)) for u in graph.unary]))


def _overflowing(seeds: range) -> list[Graph]:
    """Star graphs whose cheapest choices overflow the rows and whose leanest fit."""
    graphs = [star(seed, 3 * HUB) for seed in seeds]
    return [g for g in graphs if _leanest(g).within()
            and not _cheapest(g).within()]


def test_settling_keeps_the_cheapest_plan_that_fits() -> None:
    """From the leanest plan (fits, dear) and a price rise over the cheapest choices' overflow,
    `_settle` returns a plan that fits and costs no more, and on some graphs less: a part of
    the rise is enough."""
    graphs = _overflowing(range(30))
    assert len(graphs) >= 5
    cheaper = 0
    for graph in graphs:
        fit = _leanest(graph)
        greedy = _cheapest(graph)
        over = np.maximum(greedy.used - graph.rows.limit, 0.0)
        rise = 1e3 * (over > 0)
        got = _settle(fit, (greedy, np.zeros(len(over)), rise), np.random.default_rng(0),
                      np.arange(len(graph.unary)), None)
        assert got.within()
        assert graph.value(got.choice) <= graph.value(fit.choice) + 1e-9
        cheaper += graph.value(got.choice) < graph.value(fit.choice) - 1e-9
    assert cheaper >= 1


def test_idle_soft_rounds_raise_the_prices_faster(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four variables sharing a row that holds three of their bytes; sparing a byte costs a million
    times the first price per byte, so the soft phase's first rounds move nothing. Growing the
    prices by `SOFT_IDLE_GROWTH` after such rounds reaches the plan that fits (one byte spared) in
    fewer rounds than growing by `SOFT_GROWTH` alone."""
    unary = [np.array([0.0, 1e6]) for _ in range(4)]
    rows = Rows.from_dense([np.array([0])] * 4, [np.array([[1.0, 0.0]])] * 4, np.zeros(1), 3.0)
    graph = Graph(unary, [[] for _ in range(4)], rows)
    rounds: list[int] = []
    real = local._soft_round

    def counted(*args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        rounds[-1] += 1
        real(*args, **kwargs)

    monkeypatch.setattr(local, "_soft_round", counted)
    for growth in (local.SOFT_IDLE_GROWTH, local.SOFT_GROWTH):
        monkeypatch.setattr(local, "SOFT_IDLE_GROWTH", growth)
        rounds.append(0)
        found = improve(graph, rounds=0, start=np.zeros(4, np.int64))
        assert found is not None and sorted(found[0].tolist()) == [0, 0, 0, 1] and found[1] == 1e6
    assert rounds[0] < rounds[1]
