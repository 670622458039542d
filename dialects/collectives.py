"""What every collective means: the one home of which SBP transitions a step performs, which ranks
exchange what, and how many bytes move. The verifiers, both boxing planners, the step pricing and the
simulator read it, so a step that verifies is a step that runs, with the bytes the planner priced.

A distributed value is a dict `mesh coordinate -> local numpy array`. Conventions:

* `S(i)`: balanced split (the first `n % k` ranks hold one more row, as OneFlow); a tensor axis
  split on several mesh axes is split by mesh axis 0 first (major). The absolute index range a
  rank holds is `dialects.sharding.local_slices`.
* `P(k)`: the value is `R_0(R_1(...R_{D-1}(pieces)))`, reducing the last mesh axis first. Mixed
  kinds (sum over one axis, max over another) therefore have an order: a partial axis may be
  reduced only when every partial axis after it has the same kind (see `check_step`).
* `B -> P(sum)`: mesh index 0 of the group keeps the value, the others hold zeros;
  `B -> P(max|min)`: identity; `S(i) -> P(k)`: the shard is placed in a buffer of the group's
  extent filled with k's identity (0, -inf/min, +inf/max).

A single step changes the SBP on some mesh axes (`mesh_axes`, merged into one group ordered
mesh-axis-major). A split may be changed on mesh axis d only if no later mesh axis splits the
same tensor axis (the data a rank holds must stay a contiguous block). A mesh axis of size 1
splits, replicates and reduces nothing, so it never constrains a step, and a step on size-1 axes
only relabels the data. `execute_step` runs a valid step on shards and counts the bytes each rank
sends; `step_bytes_exact` predicts the same count.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    import numpy as np

from sbpc.dialects.sbp import BroadcastAttr, PartialAttr, ReduceKind, SbpAttr, SplitAttr, nd_sbp
from sbpc.dialects.sharding import balanced_range, local_slices

NdSbp = tuple[SbpAttr, ...]
Coord = tuple[int, ...]
Shards = dict[Coord, "np.ndarray"]
"""Executing steps needs numpy, imported where used: inference and planning, which import this
module for the step semantics, then do not pay for importing numpy."""


# ---------------------------------------------------------------------------
# The collectives
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Collective:
    """One kind of boxing step: the entry change it makes on each of its mesh axes."""

    kind: str
    transition: str
    """The entry change on one mesh axis, as diagnostics spell it."""
    communicates: bool
    """Whether ranks send data (the others are local rewrites of each rank's shard)."""
    hops: Callable[[int], int]
    """Ring hops of the step over n ranks (the α-β model's latency term)."""


def _ring(n: int) -> int:
    return n - 1


def _no_hops(n: int) -> int:
    return 0


COLLECTIVES: dict[str, Collective] = {
    c.kind: c
    for c in (
        Collective("all_gather", "S(i) -> B", True, _ring),
        Collective("all_reduce", "P(k) -> B", True, lambda n: 2 * (n - 1)),  # reduce-scatter + all-gather
        Collective("reduce_scatter", "P(k) -> S(i)", True, _ring),
        Collective("all_to_all", "S(i) -> S(j)", True, _ring),
        Collective("all_slice", "B -> S(i)", False, _no_hops),
        Collective("to_partial", "B -> P(k) or S(i) -> P(k)", False, _no_hops),
    )
}
COMM_KINDS = tuple(k for k, c in COLLECTIVES.items() if c.communicates)


def axis_kind(old: SbpAttr, new: SbpAttr) -> str | None:
    """The collective whose transition is `old -> new` on one mesh axis, or None (no change, or a
    change no single collective makes: P(x) -> P(y), B -> B)."""
    if old == new:
        return None
    # Exact types: the entry classes have no subclasses, and isinstance on them goes through ABCMeta.
    old_t, new_t = type(old), type(new)
    if old_t is PartialAttr:
        if new_t is BroadcastAttr:
            return "all_reduce"
        return "reduce_scatter" if new_t is SplitAttr else None
    if new_t is PartialAttr:
        return "to_partial"
    if old_t is SplitAttr:
        return "all_gather" if new_t is BroadcastAttr else "all_to_all"
    return "all_slice" if new_t is SplitAttr else None


# ---------------------------------------------------------------------------
# Which single steps exist
# ---------------------------------------------------------------------------


class Invalid(NamedTuple):
    """Why a step is not one collective. The text is built only when asked for: the planners try many
    steps that are not collectives and never print why."""

    stage: Literal["mesh_axes", "unlisted", "transition"]
    """What is wrong: the axis list itself, a change outside it, or the transition on the listed axes."""
    explain: Callable[[], str]

    @property
    def reason(self) -> str:
        """Completes `<src> -> <dst> ...` in a diagnostic, except at stage `mesh_axes` (it stands alone)."""
        return self.explain()


def _sbp_text(state: NdSbp) -> str:
    return "[" + ", ".join(e.short_str() for e in state) + "]"


def _later_split(state: NdSbp, axis: int, tensor_axis: int, axes: Sequence[int], hierarchy: Sequence[int]) -> int:
    """A mesh axis after `axis`, outside the merged group `axes` and of size > 1, that splits
    `tensor_axis` too, or -1."""
    for d in range(axis + 1, len(state)):
        e = state[d]
        if type(e) is SplitAttr and e.dim == tensor_axis and d not in axes and hierarchy[d] > 1:
            return d
    return -1


def check_step(src: NdSbp, dst: NdSbp, axes: Sequence[int], hierarchy: Sequence[int]) -> str | Invalid:
    """The single collective taking `src` to `dst` on the merged mesh axes `axes` of a mesh of
    shape `hierarchy`, or why there is none.

    All listed axes must make the same kind of transition (same tensor axes, same partial kind);
    the others must be unchanged.
    """
    rank = len(src)
    if not axes or min(axes) < 0 or max(axes) >= rank or len(set(axes)) != len(axes) \
            or len(dst) != rank or len(hierarchy) != rank:
        return Invalid("mesh_axes", lambda: (
            f"mesh_axes {list(axes)} must be one or more distinct mesh axes in 0..{rank - 1}"
        ))
    for d in range(rank):
        if d not in axes and src[d] != dst[d]:
            return Invalid("unlisted", lambda: f"changes mesh axis {d}, which is not in mesh_axes {list(axes)}")
    kinds = [axis_kind(src[d], dst[d]) for d in axes]
    if None in kinds:
        d = axes[kinds.index(None)]
        return Invalid("transition", lambda: (
            f"on mesh axis {d} is {src[d].short_str()} -> {dst[d].short_str()}, which no collective does"
        ))
    # A merged group makes one kind of transition; only all-to-all may mix tensor axes (every listed
    # axis split before and after, e.g. (S(0),S(1)) -> (S(1),S(0)) over both mesh axes at once).
    pairs = [(src[d], dst[d]) for d in axes]
    if len(set(pairs)) != 1 and any(k != "all_to_all" for k in kinds):
        return Invalid("transition", lambda: (
            "merges different transitions ("
            + ", ".join(f"{a.short_str()} -> {b.short_str()} on mesh axis {d}"
                        for d, (a, b) in zip(axes, pairs, strict=True))
            + "); only an all_to_all may"
        ))
    for d in axes:
        if hierarchy[d] == 1:
            continue
        for state, which in ((src, "source"), (dst, "result")):
            e = state[d]
            if type(e) is SplitAttr and (later := _later_split(state, d, e.dim, axes, hierarchy)) >= 0:
                return Invalid("transition", lambda: (
                    f"changes the split of tensor axis {e.dim} on mesh axis {d}, but mesh axis {later} splits it "
                    f"further in the {which} {_sbp_text(state)}: ranks would not hold contiguous blocks"
                ))
    # Reducing (or creating) a partial on these axes before the later partial axes is sound only if
    # every later partial axis has the same kind: sum and max do not commute.
    moving = [d for d in axes if hierarchy[d] > 1]
    old, new = pairs[0]
    touched = old if type(old) is PartialAttr else new
    if moving and type(touched) is PartialAttr:
        first = min(moving)
        for d in range(first + 1, rank):
            e = src[d]
            if type(e) is PartialAttr and e != touched and d not in axes and hierarchy[d] > 1:
                return Invalid("transition", lambda: (
                    f"moves {touched.short_str()} on mesh axis {first} across {e.short_str()} on the later mesh "
                    f"axis {d}: reductions of different kinds do not commute"
                ))
    return kinds[0]  # type: ignore[return-value]


def step_kind(src: NdSbp, dst: NdSbp, axes: Sequence[int], hierarchy: Sequence[int]) -> str | None:
    """The single collective taking `src` to `dst` on the merged mesh axes `axes`, or None."""
    found = check_step(src, dst, axes, hierarchy)
    return found if isinstance(found, str) else None


class InvalidStep(ValueError):
    """A step that is not the collective it is said to be."""


# ---------------------------------------------------------------------------
# Groups and exact byte counts
# ---------------------------------------------------------------------------


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
    """Bytes each rank sends in one step (direct algorithm; what the simulator measures).

    Gathers, all-to-alls and reduce-scatters send every other member the part of the own shard it
    wants; an all-reduce is a reduce-scatter of flat pieces followed by an all-gather of them."""
    sent: dict[Coord, int] = {c: 0 for c in mesh_coords(hierarchy)}
    if kind not in COMM_KINDS:
        return sent
    for members in groups(hierarchy, axes):
        n = len(members)
        have = {m: ranges(shape, src, hierarchy, m) for m in members}
        want = {m: ranges(shape, dst, hierarchy, m) for m in members}
        for r in members:
            if kind != "all_reduce":
                sent[r] += sum(_volume(_intersect(have[r], want[k])) for k in members if k != r) * elt_bytes
            else:
                total = _volume(have[r])
                pieces = [balanced_range(total, n, i) for i in range(n)]  # the reduce-scatter phase
                mine = pieces[members.index(r)]
                sent[r] += (sum(hi - lo for lo, hi in pieces) - (mine[1] - mine[0])) * elt_bytes
                sent[r] += (mine[1] - mine[0]) * (n - 1) * elt_bytes
    return sent


# ---------------------------------------------------------------------------
# Executing
# ---------------------------------------------------------------------------


def identity_of(kind: ReduceKind, dtype: np.dtype) -> object:
    import numpy as np
    if kind == ReduceKind.SUM:
        return 0
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min if kind == ReduceKind.MAX else info.max
    return -np.inf if kind == ReduceKind.MAX else np.inf


def reduce_arrays(kind: ReduceKind, arrays: Sequence[np.ndarray]) -> np.ndarray:
    import numpy as np
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
    """Run one single-step collective on the shards; return new shards and bytes sent per rank.
    Raises `InvalidStep` unless `check_step` says the step is this `kind`."""
    import numpy as np
    found = check_step(src, dst, axes, hierarchy)
    if found != kind:
        why = found.reason if isinstance(found, Invalid) else f"is an {found}"
        raise InvalidStep(f"{kind} {_sbp_text(src)} -> {_sbp_text(dst)} on mesh_axes {list(axes)}: {why}")
    out: Shards = {}
    sent: dict[Coord, int] = {c: 0 for c in shards}
    for members in groups(hierarchy, axes):
        have = {m: ranges(shape, src, hierarchy, m) for m in members}
        want = {m: ranges(shape, dst, hierarchy, m) for m in members}
        if kind in ("all_gather", "all_to_all", "all_slice"):
            for k in members:
                # Poisoned, so that data a step fails to deliver would show up in --check.
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
        elif kind == "reduce_scatter":
            reduce_kind = src[axes[0]].reduce_kind  # type: ignore[attr-defined]
            for k in members:
                blocks = []
                for r in members:
                    block = _take(shards[r], have[r], want[k])
                    if r != k:
                        sent[r] += block.nbytes
                    blocks.append(block)
                out[k] = reduce_arrays(reduce_kind, blocks)
        elif kind == "all_reduce":
            _all_reduce(shards, src[axes[0]].reduce_kind, members, out, sent)  # type: ignore[attr-defined]
        else:  # to_partial
            for index, k in enumerate(members):
                out[k] = _to_partial(shards[k], src, dst, axes, have[k], want[k], index == 0)
    return out, sent


def _all_reduce(
    shards: Shards, reduce_kind: ReduceKind, members: Sequence[Coord], out: Shards, sent: dict[Coord, int]
) -> None:
    """Reduce-scatter of flat pieces, then all-gather of the reduced pieces."""
    import numpy as np
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


def execute_plan(
    steps: Sequence[object], shards: Shards, src: NdSbp, dst: NdSbp, shape: Sequence[int], hierarchy: Sequence[int]
) -> tuple[Shards, int]:
    """Run a plan's steps (objects with kind, mesh_axes, src, dst) from `src`; return the shards and the
    total bytes sent. Raises ValueError if the steps do not chain from `src` to `dst` or one is invalid."""
    measured = 0
    state = src
    for step in steps:
        kind, axes, a, b = step.kind, step.mesh_axes, step.src, step.dst  # type: ignore[attr-defined]
        if a != state:
            raise ValueError(f"step {kind} on {axes} from {a} does not follow {state}")
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
    import numpy as np
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
    import numpy as np
    return np.iinfo(dtype).min if np.issubdtype(dtype, np.integer) else np.nan


def _take(arr: np.ndarray, held: Sequence[tuple[int, int]], box: Sequence[tuple[int, int]]) -> np.ndarray:
    index = tuple(slice(lo - h0, hi - h0) for (lo, hi), (h0, _) in zip(box, held, strict=True))
    return arr[index]


def _put(buf: np.ndarray, held: Sequence[tuple[int, int]], box: Sequence[tuple[int, int]], block: np.ndarray) -> None:
    index = tuple(slice(lo - h0, hi - h0) for (lo, hi), (h0, _) in zip(box, held, strict=True))
    buf[index] = block


# ---------------------------------------------------------------------------
# One rank's part (executors that run each rank in its own process)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RankView:
    """One rank's part in one step: its group in member order, its position there, and the index
    ranges every member holds before (`have`) and after (`want`) the step."""

    members: tuple[Coord, ...]
    index: int
    have: tuple[tuple[tuple[int, int], ...], ...]
    want: tuple[tuple[tuple[int, int], ...], ...]

    def box(self, r: int, k: int) -> tuple[tuple[int, int], ...]:
        """The block member `r` gives member `k` (the part of r's data k wants)."""
        return _intersect(self.have[r], self.want[k])

    def volume(self, box: Sequence[tuple[int, int]]) -> int:
        return _volume(box)


def rank_view(src: NdSbp, dst: NdSbp, axes: Sequence[int], shape: Sequence[int], hierarchy: Sequence[int],
              coord: Coord) -> RankView:
    """The group of `coord` in a step on `axes` and what each member holds (as `execute_step` sees it)."""
    for members in groups(hierarchy, axes):
        if coord in members:
            return RankView(
                tuple(members), members.index(coord),
                tuple(ranges(shape, src, hierarchy, m) for m in members),
                tuple(ranges(shape, dst, hierarchy, m) for m in members),
            )
    raise ValueError(f"rank {list(coord)} is not on a mesh of shape {list(hierarchy)}")


def take_block(arr: np.ndarray, held: Sequence[tuple[int, int]], box: Sequence[tuple[int, int]]) -> np.ndarray:
    """The part `box` (absolute ranges) of a shard holding `held`."""
    return _take(arr, held, box)


def put_block(buf: np.ndarray, held: Sequence[tuple[int, int]], box: Sequence[tuple[int, int]],
              block: np.ndarray) -> None:
    """Write `block` (absolute ranges `box`) into a buffer holding `held`."""
    _put(buf, held, box, block)


def receive_buffer(view: RankView, dtype: np.dtype) -> np.ndarray:
    """The poisoned result buffer of a moving step, so that data a step fails to deliver shows up."""
    import numpy as np
    return np.full([hi - lo for lo, hi in view.want[view.index]], _poison(dtype), dtype=dtype)


def local_step(kind: str, shard: np.ndarray, src: NdSbp, dst: NdSbp, axes: Sequence[int], view: RankView) -> np.ndarray:
    """`all_slice` or `to_partial` on one rank's shard (neither sends anything)."""
    have, want = view.have[view.index], view.want[view.index]
    if kind == "all_slice":
        return _take(shard, have, want).copy()
    if kind == "to_partial":
        return _to_partial(shard, src, dst, axes, have, want, view.index == 0)
    raise ValueError(f"{kind} is not a local step")
