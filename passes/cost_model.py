"""Communication costs: OneFlow's copy costs and the α-β collective model.

One module prices data movement for both `infer-sbp` and the boxing planner, so a signature
chosen for being cheap is cheap when planned.

* OneFlow's heuristics (reference/oneflow.md §1, §3), reproduced for `rule=oneflow`:
  `ibn_copy_cost_1d` (1-D eager sort key), `cost_1d` and `eager_nd_cost` (ND greedy scan).
* The α-β model (`CommModel`, DTensor's constants by default) prices one collective on one
  mesh axis; `plan_transition` finds the cheapest sequence of single-axis steps between two
  ND-SBPs by Dijkstra over ND-SBP states. `rule=cost` and `lower-boxing` both use it.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from dialects.sbp import (
    BROADCAST,
    BroadcastAttr,
    NdSbpAttr,
    PartialAttr,
    SbpAttr,
    SplitAttr,
    nd_sbp,
    split,
)
from passes.boxing_semantics import COMM_KINDS, step_bytes_exact, step_kind

INT32_MAX = 2147483647.0
INT64_MAX = 9223372036854775807.0
FLT_MAX = 3.4028234663852886e38
VALID_MAX_COPY_COST = 0.8 * FLT_MAX

NdSbp = tuple[SbpAttr, ...]

# ---------------------------------------------------------------------------
# OneFlow
# ---------------------------------------------------------------------------


def ibn_copy_cost_1d(producer: SbpAttr, consumer: SbpAttr, size: float) -> float:
    """OneFlow's 1-D sort key per input (sbp_parallel.cpp): 0, INT64_MAX, INT32_MAX or size."""
    if producer == consumer:
        return 0.0
    if isinstance(consumer, PartialAttr):
        return INT64_MAX
    if isinstance(producer, BroadcastAttr):
        return INT32_MAX
    return size


def penalty_partial_consumer(size: float, producer_n: int, consumer_n: int) -> float:
    """Penalty4PartialInConsumer, default policy 2."""
    return 4.0 * size * (producer_n + consumer_n)


def cost_1d(producer: SbpAttr, consumer: SbpAttr, size: float, n: int) -> float:
    """ComputCopyCostBetweenTwoSbpParallel on the same devices (eager)."""
    if producer == consumer:
        return 0.0
    if isinstance(consumer, PartialAttr):
        return penalty_partial_consumer(size, n, n)
    if isinstance(producer, BroadcastAttr):
        return 1.0
    if isinstance(consumer, SplitAttr) and isinstance(producer, SplitAttr):
        return size * (n - 1) / n
    if isinstance(consumer, SplitAttr) or isinstance(producer, SplitAttr):
        return size * (n - 1)  # P->S, S->B
    return 2.0 * size * (n - 1)  # P->B


def _can_merge_split(extent: int, merged: int) -> bool:
    return extent % merged in (0, 1, merged - 1)


