"""Shape arithmetic of distributed tensors: numpy broadcasting and balanced splits.

Pure arithmetic on shapes and SBP entries. A tensor axis of extent n split over k ranks gives the first `n % k` ranks
one more element than the others (OneFlow's balanced split). A tensor axis split on several mesh
axes is split by mesh axis 0 first (major), then by the next, and so on.
"""

from __future__ import annotations

from collections.abc import Sequence

from sbpc.dialects.sbp import NdSbpAttr, SbpAttr, SplitAttr


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """numpy's broadcast of two shapes, or None if they are incompatible."""
    out: list[int] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def balanced_range(n: int, parts: int, index: int) -> tuple[int, int]:
    """[start, stop) of piece `index` when n elements are split into `parts` balanced pieces.

    The one balanced split: shards of a split tensor axis, the flat pieces of an all-reduce's
    reduce-scatter phase, and the pieces a partial input is split into all use it."""
    base, extra = divmod(n, parts)
    start = index * base + min(index, extra)
    return start, start + base + (1 if index < extra else 0)


def split_axes(sbp: NdSbpAttr) -> dict[int, list[int]]:
    """tensor axis -> mesh axes splitting it, mesh axis 0 first."""
    found: dict[int, list[int]] = {}
    for mesh_axis, entry in enumerate(sbp):
        if type(entry) is SplitAttr:  # exact type: isinstance on an attribute class goes through ABCMeta
            found.setdefault(entry.dim, []).append(mesh_axis)
    return found


def local_slices(
    shape: Sequence[int], sbp: NdSbpAttr, hierarchy: Sequence[int], coord: Sequence[int]
) -> tuple[tuple[int, int], ...]:
    """Per tensor axis, the [start, stop) held by the rank at mesh coordinate `coord`."""
    return split_slices(shape, split_axes(sbp), hierarchy, coord)


def split_slices(
    shape: Sequence[int], splits: dict[int, list[int]], hierarchy: Sequence[int], coord: Sequence[int]
) -> tuple[tuple[int, int], ...]:
    """`local_slices` given the ND-SBP's `split_axes` (to read them once for every rank)."""
    bounds = [(0, d) for d in shape]
    for axis, mesh_axes in splits.items():
        start, stop = bounds[axis]
        for m in mesh_axes:
            lo, hi = balanced_range(stop - start, hierarchy[m], coord[m])
            start, stop = start + lo, start + hi
        bounds[axis] = (start, stop)
    return tuple(bounds)


def local_shape(
    shape: Sequence[int], sbp: NdSbpAttr, hierarchy: Sequence[int], coord: Sequence[int]
) -> tuple[int, ...]:
    """Shape of the shard held at mesh coordinate `coord`."""
    return tuple(hi - lo for lo, hi in local_slices(shape, sbp, hierarchy, coord))


def max_local_shape(
    shape: Sequence[int], sbp: NdSbpAttr | Sequence[SbpAttr], hierarchy: Sequence[int]
) -> tuple[int, ...]:
    """Shape of the largest shard: the one at mesh coordinate 0, which gets every remainder, so each
    split divides its extent rounding up (`balanced_range(n, k, 0)` has ceil(n / k) elements)."""
    extents = list(shape)
    for d, entry in enumerate(sbp):
        if type(entry) is SplitAttr:  # exact type: isinstance on an attribute class goes through ABCMeta
            extents[entry.dim] = -(-extents[entry.dim] // hierarchy[d])
    return tuple(extents)


def fits_shape(sbp: NdSbpAttr, shape: Sequence[int], hierarchy: Sequence[int]) -> bool:
    """OneFlow's Storage4NdSbp check: each split axis must hold at least h_d elements when split
    by mesh axis d (floor division, mesh axis 0 first). Uneven splits are allowed."""
    extents = list(shape)
    for d, entry in enumerate(sbp):
        if type(entry) is SplitAttr:
            if entry.dim >= len(extents) or extents[entry.dim] < hierarchy[d]:
                return False
            extents[entry.dim] //= hierarchy[d]
    return True


FlatPattern = tuple[int, tuple[tuple[int, int], ...]] | None
"""A box's row-major flat index set: (first index, ((extent, stride), ...) outermost first)."""


def flat_pattern(shape: Sequence[int], box: Sequence[tuple[int, int]]) -> FlatPattern:
    """The canonical form of the flat indices of `box` (per axis [start, stop)) in a row-major
    array of `shape`: None if empty, else the first index and the (extent, stride) levels left
    after dropping extent-1 axes and merging each axis into its inner neighbour when contiguous.
    Two boxes hold the same flat indices exactly when their patterns are equal (each level's
    stride exceeds the span of the levels inside it, so the decomposition is unique); the
    row-major traversal of a box visits its flat indices in increasing order."""
    base, stride = 0, 1
    levels: list[tuple[int, int]] = []  # innermost first
    for extent_of_axis, (lo, hi) in zip(reversed(shape), reversed(box), strict=True):
        if hi <= lo:
            return None
        base += lo * stride
        extent = hi - lo
        if extent != 1:
            if levels and levels[-1][0] * levels[-1][1] == stride:
                inner_extent, inner_stride = levels.pop()
                levels.append((inner_extent * extent, inner_stride))
            else:
                levels.append((extent, stride))
        stride *= extent_of_axis
    return base, tuple(reversed(levels))
