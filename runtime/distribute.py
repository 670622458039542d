"""How the runtime feeds a program: global values cut into shards by their SBP, and shards put back.

`distribute` gives every rank its shard of a global input: splits are sliced (balanced, mesh axis 0
major, `dialects.sharding`), broadcasts copied, and each partial axis holds pieces whose reduction is
the value. Pieces are *exact*: the mesh may reduce them in any order (an all-reduce over merged axes,
a reduce-scatter, `assemble` last axis first) and always gets the global value bit for bit, so a
program that only moves data checks bitwise against the global reference.

* `P(sum)` of integers: random small pieces plus a remainder; two's-complement sums are exact in any
  order even when they wrap.
* `P(sum)` of floats: every piece is a multiple of the value's own ulp q (the grid of the global
  value, kept through nested sum axes), with the value's sign, and the multiples add up to |value|/q
  (< 2^p, p the significand bits). Any partial sum is then an integer multiple k·q with k < 2^p, which
  the format represents exactly. Non-finite values go to the first piece, the others hold signed zeros.
* `P(max)` / `P(min)`: one random piece per element holds the value, the others something smaller
  (larger): exact by construction.

`assemble` reduces partial axes and concatenates splits, last mesh axis first, and checks that
broadcast replicas agree (`ReplicaMismatch`).
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np

from sbpc.dialects.collectives import Coord, NdSbp, Shards, reduce_arrays
from sbpc.dialects.sbp import BroadcastAttr, PartialAttr, ReduceKind, SplitAttr
from sbpc.dialects.sharding import balanced_range


class ReplicaMismatch(Exception):
    """Broadcast replicas that should be equal are not."""


def ulp_grid(value: np.ndarray) -> np.ndarray:
    """Per element, the float64 power of two q such that value/q is an integer below 2^p."""
    info = ml_dtypes.finfo(value.dtype)
    _, exponent = np.frexp(value.astype(np.float64))  # |value| = f * 2^e, 0.5 <= f < 1
    return np.maximum(np.ldexp(1.0, exponent - (info.nmant + 1)), float(info.smallest_subnormal))


def _sum_pieces(value: np.ndarray, n: int, grid: np.ndarray | None, rng: np.random.Generator) -> list[np.ndarray]:
    """n pieces whose sum, in any order and grouping, is exactly `value` (see the module docstring)."""
    if np.issubdtype(value.dtype, np.integer):
        pieces = [rng.integers(-3, 4, size=value.shape).astype(value.dtype) for _ in range(n - 1)]
        last = value.copy()
        for p in pieces:
            last = last - p
        return [*pieces, last.astype(value.dtype)]
    assert grid is not None
    v = value.astype(np.float64)
    finite = np.isfinite(v)
    units = np.where(finite, np.abs(v) / grid, 0.0).astype(np.int64)  # exact: |v|/q < 2^p
    cuts = np.sort(rng.integers(0, units + 1, size=(n - 1, *value.shape)), axis=0)
    bounds = np.concatenate([np.zeros((1, *value.shape), np.int64), cuts, units[np.newaxis]], axis=0)
    parts = np.copysign(np.diff(bounds, axis=0) * grid, v)  # exact in float64, and in value's dtype
    parts[0] = np.where(finite, parts[0], v)
    return [p.astype(value.dtype) for p in parts]


def _extreme_pieces(value: np.ndarray, n: int, kind: ReduceKind, rng: np.random.Generator) -> list[np.ndarray]:
    """n pieces whose max (min) is `value`: a random owner per element keeps it, the others move away."""
    integer = np.issubdtype(value.dtype, np.integer)
    owner = rng.integers(0, n, size=value.shape)
    out: list[np.ndarray] = []
    for i in range(n):
        if integer:
            # Saturate at the type's end (value - delta would wrap for int64, the widest type).
            info = np.iinfo(value.dtype)
            delta = rng.integers(1, 4, size=value.shape).astype(value.dtype)
            if kind == ReduceKind.MAX:
                moved = np.where(value >= info.min + delta, value - delta, info.min)
            else:
                moved = np.where(value <= info.max - delta, value + delta, info.max)
        else:
            delta = np.abs(rng.standard_normal(value.shape)) + 0.5
            moved = value - delta if kind == ReduceKind.MAX else value + delta
        out.append(np.where(owner == i, value, moved.astype(value.dtype)).astype(value.dtype))
    return out


def _pieces(
    value: np.ndarray, n: int, kind: ReduceKind, grid: np.ndarray | None, rng: np.random.Generator
) -> list[np.ndarray]:
    if n == 1:
        return [value.copy()]
    if kind == ReduceKind.SUM:
        return _sum_pieces(value, n, grid, rng)
    return _extreme_pieces(value, n, kind, rng)


def _slice(arr: np.ndarray, axis: int, lo: int, hi: int) -> np.ndarray:
    index = [slice(None)] * arr.ndim
    index[axis] = slice(lo, hi)
    return arr[tuple(index)].copy()


def distribute(value: np.ndarray, state: NdSbp, hierarchy: Sequence[int], rng: np.random.Generator) -> Shards:
    """Shards of a global value: splits sliced, broadcasts copied, partials as exact random pieces."""
    integer = np.issubdtype(value.dtype, np.integer)
    # Per prefix of mesh coordinates: the array it holds and, for floats, the ulp grid its sum pieces
    # use. Nested sum axes share the grid of the value the first of them cut (so that sums across them,
    # merged in one all-reduce, stay exact); a max/min axis changes the values, so the grid is re-read.
    level: dict[Coord, np.ndarray] = {(): value}
    grids: dict[Coord, np.ndarray | None] = {(): None}
    for d, entry in enumerate(state):
        nxt: dict[Coord, np.ndarray] = {}
        nxt_grids: dict[Coord, np.ndarray | None] = {}
        made: dict[Coord, tuple[list[np.ndarray], np.ndarray | None]] = {}
        for prefix, arr in level.items():
            grid = grids[prefix]
            if isinstance(entry, PartialAttr):
                kind = entry.reduce_kind
                if kind == ReduceKind.SUM:
                    if grid is None and not integer:
                        grid = ulp_grid(arr)
                else:
                    grid = None
                # Broadcast replicas hold identical data: one decomposition per replica class.
                canonical = tuple(0 if isinstance(state[i], BroadcastAttr) else c for i, c in enumerate(prefix))
                if canonical not in made:
                    made[canonical] = (_pieces(arr, hierarchy[d], kind, grid, rng), grid)
                pieces, grid = made[canonical]
            for i in range(hierarchy[d]):
                if isinstance(entry, SplitAttr):
                    lo, hi = balanced_range(arr.shape[entry.dim], hierarchy[d], i)
                    piece = _slice(arr, entry.dim, lo, hi)
                    piece_grid = None if grid is None else _slice(grid, entry.dim, lo, hi)
                elif isinstance(entry, PartialAttr):
                    piece, piece_grid = pieces[i], grid
                else:
                    piece, piece_grid = arr.copy(), grid
                nxt[(*prefix, i)] = piece
                nxt_grids[(*prefix, i)] = piece_grid
        level, grids = nxt, nxt_grids
    return level


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
