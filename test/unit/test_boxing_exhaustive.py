"""Every ordered pair of ND-SBPs, both planners, executed on simulated ranks: the value survives and
the bytes the simulator measures equal the cost model's count (issue 4 acceptance). Meshes with
size-1 axes too (issue 11 point 2), also through the `lower-boxing` pass, the verifier and the
mesh simulator."""

import itertools

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from sbpc.dialects.collectives import execute_plan
from sbpc.dialects.context import register_dialects
from sbpc.dialects.sbp import BROADCAST, ReduceKind, partial, split
from sbpc.passes.cost.comm import Plan, PlannerCache, plan_transition
from sbpc.passes.lower_boxing import LowerBoxingPass, oneflow_plan
from sbpc.runtime.distribute import assemble, distribute
from sbpc.runtime.simulator import simulate, total_sent

S0, S1, B, P, PMAX = split(0), split(1), BROADCAST, partial(), partial(ReduceKind.MAX)
SHAPE = (5, 7)
ALL = (S0, S1, B, P, PMAX)
CASES = [((2,), ALL), ((3,), ALL), ((2, 2), ALL), ((2, 3), ALL), ((2, 2, 2), (S0, S1, B, P)),
         ((1,), ALL), ((1, 2), ALL), ((2, 1), ALL), ((1, 3), ALL), ((2, 1, 2), (S0, S1, B, P)),
         ((1, 2, 1), (S0, B, P, PMAX))]


PLANNER = PlannerCache()
"""One planner cache for the module's many plans (a fresh one per call would rebuild every graph)."""


def run_plan(plan: Plan, value: np.ndarray, src, dst, hierarchy, rng) -> tuple[np.ndarray, int]:
    shards, measured = execute_plan(plan.steps, distribute(value, src, hierarchy, rng), src, dst, SHAPE, hierarchy)
    return assemble(shards, dst, hierarchy), measured


SAMPLED = [  # every 7th pair on 3-D meshes (64 states, 4096 pairs); all of them under `-m exhaustive`
    *((h, a, 7 if len(h) == 3 else 1) for h, a in CASES),
    *(pytest.param(h, a, 1, marks=pytest.mark.exhaustive) for h, a in CASES if len(h) == 3),
]


@pytest.mark.parametrize(("hierarchy", "alphabet", "stride"), SAMPLED,
                         ids=lambda c: str(c) if isinstance(c, int) or isinstance(c[0], int) else "")
