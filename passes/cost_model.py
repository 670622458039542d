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
    """InOutParallelDimReduce for one placement: drop size-1 mesh axes, merge adjacent axes on
    which both ND-SBPs repeat their previous entry (splits only if CanMergeSplit holds)."""
    rs: list[SbpAttr] = []
    rd: list[SbpAttr] = []
    rh: list[int] = []
    extents = list(shape)
    for i, h in enumerate(hierarchy):
        if h == 1:
            continue
        same = bool(rs) and src[i] == rs[-1] and dst[i] == rd[-1]
        if same:
            for entry in (src[i], dst[i]):
                if isinstance(entry, SplitAttr) and not _can_merge_split(extents[entry.dim], rh[-1] * h):
                    same = False
        if same:
            rh[-1] *= h
        else:
            rs.append(src[i])
            rd.append(dst[i])
            rh.append(h)
    if not rh:
        return (src[0],), (dst[0],), (hierarchy[0],)
    return tuple(rs), tuple(rd), tuple(rh)


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

COMM_KINDS = ("all_gather", "all_reduce", "reduce_scatter", "all_to_all")


def step_bytes(kind: str, local_bytes: float, n: int) -> float:
    """Bytes each rank sends in one step, `local_bytes` being its shard before the step."""
    if kind == "all_gather":
        return local_bytes * (n - 1)
    if kind == "all_reduce":
        return 2.0 * local_bytes * (n - 1) / n
    if kind in ("reduce_scatter", "all_to_all"):
        return local_bytes * (n - 1) / n
    return 0.0


def step_time(kind: str, local_bytes: float, n: int, model: CommModel = DEFAULT_MODEL) -> float:
    if kind not in COMM_KINDS or n == 1:
        return 0.0
    hops = 2 * (n - 1) if kind == "all_reduce" else n - 1
    return model.time(hops, step_bytes(kind, local_bytes, n))


@dataclass(frozen=True)
class Step:
    """One single-axis boxing step."""

    kind: str
    mesh_axis: int
    src: NdSbp
    dst: NdSbp
    time_us: float
    bytes_sent: float


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]

    @property
    def time_us(self) -> float:
        return sum(s.time_us for s in self.steps)

    @property
    def bytes_sent(self) -> float:
        return sum(s.bytes_sent for s in self.steps)


def local_elements(shape: Sequence[int], state: NdSbp, hierarchy: Sequence[int]) -> int:
    """Elements of the largest shard of a tensor distributed as `state`."""
    extents = list(shape)
    for d, entry in enumerate(state):
        if isinstance(entry, SplitAttr):
            extents[entry.dim] = -(-extents[entry.dim] // hierarchy[d])
    return math.prod(extents)


def _minor_most(state: NdSbp, axis: int, tensor_axis: int) -> bool:
    """No later mesh axis splits `tensor_axis` (so axis `axis` may change its split)."""
    return not any(isinstance(e, SplitAttr) and e.dim == tensor_axis for e in state[axis + 1 :])


def step_kind(state: NdSbp, d: int, new: SbpAttr) -> str | None:
    """The single collective turning `state[d]` into `new` on mesh axis d, or None if none does."""
    old = state[d]
    if old == new:
        return None
    if isinstance(old, SplitAttr) and not _minor_most(state, d, old.dim):
        return None
    if isinstance(new, SplitAttr) and not _minor_most(state, d, new.dim):
        return None
    if isinstance(old, SplitAttr):
        if isinstance(new, BroadcastAttr):
            return "all_gather"
        if isinstance(new, SplitAttr):
            return "all_to_all"
        return "to_partial"
    if isinstance(old, BroadcastAttr):
        return "all_slice" if isinstance(new, SplitAttr) else "to_partial"
    assert isinstance(old, PartialAttr)
    if isinstance(new, BroadcastAttr):
        return "all_reduce"
    if isinstance(new, SplitAttr):
        return "reduce_scatter"
    return None  # P(x) -> P(y) needs a detour through B


@lru_cache(maxsize=65536)
def plan_transition(
    src: NdSbp,
    dst: NdSbp,
    shape: tuple[int, ...],
    elt_bytes: int,
    hierarchy: tuple[int, ...],
    model: CommModel = DEFAULT_MODEL,
) -> Plan:
    """Minimum-time sequence of single-axis steps from `src` to `dst` (Dijkstra over ND-SBPs)."""
    if src == dst:
        return Plan(())
    partials = {e for e in (*src, *dst) if isinstance(e, PartialAttr)}
    alphabet: list[SbpAttr] = [*(split(i) for i in range(len(shape))), BROADCAST, *sorted(partials, key=str)]
    best: dict[NdSbp, float] = {src: 0.0}
    previous: dict[NdSbp, Step] = {}
    queue: list[tuple[float, int, NdSbp]] = [(0.0, 0, src)]
    counter = 1
    while queue:
        cost, _, state = heapq.heappop(queue)
        if state == dst:
            break
        if cost > best.get(state, math.inf):
            continue
        local = local_elements(shape, state, hierarchy) * elt_bytes
        for d, n in enumerate(hierarchy):
            for new in alphabet:
                kind = step_kind(state, d, new)
                if kind is None:
                    continue
                nxt = (*state[:d], new, *state[d + 1 :])
                t = step_time(kind, local, n, model)
                # A tiny per-step epsilon prefers fewer steps among equal-time plans.
                total = cost + t + 1e-9
                if total < best.get(nxt, math.inf):
                    best[nxt] = total
                    previous[nxt] = Step(kind, d, state, nxt, t, step_bytes(kind, local, n) if kind in COMM_KINDS else 0.0)
                    heapq.heappush(queue, (total, counter, nxt))
                    counter += 1
    steps: list[Step] = []
    state = dst
    while state != src:
        step = previous[state]
        steps.append(step)
        state = step.src
    return Plan(tuple(reversed(steps)))


def transition_time(
    src: NdSbpAttr | NdSbp, dst: NdSbpAttr | NdSbp, shape: Sequence[int], elt_bytes: int,
    hierarchy: Sequence[int], model: CommModel = DEFAULT_MODEL,
) -> float:
    return plan_transition(tuple(src), tuple(dst), tuple(shape), elt_bytes, tuple(hierarchy), model).time_us


def as_nd(entries: Sequence[SbpAttr]) -> NdSbpAttr:
    return nd_sbp(*entries)
