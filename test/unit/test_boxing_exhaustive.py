"""Every ordered pair of ND-SBPs, both planners, executed on simulated ranks: the value survives and
the bytes the simulator measures equal the cost model's count (issue 4 acceptance)."""

import itertools

import numpy as np
import pytest

from sbpc.dialects.collectives import execute_plan
from sbpc.dialects.sbp import BROADCAST, ReduceKind, partial, split
from sbpc.passes.boxing_semantics import assemble, distribute
from sbpc.passes.cost_model import Plan, plan_transition
from sbpc.passes.lower_boxing import oneflow_plan

S0, S1, B, P, PMAX = split(0), split(1), BROADCAST, partial(), partial(ReduceKind.MAX)
SHAPE = (5, 7)
CASES = [((2,), (S0, S1, B, P, PMAX)), ((3,), (S0, S1, B, P, PMAX)), ((2, 2), (S0, S1, B, P, PMAX)),
         ((2, 3), (S0, S1, B, P, PMAX)), ((2, 2, 2), (S0, S1, B, P))]


def run_plan(plan: Plan, value: np.ndarray, src, dst, hierarchy, rng) -> tuple[np.ndarray, int]:
    shards, measured = execute_plan(plan.steps, distribute(value, src, hierarchy, rng), src, dst, SHAPE, hierarchy)
    return assemble(shards, dst, hierarchy), measured


@pytest.mark.parametrize(("hierarchy", "alphabet"), CASES, ids=lambda c: str(c) if isinstance(c[0], int) else "")
@pytest.mark.parametrize("planner", ["optimal", "oneflow"])
def test_every_transition_preserves_the_value(hierarchy, alphabet, planner) -> None:
    rng = np.random.default_rng(7)
    value = rng.standard_normal(SHAPE).astype(np.float32)
    states = list(itertools.product(alphabet, repeat=len(hierarchy)))
    checked = 0
    for src, dst in itertools.product(states, states):
        if planner == "optimal":
            plan = plan_transition(src, dst, SHAPE, 4, hierarchy)
        else:
            plan = oneflow_plan(src, dst, SHAPE, 4, hierarchy)
        out, measured = run_plan(plan, value, src, dst, hierarchy, rng)
        assert np.allclose(out, value, rtol=1e-5, atol=1e-5), (src, dst, plan)
        assert measured == plan.bytes_sent, (src, dst, plan)
        checked += 1
    assert checked == len(states) ** 2


def test_optimal_is_never_worse_than_oneflow() -> None:
    for hierarchy, alphabet in CASES[2:4]:
        states = list(itertools.product(alphabet, repeat=len(hierarchy)))
        for src, dst in itertools.product(states, states):
            best = plan_transition(src, dst, SHAPE, 4, hierarchy).time_us
            assert best <= oneflow_plan(src, dst, SHAPE, 4, hierarchy).time_us + 1e-6


@pytest.mark.parametrize("planner", ["optimal", "oneflow"])
def test_mixed_partial_kinds_on_three_axes(planner) -> None:
    """Sum and max partials interleaved on a 3-D mesh: no plan may reduce a max axis across a sum axis."""
    rng = np.random.default_rng(11)
    value = rng.integers(-50, 50, size=SHAPE).astype(np.int32)
    hierarchy = (2, 2, 2)
    states = list(itertools.product((B, P, PMAX, S0), repeat=3))
    for src, dst in itertools.product(states, states):
        plan = (plan_transition if planner == "optimal" else oneflow_plan)(src, dst, SHAPE, 4, hierarchy)
        out, measured = run_plan(plan, value, src, dst, hierarchy, rng)
        assert np.array_equal(out, value), (src, dst, plan)
        assert measured == plan.bytes_sent
