"""The planner's fast step pricing (passes/cost/steps.py) against its reference,
`collectives.step_bytes_exact`, exhaustively on small meshes; and the planner's plans against a
plain Dijkstra priced by `step_bytes_exact` (the planner before it numbered states and priced
steps per shape)."""

from __future__ import annotations

import functools
import heapq
import itertools
import math

import pytest

from sbpc.dialects.collectives import COMM_KINDS, step_bytes_exact, step_kind
from sbpc.dialects.sbp import BROADCAST, PartialAttr, SbpAttr, partial, split
from sbpc.passes.cost.comm import (
    DEFAULT_MODEL,
    CommModel,
    NdSbp,
    Plan,
    PlannerCache,
    Step,
    make_step,
    plan_transition,
    step_time,
    transition_time,
)
from sbpc.passes.cost.steps import axis_subsets, elements_sent, rank_ranges, split_dims, step_layout

S0, S1, B, P, PMAX = split(0), split(1), BROADCAST, partial(), partial("max")
HIERARCHIES = [(2,), (3,), (2, 2), (2, 3), (2, 2, 2)]
SHAPES = [(5, 7), (4, 6), (1, 3), (8,)]


PLANNER = PlannerCache()
"""One planner cache for the module's many plans (a fresh one per call would rebuild every graph)."""


def alphabet(shape: tuple[int, ...]) -> list[SbpAttr]:
    return [*(split(i) for i in range(len(shape))), B, P, PMAX]


def reference_step(
    kind: str, src: NdSbp, dst: NdSbp, axes: tuple[int, ...], shape: tuple[int, ...], elt_bytes: int,
    hierarchy: tuple[int, ...], model: CommModel = DEFAULT_MODEL,
) -> Step:
    """`make_step` as it was: every rank's bytes counted by `step_bytes_exact`."""
    if kind not in COMM_KINDS:
        return Step(kind, axes, src, dst, 0.0, 0)
    sent = step_bytes_exact(kind, src, dst, axes, shape, hierarchy, elt_bytes)
    n = math.prod(hierarchy[d] for d in axes)
    return Step(kind, axes, src, dst, step_time(kind, max(sent.values()), n, model), sum(sent.values()))


def fast_count(kind: str, src: NdSbp, dst: NdSbp, axes: tuple[int, ...], shape, hierarchy) -> tuple[int, int]:
    layout = step_layout(hierarchy, axes, split_dims(src), split_dims(dst), len(shape), kind == "all_reduce")
    return elements_sent(kind, rank_ranges(shape, src, hierarchy), rank_ranges(shape, dst, hierarchy), layout)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("hierarchy", HIERARCHIES)
def test_every_valid_step_prices_as_step_bytes_exact(hierarchy: tuple[int, ...], shape: tuple[int, ...]) -> None:
    states = list(itertools.product(alphabet(shape), repeat=len(hierarchy)))
    checked = 0
    for src, dst in itertools.product(states, states):
        for axes in axis_subsets(len(hierarchy)):
            kind = step_kind(src, dst, axes, hierarchy)
            if kind not in COMM_KINDS:
                continue
            for elt in (1, 4):
                got = make_step(kind, src, dst, axes, shape, elt, hierarchy)
                assert got == reference_step(kind, src, dst, axes, shape, elt, hierarchy), (kind, src, dst, axes)
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("shape", [(5, 7), (1, 3), (8,)])
@pytest.mark.parametrize("hierarchy", HIERARCHIES[:4])
def test_any_pair_and_kind_counts_as_step_bytes_exact(hierarchy: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """The factored count is plain arithmetic, exact for any two states, not only a valid step's."""
    states = list(itertools.product(alphabet(shape), repeat=len(hierarchy)))
    for src, dst in itertools.product(states, states):
        for axes in axis_subsets(len(hierarchy)):
            for kind in (*COMM_KINDS, "all_slice", "to_partial"):
                sent = step_bytes_exact(kind, src, dst, axes, shape, hierarchy, 1)
                expected = (sum(sent.values()), max(sent.values()))
                assert fast_count(kind, src, dst, axes, shape, hierarchy) == expected, (kind, src, dst, axes)


def test_other_element_sizes_take_the_exact_path() -> None:
    args = ("all_gather", (S0, S1), (B, S1), (0,), (5, 7))
    for elt in (0.5, 3):
        assert make_step(*args, elt, (2, 3)) == reference_step(*args, elt, (2, 3))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------


def reference_plan(
    src: NdSbp, dst: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...],
    model: CommModel = DEFAULT_MODEL, merge_axes: bool = True,
) -> Plan:
    """The planner as it was, run to the end from `src` (a full run settles every state as the
    planner's partial runs do): Dijkstra over state tuples, edges in the same scan order, each
    priced by `step_bytes_exact`, ties broken by push order."""
    if src == dst:
        return Plan(())
    kinds = frozenset(e for e in (*src, *dst) if isinstance(e, PartialAttr))
    best = _reference_search(src, shape, elt_bytes, hierarchy, model, kinds, merge_axes)
    steps = []
    state = dst
    while state != src:
        step = best[state][1]
        assert step is not None
        steps.append(step)
        state = step.src
    return Plan(tuple(reversed(steps)))


