"""Global values and their shards: `distribute` a value over the mesh by its ND-SBP and `assemble` it
back. What a boxing step does to the shards is `dialects.collectives`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sbpc.dialects.collectives import Coord, NdSbp, Shards, reduce_arrays
from sbpc.dialects.sbp import BroadcastAttr, PartialAttr, ReduceKind, SplitAttr
from sbpc.dialects.sharding import balanced_range


def _random_pieces(value: np.ndarray, n: int, kind: ReduceKind, rng: np.random.Generator) -> list[np.ndarray]:
    """n pieces whose `kind`-reduction is exactly `value` (up to float rounding for sums)."""
    if n == 1:
        return [value.copy()]
    integer = np.issubdtype(value.dtype, np.integer)
    if kind == ReduceKind.SUM:
        if integer:
            pieces = [rng.integers(-3, 4, size=value.shape).astype(value.dtype) for _ in range(n - 1)]
        else:
            pieces = [rng.standard_normal(value.shape).astype(value.dtype) for _ in range(n - 1)]
        last = value.copy()
        for p in pieces:
            last = last - p
        return [*pieces, last.astype(value.dtype)]
    owner = rng.integers(0, n, size=value.shape)
    out: list[np.ndarray] = []
    for i in range(n):
        delta = rng.integers(1, 4, size=value.shape) if integer else np.abs(rng.standard_normal(value.shape)) + 0.5
        moved = value - delta if kind == ReduceKind.MAX else value + delta
        if integer:
            info = np.iinfo(value.dtype)
            moved = np.clip(moved, info.min, info.max)
        out.append(np.where(owner == i, value, moved.astype(value.dtype)).astype(value.dtype))
    return out


def distribute(value: np.ndarray, state: NdSbp, hierarchy: Sequence[int], rng: np.random.Generator) -> Shards:
    """Shards of a global value: splits sliced, broadcasts copied, partials as random pieces."""
    level: dict[Coord, np.ndarray] = {(): value}
    extents: dict[Coord, list[tuple[int, int]]] = {(): [(0, d) for d in value.shape]}
    for d, entry in enumerate(state):
        nxt: dict[Coord, np.ndarray] = {}
        nxt_ext: dict[Coord, list[tuple[int, int]]] = {}
        made: dict[Coord, list[np.ndarray]] = {}
        for prefix, arr in level.items():
            if isinstance(entry, PartialAttr):
                # Broadcast replicas hold identical data: one decomposition per replica class.
                canonical = tuple(0 if isinstance(state[i], BroadcastAttr) else c for i, c in enumerate(prefix))
                if canonical not in made:
                    made[canonical] = _random_pieces(arr, hierarchy[d], entry.reduce_kind, rng)
                pieces = made[canonical]
            for i in range(hierarchy[d]):
                ext = list(extents[prefix])
                if isinstance(entry, SplitAttr):
                    lo, hi = balanced_range(ext[entry.dim][1] - ext[entry.dim][0], hierarchy[d], i)
                    index = [slice(None)] * arr.ndim
                    index[entry.dim] = slice(lo, hi)
                    piece = arr[tuple(index)].copy()
                    ext[entry.dim] = (ext[entry.dim][0] + lo, ext[entry.dim][0] + hi)
                elif isinstance(entry, PartialAttr):
                    piece = pieces[i]
                else:
                    piece = arr.copy()
                nxt[(*prefix, i)] = piece
                nxt_ext[(*prefix, i)] = ext
        level, extents = nxt, nxt_ext
    return level


class ReplicaMismatch(Exception):
    """Broadcast replicas that should be equal are not."""


def assemble(shards: Shards, state: NdSbp, hierarchy: Sequence[int], check_replicas: bool = True) -> np.ndarray:
    """The global value of shards: reduce partial axes and concatenate splits, last mesh axis first."""
    level = dict(shards)
    for d in reversed(range(len(state))):
        entry = state[d]
        parents: dict[Coord, list[np.ndarray]] = {}
        for coord in sorted(level):
            parents.setdefault(coord[:d], []).append(level[coord])
        nxt: dict[Coord, np.ndarray] = {}
        for prefix, children in parents.items():
            if isinstance(entry, SplitAttr):
                nxt[prefix] = np.concatenate(children, axis=entry.dim)
            elif isinstance(entry, PartialAttr):
                nxt[prefix] = reduce_arrays(entry.reduce_kind, children)
            else:
                if check_replicas and any(not _same(children[0], c) for c in children[1:]):
                    raise ReplicaMismatch(f"broadcast replicas differ on mesh axis {d}")
                nxt[prefix] = children[0]
        level = nxt
    return level[()]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))
