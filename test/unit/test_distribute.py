"""Partial inputs split exactly (issue 11, point 7): `runtime.distribute` cuts a P(sum|max|min) value
into pieces that every reduction order of the mesh turns back into the value bit for bit, for every
dtype and mesh; so data-movement programs check bitwise end to end."""

from __future__ import annotations

import functools
import itertools
import os
import zlib
from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from sbpc.dialects.collectives import Coord, NdSbp, reduce_arrays
from sbpc.dialects.context import register_dialects
from sbpc.dialects.sbp import BROADCAST, PartialAttr, ReduceKind, nd_sbp, partial, split
from sbpc.dialects.sharding import local_slices
from sbpc.passes.registry import get_all_passes
from sbpc.runtime.distribute import assemble, distribute
from sbpc.runtime.simulator import reorders_float_sums
from sbpc.tools.sbp_run import run_captured

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.int16), np.dtype(np.int32),
          np.dtype(np.int64)]
MESHES = [(2,), (3,), (4,), (2, 2), (2, 3), (1, 2), (2, 1, 2)]
KINDS = [ReduceKind.SUM, ReduceKind.MAX, ReduceKind.MIN]
SHAPE = (3, 5)


def values(dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """Random values over many magnitudes plus the awkward ones: zeros, integers, extremes, subnormals,
    non-finite values (floats) or the integer range's ends."""
    n = int(np.prod(SHAPE))
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        special = [0, 1, -1, -8, info.max, info.min, info.max - 1, info.min + 1]
        body = rng.integers(info.min, info.max, size=n, endpoint=True).astype(dtype)
    else:
        info = ml_dtypes.finfo(dtype)
        special = [0.0, -0.0, -8.0, 3.0, float(info.max), -float(info.max), float(info.smallest_subnormal),
                   -float(info.smallest_normal), np.inf, -np.inf, np.nan]
        scale = np.exp2(rng.integers(-20, 20, size=n)).astype(np.float64)
        with np.errstate(over="ignore"):  # f16 overflows to inf: one more awkward value
            body = (rng.standard_normal(n) * scale).astype(np.float32).astype(dtype)
    body[: len(special)] = np.array(special).astype(dtype)
    return rng.permutation(body).reshape(SHAPE)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality (so -0.0 != 0.0), with any NaN equal to any NaN."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if np.issubdtype(a.dtype, np.integer):
        return bool(np.array_equal(a, b))
    nan = np.isnan(a.astype(np.float64))
    if not np.array_equal(nan, np.isnan(b.astype(np.float64))):
        return False
    bits = np.uint16 if a.dtype.itemsize == 2 else np.uint32
    return bool(np.array_equal(a.view(bits)[~nan], b.view(bits)[~nan]))


@functools.cache
def trees(n: int) -> tuple[tuple, ...]:
    """Every full binary bracketing of leaves 0..n-1 in that order."""
    if n == 1:
        return (0,)
    found = []
    for cut in range(1, n):
        for left in trees(cut):
            for right in trees(n - cut):
                found.append((left, _shift(right, cut)))
    return tuple(found)


def _shift(tree: tuple | int, by: int) -> tuple | int:
    return tree + by if isinstance(tree, int) else (_shift(tree[0], by), _shift(tree[1], by))


def reduce_tree(kind: ReduceKind, tree: tuple | int, leaves: Sequence[np.ndarray]) -> np.ndarray:
    if isinstance(tree, int):
        return leaves[tree]
    return reduce_arrays(kind, [reduce_tree(kind, tree[0], leaves), reduce_tree(kind, tree[1], leaves)])


def every_order(kind: ReduceKind, leaves: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The reduction of `leaves` in every order and grouping: all permutations, each under every
    bracketing up to 4 leaves, left to right beyond (permutations of 6 leaves x 42 trees is too many)."""
    results = []
    for perm in itertools.permutations(leaves):
        left_to_right = functools.reduce(lambda t, i: (t, i), range(1, len(perm)), 0)
        shapes = trees(len(perm)) if len(perm) <= 4 else (left_to_right,)
        results.extend(reduce_tree(kind, t, perm) for t in shapes)
    return results


def partial_states(hierarchy: Sequence[int], kind: ReduceKind) -> list[NdSbp]:
    """Every ND-SBP on the mesh with at least one `kind` partial axis, the other axes B or S(1)."""
    p = partial(kind)
    states = itertools.product((p, BROADCAST, split(1)), repeat=len(hierarchy))
    return [s for s in states if p in s]


def leaves_of(shards: dict[Coord, np.ndarray], state: NdSbp) -> list[tuple[Coord, list[np.ndarray]]]:
    """The pieces one reduction over every partial axis combines (same coordinate on the other axes),
    with the first coordinate of each group."""
    groups: dict[Coord, tuple[Coord, list[np.ndarray]]] = {}
    for coord in sorted(shards):
        rest = tuple(c for c, e in zip(coord, state, strict=True) if not isinstance(e, PartialAttr))
        groups.setdefault(rest, (coord, []))[1].append(shards[coord])
    return list(groups.values())


@pytest.mark.parametrize("hierarchy", MESHES, ids=str)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_reduction_order_gives_the_value(dtype: np.dtype, kind: ReduceKind, hierarchy: tuple[int, ...]) -> None:
    rng = np.random.default_rng(zlib.crc32(repr((dtype.name, kind.name, hierarchy)).encode()))
    value = values(dtype, rng)
    for state in partial_states(hierarchy, kind):
        shards = distribute(value, state, hierarchy, rng)
        assert same_bits(assemble(shards, state, hierarchy), value), state
        for coord, leaves in leaves_of(shards, state):
            # The value these leaves reduce to: the block of `value` this coordinate holds.
            want = value[tuple(slice(lo, hi) for lo, hi in local_slices(SHAPE, nd_sbp(*state), hierarchy, coord))]
            for got in every_order(kind, leaves):
                assert same_bits(got, want), (state, coord)


@pytest.mark.parametrize("hierarchy", [(2, 2), (2, 3), (2, 1, 2)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES[:3], ids=str)
def test_mixed_partial_kinds_assemble_exactly(dtype: np.dtype, hierarchy: tuple[int, ...]) -> None:
    """Sum axes under and over max/min axes (reduced last axis first, the order the semantics allows):
    a max/min axis re-reads the grid of the values it produced."""
    rng = np.random.default_rng(5)
    value = values(dtype, rng)
    for state in itertools.product((partial(), partial(ReduceKind.MAX), partial(ReduceKind.MIN), BROADCAST),
                                   repeat=len(hierarchy)):
        shards = distribute(value, state, hierarchy, rng)
        assert same_bits(assemble(shards, state, hierarchy), value), state


def test_sum_pieces_are_random_and_on_the_value_grid() -> None:
    """Not a trivial split (one rank holding everything): every rank holds a real share."""
    rng = np.random.default_rng(3)
    value = rng.standard_normal((64,)).astype(np.float32)
    shards = distribute(value, (partial(),), (4,), rng)
    for piece in shards.values():
        assert np.count_nonzero(piece) > 48
        assert np.all((np.sign(piece) == np.sign(value)) | (piece == 0))
    # The old standard-normal pieces summed to value only up to rounding; these add up in any order.
    assert same_bits(shards[(0,)] + shards[(1,)] + shards[(2,)] + shards[(3,)], value)
    assert same_bits(shards[(3,)] + (shards[(2,)] + (shards[(1,)] + shards[(0,)])), value)


PB_PROGRAM = """sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<4x4xf32, @m, [P, B]>) -> !sbp.tensor<4x4xf32, @m, [B, B]> {
  %y = sbp.to_global %x : !sbp.tensor<4x4xf32, @m, [P, B]> -> !sbp.tensor<4x4xf32, @m, [B, B]>
  func.return %y : !sbp.tensor<4x4xf32, @m, [B, B]>
}
"""

# Each rank adds its own pieces of the partial sums: a compute op on float partial sums.
ADDS_PROGRAM = PB_PROGRAM.replace(
    "%y = sbp.to_global %x : !sbp.tensor<4x4xf32, @m, [P, B]> -> !sbp.tensor<4x4xf32, @m, [B, B]>",
    "%s = sbp.add %x, %x : !sbp.tensor<4x4xf32, @m, [P, B]>, !sbp.tensor<4x4xf32, @m, [P, B]> -> "
    "!sbp.tensor<4x4xf32, @m, [P, B]>\n"
    "  %y = sbp.to_global %s : !sbp.tensor<4x4xf32, @m, [P, B]> -> !sbp.tensor<4x4xf32, @m, [B, B]>",
)


@pytest.mark.parametrize("seed", range(5))
def test_partial_to_broadcast_on_2x2_checks_bit_for_bit(tmp_path, seed: int) -> None:
    """`[P, B] -> [B, B]` returns exactly its input (it returned -7.9999995 for -8), and the checker no
    longer needs a tolerance for it."""
    program = tmp_path / "pb.mlir"
    program.write_text(PB_PROGRAM)
    value = np.arange(-8, 8, dtype=np.float32).reshape(4, 4) + np.float32(seed) / 8
    np.save(tmp_path / "x.npy", value)
    out = tmp_path / "out"
    inputs = str(tmp_path / "x.npy")
    code, text = run_captured([str(program), "--check", "--inputs", inputs, "--save-outputs", str(out)])
    assert code == 0, text
    assert "all_reduce mesh_axes=[0] [P, B]->[B, B] f32[4,4]" in text
    assert text.rstrip().endswith("check: OK (result 0: exact)")
    assert same_bits(np.load(os.path.join(out, "result0.npy")), value)
    # Random inputs: the check itself is bitwise for this program.
    code, text = run_captured([str(program), "--check", "--seed", str(seed)])
    assert code == 0, text
    assert text.rstrip().endswith("check: OK (result 0: exact)")


def compiled(text: str, pipeline: str) -> ModuleOp:
    ctx = Context()
    register_dialects(ctx)
    module = Parser(ctx, text).parse_module()
    PassPipeline.parse_spec(get_all_passes(), pipeline).apply(ctx, module)
    return module


@pytest.mark.parametrize("pipeline", ["infer-sbp,materialize-boxing,lower-boxing,spmdize",
                                      "infer-sbp,materialize-boxing,lower-boxing"], ids=["spmd", "global"])
def test_checker_is_bitwise_unless_a_compute_op_sums_float_pieces(pipeline: str) -> None:
    assert not reorders_float_sums(compiled(PB_PROGRAM, pipeline), "main")
    assert reorders_float_sums(compiled(ADDS_PROGRAM, pipeline), "main")  # each rank adds its own pieces
    assert not reorders_float_sums(compiled(ADDS_PROGRAM.replace("f32", "i32"), pipeline), "main")


def test_checker_stays_tolerant_when_a_per_rank_op_has_no_signature() -> None:
    """Hand-written per-rank programs may lack `sbp.signature`: their partial sums may be computed on."""
    spmd = compiled(ADDS_PROGRAM, "infer-sbp,materialize-boxing,lower-boxing,spmdize")
    for op in spmd.walk():
        op.attributes.pop("sbp.signature", None)
    assert reorders_float_sums(spmd, "main")
    plain = compiled(PB_PROGRAM, "infer-sbp,materialize-boxing,lower-boxing,spmdize")
    assert not reorders_float_sums(plain, "main")
