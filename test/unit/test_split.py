"""passes/solver/split.py: any split of a shared boxing is at most its exact charge (brute force on
random covers); the projection; the ascent's bound rises and stays below the exact optimum of a
generated DAG, and its plans are priced exactly."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bench.gen_dag import generate
from sbpc import api
from sbpc.dialects.units import US_PER_SECOND
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.global_search.problem import Builder, Pricer
from sbpc.passes.infer_sbp.local import functions
from sbpc.passes.solver.anytime import Descent, pairwise_graph
from sbpc.passes.solver.factor import CoverForm, cover_value, eliminate
from sbpc.passes.solver.lagrange import Messages
from sbpc.passes.solver.split import _capped, ascend, lower_split, split_table


def random_form(rng: np.random.Generator, sizes: list[int], source: bool) -> CoverForm:
    targets, classes = int(rng.integers(2, 5)), int(rng.integers(1, 4))
    consumers = range(1, len(sizes)) if source else range(len(sizes))
    return CoverForm(
        0 if source else None, rng.integers(0, classes, sizes[0] if source else 1), rng.random((classes, targets)),
        {v: rng.random((sizes[v], targets)) < 0.4 for v in consumers}, rng.random(targets) < 0.2)


def random_split(rng: np.random.Generator, form: CoverForm) -> dict[int, np.ndarray]:
    """Shares ≥ 0, none where a consumer cannot need a target or a `to_global` does, Σ ≤ 1."""
    raw = {v: rng.random(len(form.fixed)) * needs.any(axis=0) * ~form.fixed for v, needs in form.needs.items()}
    total = np.maximum(sum(raw.values()), 1.0) * (1 + rng.random(len(form.fixed)))
    return {v: r / total for v, r in raw.items()}


@pytest.mark.parametrize("source", [True, False])
def test_any_split_is_at_most_the_exact_charge(source: bool) -> None:
    rng = np.random.default_rng(int(source))
    for _ in range(40):
        sizes = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(3, 5)))]
        form = random_form(rng, sizes, source)
        even = lower_split(form)
        for t in range(len(form.fixed)):
            assert sum(s[t] for s in even.values()) <= 1 + 1e-12
        for split in (even, random_split(rng, form)):
            for choice in itertools.product(*[range(k) for k in sizes]):
                plan = list(choice)
                fixed = form.price[form.rows[choice[0] if source else 0]] @ form.fixed
                charged = fixed + sum(split_table(form, v, s)[choice[0] if source else 0, choice[v]]
                                      for v, s in split.items())
                assert charged <= cover_value(form, plan) + 1e-12


def test_capped_is_the_projection_onto_the_simplex() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        column = rng.random(int(rng.integers(1, 7))) * 2
        if column.sum() <= 1:
            continue
        x = _capped(column)
        assert (x >= 0).all() and x.sum() == pytest.approx(1.0)
        theta = (column - x)[x > 0]
        assert np.allclose(theta, theta[0])  # equal shift where positive,
        assert (column[x == 0] <= theta[0] + 1e-12).all()  # and the rest at or below it


def test_ascent_raises_the_bound_below_the_optimum() -> None:
    """gen_dag 60: the even split's diffusion bound, then 40 steps: the bound rises, stays at most
    the exact optimum (elimination), and every plan it keeps is priced exactly, at least that."""
    program = api.parse(generate(60))
    f = next(iter(functions(program.module)))
    cache = InferenceCache()
    problem = Builder(f, cache, Pricer(cache.planner), None).build()
    optimum = eliminate(problem.factors())
    assert optimum is not None
    exact, lower = problem.factors(covers=True), problem.factors(lower=True, pairwise=True)
    graph = pairwise_graph(lower, None)
    messages = Messages(graph.unary, graph.near)
    messages.sweep(10)
    start = messages.bound()
    found = ascend(messages, [s.form for s in problem.shared], exact.value, Descent(exact, None).run,
                   graph.constant, steps=40)
    bound = (graph.constant + found.bound) / US_PER_SECOND
    assert found.bound > start
    assert bound <= optimum.objective * (1 + 1e-9)
    assert found.plans
    for value, choice in found.plans:
        assert value == pytest.approx(exact.value(choice), rel=1e-12)
        assert value >= optimum.objective * (1 - 1e-9)
