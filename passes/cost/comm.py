"""Communication costs: the α-β collective model and the boxing planner's search.

One module prices data movement for both `infer-sbp` (`rule=cost`, the report) and the boxing
planner, so a signature chosen for being cheap is cheap when planned. OneFlow's own copy-cost
heuristics (`rule=oneflow`) are apart, in passes/infer_sbp/oneflow_costs.py.

* The α-β model (`CommModel`, DTensor's constants by default) prices one collective on one
  mesh axis; `plan_transition` finds the cheapest sequence of single-axis steps between two
  ND-SBPs by Dijkstra over ND-SBP states. `rule=cost` and `lower-boxing` both use it. Steps are
  priced by passes/cost/steps.py, which counts exactly the bytes `step_bytes_exact` (what the
  simulator measures) counts, at a fraction of the work.

SBP entries are told apart by exact type (`type(e) is SplitAttr`; the entry classes have no
subclasses): isinstance against an xDSL attribute class goes through ABCMeta, on hot paths.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sbpc.dialects.collectives import COLLECTIVES, COMM_KINDS, step_bytes_exact, step_kind
from sbpc.dialects.placement import PlacementOp
from sbpc.dialects.sbp import (
    BROADCAST,
    NdSbpAttr,
    PartialAttr,
    SbpAttr,
    nd_sbp,
    split,
)
from sbpc.dialects.sharding import max_local_shape
from sbpc.passes.cost.steps import (
    GroupWants,
    Layout,
    Ranges,
    axis_subsets,
    elements_sent,
    group_wants,
    rank_ranges,
    split_dims,
    step_layout,
)

NdSbp = tuple[SbpAttr, ...]

# ---------------------------------------------------------------------------
# α-β collectives
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CommModel:
    """α-β cost of one collective in µs (DTensor's `_collective_utils` constants by default).

    A ring collective over n ranks costs `base + hops·latency + bytes_sent/bandwidth`. `links`
    (a placement's, SPEC §2.1) gives each mesh axis its own (bandwidth GB/s, latency µs per hop);
    a collective over several merged axes runs at the slowest of their bandwidths and pays the
    largest of their latencies, since its ring crosses every one of those links.
    """

    base_us: float = 6.6
    latency_us: float = 0.6
    bandwidth_gbps: float = 87.7
    links: tuple[tuple[float, float], ...] = ()

    def time(self, hops: int, bytes_sent: float, axes: Sequence[int] = ()) -> float:
        latency, bandwidth = self.latency_us, self.bandwidth_gbps
        if self.links and axes:
            bandwidth = min(self.links[d][0] for d in axes)
            latency = max(self.links[d][1] for d in axes)
        return self.base_us + hops * latency + bytes_sent / (bandwidth * 1e3)

    def with_links(self, links: Sequence[tuple[float, float]] | None) -> CommModel:
        """This model on a mesh whose axes have `links` (itself when there are none)."""
        return self if not links else replace(self, links=tuple(links))


DEFAULT_MODEL = CommModel()


def placement_model(placement: PlacementOp, base: CommModel = DEFAULT_MODEL) -> CommModel:
    """`base` on `placement`'s links (SPEC §2.1): what every pricing of that mesh's collectives uses."""
    return base.with_links(placement.get_links())


def step_time(
    kind: str, max_bytes_sent: float, n: int, model: CommModel = DEFAULT_MODEL, axes: Sequence[int] = (),
) -> float:
    """Time of one collective over n ranks (on mesh `axes`) whose busiest rank sends `max_bytes_sent` bytes."""
    if kind not in COMM_KINDS or n == 1:
        return 0.0
    return model.time(COLLECTIVES[kind].hops(n), max_bytes_sent, axes)


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
    n = math.prod(hierarchy[d] for d in axes)
    if _exact_in_elements(elt_bytes) and len(src) == len(dst) == len(hierarchy):
        have, want = rank_ranges(shape, src, hierarchy), rank_ranges(shape, dst, hierarchy)
        layout = step_layout(hierarchy, axes, split_dims(src), split_dims(dst), len(shape), kind == "all_reduce")
        total, busiest = elements_sent(kind, have, want, layout)
        return Step(kind, axes, src, dst, step_time(kind, busiest * elt_bytes, n, model, axes), total * elt_bytes)
    sent = step_bytes_exact(kind, src, dst, axes, shape, hierarchy, elt_bytes)
    return Step(kind, axes, src, dst, step_time(kind, max(sent.values()), n, model, axes), sum(sent.values()))


def _exact_in_elements(elt_bytes: object) -> bool:
    """Bytes are `elt_bytes` times an element count, summed and maxed over ranks exactly as
    `step_bytes_exact` does them, only for a positive integer size (anything else takes that path)."""
    return isinstance(elt_bytes, int) and elt_bytes > 0


# The planner numbers states and caches per number, so its hot loops hash small ints, not tuples of
# attributes. Every cache below is a module-level functools cache (the benchmark's cold runs clear
# them all); each level is keyed by the object of the level below, so clearing any subset of them
# never mixes the numbering of one `_Space` with another's.


class _Space:
    """The ND-SBP states of one tensor rank on one hierarchy, numbered on first sight."""

    __slots__ = ("hierarchy", "index", "kinds", "layouts", "rank", "splits", "states")

    def __init__(self, rank: int, hierarchy: tuple[int, ...]):
        self.rank, self.hierarchy = rank, hierarchy
        self.states: list[NdSbp] = []
        self.splits: list[tuple[int, ...]] = []
        """`split_dims` of each state."""
        self.index: dict[NdSbp, int] = {}
        self.layouts: dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], bool], Layout] = {}
        self.kinds: dict[tuple[int, int, tuple[int, ...]], str | None] = {}

    def intern(self, state: NdSbp) -> int:
        found = self.index.get(state)
        if found is None:
            found = self.index[state] = len(self.states)
            self.states.append(state)
            self.splits.append(split_dims(state))
        return found

    def step_kind(self, sid: int, nid: int, axes: tuple[int, ...]) -> str | None:
        """`step_kind`, shared by the graphs of every set of partial kinds."""
        key = (sid, nid, axes)
        found = self.kinds.get(key, "")
        if found == "":
            found = self.kinds[key] = step_kind(self.states[sid], self.states[nid], axes, self.hierarchy)
        return found

    def layout(self, kind: str, sid: int, nid: int, axes: tuple[int, ...]) -> Layout:
        """`step_layout`, which depends on the states only through what they split."""
        key = (axes, self.splits[sid], self.splits[nid], kind == "all_reduce")
        found = self.layouts.get(key)
        if found is None:
            found = self.layouts[key] = step_layout(self.hierarchy, *key[:3], self.rank, key[3])
        return found


Edge = tuple[int, str, tuple[int, ...], int, tuple[int, int, tuple[int, ...]]]
"""(next state, step kind, mesh axes, ranks per group, (state, next state, mesh axes)): the last is
the edge's key into `_Volumes`, built once here rather than on every lookup."""


class _Graph:
    """The edges out of each state, in the order Dijkstra scans them. A step's kind depends on the
    tensor's rank, never its shape, so the edges are found once and priced per shape."""

    __slots__ = ("alphabet", "edges", "space", "subsets")

    def __init__(self, space: _Space, kinds: frozenset[PartialAttr], merge_axes: bool):
        self.space = space
        self.alphabet: list[SbpAttr] = [*(split(i) for i in range(space.rank)), BROADCAST, *sorted(kinds, key=str)]
        mesh_rank = len(space.hierarchy)
        self.subsets = axis_subsets(mesh_rank) if merge_axes else [(d,) for d in range(mesh_rank)]
        self.edges: dict[int, tuple[Edge, ...]] = {}

    def out(self, sid: int) -> tuple[Edge, ...]:
        found = self.edges.get(sid)
        if found is None:
            found = self.edges[sid] = self._find(sid)
        return found

    def _find(self, sid: int) -> tuple[Edge, ...]:
        space = self.space
        state = space.states[sid]
        edges: list[Edge] = []
        for axes in self.subsets:
            targets = [tuple(new if d in axes else e for d, e in enumerate(state)) for new in self.alphabet]
            if len(axes) > 1:  # a merged all-to-all may give each listed axis its own split
                for dims in itertools.product(range(space.rank), repeat=len(axes)):
                    chosen = dict(zip(axes, dims, strict=True))
                    targets.append(tuple(split(chosen[d]) if d in axes else e for d, e in enumerate(state)))
            n = math.prod(space.hierarchy[d] for d in axes)
            for nxt in dict.fromkeys(targets):
                nid = space.intern(nxt)
                kind = space.step_kind(sid, nid, axes)
                if kind is not None:
                    edges.append((nid, kind, axes, n, (sid, nid, axes)))
        return tuple(edges)


class _Volumes:
    """Elements each step sends for one shape, shared by element types, models and partial kinds."""

    __slots__ = ("ranges", "sent", "shape", "space", "wants")

    def __init__(self, space: _Space, shape: tuple[int, ...]):
        self.space, self.shape = space, shape
        self.ranges: dict[int, tuple[Ranges, ...]] = {}
        self.wants: dict[tuple[int, Layout], GroupWants] = {}
        self.sent: dict[tuple[int, int, tuple[int, ...]], tuple[int, int]] = {}

    def _ranges(self, sid: int) -> tuple[Ranges, ...]:
        found = self.ranges.get(sid)
        if found is None:
            found = self.ranges[sid] = rank_ranges(self.shape, self.space.states[sid], self.space.hierarchy)
        return found

    def of(self, kind: str, key: tuple[int, int, tuple[int, ...]]) -> tuple[int, int]:
        """(total, busiest rank) elements of the edge `key` (`Edge`); its kind is a function of it."""
        found = self.sent.get(key)
        if found is None:
            sid, nid, axes = key
            want = self._ranges(nid)
            layout = self.space.layout(kind, sid, nid, axes)
            wants = self.wants.get((nid, layout))
            if wants is None and kind != "all_reduce":
                wants = self.wants[nid, layout] = group_wants(want, layout)
            found = self.sent[key] = elements_sent(kind, self._ranges(sid), want, layout, wants)
        return found


PricedEdge = tuple[int, float, str, tuple[int, ...], int, int]
"""(next state, time in µs, step kind, mesh axes, bytes sent, state): a `Step` is built only for the
edges a returned plan takes."""


class _Priced:
    """A graph's edges priced for one shape, element size and model."""

    __slots__ = ("edges", "elt_bytes", "fast", "graph", "model", "space", "volumes")

    def __init__(self, graph: _Graph, volumes: _Volumes, elt_bytes: int, model: CommModel):
        self.graph, self.volumes, self.elt_bytes, self.model = graph, volumes, elt_bytes, model
        self.space = graph.space
        self.fast = _exact_in_elements(elt_bytes)
        self.edges: dict[int, tuple[PricedEdge, ...]] = {}

    def out(self, sid: int) -> tuple[PricedEdge, ...]:
        found = self.edges.get(sid)
        if found is None:
            found = self.edges[sid] = self._price(sid)
        return found

    def _price(self, sid: int) -> tuple[PricedEdge, ...]:
        states, hierarchy, elt, model = self.space.states, self.space.hierarchy, self.elt_bytes, self.model
        state = states[sid]
        fast = self.fast and len(state) == len(hierarchy)
        volumes = self.volumes
        known = volumes.sent
        edges: list[PricedEdge] = []
        for nid, kind, axes, n, key in self.graph.out(sid):
            if kind not in COMM_KINDS:
                edges.append((nid, 0.0, kind, axes, 0, sid))
            elif fast:
                total, busiest = known.get(key) or volumes.of(kind, key)
                edges.append((nid, step_time(kind, busiest * elt, n, model, axes), kind, axes, total * elt, sid))
            else:
                step = make_step(kind, state, states[nid], axes, volumes.shape, elt, hierarchy, model)
                edges.append((nid, step.time_us, kind, axes, step.bytes_sent, sid))
        return tuple(edges)


class _Search:
    """Dijkstra from one source over ND-SBP states, advanced only as far as the targets asked for so
    far (most targets are a step or two away). Edges are single, possibly merged-axis, steps. Settled
    states keep the distances and predecessors a full run would give, so plans do not depend on the
    order targets are asked in."""

    __slots__ = ("counter", "dist", "done", "last", "priced", "queue", "src")

    def __init__(self, priced: _Priced, src: int):
        self.priced, self.src = priced, src
        self.dist: dict[int, float] = {src: 0.0}
        self.last: dict[int, PricedEdge] = {}
        """The edge each reached state was last reached by."""
        self.queue: list[tuple[float, int, int]] = [(0.0, 0, src)]
        self.counter = 1
        self.done: set[int] = set()

    def settle(self, dst: int) -> None:
        done, dist, last, queue, out = self.done, self.dist, self.last, self.queue, self.priced.out
        counter = self.counter
        inf = math.inf
        while dst not in done and queue:
            cost, _, state = heapq.heappop(queue)
            if state in done:
                continue
            done.add(state)
            for edge in out(state):
                nxt = edge[0]
                if nxt in done:
                    continue
                # A tiny per-step epsilon prefers fewer steps among equal-time plans.
                total = cost + edge[1] + 1e-9
                if total < dist.get(nxt, inf):
                    dist[nxt] = total
                    last[nxt] = edge
                    heapq.heappush(queue, (total, counter, nxt))
                    counter += 1
        self.counter = counter

    def path(self, dst: NdSbp) -> list[PricedEdge]:
        """The edges of the cheapest path to `dst`, first to last."""
        target = self.priced.space.intern(dst)
        self.settle(target)
        edges: list[PricedEdge] = []
        state = target
        while state != self.src:
            edge = self.last[state]
            edges.append(edge)
            state = edge[5]
        edges.reverse()
        return edges

    def plan(self, dst: NdSbp) -> Plan:
        states = self.priced.space.states
        return Plan(tuple(
            Step(kind, axes, states[before], states[nxt], time_us, sent)
            for nxt, time_us, kind, axes, sent, before in self.path(dst)
        ))


class PlannerCache:
    """Every table of the boxing planner, keyed by values: state spaces per (tensor rank, mesh),
    edge graphs per partial kinds, element volumes per shape, priced graphs and the (lazily
    advanced) searches per source. Its owner is whoever plans many transitions: the `lower-boxing`
    pass instance, the `InferenceCache` (rule=cost), the report. The bound: a table that is full is
    cleared before its next entry is made (`max_searches` for the per-shape tables; spaces and
    graphs, keyed by ranks and meshes, are few but bounded alike); `clear()` empties all. Values are
    pure functions of their keys, so a cleared table only costs time; nothing read from it is held
    across calls: plans and times are returned as fresh values."""

    def __init__(self, max_searches: int = 16384):
        self.max_searches = max_searches
        self.clear()

    def clear(self) -> None:
        self.spaces: dict[tuple[int, tuple[int, ...]], _Space] = {}
        self.graphs: dict[tuple[int, tuple[int, ...], frozenset[PartialAttr], bool], _Graph] = {}
        self.volumes: dict[tuple[int, tuple[int, ...], tuple[int, ...]], _Volumes] = {}
        self.priced: dict[tuple[object, ...], _Priced] = {}
        self.searches: dict[tuple[object, ...], _Search] = {}

    def _room(self, table: dict[Any, Any], bound: int) -> dict[Any, Any]:
        if len(table) >= bound:
            table.clear()
        return table

    def size(self) -> int:
        """Entries held, over every table."""
        return sum(map(len, (self.spaces, self.graphs, self.volumes, self.priced, self.searches)))

    def search(
        self, src: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...], model: CommModel,
        kinds: frozenset[PartialAttr], merge_axes: bool,
    ) -> _Search:
        key = (src, shape, elt_bytes, hierarchy, model, kinds, merge_axes)
        found = self.searches.get(key)
        if found is None:
            priced = self._priced(shape, elt_bytes, hierarchy, model, kinds, merge_axes)
            found = self._room(self.searches, self.max_searches)[key] = _Search(priced, priced.space.intern(src))
        return found

    def _priced(
        self, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...], model: CommModel,
        kinds: frozenset[PartialAttr], merge_axes: bool,
    ) -> _Priced:
        key = (shape, elt_bytes, hierarchy, model, kinds, merge_axes)
        found = self.priced.get(key)
        if found is None:
            rank = len(shape)
            space = self.spaces.get((rank, hierarchy))
            if space is None:
                space = self._room(self.spaces, 256)[rank, hierarchy] = _Space(rank, hierarchy)
            graph = self.graphs.get((rank, hierarchy, kinds, merge_axes))
            if graph is None:
                graph = self._room(self.graphs, 1024)[rank, hierarchy, kinds, merge_axes] = _Graph(
                    space, kinds, merge_axes)
            volumes = self.volumes.get((rank, hierarchy, shape))
            if volumes is None:
                volumes = self._room(self.volumes, self.max_searches)[rank, hierarchy, shape] = _Volumes(space, shape)
            found = self._room(self.priced, self.max_searches)[key] = _Priced(graph, volumes, elt_bytes, model)
        return found


