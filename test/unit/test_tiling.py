"""ascendc/tiling.py: tiling keys, coalescing, core split, UB plan, validation (docs/ascendc_design.md "Tiling")."""

from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.soc import SOCS, UB_BYTES, SocInfo
from sbpc.lowering.ascendc.tiling import (
    UB_RESERVED_BYTES,
    TensorView,
    coalesce,
    compute_tiling,
    round_scalar,
    row_major_strides,
    ub_bytes_per_elem,
)
from sbpc.lowering.ascendc.tiling_data import FMOD_TILING_FIELDS, MAX_DIMS, tiling_size, unpack_tiling

V = TensorView
rm = TensorView.row_major
DTYPES = tuple(t.name for t in dtypes.FMOD_KERNEL_TYPES)


def transposed(shape, perm, offset=0):
    """The view x.permute(perm) of a row-major x whose permuted shape is `shape`."""
    base_shape = [0] * len(shape)
    for i, p in enumerate(perm):
        base_shape[p] = shape[i]
    base = row_major_strides(base_shape)
    return V(tuple(shape), tuple(base[p] for p in perm), offset)


# --- tiling keys and coalescing --------------------------------------------------------------------------


def test_scalar_keys():
    assert compute_tiling(rm((7, 9)), 2.0, rm((7, 9)), "f32").tilingKey == 0
    t = compute_tiling(rm((7, 9), offset=5), 2.0, rm((7, 9), offset=3), "f32")
    assert t.tilingKey == 0 and t.selfOffset == t.outOffset == 0  # offsets allowed, carried by the address
    assert t.to_json()["self"]["offset"] == 5
    t = transposed((9, 7), (1, 0))
    assert compute_tiling(t, 2.0, rm((9, 7)), "f16").tilingKey == 3
    assert compute_tiling(rm((9, 7)), 2.0, t, "f16").tilingKey == 3  # strided out
    # transposed, then transposed back: row-major strides again -> contiguous
    tt = transposed((3, 4, 5), (0, 1, 2))
    assert tt.strides == (20, 5, 1) and compute_tiling(tt, 2.0, None, "f16").tilingKey == 0
    # a slice of whole rows is contiguous; a slice of columns is not
    rows = V((4, 10), (10, 1), offset=20)
    assert compute_tiling(rows, 1.5, None, "bf16").tilingKey == 0
    cols = V((4, 5), (10, 1), offset=2)
    t = compute_tiling(cols, 1.5, None, "bf16")
    assert t.tilingKey == 3 and t.dimNum == 2 and t.shape[:2] == (4, 5) and t.selfStride[:2] == (10, 1)
    assert t.innerRun == 5 and t.selfOffset == 2
    every_other = V((4, 5), (10, 2))
    assert compute_tiling(every_other, 1.5, None, "bf16").innerRun == 1