def dim_reduce(
    src: NdSbp, dst: NdSbp, hierarchy: Sequence[int], shape: Sequence[int]
) -> tuple[NdSbp, NdSbp, tuple[int, ...]]:
    """InOutParallelDimReduce for one placement (NdSbpsDimReduce over src and dst).

    Size-1 mesh axes are dropped; an axis is merged into the previous reduced one when both
    ND-SBPs repeat their previous entry. B and P always merge; S(a) merges only if every extent
    the previous reduced axis holds for tensor axis a passes CanMergeSplit with the merged size.
    As in OneFlow, the held extents of a tensor axis split on an earlier reduced mesh axis are
    that axis's shard sizes (quotient and quotient + 1), not the logical extent. A 1-D hierarchy
    is kept as is; an all-1 mesh reduces to `[h0]: B`.
    """
    if len(hierarchy) == 1:
        if hierarchy[0] == 1:
            return (BROADCAST,), (BROADCAST,), (1,)
        return tuple(src), tuple(dst), tuple(hierarchy)
    nds = (tuple(src), tuple(dst))
    reduced: tuple[list[SbpAttr], list[SbpAttr]] = ([], [])
    rh: list[int] = []
    holding: tuple[dict[int, set[int]], dict[int, set[int]]] = ({}, {})
    last_holding: list[list[int]] = [[], []]
    last_axis = [-1, -1]

    def add(d: int) -> None:
        for k in range(2):
            if last_axis[k] >= 0:  # the previous reduced axis is final: record its shard sizes
                held: set[int] = set()
                for e in last_holding[k]:
                    if e % rh[-1]:
                        held.add(e // rh[-1] + 1)
                    held.add(e // rh[-1])
                holding[k][last_axis[k]] = held
            entry = nds[k][d]
            reduced[k].append(entry)
            if isinstance(entry, SplitAttr):
                last_axis[k] = entry.dim
                found = holding[k].get(entry.dim)
                last_holding[k] = sorted(found) if found is not None else [shape[entry.dim]]
            else:
                last_axis[k] = -1
        rh.append(hierarchy[d])

    for d, h in enumerate(hierarchy):
        if h == 1:
            continue
        if rh and all(nds[k][d] == reduced[k][-1] for k in range(2)):
            merged = rh[-1] * h
            if all(
                not isinstance(nds[k][d], SplitAttr) or all(_can_merge_split(e, merged) for e in last_holding[k])
                for k in range(2)
            ):
                rh[-1] = merged
                continue
        add(d)
    if not rh:
        return (BROADCAST,), (BROADCAST,), (hierarchy[0],)
    return tuple(reduced[0]), tuple(reduced[1]), tuple(rh)


def eager_nd_cost(src: NdSbp, dst: NdSbp, size: float, hierarchy: Sequence[int], shape: Sequence[int]) -> float:
    """ComputeEagerCopyCostBetweenNdSbp for producer and consumer on the same placement."""
    rs, rd, rh = dim_reduce(src, dst, hierarchy, shape)
    if rs == rd:
        return 0.0
    total_n = math.prod(hierarchy)
    if len(rh) == 1:
        return cost_1d(rs[0], rd[0], size, rh[0])
    total = 1.0
    normal = True
    for i, (a, b) in enumerate(zip(rs, rd, strict=True)):
        # OneFlow prices every axis with the total device count (its own comment admits the
        # resulting (B,S0)->(S0,S0) = 0 bug); reproduced as is.
        total += cost_1d(a, b, size, total_n)
        if isinstance(b, PartialAttr) and a != b:
            total += penalty_partial_consumer(size, total_n, total_n)
        if normal and isinstance(a, SplitAttr) and a == b:
            for j in range(i):
                if rs[j] != rd[j] and (rs[j] == a or rd[j] == a):
                    normal = False
                    break
    if not normal:
        total += size
    return total


# ---------------------------------------------------------------------------
# α-β collectives
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CommModel:
    """α-β cost of one collective in µs (DTensor's `_collective_utils` constants by default).

    A ring collective over n ranks costs `base + hops·latency + bytes_sent/bandwidth`.
    """

    base_us: float = 6.6
    latency_us: float = 0.6
    bandwidth_gbps: float = 87.7

    def time(self, hops: int, bytes_sent: float) -> float:
        return self.base_us + hops * self.latency_us + bytes_sent / (self.bandwidth_gbps * 1e3)


DEFAULT_MODEL = CommModel()

def step_time(kind: str, max_bytes_sent: float, n: int, model: CommModel = DEFAULT_MODEL) -> float:
    """Time of one collective over n ranks whose busiest rank sends `max_bytes_sent` bytes."""
    if kind not in COMM_KINDS or n == 1:
        return 0.0
    hops = 2 * (n - 1) if kind == "all_reduce" else n - 1
    return model.time(hops, max_bytes_sent)


@dataclass(frozen=True)
class Step:
    """One boxing step on the merged mesh axes `mesh_axes`."""

    kind: str
    mesh_axes: tuple[int, ...]
    src: NdSbp
    dst: NdSbp
    time_us: float
    bytes_sent: int
    """Total over all ranks (what `sbp-run` measures)."""


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]

    @property
    def time_us(self) -> float:
        return sum(s.time_us for s in self.steps)

    @property
    def bytes_sent(self) -> int:
        return sum(s.bytes_sent for s in self.steps)


def make_step(
    kind: str, src: NdSbp, dst: NdSbp, axes: tuple[int, ...], shape: tuple[int, ...], elt_bytes: int,
    hierarchy: tuple[int, ...], model: CommModel = DEFAULT_MODEL,
) -> Step:
    if kind not in COMM_KINDS:
        return Step(kind, axes, src, dst, 0.0, 0)
    sent = step_bytes_exact(kind, src, dst, axes, shape, hierarchy, elt_bytes)
    n = math.prod(hierarchy[d] for d in axes)
    return Step(kind, axes, src, dst, step_time(kind, max(sent.values()), n, model), sum(sent.values()))


_cached_step = lru_cache(maxsize=65536)(make_step)
"""`make_step`, shared by the graphs of tensors that differ only in their partial kinds."""


def _axis_subsets(rank: int) -> list[tuple[int, ...]]:
    return [c for k in range(1, rank + 1) for c in itertools.combinations(range(rank), k)]


@lru_cache(maxsize=16384)
def _steps_from(
    state: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...], model: CommModel,
    kinds: frozenset[PartialAttr], merge_axes: bool,
) -> tuple[tuple[NdSbp, Step], ...]:
    """The edges out of `state`, in the order Dijkstra scans them. Pricing a step counts bytes
    rank by rank, so the edges are built once per state and shared by the searches from every
    source over the same tensor."""
    alphabet: list[SbpAttr] = [*(split(i) for i in range(len(shape))), BROADCAST, *sorted(kinds, key=str)]
    subsets = _axis_subsets(len(hierarchy)) if merge_axes else [(d,) for d in range(len(hierarchy))]
    edges: list[tuple[NdSbp, Step]] = []
    for axes in subsets:
        targets = [tuple(new if d in axes else e for d, e in enumerate(state)) for new in alphabet]
        if len(axes) > 1:  # a merged all-to-all may give each listed axis its own split
            for dims in itertools.product(range(len(shape)), repeat=len(axes)):
                chosen = dict(zip(axes, dims, strict=True))
                targets.append(tuple(split(chosen[d]) if d in axes else e for d, e in enumerate(state)))
        for nxt in dict.fromkeys(targets):
            kind = step_kind(state, nxt, axes)
            if kind is not None:
                edges.append((nxt, _cached_step(kind, state, nxt, axes, shape, elt_bytes, hierarchy, model)))
    return tuple(edges)


