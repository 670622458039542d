"""passes/solver/neighbourhood.py and `anytime.Descent.share_moves`: a folded window prices every
plan that differs from the held one only inside it exactly as the whole problem does (random
problems with pairs, factors and covers, by enumeration); a cover tabulated is its exact value;
the window search never raises the objective and, a window as wide as the problem, finds the
optimum; a share move makes the coordinated change no single-variable descent makes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sbpc.passes.solver.anytime import Descent
from sbpc.passes.solver.factor import CoverForm, FactorProblem, cover_table, cover_value
from sbpc.passes.solver.neighbourhood import Neighbourhoods
from test.unit.test_split import random_form


def random_problem(seed: int, n: int = 7) -> FactorProblem:
    """Pairs along a chain, one tabled factor of three, two covers (with and without a producer)."""
    rng = np.random.default_rng(seed)
    sizes = [int(rng.integers(2, 4)) for _ in range(n)]
    p = FactorProblem([rng.random(k) for k in sizes], constant=0.25)
    for v in range(1, n):
        p.add_pair(v - 1, v, rng.random((sizes[v - 1], sizes[v])))
    scope = tuple(sorted(rng.choice(n, 3, replace=False).tolist()))
    p.add_factor(scope, rng.random(tuple(sizes[w] for w in scope)))
    for source in (True, False):
        picked = sorted(rng.choice(n, 4, replace=False).tolist())
        local = random_form(rng, [sizes[w] for w in picked], source)
        rename = dict(enumerate(picked))
        p.covers.append(CoverForm(None if local.source is None else rename[local.source], local.rows, local.price,
                                  {rename[v]: needs for v, needs in local.needs.items()}, local.fixed))
    return p


def plans(p: FactorProblem) -> list[list[int]]:
    return [list(c) for c in itertools.product(*[range(len(u)) for u in p.unary])]


@pytest.mark.parametrize("seed", range(4))
def test_cover_table_is_the_cover_value(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for source in (True, False):
        sizes = [int(rng.integers(1, 4)) for _ in range(4)]
        form = random_form(rng, sizes, source)
        table = cover_table(form)
        consumers = sorted(form.needs)
        for choice in itertools.product(*[range(k) for k in sizes]):
            at = ((choice[0],) if source else ()) + tuple(choice[v] for v in consumers)
            assert table[at] == pytest.approx(cover_value(form, list(choice)))


@pytest.mark.parametrize("seed", range(4))
def test_a_folded_window_prices_changes_inside_it_exactly(seed: int) -> None:
    p = random_problem(seed)
    rng = np.random.default_rng(seed + 10)
    nb = Neighbourhoods(p)
    for _ in range(6):
        held = [int(rng.integers(len(u))) for u in p.unary]
        window = nb.window(int(rng.integers(len(held))), rng, size=int(rng.integers(1, 5)))
        folded = nb.fold(window, held)
        base = folded.value([held[v] for v in window])
        for inside in itertools.product(*[range(len(p.unary[v])) for v in window]):
            plan = list(held)
            for v, c in zip(window, inside, strict=True):
                plan[v] = c
            assert folded.value(list(inside)) - base == pytest.approx(p.value(plan) - p.value(held), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_search_never_worsens_and_a_whole_window_is_the_optimum(seed: int) -> None:
    p = random_problem(seed)
    optimum = min(p.value(c) for c in plans(p))
    rng = np.random.default_rng(seed)
    start = [int(rng.integers(len(u))) for u in p.unary]
    nb = Neighbourhoods(p)
    small = nb.search(start, lambda c: c, windows=5)
    assert p.value(small) <= p.value(start) + 1e-12
    whole = nb.search(start, lambda c: c, windows=1)
    # the window grows over every term, so from any seed it holds the connected problem
    assert p.value(whole) == pytest.approx(optimum)


def test_search_keeps_what_accept_refuses_out() -> None:
    p = random_problem(1)
    start = [0] * len(p.unary)
    assert Neighbourhoods(p).search(start, lambda c: c, accept=lambda c: c == start, windows=20) == start


def test_a_share_move_pays_a_second_target_once() -> None:
    """Two consumers of an argument (no producer variable), each cheaper by 1 with target 1 than
    with target 0 (already paid by a third use), target 1 priced 1.5: neither moves alone (+0.5),
    both together save 0.5."""
    p = FactorProblem([np.array([1.0, 0.0]), np.array([1.0, 0.0])])
    form = CoverForm(None, np.array([0]), np.array([[0.0, 1.5]]),
                     {0: np.array([[True, False], [False, True]]), 1: np.array([[True, False], [False, True]])},
                     np.array([True, False]))
    p.covers.append(form)
    descent = Descent(p, None, [form])
    assert descent.run([0, 0]) == [0, 0]
    moved = descent.share_moves([0, 0])
    assert moved == [1, 1]
    assert p.value(moved) == pytest.approx(p.value([0, 0]) - 0.5)