def test_tensor_keys():
    assert compute_tiling(rm((6, 70)), rm((6, 70)), None, "f32").tilingKey == 1
    assert compute_tiling(rm((1, 6, 70)), rm((6, 70)), None, "f32").tilingKey == 1  # leading 1 coalesces away
    assert compute_tiling(rm((4, 1, 5)), rm((4, 1, 5)), None, "f16").tilingKey == 1  # inner size-1 dim dropped
    # other of shape (1,) or () -> one element broadcast everywhere: scalar-like key 0 (read once)
    for o in (rm((1,)), rm(()), rm((1, 1))):
        t = compute_tiling(rm((6, 70)), o, None, "f32")
        assert (t.tilingKey, t.dimNum, t.shape[0], t.otherStride[0], t.innerRun) == (0, 1, 420, 0, 420)
    # row broadcast: other (64,) over (R, 64)
    t = compute_tiling(rm((100, 64)), rm((64,)), None, "f16")
    assert t.tilingKey == 2 and t.shape[:2] == (100, 64) and t.otherStride[:2] == (0, 1) and t.innerRun == 64
    assert t.selfStride[:2] == (64, 1) and t.outStride[:2] == (64, 1)
    # column broadcast: other (R, 1) over (R, 64): constant inner runs
    t = compute_tiling(rm((100, 64)), rm((100, 1)), None, "f16")
    assert t.tilingKey == 2 and t.otherStride[:2] == (1, 0) and t.innerRun == 64
    # middle broadcast (a,1,c) over (a,b,c): 3 dims, other strides (c, 0, 1)
    t = compute_tiling(rm((3, 5, 7)), rm((3, 1, 7)), None, "i16")
    assert t.tilingKey == 2 and t.dimNum == 3 and t.otherStride[:3] == (7, 0, 1)
    # broadcasts over adjacent dims merge: (a,b,c) with other (1,1,c) -> 2 dims (a*b, c)
    t = compute_tiling(rm((3, 5, 7)), rm((7,)), None, "i16")
    assert t.tilingKey == 2 and t.dimNum == 2 and t.shape[:2] == (15, 7)
    # other expanded with explicit stride-0 dims is also key 2
    t = compute_tiling(rm((4, 8)), V((4, 8), (0, 1), offset=9), None, "f32")
    assert t.tilingKey == 2 and t.otherOffset == 0  # keys 0-2: the GM address carries the offset
    # non-contiguous operands -> 4
    assert compute_tiling(rm((8, 16)), transposed((8, 16), (1, 0)), None, "f32").tilingKey == 4
    assert compute_tiling(transposed((8, 16), (1, 0)), rm((8, 16)), None, "f32").tilingKey == 4
    assert compute_tiling(rm((8, 16)), rm((16,)), transposed((8, 16), (1, 0)), "f32").tilingKey == 4
    assert compute_tiling(rm((8, 16)), V((16,), (2,)), None, "f32").tilingKey == 4  # strided other
    assert compute_tiling(V((8, 16), (0, 1)), rm((8, 16)), None, "f32").tilingKey == 4  # expanded self
    # transposed-then-back other is contiguous: key 1
    assert compute_tiling(rm((8, 16)), transposed((8, 16), (0, 1)), None, "bf16").tilingKey == 1


def test_coalesce():
    c = coalesce(rm((2, 3, 4)), rm((2, 3, 4)), rm((2, 3, 4)))
    assert c.shape == (24,) and c.self_strides == c.other_strides == c.out_strides == (1,)
    c = coalesce(rm((2, 3, 4)), None, transposed((2, 3, 4), (0, 2, 1)))
    assert c.shape == (2, 3, 4) and c.out_strides == (12, 1, 3) and c.other_strides is None
    c = coalesce(rm((2, 1, 3)), rm((1, 3)), rm((2, 1, 3)))
    assert c.shape == (2, 3) and c.other_strides == (0, 1)
    c = coalesce(rm(()), rm(()), rm(()))
    assert c.shape == ()
    assert coalesce(rm((0, 3)), None, rm((0, 3))).shape == (0,)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_coalesce_preserves_every_offset(data):
    """For every logical index, the coalesced dims give the same storage offset as the original views."""
    rank = data.draw(st.integers(0, 5))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))

    def view(shp):
        kind = data.draw(st.sampled_from(["rm", "perm", "step", "zero"]))
        off = data.draw(st.integers(0, 9))
        if kind == "perm" and len(shp) > 1:
            return transposed(shp, data.draw(st.permutations(range(len(shp)))), off)
        if kind == "step":
            base = row_major_strides([n * 2 + 1 for n in shp])
            return V(shp, tuple(2 * b for b in base), off)
        if kind == "zero":
            return V(shp, tuple(0 if data.draw(st.booleans()) else s for s in row_major_strides(shp)), off)
        return rm(shp, off)

    drop = data.draw(st.integers(0, rank))
    oshape = tuple(1 if data.draw(st.booleans()) else n for n in shape[drop:])
    self_v, other_v, out_v = view(shape), view(oshape), view(shape)
    if any(n > 1 and s == 0 for n, s in zip(out_v.shape, out_v.strides, strict=True)):
        out_v = rm(shape)
    t = compute_tiling(self_v, other_v, out_v, "f32")
    pad = (1,) * (rank - len(oshape)) + oshape
    for idx in itertools.product(*(range(n) for n in shape)):
        flat = sum(i * s for i, s in zip(idx, row_major_strides(shape), strict=True))
        coord, rest = [], flat
        for n in reversed(t.shape[: t.dimNum]):
            coord.append(rest % n)
            rest //= n
        coord.reverse()

        def at(strides, off, coord=coord):
            return off + sum(c * s for c, s in zip(coord, strides[: t.dimNum], strict=True))

        def orig(v, idx=idx):  # keys 0-2 address the view from its first element
            return (v.offset if t.tilingKey >= 3 else 0) + sum(i * s for i, s in zip(idx, v.strides, strict=True))

        assert at(t.selfStride, t.selfOffset) == orig(self_v)
        assert at(t.outStride, t.outOffset) == orig(out_v)
        oidx = [0 if p == 1 else i for i, p in zip(idx[rank - len(oshape) :], oshape, strict=True)]
        want = orig(other_v, oidx)
        assert at(t.otherStride, t.otherOffset) == want, (pad, t)
        if t.tilingKey in (0, 1):
            assert at(t.selfStride, 0) == flat and at(t.outStride, 0) == flat