@functools.lru_cache(maxsize=64)
def _reference_search(
    src: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...], model: CommModel,
    kinds: frozenset[PartialAttr], merge_axes: bool,
) -> dict[NdSbp, tuple[float, Step | None]]:
    letters = [*(split(i) for i in range(len(shape))), B, *sorted(kinds, key=str)]
    subsets = axis_subsets(len(hierarchy)) if merge_axes else [(d,) for d in range(len(hierarchy))]
    best: dict[NdSbp, tuple[float, Step | None]] = {src: (0.0, None)}
    queue: list[tuple[float, int, NdSbp]] = [(0.0, 0, src)]
    counter, done = 1, set()
    while queue:
        cost, _, state = heapq.heappop(queue)
        if state in done:
            continue
        done.add(state)
        for axes in subsets:
            targets = [tuple(new if d in axes else e for d, e in enumerate(state)) for new in letters]
            if len(axes) > 1:
                for dims in itertools.product(range(len(shape)), repeat=len(axes)):
                    chosen = dict(zip(axes, dims, strict=True))
                    targets.append(tuple(split(chosen[d]) if d in axes else e for d, e in enumerate(state)))
            for nxt in dict.fromkeys(targets):
                kind = step_kind(state, nxt, axes, hierarchy)
                if kind is None or nxt in done:
                    continue
                step = _cached_reference_step(kind, state, nxt, axes, shape, elt_bytes, hierarchy, model)
                total = cost + step.time_us + 1e-9
                if total < best.get(nxt, (math.inf, None))[0]:
                    best[nxt] = (total, step)
                    heapq.heappush(queue, (total, counter, nxt))
                    counter += 1
    return best


_cached_reference_step = functools.lru_cache(maxsize=None)(reference_step)


def exact(plan: Plan) -> list[tuple[object, ...]]:
    """A plan's steps with their floats as bit patterns."""
    return [(s.kind, s.mesh_axes, s.src, s.dst, s.time_us.hex(), s.bytes_sent) for s in plan.steps]


@pytest.mark.parametrize(
    ("hierarchy", "shape", "elt_bytes", "merge_axes"),
    [((2, 2), (5, 7), 4, True), ((2, 3), (4, 6), 2, True), ((2, 3), (1, 3), 4, False), ((3,), (8,), 1, True)],
)
def test_plans_match_the_reference_planner(
    hierarchy: tuple[int, ...], shape: tuple[int, ...], elt_bytes: int, merge_axes: bool
) -> None:
    states = list(itertools.product(alphabet(shape), repeat=len(hierarchy)))
    for src, dst in itertools.product(states, states):
        got = plan_transition(src, dst, shape, elt_bytes, hierarchy, merge_axes=merge_axes, cache=PLANNER)
        expected = reference_plan(src, dst, shape, elt_bytes, hierarchy, merge_axes=merge_axes)
        assert exact(got) == exact(expected)
        if merge_axes:  # transition_time sums the plan's times without building it: the same value and type
            time_us = transition_time(src, dst, shape, elt_bytes, hierarchy, cache=PLANNER)
            assert (type(time_us), repr(time_us)) == (type(expected.time_us), repr(expected.time_us))


def test_plans_match_on_a_3d_mesh_with_another_model() -> None:
    model = CommModel(1.0, 0.25, 3.0)
    states = list(itertools.product((S0, B, P, PMAX), repeat=3))
    for src, dst in itertools.product(states[::3], states):
        got = plan_transition(src, dst, (5, 7), 4, (2, 2, 2), model, cache=PLANNER)
        assert exact(got) == exact(reference_plan(src, dst, (5, 7), 4, (2, 2, 2), model))