class _Search:
    """Dijkstra from one source over ND-SBP states, advanced only as far as the targets asked for so
    far (most targets are a step or two away). Edges are single, possibly merged-axis, steps. Settled
    states keep the distances and predecessors a full run would give, so plans do not depend on the
    order targets are asked in."""

    def __init__(
        self, src: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...],
        model: CommModel, kinds: frozenset[PartialAttr], merge_axes: bool,
    ):
        self.args = (shape, elt_bytes, hierarchy, model, kinds, merge_axes)
        self.best: dict[NdSbp, tuple[float, Step | None]] = {src: (0.0, None)}
        self.queue: list[tuple[float, int, NdSbp]] = [(0.0, 0, src)]
        self.counter = 1
        self.done: set[NdSbp] = set()

    def settle(self, dst: NdSbp) -> dict[NdSbp, tuple[float, Step | None]]:
        while dst not in self.done and self.queue:
            cost, _, state = heapq.heappop(self.queue)
            if state in self.done:
                continue
            self.done.add(state)
            for nxt, step in _steps_from(state, *self.args):
                if nxt in self.done:
                    continue
                # A tiny per-step epsilon prefers fewer steps among equal-time plans.
                total = cost + step.time_us + 1e-9
                if total < self.best.get(nxt, (math.inf, None))[0]:
                    self.best[nxt] = (total, step)
                    heapq.heappush(self.queue, (total, self.counter, nxt))
                    self.counter += 1
        return self.best


@lru_cache(maxsize=4096)
def _search(
    src: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...], model: CommModel,
    kinds: frozenset[PartialAttr], merge_axes: bool,
) -> _Search:
    return _Search(src, shape, elt_bytes, hierarchy, model, kinds, merge_axes)


def plan_transition(
    src: NdSbp,
    dst: NdSbp,
    shape: tuple[int, ...],
    elt_bytes: int,
    hierarchy: tuple[int, ...],
    model: CommModel = DEFAULT_MODEL,
    merge_axes: bool = True,
) -> Plan:
    """Minimum-time sequence of steps from `src` to `dst` (Dijkstra over ND-SBP states)."""
    if src == dst:
        return Plan(())
    kinds = frozenset(e for e in (*src, *dst) if isinstance(e, PartialAttr))
    best = _search(src, shape, elt_bytes, hierarchy, model, kinds, merge_axes).settle(dst)
    return plan_from_predecessors(best, src, dst)


def plan_from_predecessors(best: dict[NdSbp, tuple[float, Step | None]], src: NdSbp, dst: NdSbp) -> Plan:
    """The plan a shortest-path search recorded: follow each state's last step back to `src`."""
    steps: list[Step] = []
    state = dst
    while state != src:
        step = best[state][1]
        assert step is not None
        steps.append(step)
        state = step.src
    return Plan(tuple(reversed(steps)))


def local_elements(shape: Sequence[int], state: NdSbp, hierarchy: Sequence[int]) -> int:
    """Elements of the largest shard of a tensor distributed as `state`."""
    extents = list(shape)
    for d, entry in enumerate(state):
        if isinstance(entry, SplitAttr):
            extents[entry.dim] = -(-extents[entry.dim] // hierarchy[d])
    return math.prod(extents)


def transition_time(
    src: NdSbpAttr | NdSbp, dst: NdSbpAttr | NdSbp, shape: Sequence[int], elt_bytes: int,
    hierarchy: Sequence[int], model: CommModel = DEFAULT_MODEL,
) -> float:
    return plan_transition(tuple(src), tuple(dst), tuple(shape), elt_bytes, tuple(hierarchy), model).time_us


def as_nd(entries: Sequence[SbpAttr]) -> NdSbpAttr:
    return nd_sbp(*entries)