@pytest.mark.parametrize("planner", ["optimal", "oneflow"])
def test_every_transition_preserves_the_value(hierarchy, alphabet, stride, planner) -> None:
    rng = np.random.default_rng(7)
    value = rng.standard_normal(SHAPE).astype(np.float32)
    states = list(itertools.product(alphabet, repeat=len(hierarchy)))
    checked = 0
    for src, dst in itertools.islice(itertools.product(states, states), 0, None, stride):
        if planner == "optimal":
            plan = plan_transition(src, dst, SHAPE, 4, hierarchy, cache=PLANNER)
        else:
            plan = oneflow_plan(src, dst, SHAPE, 4, hierarchy)
        out, measured = run_plan(plan, value, src, dst, hierarchy, rng)
        assert np.array_equal(out, value), (src, dst, plan)  # partial inputs are split exactly
        assert measured == plan.bytes_sent, (src, dst, plan)
        checked += 1
    assert checked == -(-len(states) ** 2 // stride)


def test_optimal_is_never_worse_than_oneflow() -> None:
    for hierarchy, alphabet in CASES[2:4]:
        states = list(itertools.product(alphabet, repeat=len(hierarchy)))
        for src, dst in itertools.product(states, states):
            best = plan_transition(src, dst, SHAPE, 4, hierarchy, cache=PLANNER).time_us
            assert best <= oneflow_plan(src, dst, SHAPE, 4, hierarchy).time_us + 1e-6


@pytest.mark.parametrize("stride", [7, pytest.param(1, marks=pytest.mark.exhaustive)])
@pytest.mark.parametrize("planner", ["optimal", "oneflow"])
def test_mixed_partial_kinds_on_three_axes(planner, stride) -> None:
    """Sum and max partials interleaved on a 3-D mesh: no plan may reduce a max axis across a sum axis
    (every `stride`-th pair)."""
    rng = np.random.default_rng(11)
    value = rng.integers(-50, 50, size=SHAPE).astype(np.int32)
    hierarchy = (2, 2, 2)
    states = list(itertools.product((B, P, PMAX, S0), repeat=3))
    for src, dst in itertools.islice(itertools.product(states, states), 0, None, stride):
        plan = (
            plan_transition(src, dst, SHAPE, 4, hierarchy, cache=PLANNER)
            if planner == "optimal"
            else oneflow_plan(src, dst, SHAPE, 4, hierarchy)
        )
        out, measured = run_plan(plan, value, src, dst, hierarchy, rng)
        assert np.array_equal(out, value), (src, dst, plan)
        assert measured == plan.bytes_sent


def _nested(hierarchy: tuple[int, ...], first: int = 0) -> str:
    """`sbp.placement` ranks of a mesh, e.g. `[[0, 1]]` for (1, 2)."""
    if len(hierarchy) == 1:
        return "[" + ", ".join(str(first + i) for i in range(hierarchy[0])) + "]"
    stride = int(np.prod(hierarchy[1:]))
    return "[" + ", ".join(_nested(hierarchy[1:], first + i * stride) for i in range(hierarchy[0])) + "]"


def _sbp(state) -> str:
    return "[" + ", ".join(e.short_str() for e in state) + "]"


@pytest.mark.parametrize("stride", [4, pytest.param(1, marks=pytest.mark.exhaustive)])
@pytest.mark.parametrize("hierarchy", [(1, 2), (2, 1), (1, 2, 1)])
@pytest.mark.parametrize("planner", ["optimal", "oneflow"])
def test_lower_boxing_on_meshes_with_size_1_axes(hierarchy, planner, stride) -> None:
    """Each `sbp.boxing` lowered by the pass (every `stride`-th pair) verifies and runs on the mesh
    simulator: the value survives and the simulator measures the bytes the plan priced."""
    ctx = Context()
    register_dialects(ctx)
    rng = np.random.default_rng(3)
    value = rng.integers(-20, 20, size=SHAPE).astype(np.int32)
    alphabet = (S0, S1, B, P, PMAX) if len(hierarchy) == 2 else (S0, P, PMAX)
    states = list(itertools.product(alphabet, repeat=len(hierarchy)))
    collectives = 0
    lowering = LowerBoxingPass(planner=planner)  # one pass instance: its planner cache serves every pair
    for src, dst in itertools.islice(itertools.product(states, states), 0, None, stride):
        a, b = f"!sbp.tensor<5x7xi32, @m, {_sbp(src)}>", f"!sbp.tensor<5x7xi32, @m, {_sbp(dst)}>"
        text = (f'sbp.placement @m "cpu" {_nested(hierarchy)}\n'
                f"func.func @main(%a: {a}) -> {b} {{\n"
                f"  %0 = sbp.boxing %a : {a} -> {b}\n"
                f"  func.return %0 : {b}\n}}\n")
        module = Parser(ctx, text).parse_module()
        lowering.apply(ctx, module)
        module.verify()
        (out,), log = simulate(module, "main", [distribute(value, src, hierarchy, rng)])
        assert np.array_equal(assemble(out, dst, hierarchy), value), (src, dst, planner)
        plan = (
            plan_transition(src, dst, SHAPE, 4, hierarchy, cache=PLANNER)
            if planner == "optimal"
            else oneflow_plan(src, dst, SHAPE, 4, hierarchy)
        )
        assert [r.step.kind for r in log] == [s.kind for s in plan.steps], (src, dst)
        assert total_sent(log) == plan.bytes_sent, (src, dst, planner)
        collectives += len(log)
    assert collectives > len(states) // stride  # most pairs need at least one step