# --- core split -----------------------------------------------------------------------------------------


def test_block_dim_small_and_large():
    t = compute_tiling(rm((10,)), 3.0, None, "f32")
    assert (t.blockDim, t.blockLength, t.lastBlockLength) == (1, 1024, 10)  # >= 4 KiB per core
    assert compute_tiling(rm((1 << 20,)), 3.0, None, "f32").blockDim == 48
    assert compute_tiling(rm((1 << 20,)), 3.0, None, "f32", "ascend910b3").blockDim == 40
    assert compute_tiling(rm((1 << 20,)), rm((1 << 20,)), None, "bf16", "ascend910b4").blockDim == 40
    assert compute_tiling(rm((1 << 20,)), 3.0, None, "f16", "ascend910_93").blockDim == 48
    # exactly 4 KiB per core for 2 cores' worth of f16
    t = compute_tiling(rm((4096,)), 3.0, None, "f16")
    assert (t.blockDim, t.blockLength) == (2, 2048)
    t = compute_tiling(rm((4097,)), 3.0, None, "f16")
    assert (t.blockDim, t.lastBlockLength) == (3, 1)


@pytest.mark.parametrize("soc", ["ascend910b", "ascend910b3"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_no_idle_core_aligned_blocks(dtype, soc):
    size = dtypes.lookup(dtype).size
    cores = SOCS[soc].aiv_cores
    rng = random.Random(1)
    ns = list(range(1, 300)) + [rng.randint(1, 1 << 40) for _ in range(300)]
    ns += [k * (4096 // size) + d for k in range(1, 3 * cores) for d in (-1, 0, 1)]
    for n in ns:
        t = compute_tiling(rm((n,)), 1.0, None, dtype, soc)
        assert 1 <= t.blockDim <= cores
        assert math.ceil(n / t.blockLength) == t.blockDim  # no launched core without work
        assert 1 <= t.lastBlockLength <= t.blockLength
        assert (t.blockDim - 1) * t.blockLength + t.lastBlockLength == n
        assert t.blockLength * size % 32 == 0  # every block start is 32-byte aligned
        assert t.blockLength * size >= 4096
        if n * size >= 4096 * cores * 2:
            assert t.blockDim == cores  # big inputs use every core


# --- UB plan ---------------------------------------------------------------------------------------------


def test_ub_plan_values():
    assert ub_bytes_per_elem("f32", 2) == 28 and ub_bytes_per_elem("f32", 1) == 16
    for d in ("f16", "bf16", "i16"):
        assert ub_bytes_per_elem(d, 2) == 24 and ub_bytes_per_elem(d, 1) == 18
    t = compute_tiling(rm((1 << 24,)), 1.0, None, "f32")
    assert (t.bufferNum, t.tileLength) == (2, 6912)  # floor(194560 / 28) = 6948 -> 6912
    t = compute_tiling(rm((1 << 24,)), rm((1 << 24,)), None, "bf16")
    assert (t.bufferNum, t.tileLength) == (2, 8064)  # floor(194560 / 24) = 8106 -> 8064
    t = compute_tiling(rm((1000,)), 1.0, None, "f16")
    assert (t.blockDim, t.blockLength, t.lastBlockLength) == (1, 2048, 1000)
    assert (t.bufferNum, t.tileLength, t.tileNum, t.lastTileLength) == (1, 2048, 1, 2048)
    assert (t.lastCoreTileNum, t.lastCoreLastTileLength) == (1, 1000)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ub_budget_and_tiles(dtype):
    budget = UB_BYTES - UB_RESERVED_BYTES
    rng = random.Random(2)
    ns = [1, 63, 64, 65, 5000, 100_000, 331_777, 1 << 22, 10**9, 3 * 10**11]
    for n in ns + [rng.randint(1, 1 << 36) for _ in range(200)]:
        for soc in ("ascend910b", "ascend910b3"):
            t = compute_tiling(rm((n,)), rm((1,)), None, dtype, soc)
            assert t.tileLength % 64 == 0 and t.tileLength > 0
            assert t.ub_bytes == t.tileLength * ub_bytes_per_elem(dtype, t.bufferNum) <= budget
            assert t.bufferNum == (1 if t.tileNum == 1 else 2)  # double buffering only with > 1 tile
            assert (t.tileNum - 1) * t.tileLength + t.lastTileLength == t.blockLength
            assert 0 < t.lastTileLength <= t.tileLength
            assert (t.lastCoreTileNum - 1) * t.tileLength + t.lastCoreLastTileLength == t.lastBlockLength
            assert 0 < t.lastCoreLastTileLength <= t.tileLength and t.lastCoreTileNum <= t.tileNum


def test_smaller_ub_and_custom_soc():
    t = compute_tiling(rm((1 << 22,)), 1.0, None, "f32", SocInfo("small", 8, ub_bytes=65536))
    assert t.blockDim == 8 and t.tileLength == (65536 - 2048) // 28 // 64 * 64 and t.ub_bytes <= 65536 - 2048
    with pytest.raises(ValueError, match="cannot hold"):
        compute_tiling(rm((10,)), 1.0, None, "f32", SocInfo("tiny", 1, ub_bytes=2048 + 1000))


# --- edge shapes and validation --------------------------------------------------------------------------


def test_zero_dim_and_empty():
    t = compute_tiling(rm(()), 5.0, rm(()), "f16")
    assert (t.tilingKey, t.totalLength, t.dimNum, t.blockDim, t.bufferNum, t.innerRun) == (0, 1, 0, 1, 1, 1)
    # blockLength is the 4 KiB minimum (2048 f16) even for one element; the one tile covers it
    assert (t.blockLength, t.lastBlockLength, t.tileLength) == (2048, 1, 2048)
    assert (t.lastCoreTileNum, t.lastCoreLastTileLength) == (1, 1)
    t = compute_tiling(rm(()), rm(()), None, "i16")
    assert t.tilingKey == 1 and t.totalLength == 1
    for shape in [(0,), (3, 0, 5), (0, 1)]:
        for other in (2.0, rm((1,))):
            t = compute_tiling(transposed(shape, tuple(reversed(range(len(shape))))), other, None, "bf16")
            f = t.fields()
            assert t.blockDim == 1 and t.tilingKey == (0 if other == 2.0 else 1)
            assert all(v == 0 for k, v in f.items() if k not in ("blockDim", "scalarOther") and not isinstance(v, list))
            assert all(x == 0 for k, v in f.items() if isinstance(v, list) for x in v)


def test_validation():
    with pytest.raises(ValueError, match="at most 8"):
        compute_tiling(rm((1,) * 9), 1.0, None, "f32")
    compute_tiling(rm((2,) * 8), rm((2,) * 8), None, "f32")  # 8 dims are fine
    with pytest.raises(ValueError, match="not broadcastable"):
        compute_tiling(rm((4, 5)), rm((4,)), None, "f32")
    with pytest.raises(ValueError, match="more dims"):
        compute_tiling(rm((5,)), rm((1, 5)), None, "f32")
    with pytest.raises(ValueError, match="out shape"):
        compute_tiling(rm((4, 5)), 1.0, rm((5, 4)), "f32")
    with pytest.raises(ValueError, match="share one location"):
        compute_tiling(rm((4, 5)), 1.0, V((4, 5), (0, 1)), "f32")
    with pytest.raises(ValueError, match="unsupported fmod dtype"):
        compute_tiling(rm((4,)), 1.0, None, "f64")
    with pytest.raises(ValueError, match="unknown soc"):
        compute_tiling(rm((4,)), 1.0, None, "f32", "ascend310p")
    with pytest.raises(ValueError, match="non-negative"):
        V((4,), (-1,))
    with pytest.raises(ValueError, match="strides"):
        V((4, 2), (1,))
    with pytest.raises(ValueError, match="int16"):
        compute_tiling(rm((4,)), 40000, None, "i16")
    with pytest.raises(ValueError, match="int16"):
        compute_tiling(rm((4,)), math.nan, None, "i16")
    with pytest.raises(ValueError, match="int or a float"):
        compute_tiling(rm((4,)), True, None, "f32")
    with pytest.raises(ValueError, match="int64"):
        compute_tiling(rm((1 << 30,) * 3), 1.0, None, "f32")
    assert compute_tiling(rm((4,)), 1.0, None, "float16").dtype == "f16"  # aliases


def test_scalar_rounding_nep50():
    assert round_scalar(0.1, "f16") == 0.0999755859375 == float(np.float16(0.1))
    assert round_scalar(0.1, "f32") == float(np.float32(0.1))
    assert round_scalar(0.1, "bf16") == 0.10009765625
    assert round_scalar(1e6, "f16") == math.inf
    assert math.isnan(round_scalar(math.nan, "bf16"))
    assert round_scalar(2.7, "i16") == 2.0 and round_scalar(-2.7, "i16") == -2.0  # truncation toward zero
    assert round_scalar(-32768, "i16") == -32768.0
    assert round_scalar(np.int64(7), "f16") == 7.0
    # correctly rounded from the exact double (no detour through float32): just above a bf16 tie
    assert round_scalar(1 + 2**-8 + 2**-40, "bf16") == 1.0078125
    assert round_scalar(1 + 2**-11 + 2**-40, "f16") == 1.0009765625
    assert math.copysign(1.0, round_scalar(-1e-9, "f16")) == -1.0 == math.copysign(1.0, np.float16(-1e-9))
    t = compute_tiling(rm((8,)), 0.1, None, "f16")
    assert t.scalarOther == 0.0999755859375 and t.fields()["scalarOther"] == 0.0999755859375
    assert compute_tiling(rm((8,)), rm((8,)), None, "f16").scalarOther == 0.0


# --- fields, bytes, json ---------------------------------------------------------------------------------


def test_fields_bytes_json():
    t = compute_tiling(transposed((64, 33), (1, 0), offset=7), rm((33,), offset=2), rm((64, 33), offset=1), "bf16")
    f = t.fields()
    assert list(f) == [name for name, _, _ in FMOD_TILING_FIELDS]
    assert all(len(f[name]) == MAX_DIMS for name, _, n in FMOD_TILING_FIELDS if n)
    assert (f["selfOffset"], f["otherOffset"], f["outOffset"]) == (7, 2, 1)
    assert tiling_size() == len(t.to_bytes()) == 384
    assert unpack_tiling(t.to_bytes()) == f
    j = t.to_json()
    for k in ("tilingKey", "blockDim", "blockLength", "tileLength", "tileNum", "lastTileLength", "bufferNum", "dtype",
              "shape", "selfStride", "otherStride", "outStride", "self", "other", "out"):  # fmt: skip
        assert k in j
    assert j["self"] == {"shape": [64, 33], "strides": [1, 64], "offset": 7} and j["tilingKey"] == 4
    json.dumps(j, allow_nan=False)
    j = compute_tiling(rm((3,)), math.nan, None, "f32").to_json()
    assert j["scalarOther"] == "nan" and json.dumps(j, allow_nan=False)


def test_from_layout():
    from sbpc.dialects.layout import Layout

    v = TensorView.from_layout((4, 6), Layout((4, 6), (1, 4), offset=3))
    assert v == V((4, 6), (1, 4), 3)
    assert TensorView.from_layout((4, 6)) == rm((4, 6))
    with pytest.raises(ValueError, match="hierarchical"):
        TensorView.from_layout((4, 6), Layout((4, (2, 3)), (6, (1, 2))))
    with pytest.raises(ValueError, match="does not match"):
        TensorView.from_layout((4, 6), Layout((6, 4), (4, 1)))
    assert compute_tiling(v, 1.0, None, "f32").tilingKey == 3
