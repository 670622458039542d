"""DTensor's greedy redistribute planner (bench/dtensor_greedy.py): its plans are valid under our step
rules and preserve the value on simulated ranks for every pair of ND-SBPs, it reproduces DTensor's own
traces, and the optimal planner is never worse than it."""

import itertools

import numpy as np
import pytest

from bench.dtensor_greedy import dtensor_greedy_plan, greedy_moves
from sbpc.dialects.collectives import execute_plan
from sbpc.dialects.sbp import BROADCAST, ReduceKind, partial, split
from sbpc.passes.cost.comm import Plan, PlannerCache, plan_transition
from sbpc.runtime.distribute import assemble, distribute

S0, S1, B, P, PMAX = split(0), split(1), BROADCAST, partial(), partial(ReduceKind.MAX)
SHAPE = (5, 7)
ALPHABET = (S0, S1, B, P)


PLANNER = PlannerCache()
"""One planner cache for the module's many plans (a fresh one per call would rebuild every graph)."""


def run_plan(plan: Plan, value: np.ndarray, src, dst, hierarchy, rng) -> tuple[np.ndarray, int]:
    shards, measured = execute_plan(plan.steps, distribute(value, src, hierarchy, rng), src, dst, SHAPE, hierarchy)
    return assemble(shards, dst, hierarchy), measured


def _check_all_pairs(hierarchy, alphabet, merge: bool, sample: int | None = None) -> int:
    """Plan, execute and compare every ordered pair (or a seeded sample of `sample` pairs)."""
    rng = np.random.default_rng(11)
    value = rng.standard_normal(SHAPE).astype(np.float32)
    states = list(itertools.product(alphabet, repeat=len(hierarchy)))
    pairs = list(itertools.product(states, states))
    if sample is not None:
        pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), size=sample, replace=False))]
    checked = 0
    for src, dst in pairs:
        plan = dtensor_greedy_plan(src, dst, SHAPE, 4, hierarchy, merge=merge)
        if not merge:
            assert all(len(s.mesh_axes) == 1 for s in plan.steps), (src, dst, plan)
        out, measured = run_plan(plan, value, src, dst, hierarchy, rng)
        assert np.array_equal(out, value), (src, dst, plan)  # partial inputs are split exactly
        assert measured == plan.bytes_sent, (src, dst, plan)
        checked += 1
    return checked


def test_every_pair_on_2x2_is_valid_and_preserves_the_value() -> None:
    """The acceptance case: all 16 x 16 ordered pairs over {S(0), S(1), B, P}^2 on a 2x2 mesh."""
    assert _check_all_pairs((2, 2), ALPHABET, merge=False) == 256


@pytest.mark.parametrize(
    ("hierarchy", "alphabet"),
    [((2,), (S0, S1, B, P, PMAX)), ((2, 3), ALPHABET), ((2, 4), ALPHABET), ((2, 3), (S0, S1, B, PMAX)),
     ((2, 3, 2), (S0, S1, B, PMAX))],
    ids=["1d", "2x3", "2x4", "2x3-max", "2x3x2"],
)
def test_other_meshes(hierarchy, alphabet) -> None:
    states = len(alphabet) ** len(hierarchy)
    if len(hierarchy) == 3:  # 4096 pairs: a seeded sample keeps the test fast
        assert _check_all_pairs(hierarchy, alphabet, merge=False, sample=400) == 400
    else:
        assert _check_all_pairs(hierarchy, alphabet, merge=False) == states * states


def test_merged_variant_is_valid() -> None:
    assert _check_all_pairs((2, 2), ALPHABET, merge=True) == 256


def _moves(src, dst, hierarchy=(2, 2)):
    return [(axis, str(old), str(new)) for axis, old, new in greedy_moves(src, dst, hierarchy)]


