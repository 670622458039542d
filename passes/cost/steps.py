"""Exact element counts of boxing steps, without the pairwise loop of `step_bytes_exact`.

`collectives.step_bytes_exact` (the reference the simulator is checked against) sums, for
every rank r of a group, the volume of `have[r] ∩ want[k]` over the other members k. Two facts make
the same counts cheap, for any pair of states (valid step or not), in exact integer arithmetic:

* A box volume is a product over tensor axes, and a member's `want` range on tensor axis a depends
  only on its coordinates on the group's mesh axes that split a in the destination (a mesh axis
  splits at most one tensor axis). The sum over members therefore factors into one small sum per
  tensor axis (distributivity).
* What a rank holds and wants depends only on its coordinates on the mesh axes that split something
  in the source or the destination: ranks differing only on the other ("free") axes send the same,
  so one of them is priced and counted for all (except that an all-reduce's piece depends on the
  rank's position in its group).

Counts are in elements, so one pricing serves every element type (bytes are `elt_bytes * count`).
test/unit/test_plan_pricing.py compares this module to `step_bytes_exact` exhaustively on small meshes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from sbpc.dialects.collectives import COMM_KINDS, NdSbp, groups, mesh_coords
from sbpc.dialects.sbp import SplitAttr
from sbpc.dialects.sharding import balanced_range, split_axes, split_slices

Ranges = tuple[tuple[int, int], ...]


def split_dims(state: NdSbp) -> tuple[int, ...]:
    """Per mesh axis, the tensor axis `state` splits there, or -1."""
    return tuple(e.dim if isinstance(e, SplitAttr) else -1 for e in state)


@dataclass(frozen=True, eq=False)
class Layout:
    """Who talks to whom in one step, reduced to the ranks that need pricing. Compared and hashed by
    identity: callers cache one per key."""

    groups: tuple[tuple[tuple[int, int], ...], ...]
    """Per priced group (one of each class of identical groups), the members to price: (flat
    row-major rank index, position in the group, as `collectives.groups` orders it)."""
    wanted: tuple[tuple[tuple[int, ...], ...], ...]
    """Per priced group and tensor axis a, the flat ranks of one member per coordinate of the group
    axes splitting a in the destination: their wants along a are all the group's."""
    repeat: int
    """How many members share each combination of those wants: the sizes of the group axes that
    split nothing in the destination."""
    weight: int
    """How many ranks each priced member stands for."""
    size: int
    """Ranks per group."""


def step_layout(
    hierarchy: Sequence[int], axes: Sequence[int], src_splits: Sequence[int], dst_splits: Sequence[int], rank: int,
    all_reduce: bool,
) -> Layout:
    """The `Layout` of a step on `axes` between states splitting as `split_dims` says, for a tensor of
    `rank` axes; `all_reduce` if the step is one (its ranks are told apart by group position)."""
    ordered = sorted(axes)
    free = [d for d in range(len(hierarchy)) if src_splits[d] < 0 and dst_splits[d] < 0]
    fixed = [d for d in free if not (all_reduce and d in ordered)]  # coordinates priced at 0 only
    flat = {coord: i for i, coord in enumerate(mesh_coords(hierarchy))}
    priced: list[tuple[tuple[int, int], ...]] = []
    wanted: list[tuple[tuple[int, ...], ...]] = []
    for members in groups(hierarchy, axes):
        if any(members[0][d] for d in fixed if d not in ordered):
            continue  # a copy of a group already priced
        priced.append(tuple((flat[c], i) for i, c in enumerate(members) if not any(c[d] for d in fixed)))
        wanted.append(tuple(
            tuple(flat[c] for c in members if not any(c[g] for g in ordered if dst_splits[g] != a))
            for a in range(rank)
        ))
    repeat = weight = size = 1
    for g in ordered:
        size *= hierarchy[g]
        if dst_splits[g] < 0:
            repeat *= hierarchy[g]
    for d in fixed:
        weight *= hierarchy[d]
    return Layout(tuple(priced), tuple(wanted), repeat, weight, size)


