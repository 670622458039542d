"""What every SBP transition means on every rank: one definition for the planner and the simulator.

A distributed value is a dict `mesh coordinate -> local numpy array`. Conventions:

* `S(i)`: balanced split (the first `n % k` ranks hold one more row, as OneFlow); a tensor axis
  split on several mesh axes is split by mesh axis 0 first (major). The absolute index range a
  rank holds is `dialects.sharding.local_slices`.
* `P(k)`: the value is `R_0(R_1(...R_{D-1}(pieces)))`, reducing the last mesh axis first. Mixed
  kinds (sum over one axis, max over another) therefore have an order: a partial axis may be
  reduced only when every partial axis after it has the same kind (see `step_kind`).
* `B -> P(sum)`: mesh index 0 of the group keeps the value, the others hold zeros;
  `B -> P(max|min)`: identity; `S(i) -> P(k)`: the shard is placed in a buffer of the group's
  extent filled with k's identity (0, -inf/min, +inf/max).

A single step changes the SBP on some mesh axes (`mesh_axes`, merged into one group ordered
mesh-axis-major). A split may be changed on mesh axis d only if no later mesh axis splits the
same tensor axis (the data a rank holds must stay a contiguous block). `execute_step` runs a
step on shards and counts the bytes each rank sends; `step_bytes_exact` predicts the same count.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from sbpc.dialects.sbp import BroadcastAttr, PartialAttr, ReduceKind, SbpAttr, SplitAttr, nd_sbp
from sbpc.dialects.sharding import balanced_range, local_slices

NdSbp = tuple[SbpAttr, ...]
Coord = tuple[int, ...]
Shards = dict[Coord, np.ndarray]

COMM_KINDS = ("all_gather", "all_reduce", "reduce_scatter", "all_to_all")


def mesh_coords(hierarchy: Sequence[int]) -> list[Coord]:
    """All mesh coordinates, row-major (flat rank index order)."""
    return list(itertools.product(*(range(h) for h in hierarchy)))


def ranges(shape: Sequence[int], state: NdSbp, hierarchy: Sequence[int], coord: Coord) -> tuple[tuple[int, int], ...]:
    """The absolute index range each tensor axis holds at `coord`."""
    return _ranges(tuple(shape), tuple(state), tuple(hierarchy), tuple(coord))


@lru_cache(maxsize=1 << 16)
def _ranges(
    shape: tuple[int, ...], state: NdSbp, hierarchy: tuple[int, ...], coord: Coord
) -> tuple[tuple[int, int], ...]:
    return local_slices(shape, nd_sbp(*state), hierarchy, coord)


# ---------------------------------------------------------------------------
# Which single steps exist
# ---------------------------------------------------------------------------


def _minor_most(state: NdSbp, axis: int, tensor_axis: int, axes: Sequence[int]) -> bool:
    """No mesh axis after `axis` (outside the merged group `axes`) splits `tensor_axis`."""
    return not any(
        isinstance(e, SplitAttr) and e.dim == tensor_axis and d not in axes for d, e in enumerate(state) if d > axis
    )


def step_kind(src: NdSbp, dst: NdSbp, axes: Sequence[int]) -> str | None:
    """The single collective taking `src` to `dst` on the merged mesh axes `axes`, or None.

    All listed axes must make the same kind of transition (same tensor axes, same partial kind);
    the others must be unchanged.
    """
    if any(src[d] != dst[d] for d in range(len(src)) if d not in axes):
        return None
    pairs = [(src[d], dst[d]) for d in axes]
    if any(a == b for a, b in pairs):
        return None
    # A merged group makes one kind of transition; only all-to-all may mix tensor axes (every listed
    # axis split before and after, e.g. (S(0),S(1)) -> (S(1),S(0)) over both mesh axes at once).
    all_to_all = all(isinstance(a, SplitAttr) and isinstance(b, SplitAttr) for a, b in pairs)
    if len(set(pairs)) != 1 and not all_to_all:
        return None
    old, new = pairs[0]
    first = min(axes)
    for d in axes:
        if isinstance(src[d], SplitAttr) and not _minor_most(src, d, src[d].dim, axes):  # type: ignore[attr-defined]
            return None
        if isinstance(dst[d], SplitAttr) and not _minor_most(dst, d, dst[d].dim, axes):  # type: ignore[attr-defined]
            return None
    # Reducing (or creating) a partial on these axes before the later partial axes is sound only if
    # every later partial axis has the same kind: sum and max do not commute.
    touched = old if isinstance(old, PartialAttr) else new
    if isinstance(touched, PartialAttr) and any(
        isinstance(e, PartialAttr) and e != touched for d, e in enumerate(src) if d > first and d not in axes
    ):
        return None
    if isinstance(old, PartialAttr):
        if isinstance(new, BroadcastAttr):
            return "all_reduce"
        if isinstance(new, SplitAttr):
            return "reduce_scatter"
        return None
    if isinstance(new, PartialAttr):
        return "to_partial"
    if isinstance(old, SplitAttr):
        return "all_gather" if isinstance(new, BroadcastAttr) else "all_to_all"
    return "all_slice"


# ---------------------------------------------------------------------------
# Groups and exact byte counts
# ---------------------------------------------------------------------------


def groups(hierarchy: Sequence[int], axes: Sequence[int]) -> list[list[Coord]]:
    """Rank groups that communicate in a step on `axes`: members ordered mesh-axis-major."""
    others = [d for d in range(len(hierarchy)) if d not in axes]
    result: list[list[Coord]] = []
    for fixed in itertools.product(*(range(hierarchy[d]) for d in others)):
        members: list[Coord] = []
        for varying in itertools.product(*(range(hierarchy[d]) for d in sorted(axes))):
            coord = [0] * len(hierarchy)
            for d, v in zip(others, fixed, strict=True):
                coord[d] = v
            for d, v in zip(sorted(axes), varying, strict=True):
                coord[d] = v
            members.append(tuple(coord))
        result.append(members)
    return result


def _volume(r: Sequence[tuple[int, int]]) -> int:
    return math.prod(max(0, hi - lo) for lo, hi in r)


def _intersect(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    return tuple((max(x0, y0), min(x1, y1)) for (x0, x1), (y0, y1) in zip(a, b, strict=True))


def step_bytes_exact(
    kind: str,
    src: NdSbp,
    dst: NdSbp,
    axes: Sequence[int],
    shape: Sequence[int],
    hierarchy: Sequence[int],
    elt_bytes: int,
) -> dict[Coord, int]:
    """Bytes each rank sends in one step (direct algorithm; what the simulator measures)."""
    sent: dict[Coord, int] = {c: 0 for c in mesh_coords(hierarchy)}
    if kind not in COMM_KINDS:
        return sent
    for members in groups(hierarchy, axes):
        n = len(members)
        have = {m: ranges(shape, src, hierarchy, m) for m in members}
        want = {m: ranges(shape, dst, hierarchy, m) for m in members}
        for r in members:
            if kind in ("all_gather", "all_to_all"):
                sent[r] += sum(_volume(_intersect(have[r], want[k])) for k in members if k != r) * elt_bytes
            elif kind == "reduce_scatter":
                sent[r] += sum(_volume(_intersect(have[r], want[k])) for k in members if k != r) * elt_bytes
            else:  # all_reduce = reduce-scatter of flat pieces + all-gather of them
                total = _volume(have[r])
                pieces = [balanced_range(total, n, i) for i in range(n)]  # the reduce-scatter phase
                mine = pieces[members.index(r)]
                sent[r] += (sum(hi - lo for lo, hi in pieces) - (mine[1] - mine[0])) * elt_bytes
                sent[r] += (mine[1] - mine[0]) * (n - 1) * elt_bytes
    return sent


# ---------------------------------------------------------------------------
# Reducing and executing (`runtime.distribute` feeds and reassembles the runtime's values)
# ---------------------------------------------------------------------------


def identity_of(kind: ReduceKind, dtype: np.dtype) -> object:
    if kind == ReduceKind.SUM:
        return 0
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min if kind == ReduceKind.MAX else info.max
    return -np.inf if kind == ReduceKind.MAX else np.inf


def reduce_arrays(kind: ReduceKind, arrays: Sequence[np.ndarray]) -> np.ndarray:
    out = arrays[0].copy()
    for a in arrays[1:]:
        if kind == ReduceKind.SUM:
            out = out + a
        elif kind == ReduceKind.MAX:
            out = np.maximum(out, a)
        else:
            out = np.minimum(out, a)
    return out.astype(arrays[0].dtype, copy=False)


def execute_step(
    kind: str,
    shards: Shards,
    src: NdSbp,
    dst: NdSbp,
    axes: Sequence[int],
    shape: Sequence[int],
    hierarchy: Sequence[int],
) -> tuple[Shards, dict[Coord, int]]:
    """Run one single-step collective on the shards; return new shards and bytes sent per rank."""
    out: Shards = {}
    sent: dict[Coord, int] = {c: 0 for c in shards}
    for members in groups(hierarchy, axes):
        have = {m: ranges(shape, src, hierarchy, m) for m in members}
        want = {m: ranges(shape, dst, hierarchy, m) for m in members}
        if kind in ("all_gather", "all_to_all", "all_slice"):
            for k in members:
                # Poisoned, so that data an invalid step fails to deliver shows up in --check.
                buf = np.full([hi - lo for lo, hi in want[k]], _poison(shards[k].dtype), dtype=shards[k].dtype)
                for r in members:
                    box = _intersect(have[r], want[k])
                    if _volume(box) == 0:
                        continue
                    # all_slice only ever reads the rank's own data (B holds everything)
                    sender = k if kind == "all_slice" else r
                    block = _take(shards[sender], have[sender], box)
                    _put(buf, want[k], box, block)
                    if sender != k:
                        sent[sender] += block.nbytes
                    if kind == "all_slice":
                        break
                out[k] = buf
        elif kind in ("reduce_scatter", "all_reduce"):
            reduce_kind = src[axes[0]].reduce_kind  # type: ignore[attr-defined]
            if kind == "reduce_scatter":
                for k in members:
                    blocks = []
                    for r in members:
                        block = _take(shards[r], have[r], want[k])
                        if r != k:
                            sent[r] += block.nbytes
                        blocks.append(block)
                    out[k] = reduce_arrays(reduce_kind, blocks)
            else:
                n = len(members)
                flats = {r: shards[r].reshape(-1) for r in members}
                total = flats[members[0]].size
                reduced_pieces = []
                for i, k in enumerate(members):
                    lo, hi = balanced_range(total, n, i)
                    blocks = []
                    for r in members:
                        if r != k:
                            sent[r] += flats[r][lo:hi].nbytes
                        blocks.append(flats[r][lo:hi])
                    reduced_pieces.append(reduce_arrays(reduce_kind, blocks))
                for i, k in enumerate(members):
                    sent[k] += reduced_pieces[i].nbytes * (n - 1)
                full = np.concatenate(reduced_pieces) if reduced_pieces else flats[members[0]]
                for k in members:
                    out[k] = full.reshape(shards[k].shape).copy()
        elif kind == "to_partial":
            for index, k in enumerate(members):
                out[k] = _to_partial(shards[k], src, dst, axes, have[k], want[k], index == 0)
        else:
            raise ValueError(f"unknown boxing step {kind}")
    return out, sent


def execute_plan(
    steps: Sequence[object], shards: Shards, src: NdSbp, dst: NdSbp, shape: Sequence[int], hierarchy: Sequence[int]
) -> tuple[Shards, int]:
    """Run a plan's steps (objects with kind, mesh_axes, src, dst) from `src`; return the shards and the
    total bytes sent. Raises ValueError if the steps do not chain from `src` to `dst` or one is invalid."""
    measured = 0
    state = src
    for step in steps:
        kind, axes, a, b = step.kind, step.mesh_axes, step.src, step.dst  # type: ignore[attr-defined]
        if a != state or step_kind(a, b, axes) != kind:
            raise ValueError(f"step {kind} on {axes} from {a} does not follow {state} or is not valid")
        shards, sent = execute_step(kind, shards, a, b, axes, shape, hierarchy)
        measured += sum(sent.values())
        state = b
    if state != dst:
        raise ValueError(f"the plan ends in {state}, not {dst}")
    return shards, measured


def _to_partial(
    shard: np.ndarray,
    src: NdSbp,
    dst: NdSbp,
    axes: Sequence[int],
    have: Sequence[tuple[int, int]],
    want: Sequence[tuple[int, int]],
    first: bool,
) -> np.ndarray:
    new = dst[axes[0]]
    assert isinstance(new, PartialAttr)
    old = src[axes[0]]
    fill = identity_of(new.reduce_kind, shard.dtype)
    if isinstance(old, BroadcastAttr):
        if new.reduce_kind != ReduceKind.SUM or first:
            return shard.copy()
        return np.zeros_like(shard)
    buf = np.full([hi - lo for lo, hi in want], fill, dtype=shard.dtype)
    _put(buf, want, have, shard)
    return buf


def _poison(dtype: np.dtype) -> object:
    return np.iinfo(dtype).min if np.issubdtype(dtype, np.integer) else np.nan


def _take(arr: np.ndarray, held: Sequence[tuple[int, int]], box: Sequence[tuple[int, int]]) -> np.ndarray:
    index = tuple(slice(lo - h0, hi - h0) for (lo, hi), (h0, _) in zip(box, held, strict=True))
    return arr[index]


def _put(buf: np.ndarray, held: Sequence[tuple[int, int]], box: Sequence[tuple[int, int]], block: np.ndarray) -> None:
    index = tuple(slice(lo - h0, hi - h0) for (lo, hi), (h0, _) in zip(box, held, strict=True))
    buf[index] = block
