"""PyTorch DTensor's Dijkstra redistribute planner, run for real, and DTensor's own cost formulas.

Issue 13's P2 re-run: with the placement's `links` set to DTensor's CPU-mesh constants,
`lower-boxing{planner=optimal}` must be no slower than DTensor's `DTensorRedistributePlanner` on
every pair, both priced by DTensor's formulas (`torch/distributed/tensor/_collective_utils.py`,
reference/peers.md §1.1):

    allgather(B)      = 6.6 + (n-1)·lat  + B·(n-1)/n / bw · 1e6   (B ×= n first, for S → R)
    reduce_scatter(B) = the same formula, then B /= n
    allreduce(B)      = 6.6 + 2(n-1)·lat + B·2(n-1)/n / bw · 1e6
    S → S' (all-to-all) = allgather(B) + 1.0 µs ("not implemented yet, penalty")
    R → S, R → P      = 0

with B the local size `bytes(global) / num_shards` in GiB (bytes / 2^30, divided by a bandwidth
in GB/s). On a CPU mesh DTensor treats every mesh dim as inter-host (`num_devices_per_host("cpu")`
is 1): 87.7 × 0.22 GB/s and 2.7 µs per hop on every axis (`DTENSOR_CPU_LINK`).

`DTensorDijkstra` runs torch's planner itself (`find_min_cost_path` on its `DistState`s, edges
priced by its `one_step_redistribute_cost`) in this process on a fake process group. `dtensor_step_us`
prices one of our steps by the formulas above, so a plan of ours is priced as DTensor prices its
own; steps DTensor has no edge for are priced by the same formulas extended as SPEC §2.1 extends
the α-β model: a collective over merged mesh axes runs on the flattened group (n = product of the
sizes) at the slowest bandwidth and the largest latency, and a local step (`all_slice`, and
`to_partial` from B or S) costs 0, as DTensor prices its local R → S and R → P.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sbpc.dialects.collectives import step_kind
from sbpc.dialects.sbp import BROADCAST, BroadcastAttr, PartialAttr, SbpAttr, SplitAttr, partial, split
from sbpc.passes.cost.comm import DEFAULT_MODEL, NdSbp, Plan, PlannerCache, Step, plan_transition

DTENSOR_CPU_LINK = (87.7 * 0.22, 2.7)
"""(GB/s, µs per hop) DTensor's MeshTopoInfo gives every mesh dim of a CPU mesh (inter-host)."""
BASE_US = 6.6
ALL_TO_ALL_PENALTY_US = 1.0
GIB = 1024**3


def dtensor_cpu_links(rank: int) -> tuple[tuple[float, float], ...]:
    return (DTENSOR_CPU_LINK,) * rank


def dtensor_step_us(
    step: Step, shape: tuple[int, ...], elt_bytes: int, hierarchy: Sequence[int],
    links: Sequence[tuple[float, float]], a2a_penalty_us: float = ALL_TO_ALL_PENALTY_US,
) -> float:
    """One of our steps priced by DTensor's `_compute_placement_transition_cost` formulas (with
    `a2a_penalty_us` = 0: without its all-to-all penalty)."""
    if step.kind in ("all_slice", "to_partial"):
        return 0.0
    axes = step.mesh_axes
    n = math.prod(hierarchy[a] for a in axes)
    bandwidth = min(links[a][0] for a in axes)
    latency = max(links[a][1] for a in axes)
    shards = math.prod(h for e, h in zip(step.src, hierarchy, strict=True) if isinstance(e, SplitAttr))
    local_gib = math.prod(shape) * elt_bytes / shards / GIB
    if step.kind == "all_gather":
        local_gib *= n
    hops = 2 * (n - 1) if step.kind == "all_reduce" else n - 1
    cost = BASE_US + hops * latency + local_gib * hops / n / bandwidth * 1e6
    return cost + a2a_penalty_us if step.kind == "all_to_all" else cost


def dtensor_plan_us(plan: Plan, shape: tuple[int, ...], elt_bytes: int, hierarchy: Sequence[int],
                    links: Sequence[tuple[float, float]], a2a_penalty_us: float = ALL_TO_ALL_PENALTY_US) -> float:
    return sum(dtensor_step_us(s, shape, elt_bytes, hierarchy, links, a2a_penalty_us) for s in plan.steps)