def rank_ranges(shape: Sequence[int], state: NdSbp, hierarchy: Sequence[int]) -> tuple[Ranges, ...]:
    """The index ranges every rank holds, in flat rank order: `sharding.local_slices` at every
    coordinate, with the split axes found once."""
    splits = split_axes(state)
    return tuple(split_slices(shape, splits, hierarchy, coord) for coord in mesh_coords(hierarchy))


GroupWants = tuple[tuple[Ranges | None, list[list[tuple[int, int]]]], ...]
"""Per priced group: the one box its members' wants cover if they do (always, for a valid step),
else None; and per tensor axis, the intervals the members want along it, merged."""


def group_wants(want: Sequence[Ranges], layout: Layout) -> GroupWants:
    """The wants of a step's priced groups along each tensor axis. They are disjoint pieces, so
    touching ones merge. Depends only on the destination and the layout: shared by the sources with
    the same layout."""
    out = []
    for wanted in layout.wanted:
        along = [_merged([want[k][a] for k in ks]) for a, ks in enumerate(wanted)]
        box = tuple(pieces[0] if pieces else (0, 0) for pieces in along) if all(len(p) <= 1 for p in along) else None
        out.append((box, along))
    return tuple(out)


def elements_sent(
    kind: str, have: Sequence[Ranges], want: Sequence[Ranges], layout: Layout, wants: GroupWants | None = None,
) -> tuple[int, int]:
    """(total over ranks, busiest rank) of the elements one step sends: `step_bytes_exact` divided
    by `elt_bytes`. `have`/`want` are `rank_ranges` of the source and destination states; `wants`
    is `group_wants(want, layout)` if already known."""
    total = busiest = 0
    if kind == "all_reduce":  # each rank sends its whole shard less its piece, then its piece n - 1 times
        n = layout.size
        for members in layout.groups:
            for r, i in members:
                size = 1
                for lo, hi in have[r]:
                    size *= hi - lo if hi > lo else 0
                lo, hi = balanced_range(size, n, i)
                sent = size + (hi - lo) * (n - 2)
                total += sent
                if sent > busiest:
                    busiest = sent
        return total * layout.weight, busiest
    if kind not in COMM_KINDS:  # local steps send nothing
        return 0, 0
    # Sum over every member k of |have[r] ∩ want[k]| (one product of per-axis sums), less k = r.
    repeat = layout.repeat
    for members, (box, along_axes) in zip(layout.groups, wants or group_wants(want, layout), strict=True):
        for r, _ in members:
            held = have[r]
            everyone, own = repeat, 1
            if box is not None:  # one interval per axis: both products in one pass
                for (lo, hi), (u_lo, u_hi), (w_lo, w_hi) in zip(held, box, want[r], strict=True):
                    overlap = (hi if hi < u_hi else u_hi) - (lo if lo > u_lo else u_lo)
                    everyone *= overlap if overlap > 0 else 0
                    overlap = (hi if hi < w_hi else w_hi) - (lo if lo > w_lo else w_lo)
                    own *= overlap if overlap > 0 else 0
            else:
                for (lo, hi), along, (w_lo, w_hi) in zip(held, along_axes, want[r], strict=True):
                    part = 0
                    for u_lo, u_hi in along:
                        overlap = (hi if hi < u_hi else u_hi) - (lo if lo > u_lo else u_lo)
                        if overlap > 0:
                            part += overlap
                    everyone *= part
                    overlap = (hi if hi < w_hi else w_hi) - (lo if lo > w_lo else w_lo)
                    own *= overlap if overlap > 0 else 0
            sent = everyone - own
            total += sent
            if sent > busiest:
                busiest = sent
    return total * layout.weight, busiest


def _merged(pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Intervals as fewer intervals covering the same indices as often: touching ones joined, empty
    ones dropped (an overlap with them sums as with the pieces)."""
    if len(pieces) == 1:
        return pieces
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(pieces):
        if hi <= lo:
            continue
        if out and out[-1][1] == lo:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def axis_subsets(rank: int) -> list[tuple[int, ...]]:
    """Every non-empty set of mesh axes, smallest first (the planner's merged groups)."""
    return [c for k in range(1, rank + 1) for c in itertools.combinations(range(rank), k)]
