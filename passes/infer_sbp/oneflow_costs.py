"""OneFlow's copy-cost heuristics (reference/oneflow.md §1, §3), reproduced for `rule=oneflow`.

* `ibn_copy_cost_1d`: the 1-D eager sort key per input (sbp_parallel.cpp).
* `cost_1d` and `eager_nd_cost`: ComputCopyCostBetweenTwoSbpParallel and
  ComputeEagerCopyCostBetweenNdSbp, which OneFlow's greedy ND scan minimises; `dim_reduce` is
  its InOutParallelDimReduce. The quirks kept on purpose are listed in docs/oneflow_quirks.md.

These are sort keys, not times: the α-β model that prices real boxing is passes/cost/comm.py.
SBP entries are told apart by exact type (`type(e) is SplitAttr`; the entry classes have no
subclasses): isinstance against an xDSL attribute class goes through ABCMeta, on hot paths.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from sbpc.dialects.sbp import BROADCAST, BroadcastAttr, PartialAttr, SbpAttr, SplitAttr
from sbpc.passes.cost.comm import NdSbp

INT32_MAX = 2147483647.0
INT64_MAX = 9223372036854775807.0
FLT_MAX = 3.4028234663852886e38
VALID_MAX_COPY_COST = 0.8 * FLT_MAX


def ibn_copy_cost_1d(producer: SbpAttr, consumer: SbpAttr, size: float) -> float:
    """OneFlow's 1-D sort key per input (sbp_parallel.cpp): 0, INT64_MAX, INT32_MAX or size."""
    if producer == consumer:
        return 0.0
    if type(consumer) is PartialAttr:
        return INT64_MAX
    if type(producer) is BroadcastAttr:
        return INT32_MAX
    return size


def penalty_partial_consumer(size: float, producer_n: int, consumer_n: int) -> float:
    """Penalty4PartialInConsumer, default policy 2."""
    return 4.0 * size * (producer_n + consumer_n)


Pricer = Callable[[float], float]
"""A copy cost as a function of the tensor's byte size (the SBPs and mesh fixed)."""


def _zero(size: float) -> float:
    return 0.0


def _one(size: float) -> float:
    return 1.0


def _size(size: float) -> float:
    return size


def cost_1d_pricer(producer: SbpAttr, consumer: SbpAttr, n: int) -> Pricer:
    """ComputCopyCostBetweenTwoSbpParallel on the same devices (eager), as a function of size."""
    if producer == consumer:
        return _zero
    if type(consumer) is PartialAttr:
        return lambda size: penalty_partial_consumer(size, n, n)
    if type(producer) is BroadcastAttr:
        return _one
    if type(consumer) is SplitAttr and type(producer) is SplitAttr:
        return lambda size: size * (n - 1) / n
    if type(consumer) is SplitAttr or type(producer) is SplitAttr:
        return lambda size: size * (n - 1)  # P->S, S->B
    return lambda size: 2.0 * size * (n - 1)  # P->B


def cost_1d(producer: SbpAttr, consumer: SbpAttr, size: float, n: int) -> float:
    return cost_1d_pricer(producer, consumer, n)(size)


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
    if 1 not in hierarchy and not any(
        nds[0][d] == nds[0][d - 1] and nds[1][d] == nds[1][d - 1] for d in range(1, len(hierarchy))
    ):
        return nds[0], nds[1], tuple(hierarchy)  # no axis to drop or merge (the common case)
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
            if type(entry) is SplitAttr:
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
                type(nds[k][d]) is not SplitAttr or all(_can_merge_split(e, merged) for e in last_holding[k])
                for k in range(2)
            ):
                rh[-1] = merged
                continue
        add(d)
    if not rh:
        return (BROADCAST,), (BROADCAST,), (hierarchy[0],)
    return tuple(reduced[0]), tuple(reduced[1]), tuple(rh)


def eager_nd_pricer(src: NdSbp, dst: NdSbp, hierarchy: Sequence[int], shape: Sequence[int]) -> Pricer:
    """ComputeEagerCopyCostBetweenNdSbp for producer and consumer on the same placement, as a
    function of the tensor's byte size: the terms are summed in OneFlow's order, so the price is
    bit for bit `eager_nd_cost`'s. The shape matters only where `eager_reads_shape` says so."""
    rs, rd, rh = dim_reduce(src, dst, hierarchy, shape)
    if rs == rd:
        return _zero
    total_n = math.prod(hierarchy)
    if len(rh) == 1:
        return cost_1d_pricer(rs[0], rd[0], rh[0])
    terms: list[Pricer] = []
    normal = True
    for i, (a, b) in enumerate(zip(rs, rd, strict=True)):
        # OneFlow prices every axis with the total device count (its own comment admits the
        # resulting (B,S0)->(S0,S0) = 0 bug); reproduced as is.
        terms.append(cost_1d_pricer(a, b, total_n))
        if type(b) is PartialAttr and a != b:
            terms.append(lambda size: penalty_partial_consumer(size, total_n, total_n))
        if normal and type(a) is SplitAttr and a == b:
            for j in range(i):
                if rs[j] != rd[j] and (rs[j] == a or rd[j] == a):
                    normal = False
                    break
    if not normal:
        terms.append(_size)

    def price(size: float) -> float:
        total = 1.0
        for term in terms:
            total += term(size)
        return total

    return price


def eager_reads_shape(src: NdSbp, dst: NdSbp) -> bool:
    """Whether `eager_nd_pricer` may read the shape: only when `dim_reduce` may merge mesh axes
    split along one tensor axis, i.e. two axes repeat their entries in both ND-SBPs and one of
    them splits (size-1 axes in between are dropped, so any two axes count)."""
    return any(
        src[i] == src[j] and dst[i] == dst[j] and (type(src[i]) is SplitAttr or type(dst[i]) is SplitAttr)
        for i in range(len(src)) for j in range(i + 1, len(src))
    )


def eager_nd_cost(src: NdSbp, dst: NdSbp, size: float, hierarchy: Sequence[int], shape: Sequence[int]) -> float:
    """ComputeEagerCopyCostBetweenNdSbp for producer and consumer on the same placement."""
    return eager_nd_pricer(src, dst, hierarchy, shape)(size)