def test_reproduces_dtensor_traces() -> None:
    # DTensor's docstring example: nested sharding (S(0), S(0)) -> (R, S(0)) replicates mesh dim 1 first.
    assert _moves((S0, S0), (B, S0)) == [(1, "#sbp.S<0>", "#sbp.B"), (0, "#sbp.S<0>", "#sbp.B"),
                                         (1, "#sbp.B", "#sbp.S<0>")]
    # DebugMode trace in reference/peers.md §1.1: S(1)S(0) -> S(1)R -> S(0)R -> S(0)S(1).
    assert _moves((S1, S0), (S0, S1)) == [(1, "#sbp.S<0>", "#sbp.B"), (0, "#sbp.S<1>", "#sbp.S<0>"),
                                          (1, "#sbp.B", "#sbp.S<1>")]
    # No sharding in the source: the inner -> outer pass is skipped, outer -> inner only.
    assert _moves((P, P), (B, B)) == [(0, "#sbp.P<sum>", "#sbp.B"), (1, "#sbp.P<sum>", "#sbp.B")]
    # A 1-D mesh is one direct transition.
    assert _moves((S1,), (S0,), (4,)) == [(0, "#sbp.S<1>", "#sbp.S<0>")]


def test_s_to_p_replicates_first() -> None:
    """DTensor has no S -> P: the plan all-gathers, then makes the partial locally."""
    plan = dtensor_greedy_plan((S0,), (P,), SHAPE, 4, (2,))
    assert [s.kind for s in plan.steps] == ["all_gather", "to_partial"]
    assert [s.kind for s in plan_transition((S0,), (P,), SHAPE, 4, (2,)).steps] == ["to_partial"]


def test_partial_kind_change_replicates_first() -> None:
    plan = dtensor_greedy_plan((P,), (PMAX,), SHAPE, 4, (2,))
    assert [s.kind for s in plan.steps] == ["all_reduce", "to_partial"]


def test_mixed_partial_kinds_in_a_bad_order_are_not_supported() -> None:
    # Outer -> inner makes (P(max), P(sum)) and would then reduce the outer max before the inner sum.
    with pytest.raises(NotImplementedError):
        dtensor_greedy_plan((B, P), (PMAX, B), SHAPE, 4, (2, 2))


def test_pp_to_bb_merged_all_reduce_is_cheaper_than_two() -> None:
    """(P, P) -> (B, B) on 2x2: greedy does one all-reduce per mesh dim; the optimal planner (and
    DTensor's flattened-mesh post-pass) one over both dims, which costs less."""
    shape = (8, 8)
    greedy = dtensor_greedy_plan((P, P), (B, B), shape, 4, (2, 2))
    optimal = plan_transition((P, P), (B, B), shape, 4, (2, 2))
    merged = dtensor_greedy_plan((P, P), (B, B), shape, 4, (2, 2), merge=True)
    assert [(s.kind, s.mesh_axes) for s in greedy.steps] == [("all_reduce", (0,)), ("all_reduce", (1,))]
    assert [(s.kind, s.mesh_axes) for s in optimal.steps] == [("all_reduce", (0, 1))]
    assert [(s.kind, s.mesh_axes) for s in merged.steps] == [("all_reduce", (0, 1))]
    assert optimal.time_us == pytest.approx(6.6 + 6 * 0.6 + 384 / 87.7e3)
    assert greedy.time_us == pytest.approx(2 * (6.6 + 2 * 0.6 + 256 / 87.7e3))
    assert optimal.time_us < greedy.time_us
    assert optimal.bytes_sent < greedy.bytes_sent


@pytest.mark.parametrize("hierarchy", [(2, 2), (2, 4)])
def test_optimal_is_never_worse_than_greedy(hierarchy) -> None:
    states = list(itertools.product(ALPHABET, repeat=len(hierarchy)))
    strictly_better = 0
    for src, dst in itertools.product(states, states):
        best = plan_transition(src, dst, SHAPE, 4, hierarchy, cache=PLANNER).time_us
        greedy = dtensor_greedy_plan(src, dst, SHAPE, 4, hierarchy).time_us
        assert best <= greedy + 1e-6, (src, dst)
        strictly_better += best < greedy - 1e-6
    assert strictly_better > 0