def plan_transition(
    src: NdSbp,
    dst: NdSbp,
    shape: tuple[int, ...],
    elt_bytes: int,
    hierarchy: tuple[int, ...],
    model: CommModel = DEFAULT_MODEL,
    merge_axes: bool = True,
    cache: PlannerCache | None = None,
) -> Plan:
    """Minimum-time sequence of steps from `src` to `dst` (Dijkstra over ND-SBP states); a caller
    planning many transitions passes the `PlannerCache` it owns, a one-off call gets a fresh one."""
    if src == dst:
        return Plan(())
    kinds = frozenset([e for e in (*src, *dst) if type(e) is PartialAttr])
    if cache is None:
        cache = PlannerCache()
    return cache.search(src, shape, elt_bytes, hierarchy, model, kinds, merge_axes).plan(dst)


def _plan_time(
    src: NdSbp, dst: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...], model: CommModel,
    cache: PlannerCache,
) -> float:
    """`plan_transition(...).time_us` without building the plan: the same sum in the same order."""
    if src == dst:
        return Plan(()).time_us
    kinds = frozenset([e for e in (*src, *dst) if type(e) is PartialAttr])
    return sum(edge[1] for edge in cache.search(src, shape, elt_bytes, hierarchy, model, kinds, True).path(dst))


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
    return math.prod(max_local_shape(shape, state, hierarchy))


def transition_time(
    src: NdSbpAttr | NdSbp, dst: NdSbpAttr | NdSbp, shape: Sequence[int], elt_bytes: int,
    hierarchy: Sequence[int], model: CommModel = DEFAULT_MODEL, cache: PlannerCache | None = None,
) -> float:
    """The modelled time of the planned transition (`plan_transition`'s cache convention)."""
    return _plan_time(
        tuple(src), tuple(dst), tuple(shape), elt_bytes, tuple(hierarchy), model,
        PlannerCache() if cache is None else cache,
    )


def as_nd(entries: Sequence[SbpAttr]) -> NdSbpAttr:
    return nd_sbp(*entries)