@dataclass(frozen=True)
class DTensorPlan:
    """DTensor's Dijkstra plan: the ND-SBP states it visits, each edge's cost by its own formula."""

    states: tuple[NdSbp, ...]
    edge_us: tuple[float, ...]

    @property
    def time_us(self) -> float:
        return sum(self.edge_us)

    def steps(self, hierarchy: tuple[int, ...]) -> list[tuple[str, int, NdSbp, NdSbp]]:
        """(kind, mesh axis, before, after) of each edge in our vocabulary."""
        out = []
        for before, after in itertools.pairwise(self.states):
            (axis,) = [d for d, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
            kind = step_kind(before, after, (axis,), hierarchy)
            assert kind is not None, (before, after)
            out.append((kind, axis, before, after))
        return out


class DTensorDijkstra:
    """torch's `DTensorRedistributePlanner` on one mesh, in this process (use `dtensor_session`)."""

    def __init__(self, hierarchy: tuple[int, ...], shape: tuple[int, ...], elt_bytes: int = 4) -> None:
        import torch
        from torch.distributed.device_mesh import DeviceMesh
        from torch.distributed.tensor._collective_utils import MeshTopoInfo
        from torch.distributed.tensor._dtensor_spec import TensorMeta

        self.hierarchy, self.shape = hierarchy, shape
        self.mesh = DeviceMesh("cpu", torch.arange(math.prod(hierarchy)).reshape(hierarchy))
        self.meta = TensorMeta(torch.Size(shape), tuple(math.prod(shape[i + 1:]) for i in range(len(shape))),
                               {2: torch.float16, 4: torch.float32, 8: torch.float64}[elt_bytes])
        topo = MeshTopoInfo.build_from_mesh(self.mesh)
        links = list(zip(topo.mesh_dim_bandwidth, topo.mesh_dim_latency, strict=True))
        assert links == list(dtensor_cpu_links(len(hierarchy))), links  # the constants we compare under

    @staticmethod
    def _placement(entry: SbpAttr) -> Any:
        from torch.distributed.tensor import Partial, Replicate, Shard

        if isinstance(entry, SplitAttr):
            return Shard(entry.dim)
        if isinstance(entry, BroadcastAttr):
            return Replicate()
        assert isinstance(entry, PartialAttr) and entry == partial(), entry
        return Partial()

    @staticmethod
    def _entry(placement: Any) -> SbpAttr:
        if placement.is_shard():
            return split(placement.dim)
        return BROADCAST if placement.is_replicate() else partial()

    def plan(self, src: NdSbp, dst: NdSbp) -> DTensorPlan:
        """What `generate_graph_based_transform_infos` would run, with its edges' costs (µs)."""
        from torch.distributed.tensor._dtensor_spec import DTensorSpec
        from torch.distributed.tensor._redistribute import DTensorRedistributePlanner

        planner = DTensorRedistributePlanner(self.mesh, self.meta)
        specs = [DTensorSpec(self.mesh, tuple(map(self._placement, s)), tensor_meta=self.meta) for s in (src, dst)]
        # As generate_graph_based_transform_infos does before its search: R -> P edges for the
        # reduce ops present in the source or target.
        planner.partial_reduce_ops_in_target = {
            p.reduce_op for spec in specs for p in spec.placements if p.is_partial()
        }
        begin, end = (planner.DistState(spec.placements, spec.shard_order) for spec in specs)
        path = planner.find_min_cost_path(begin, end)
        edges = tuple(float(planner.cost_function(a, b)) for a, b in itertools.pairwise(path))
        states = tuple(tuple(self._entry(p) for p in state.placements) for state in path)
        return DTensorPlan(states, edges)


@contextmanager
def dtensor_session(world_size: int = 8) -> Iterator[None]:
    """A fake torch.distributed process group (rank 0 of `world_size`) for DTensor's planner; torch's
    process group is process-wide, so an existing one is reused and left in place."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        assert dist.get_world_size() >= world_size, dist.get_world_size()
        yield
        return
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world_size)
    try:
        yield
    finally:
        dist.destroy_process_group()


@dataclass(frozen=True)
class PairResult:
    src: NdSbp
    dst: NdSbp
    optimal: Plan
    optimal_us: float
    """`optimal` priced by DTensor's formulas."""
    dtensor: DTensorPlan
    dtensor_us: float
    """DTensor's plan priced by its own costs (less its all-to-all penalty when that is dropped)."""


def p2_pairs(hierarchy: tuple[int, ...], shape: tuple[int, ...], elt_bytes: int, with_links: bool,
             cache: PlannerCache, alphabet: Sequence[SbpAttr] = (split(0), split(1), BROADCAST, partial()),
             a2a_penalty: bool = True) -> list[PairResult]:
    """Every ordered pair over `alphabet` on `hierarchy`: our optimal plan (its model on DTensor's CPU
    links, or on the default constants) and DTensor's Dijkstra plan (found with its penalty), both
    priced by DTensor's formulas, with or without the all-to-all penalty on both sides."""
    penalty = ALL_TO_ALL_PENALTY_US if a2a_penalty else 0.0
    links = dtensor_cpu_links(len(hierarchy))
    model = DEFAULT_MODEL.with_links(links if with_links else None)
    dtensor = DTensorDijkstra(hierarchy, shape, elt_bytes)
    states = list(itertools.product(alphabet, repeat=len(hierarchy)))
    out = []
    for src, dst in itertools.product(states, states):
        ours = plan_transition(src, dst, shape, elt_bytes, hierarchy, model, cache=cache)
        theirs = dtensor.plan(src, dst)
        a2a = sum(1 for kind, *_ in theirs.steps(hierarchy) if kind == "all_to_all")
        out.append(PairResult(src, dst, ours, dtensor_plan_us(ours, shape, elt_bytes, hierarchy, links, penalty),
                              theirs, theirs.time_us - a2a * (ALL_TO_ALL_PENALTY_US - penalty)))
    return out


def worse(results: Sequence[PairResult]) -> list[PairResult]:
    """The pairs where our plan, DTensor-priced, is slower than DTensor's own (beyond rounding)."""
    return [r for r in results if r.optimal_us > r.dtensor_us * (1 + 1e-12) + 1e-9]
