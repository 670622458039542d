"""The CPU shim of the Ascend C API (lowering/ascendc/cpu/shim/) and the runtime that compiles and runs kernels on it
(lowering/ascendc/cpu/runner.py).

* A hand-written FmodTensor/FmodScalar kernel (Inputs/fmod_kernel_handwritten.cpp, keys 1 and 0) run for all
  four dtypes must match lowering/ascendc/fmod_reference.py bit for bit (all NaNs equal) and move exactly the
  bytes of its operands between GM and UB.
* A probe kernel (written below) exercises single shim rules: DataCopy rounding down, DataCopyPad layout
  and poison, Cast rounding modes, the UB limit, queue discipline, alignment and the static_asserts.

Compiled libraries are cached ($SBPC_KERNEL_CACHE or ~/.cache/sbpc/kernels), so only the first run compiles.
"""

from __future__ import annotations

import ctypes
import math
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.cpu.runner import (
    COUNTER_NAMES,
    KernelCompileError,
    KernelRunError,
    compile_kernel,
    run_kernel,
)
from sbpc.lowering.ascendc.fmod_reference import fmod_scalar_reference, fmod_tensor_reference, round_scalar_to_dtype
from sbpc.lowering.ascendc.soc import UB_BYTES
from sbpc.lowering.ascendc.tiling_data import (
    FMOD_TILING_FIELDS,
    pack_tiling,
    tiling_field_offsets,
    tiling_header,
    tiling_size,
    unpack_tiling,
)

pytestmark = pytest.mark.cxx
HERE = Path(__file__).resolve().parent
KERNEL = HERE / "Inputs" / "fmod_kernel_handwritten.cpp"
UB = UB_BYTES
DTYPES = {t.name: t.numpy_dtype() for t in sorted(dtypes.FMOD_KERNEL_TYPES, key=lambda t: t.name)}
SIZES = [0, 1, 31, 32, 33, 4097, 1 << 16]
WEXTRA = ("-Wextra",)  # the shim must also be -Wextra clean


# ---------------------------------------------------------------------------------------------------------
# Tiling of the contiguous keys, written from docs/ascendc_design.md "Tiling" steps 3 and 4
# ---------------------------------------------------------------------------------------------------------


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def contiguous_tiling(n: int, dtype: np.dtype, cores: int = 48, scalar_other: float = 0.0) -> dict:
    size = dtype.itemsize
    fields = {"totalLength": n, "scalarOther": scalar_other, "dimNum": 1, "shape": [n]}
    if n == 0:
        return {**fields, "blockDim": 1}
    align = 32 // size
    block = max(_ceil(_ceil(n, cores), align) * align, 4096 // size)
    block_dim = _ceil(n, block)
    last_block = n - (block_dim - 1) * block
    temps = 3 * 4 if dtype != np.float32 else 4
    tile = (UB - 2048) // (2 * 3 * size + temps) // 64 * 64
    buffer_num = 2
    if block <= tile:
        buffer_num, tile = 1, _ceil(block, 64) * 64
    tile_num = _ceil(block, tile)
    last_core_tiles = _ceil(last_block, tile)
    return {
        **fields,
        "blockDim": block_dim,
        "blockLength": block,
        "lastBlockLength": last_block,
        "tileLength": tile,
        "tileNum": tile_num,
        "lastTileLength": block - (tile_num - 1) * tile,
        "lastCoreTileNum": last_core_tiles,
        "lastCoreLastTileLength": last_block - (last_core_tiles - 1) * tile,
        "bufferNum": buffer_num,
        "innerRun": n,
    }


def ub_bytes(t: dict, dtype: np.dtype, scalar: bool) -> int:
    """UB the hand-written kernel asks for on its largest core."""
    if t["totalLength"] == 0:
        return 0
    size = dtype.itemsize
    tile = _ceil(t["tileLength"] * size, 32) * 32
    ques = (2 if scalar else 3) * t["bufferNum"] * tile
    temps = 1 + (2 if dtype != np.float32 else (1 if scalar else 0))
    return ques + temps * t["tileLength"] * 4


# ---------------------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------------------


def make_inputs(dtype: np.dtype, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if dtype == np.int16:
        x = rng.integers(-32768, 32768, n).astype(np.int16)
        y = rng.integers(-300, 300, n).astype(np.int16)
        specials = np.array([0, -1, 1, -32768, 32767], np.int16)
        x[: min(n, 5)] = np.array([-32768, 5, -5, 32767, 0], np.int16)[: min(n, 5)]
    else:
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-1, 4, n)).astype(np.float32).astype(dtype)
        y = (rng.standard_normal(n) * 10.0 ** rng.integers(-1, 2, n)).astype(np.float32).astype(dtype)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0], np.float32).astype(dtype)
        k = min(n, 4)
        x[n - k :] = np.array([np.inf, -np.inf, np.nan, 0.0], np.float32).astype(dtype)[:k]
    if n:
        idx = rng.choice(n, size=min(n, 3 * len(specials)), replace=False)
        y[idx] = np.resize(specials, len(idx))
    return x, y


def same_bits(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Elementwise: identical bit patterns, or both NaN."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
    eq = got.view(width) == expected.view(width)
    if got.dtype.kind == "f" or got.dtype == np.dtype(ml_dtypes.bfloat16):
        with np.errstate(invalid="ignore"):
            eq |= np.isnan(got.astype(np.float32)) & np.isnan(expected.astype(np.float32))
    return eq


def assert_same_bits(got: np.ndarray, expected: np.ndarray, *inputs: np.ndarray) -> None:
    eq = same_bits(got, expected)
    if not eq.all():
        bad = np.flatnonzero(~eq)[:8]
        rows = [(int(i), *(a.reshape(-1)[i] for a in inputs), got.reshape(-1)[i], expected.reshape(-1)[i]) for i in bad]
        pytest.fail(f"{(~eq).sum()} of {eq.size} elements differ (index, inputs..., got, expected): {rows}")


# ---------------------------------------------------------------------------------------------------------
# Libraries (compiled once per session, two at a time; cached across sessions)
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiling_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tiling")
    (d / "fmod_tensor_tiling.h").write_text(tiling_header("FmodTensor", "FMOD_TENSOR_TILING_H"))
    return d


@pytest.fixture(scope="module")
def libs(tiling_dir) -> dict[tuple[str, bool], Path]:
    jobs = [(name, scalar) for name in DTYPES for scalar in (False, True)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            job: pool.submit(compile_kernel, KERNEL, tiling_dir, job[0], job[1], extra_flags=WEXTRA) for job in jobs
        }
        return {job: f.result() for job, f in futures.items()}


# ---------------------------------------------------------------------------------------------------------
# The hand-written fmod kernel vs the numpy reference
# ---------------------------------------------------------------------------------------------------------


def run_fmod(libs, name: str, n: int, *, scalar: bool, cores: int = 48, seed: int = 0):
    dtype = DTYPES[name]
    x, y = make_inputs(dtype, n, seed)
    if scalar:
        s = {"bf16": -2.75, "f16": 0.1, "f32": 3.3, "i16": -7}[name]
        other_value = round_scalar_to_dtype(s, dtype)
        t = contiguous_tiling(n, dtype, cores, scalar_other=other_value)
        out, counters = run_kernel(libs[(name, True)], x, None, x.shape, pack_tiling(t), t["blockDim"], 0)
        expected = fmod_scalar_reference(x, s)
    else:
        t = contiguous_tiling(n, dtype, cores)
        out, counters = run_kernel(libs[(name, False)], x, y, x.shape, pack_tiling(t), t["blockDim"], 1)
        expected = fmod_tensor_reference(x, y)
    return x, y, out, expected, counters, t


@pytest.mark.parametrize("scalar", [False, True], ids=["tensor", "scalar"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", list(DTYPES))
def test_handwritten_kernel_bit_exact(libs, name, n, scalar):
    dtype = DTYPES[name]
    x, y, out, expected, counters, t = run_fmod(libs, name, n, scalar=scalar, seed=n)
    assert out.dtype == dtype and out.shape == (n,)
    assert_same_bits(out, expected, x, y)
    nbytes = n * dtype.itemsize
    assert counters["gmToUbBytes"] == nbytes * (1 if scalar else 2)
    assert counters["ubToGmBytes"] == nbytes
    assert counters["gmToUbBytes"] + counters["ubToGmBytes"] == x.nbytes + (0 if scalar else y.nbytes) + out.nbytes
    assert counters["dataCopyNon32"] == 0
    assert counters["ubHighWater"] == ub_bytes(t, dtype, scalar) <= UB
    assert counters["gmScalarReadBytes"] == counters["gmScalarWriteBytes"] == 0


@pytest.mark.parametrize(
    ("name", "n", "cores"),
    [("f32", 1 << 16, 1), ("bf16", 100_001, 1), ("i16", 100_001, 2), ("f16", 300_007, 3)],
)
@pytest.mark.parametrize("scalar", [False, True], ids=["tensor", "scalar"])
def test_handwritten_kernel_multi_tile_double_buffered(libs, name, n, cores, scalar):
    dtype = DTYPES[name]
    x, y, out, expected, counters, t = run_fmod(libs, name, n, scalar=scalar, cores=cores, seed=n + cores)
    assert t["bufferNum"] == 2 and t["tileNum"] > 1  # the case this test is for
    assert_same_bits(out, expected, x, y)
    assert counters["gmToUbBytes"] == n * dtype.itemsize * (1 if scalar else 2)
    assert counters["ubToGmBytes"] == n * dtype.itemsize
    assert counters["dataCopyNon32"] == 0
    assert counters["ubHighWater"] == ub_bytes(t, dtype, scalar) <= UB - 2048
    if not scalar:  # the tile fills the budget up to one 64-element step
        assert counters["ubHighWater"] >= UB - 2048 - 64 * 28


def test_kernel_counts_copies(libs):
    # f16, 33 elements on one core: one DataCopyPad in per operand and one out (66 bytes, not 32-aligned)
    *_, counters, _ = run_fmod(libs, "f16", 33, scalar=False)
    assert counters["dataCopyCalls"] == 3 and counters["dataCopyPadCalls"] == 3
    # 32 f16 = 64 bytes: plain DataCopy
    *_, counters, _ = run_fmod(libs, "f16", 32, scalar=False)
    assert counters["dataCopyCalls"] == 3 and counters["dataCopyPadCalls"] == 0


def test_run_kernel_argument_checks(libs):
    x = np.ones(8, np.float32)
    t = pack_tiling(contiguous_tiling(8, np.dtype(np.float32)))
    with pytest.raises(ValueError, match="scalar kernel"):
        run_kernel(libs[("f32", True)], x, x, x.shape, t, 1, 0)
    with pytest.raises(ValueError, match="needs an `other`"):
        run_kernel(libs[("f32", False)], x, None, x.shape, t, 1, 1)
    with pytest.raises(ValueError, match="registered struct"):
        run_kernel(libs[("f32", False)], x, x, x.shape, t[:-8], 1, 1)
    with pytest.raises(ValueError, match="block_dim"):
        run_kernel(libs[("f32", False)], x, x, x.shape, t, 0, 1)


def test_compile_is_cached(libs, tiling_dir):
    again = compile_kernel(KERNEL, tiling_dir, "float32", False, extra_flags=WEXTRA)
    assert again == libs[("f32", False)]


# ---------------------------------------------------------------------------------------------------------
# Tiling layout: pack_tiling == the C struct of register/tilingdata_base.h (kernel and host side)
# ---------------------------------------------------------------------------------------------------------


def test_tiling_layout_natural_alignment():
    offsets = tiling_field_offsets()
    assert list(offsets) == [f for f, _, _ in FMOD_TILING_FIELDS]
    assert offsets["totalLength"] == 0 and offsets["blockDim"] == 8 and offsets["blockLength"] == 16
    assert offsets["shape"] % 8 == 0 and offsets["scalarOther"] % 4 == 0
    assert tiling_size() == 384
    fields = {"totalLength": 2**40 + 3, "scalarOther": -1.5, "shape": [3, 4], "outOffset": -9}
    back = unpack_tiling(pack_tiling(fields))
    assert back["totalLength"] == 2**40 + 3 and back["scalarOther"] == -1.5
    assert back["shape"] == [3, 4, 0, 0, 0, 0, 0, 0] and back["outOffset"] == -9 and back["tileNum"] == 0
    with pytest.raises(KeyError):
        pack_tiling({"nope": 1})
    with pytest.raises(OverflowError):
        pack_tiling({"blockDim": -1})
    with pytest.raises(ValueError, match="9 values for an array of 8"):
        pack_tiling({"shape": list(range(9))})


def _tiling_values() -> dict:
    vals = {}
    for i, (name, ctype, length) in enumerate(FMOD_TILING_FIELDS):
        if ctype == "float":
            vals[name] = 0.5 + i
        elif length:
            vals[name] = [(i * 100 + k) * (-1 if k % 2 else 1) for k in range(length)]
        else:
            vals[name] = 1000 * i + 7 + (2**33 if ctype.endswith("64_t") else 0)
    return vals


def test_tiling_host_and_kernel_agree_with_pack_tiling(probe):
    vals = _tiling_values()
    packed = pack_tiling(vals)
    # host side: set_<f>() + SaveToBuffer
    cdll = ctypes.CDLL(str(probe))
    buf = ctypes.create_string_buffer(1024)
    cdll.probe_host_tiling.restype = ctypes.c_uint64
    assert cdll.probe_host_tiling(buf, ctypes.c_size_t(1024)) == len(packed)
    assert buf.raw[: len(packed)] == packed
    # kernel side: GET_TILING_DATA, fields written back one by one as int64/double pairs
    out = np.zeros(2 * 64, np.float64)
    run_kernel(probe, np.zeros(8, np.uint8), np.zeros(8, np.uint8), (0,), packed, 1, 30, out_storage=out)
    k = 0
    for name, _, length in FMOD_TILING_FIELDS:
        for v in vals[name] if length else [vals[name]]:
            assert out[k] == float(v), name
            k += 1


# ---------------------------------------------------------------------------------------------------------
# Probe kernel: single shim rules, one scenario per tiling key
# ---------------------------------------------------------------------------------------------------------

PROBE = textwrap.dedent(
    r"""
    #include "kernel_operator.h"
    #include "fmod_tensor_tiling.h"
    using namespace AscendC;

    namespace {
    template <typename T>
    void CastTo(TPipe& pipe, GlobalTensor<float>& in, uint8_t* out, uint32_t n, RoundMode m) {
      TQue<QuePosition::VECIN, 1> qi;
      TQue<QuePosition::VECOUT, 1> qo;
      pipe.InitBuffer(qi, 1, 4096);
      pipe.InitBuffer(qo, 1, 4096);
      LocalTensor<float> a = qi.AllocTensor<float>();
      DataCopy(a, in, n);
      qi.EnQue(a);
      a = qi.DeQue<float>();
      LocalTensor<T> b = qo.AllocTensor<T>();
      Cast(b, a, m, n);
      qo.EnQue(b);
      b = qo.DeQue<T>();
      GlobalTensor<T> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out), n);
      DataCopyPad(g, b, DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0});
      qo.FreeTensor(b);
      qi.FreeTensor(a);
    }
    }  // namespace

    extern "C" __global__ __aicore__ void fmod_tensor(GM_ADDR self, GM_ADDR other, GM_ADDR out,
                                                      GM_ADDR workspace, GM_ADDR tiling) {
      (void)other; (void)workspace;
      TPipe pipe;
      if (TILING_KEY_IS(10)) {  // UB overflow
        TQue<QuePosition::VECIN, 1> q;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(q, 2, 65536);
        pipe.InitBuffer(b, 65537);
      } else if (TILING_KEY_IS(11)) {  // DataCopy of 33 bytes copies 32, both directions
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 64);
        GlobalTensor<uint8_t> s, o;
        s.SetGlobalBuffer(self, 64);
        o.SetGlobalBuffer(out, 128);
        LocalTensor<uint8_t> t = q.AllocTensor<uint8_t>();
        DataCopy(t, s, 33);
        DataCopyPad(o, t, DataCopyExtParams{1, 64, 0, 0, 0});
        DataCopy(o[64], t, 33);
        q.FreeTensor(t);
      } else if (TILING_KEY_IS(12)) {  // Cast float -> bf16 with CAST_NONE
        GlobalTensor<float> s;
        s.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(self), 8);
        CastTo<bfloat16_t>(pipe, s, out, 8, RoundMode::CAST_NONE);
      } else if (TILING_KEY_IS(13)) {  // Cast float -> int16 with CAST_NONE
        GlobalTensor<float> s;
        s.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(self), 8);
        CastTo<int16_t>(pipe, s, out, 8, RoundMode::CAST_NONE);
      } else if (TILING_KEY_IS(14)) {  // DataCopyPad GM->UB strides, padding, poison; UB dumped to out
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        GlobalTensor<half> s;
        GlobalTensor<uint8_t> o;
        s.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(self), 64);
        o.SetGlobalBuffer(out, 512);
        LocalTensor<half> t = q.AllocTensor<half>();
        // 3 blocks of 3 halves (6 bytes), 4 bytes apart in GM, one free 32-byte block between them in UB
        DataCopyPad(t, s, DataCopyExtParams{3, 6, 4, 1, 0}, DataCopyPadExtParams<half>{false, 0, 0, half(0)});
        DataCopy(o, t.ReinterpretCast<uint8_t>(), 256);
        Duplicate(t, half(0), 128);
        // isPad: 2 left and 1 right padding elements of -1, then the fill up to 32 bytes
        DataCopyPad(t, s[8], DataCopyExtParams{2, 10, 0, 0, 0}, DataCopyPadExtParams<half>{true, 2, 1, half(-1)});
        DataCopy(o[256], t.ReinterpretCast<uint8_t>(), 256);
        q.FreeTensor(t);
      } else if (TILING_KEY_IS(15)) {  // UB -> GM DataCopyPad writes exact bytes with GM/UB strides
        TQue<QuePosition::VECOUT, 1> q;
        pipe.InitBuffer(q, 1, 256);
        GlobalTensor<int16_t> o;
        o.SetGlobalBuffer(reinterpret_cast<__gm__ int16_t*>(out), 64);
        LocalTensor<int16_t> t = q.AllocTensor<int16_t>();
        for (uint32_t i = 0; i < 128; ++i) t.SetValue(i, static_cast<int16_t>(i));
        // 3 blocks of 5 elements; UB pitch 32 B + 1 block = 64 B (32 elements); GM gap 6 bytes (3 elements)
        DataCopyPad(o, t, DataCopyExtParams{3, 10, 1, 6, 0});
        q.FreeTensor(t);
      } else if (TILING_KEY_IS(16)) {  // FreeTensor out of FIFO order
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 2, 64);
        LocalTensor<float> a = q.AllocTensor<float>();
        LocalTensor<float> b = q.AllocTensor<float>();
        q.FreeTensor(b);
        q.FreeTensor(a);
      } else if (TILING_KEY_IS(17)) {  // misaligned vector operand
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<float> t = b.Get<float>();
        Add(t[1], t[8], t[16], 8);
      } else if (TILING_KEY_IS(18)) {  // more live buffers than the queue has
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 2, 64);
        LocalTensor<float> a = q.AllocTensor<float>();
        LocalTensor<float> b = q.AllocTensor<float>();
        LocalTensor<float> c = q.AllocTensor<float>();
        (void)a; (void)b; (void)c;
      } else if (TILING_KEY_IS(19)) {  // GM access outside SetGlobalBuffer's size
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 64);
        GlobalTensor<float> s;
        s.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(self), 8);
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopy(t, s[4], 8);
      } else if (TILING_KEY_IS(20)) {  // DeQue on an empty queue
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 64);
        LocalTensor<float> t = q.DeQue<float>();
        (void)t;
      } else if (TILING_KEY_IS(21)) {  // per-core UB: 150000 bytes on every core is fine
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 150000);
        GlobalTensor<int32_t> o;
        o.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out), GetBlockNum());
        o.SetValue(GetBlockIdx(), static_cast<int32_t>(GetBlockIdx() * 10 + GetBlockNum()));
      } else if (TILING_KEY_IS(22)) {  // Cast between widths in place
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<float> f = b.Get<float>();
        Cast(f.ReinterpretCast<half>(), f, RoundMode::CAST_RINT, 64);
      } else if (TILING_KEY_IS(23)) {  // blockLen not a multiple of sizeof(T)
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 64);
        GlobalTensor<float> s;
        s.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(self), 8);
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopyPad(t, s, DataCopyExtParams{1, 6, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      } else if (TILING_KEY_IS(24)) {  // Max/Min propagate NaN, int16 Add wraps, Abs, Muls, Adds
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<float> f = b.Get<float>();
        GlobalTensor<float> s, o;
        s.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(self), 16);
        o.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 64);
        for (uint32_t i = 0; i < 8; ++i) { f.SetValue(i, s.GetValue(i)); f.SetValue(8 + i, s.GetValue(8 + i)); }
        Max(f[16], f, f[8], 8);
        Min(f[24], f, f[8], 8);
        Abs(f[32], f, 8);
        Muls(f[40], f, 2.0f, 8);
        Adds(f[48], f, 0.5f, 8);
        LocalTensor<int16_t> h = f[56].ReinterpretCast<int16_t>();
        Duplicate(h, static_cast<int16_t>(32767), 16);
        Adds(h, h, static_cast<int16_t>(1), 16);
        DataCopy(o, f, 64);
      } else if (TILING_KEY_IS(30)) {  // GET_TILING_DATA: every field back as doubles
        GET_TILING_DATA(td, tiling);
        GlobalTensor<double> o;
        o.SetGlobalBuffer(reinterpret_cast<__gm__ double*>(out), 128);
        uint64_t k = 0;
        auto put = [&](double v) { o.SetValue(k++, v); };
        put(td.totalLength); put(td.blockDim); put(td.blockLength); put(td.lastBlockLength);
        put(td.tileLength); put(td.tileNum); put(td.lastTileLength); put(td.lastCoreTileNum);
        put(td.lastCoreLastTileLength); put(td.bufferNum); put(td.scalarOther); put(td.dimNum);
        put(td.innerRun);
        for (int i = 0; i < 8; ++i) put(td.shape[i]);
        for (int i = 0; i < 8; ++i) put(td.selfStride[i]);
        for (int i = 0; i < 8; ++i) put(td.otherStride[i]);
        for (int i = 0; i < 8; ++i) put(td.outStride[i]);
        put(td.selfOffset); put(td.otherOffset); put(td.outOffset); put(td.colBlock);
        put(td.gatherDim); put(td.tileRows); put(td.tileCols); put(td.bandRows); put(td.bandCols);
        put(td.bandBatch);
      } else if (TILING_KEY_IS(29)) {  // Brcb: 16 int16 values, each filling one 32-byte block
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<int16_t> h = b.Get<int16_t>();
        CreateVecIndex(h, static_cast<int16_t>(1), 16);
        Brcb(h[32], h, 2, BrcbRepeatParams(1, 8));
        GlobalTensor<int16_t> o;
        o.SetGlobalBuffer(reinterpret_cast<__gm__ int16_t*>(out), 256);
        DataCopy(o, h[32], 256);
      } else if (TILING_KEY_IS(25) || TILING_KEY_IS(26) || TILING_KEY_IS(27) || TILING_KEY_IS(28)) {
        // Gather: 16 floats reversed by a byte-offset table from CreateVecIndex (25), an offset not a
        // multiple of sizeof(T) (26), an offset outside src (27), dst overlapping src (28)
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<float> f = b.Get<float>();
        LocalTensor<int32_t> idx = f[64].ReinterpretCast<int32_t>();
        CreateVecIndex(idx, static_cast<int32_t>(-15), 16);                 // -15 .. 0
        Muls(idx, idx, static_cast<int32_t>(-4), 16);                        // 60 .. 0: reversed byte offsets
        CreateVecIndex(f, 100.0f, 16);
        if (TILING_KEY_IS(26)) {
          idx.SetValue(3, 6);
        } else if (TILING_KEY_IS(27)) {
          idx.SetValue(3, 4 * 16);
        }
        LocalTensor<float> src = f[0];
        src.SetSize(16);
        Gather(TILING_KEY_IS(28) ? f[8] : f[32], src, idx.ReinterpretCast<uint32_t>(), 0, 16);
        GlobalTensor<float> o;
        o.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 16);
        DataCopy(o, f[32], 16);
      } else if (TILING_KEY_IS(40) || TILING_KEY_IS(41) || TILING_KEY_IS(42) || TILING_KEY_IS(43) ||
                 TILING_KEY_IS(44) || TILING_KEY_IS(45) || TILING_KEY_IS(46)) {
        // Cast float -> {float, half, bf16, int16} with mode (key - 40); n = 256 inputs
        RoundMode m = static_cast<RoundMode>(::AscendC::shim::g_core.tilingKey - 40);
        GlobalTensor<float> s;
        s.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(self), 256);
        bool toInt = m == RoundMode::CAST_RINT || m == RoundMode::CAST_FLOOR || m == RoundMode::CAST_CEIL ||
                     m == RoundMode::CAST_ROUND || m == RoundMode::CAST_TRUNC;
        if (toInt) {
          CastTo<float>(pipe, s, out, 256, m);
          CastTo<bfloat16_t>(pipe, s, out + 1024 + 512, 256, m);
          CastTo<int16_t>(pipe, s, out + 1024 + 1024, 256, m);
        }
        CastTo<half>(pipe, s, out + 1024, 256, m);
      }
    }

    #if SBP_PROBE_BAD
    void bad_calls(LocalTensor<bfloat16_t> b, LocalTensor<int16_t> i, LocalTensor<half> h, LocalTensor<float> f) {
      Div(b, b, b, 16);                                  // BAD_DIV_BF16
      Add(b, b, b, 16);                                  // BAD_ADD_BF16
      Div(i, i, i, 16);                                  // BAD_DIV_I16
      Cast(i, b, RoundMode::CAST_RINT, 16);              // BAD_CAST_BF16_I16
      Cast(b, i, RoundMode::CAST_NONE, 16);              // BAD_CAST_I16_BF16
      Cast(h, b, RoundMode::CAST_NONE, 16);              // BAD_CAST_BF16_HALF
      Gather(i, i, f.ReinterpretCast<uint32_t>(), 0, 16);  // fine
      LocalTensor<uint8_t> u8 = f.ReinterpretCast<uint8_t>();
      Gather(u8, u8, f.ReinterpretCast<uint32_t>(), 0, 16);  // BAD_GATHER_U8
      CreateVecIndex(b, bfloat16_t(0.0f), 16);              // BAD_INDEX_BF16
      Mul(h, h, h, 16); Sub(f, f, f, 16);                // fine
    }
    #endif

    // Host side of the tiling header: set_<field>() then SaveToBuffer.
    extern "C" __attribute__((visibility("default"))) uint64_t probe_host_tiling(void* buf, size_t cap) {
      optiling::FmodTilingData t;
    """
)


def _probe_host_setters() -> str:
    lines = []
    vals = _tiling_values()
    for name, ctype, length in FMOD_TILING_FIELDS:
        if length:
            arr = ", ".join(str(v) for v in vals[name])
            lines.append(f"  {{ const {ctype} v[{length}] = {{{arr}}}; t.set_{name}(v); }}")
        elif ctype == "float":
            lines.append(f"  t.set_{name}({vals[name]!r}f);")
        else:
            lines.append(f"  t.set_{name}(static_cast<{ctype}>({vals[name]}ULL));")
    lines += ["  t.SaveToBuffer(buf, cap);", "  return t.GetDataSize();", "}", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def probe_source(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("probe")
    src = d / "shim_probe.cpp"
    src.write_text(PROBE + _probe_host_setters())
    return src


@pytest.fixture(scope="module")
def probe(probe_source, tiling_dir) -> Path:
    return compile_kernel(probe_source, tiling_dir, "f32", False, extra_flags=WEXTRA)


def run_probe(probe, key, *, self_bytes=None, out_bytes=256, block_dim=1):
    self_arr = np.arange(256, dtype=np.uint8) if self_bytes is None else self_bytes
    out = np.zeros(out_bytes, np.uint8)
    tiling = pack_tiling({})  # the probe registers FmodTilingData too, so the size is checked
    _, counters = run_kernel(probe, self_arr, np.zeros(8, np.uint8), (0,), tiling, block_dim, key, out_storage=out)
    return out, counters


def test_probe_compiles_with_wextra(probe):
    assert probe.exists()


def test_ub_overflow_fails_at_run_time_with_message(probe, capfd):
    with pytest.raises(KernelRunError, match=r"UB overflow: InitBuffer\(TBuf\) of 65568 bytes .* 196640 > 196608"):
        run_probe(probe, 10)
    assert "UB overflow" in capfd.readouterr().err  # also reported on stderr


def test_datacopy_33_bytes_copies_32(probe):
    out, c = run_probe(probe, 11)
    src = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(out[:32], src[:32])
    assert (out[32:64] == 0xFF).all()  # rest of the fresh tensor: UB poison
    np.testing.assert_array_equal(out[64:96], src[:32])  # UB -> GM of 33 bytes also writes 32
    assert (out[96:128] == 0).all()
    assert c["gmToUbBytes"] == 32 and c["ubToGmBytes"] == 64 + 32
    assert c["dataCopyCalls"] == 3 and c["dataCopyNon32"] == 2


@pytest.mark.parametrize(("key", "pair"), [(12, "Cast<bfloat16_t, float>"), (13, "Cast<int16_t, float>")])
def test_cast_none_is_rejected_at_run_time(probe, key, pair):
    with pytest.raises(KernelRunError, match=f"{pair}: CAST_NONE is not allowed"):
        run_probe(probe, key, self_bytes=np.zeros(64, np.uint8))


def test_datacopypad_gm_to_ub_layout_and_poison(probe):
    halves = np.arange(100, dtype=np.float16)
    out, c = run_probe(probe, 14, self_bytes=halves.view(np.uint8).copy(), out_bytes=512)
    ub = out[:256].view(np.uint16)
    poison = 0x7E5A
    # block b: GM elements 5b .. 5b+2 (6 bytes + 4 byte gap), at UB element 32b (32 B block + 1 free block)
    for b in range(3):
        np.testing.assert_array_equal(ub[32 * b : 32 * b + 3], halves[5 * b : 5 * b + 3].view(np.uint16))
        assert (ub[32 * b + 3 : 32 * b + 16] == poison).all()
        assert (ub[32 * b + 16 : 32 * b + 32] == 0xFFFF).all()  # the skipped block: untouched fresh UB
    # isPad: [-1, -1, data x5, -1, fill -1 ... up to 16 elements] per block, blocks back to back
    ub = out[256:].view(np.float16)
    for b in range(2):
        blk = ub[16 * b : 16 * b + 16]
        np.testing.assert_array_equal(blk[:2], [-1, -1])
        np.testing.assert_array_equal(blk[2:7], halves[8 + 5 * b : 8 + 5 * b + 5])
        assert (blk[7:] == -1).all()
    assert (ub[32:] == 0).all()
    assert c["gmToUbBytes"] == 3 * 6 + 2 * 10 and c["dataCopyPadCalls"] == 2


def test_datacopypad_ub_to_gm_exact_bytes(probe):
    out, c = run_probe(probe, 15, out_bytes=128)
    gm = out.view(np.int16)
    expected = np.zeros(64, np.int16)
    for b in range(3):
        expected[8 * b : 8 * b + 5] = np.arange(32 * b, 32 * b + 5)
    np.testing.assert_array_equal(gm, expected)
    assert c["ubToGmBytes"] == 30


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (16, r"FreeTensor: buffer 1 freed before buffer 0 \(queue buffers are FIFO\)"),
        (17, r"Add: dst operand at UB byte 4 is not 32-byte aligned"),
        (18, r"AllocTensor: all 2 buffers of the queue are in use"),
        (19, r"DataCopy\(GM->UB\): elements \[0, 8\) outside a GM buffer of 4 elements"),
        (20, r"DeQue on an empty queue"),
        (22, r"Cast<half, float>: dst and src overlap"),
        (23, r"blockLen 6 bytes is not a multiple of sizeof\(T\) = 4"),
    ],
)
def test_shim_checks_fail_with_clear_messages(probe, key, message):
    with pytest.raises(KernelRunError, match=message):
        run_probe(probe, key, self_bytes=np.zeros(64, np.uint8))


def test_brcb_fills_one_block_per_element(probe):
    out, _ = run_probe(probe, 29, out_bytes=512)
    np.testing.assert_array_equal(out.view(np.int16), np.repeat(np.arange(1, 17, dtype=np.int16), 16))


def test_gather_reorders_by_byte_offsets(probe):
    out, c = run_probe(probe, 25, out_bytes=64)
    np.testing.assert_array_equal(out.view(np.float32), np.arange(115, 99, -1, dtype=np.float32))
    assert c["ubGatherBytes"] == c["ubGatherBusiest"] == 64


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (26, r"Gather: byte offset 6 of element 3 is not a multiple of 4"),
        (27, r"Gather: byte offset 64 of element 3 is outside src \(64 bytes\)"),
        (28, r"Gather: dst overlaps src"),
    ],
)
def test_gather_checks(probe, key, message):
    with pytest.raises(KernelRunError, match=message):
        run_probe(probe, key, out_bytes=64)


def test_failure_names_the_core(probe):
    with pytest.raises(KernelRunError, match=r"\(core 0/3\)"):
        run_probe(probe, 10, block_dim=3)


def test_each_core_gets_fresh_ub(probe):
    out, c = run_probe(probe, 21, block_dim=4, out_bytes=16)
    np.testing.assert_array_equal(out.view(np.int32), [4, 14, 24, 34])
    assert c["ubHighWater"] == 150016  # rounded to 32 bytes, max over cores (not the sum)
    assert c["gmScalarWriteBytes"] == 16 and c["ubToGmBytes"] == 16


def test_vector_ops_semantics(probe):
    a = np.array([1.0, -2.0, np.nan, 4.0, -0.0, 6.5, np.inf, -8.0], np.float32)
    b = np.array([2.0, -3.0, 1.0, np.nan, 0.0, 6.0, 1.0, -np.inf], np.float32)
    out, _ = run_probe(probe, 24, self_bytes=np.concatenate([a, b]).view(np.uint8).copy())
    f = out.view(np.float32)
    with np.errstate(invalid="ignore"):
        nan_either = np.isnan(a) | np.isnan(b)
        np.testing.assert_array_equal(np.isnan(f[16:24]), nan_either)
        np.testing.assert_array_equal(f[16:24][~nan_either], np.maximum(a, b)[~nan_either])
        np.testing.assert_array_equal(f[24:32][~nan_either], np.minimum(a, b)[~nan_either])
    np.testing.assert_array_equal(f[32:40], np.abs(a))
    np.testing.assert_array_equal(f[40:48], a * 2)
    np.testing.assert_array_equal(f[48:56], a + np.float32(0.5))
    np.testing.assert_array_equal(f[56:64].view(np.int16), np.full(16, -32768, np.int16))  # int16 Add wraps


# --- Cast rounding modes against an independent enumeration of every 16-bit value -------------------------

MODES = ["CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"]


def _cast_inputs() -> np.ndarray:
    rng = np.random.default_rng(99)
    special = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 1.0000001, -3.7, 3.7, 1e10, -1e10, np.nan, np.inf,
               -np.inf, 32767.5, -32768.5, 32766.5, 65504.0, 65519.0, 65520.0, 65535.0, -65520.0, 1e-8, -1e-8,
               6e-8, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 3.4e38, 3.39e38, 0.0,
               -0.0, 2**-24, 2**-25, 3 * 2**-25, 1e-40, -1e-45]  # fmt: skip
    vals = np.array(special, np.float32)
    rest = (rng.standard_normal(256 - len(vals)) * 10.0 ** rng.integers(-6, 6, 256 - len(vals))).astype(np.float32)
    return np.concatenate([vals, rest])


def _to_integral(x: np.ndarray, mode: str) -> np.ndarray:
    d = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        r = {
            "CAST_RINT": np.rint(d),
            "CAST_FLOOR": np.floor(d),
            "CAST_CEIL": np.ceil(d),
            "CAST_TRUNC": np.trunc(d),
            "CAST_ROUND": np.sign(d) * np.floor(np.abs(d) + 0.5),
        }[mode]
    return np.where(d == 0, d, r)  # keep the sign of zero


def _narrow_expected(x: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    bits = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)
    with np.errstate(invalid="ignore", over="ignore"):
        vals = bits.view(dtype).astype(np.float64)
    keep = ~np.isnan(vals) & ~((vals == 0) & (bits >= 0x8000))  # one zero (+0) in the table
    table, tbits = vals[keep], bits[keep]
    order = np.argsort(table, kind="stable")
    table, tbits = table[order], tbits[order]
    fmax = table[-2]  # largest finite
    out = np.empty(len(x), np.uint16)
    for k, v in enumerate(x.astype(np.float64)):
        if np.isnan(v):
            out[k] = 0xFFFF
            continue
        i = int(np.searchsorted(table, v))
        if table[i] == v:
            out[k] = tbits[i]
            if v == 0 and np.signbit(v):
                out[k] = 0x8000
            continue
        lo_i, hi_i = i - 1, i
        lo, hi = table[lo_i], table[hi_i]
        lo_c = -2 * fmax if np.isinf(lo) else lo  # infinities as "one step beyond max" for the tie test
        hi_c = 2 * fmax if np.isinf(hi) else hi
        if np.isinf(lo):
            lo_c = -(fmax + (fmax - table[-3]))
        if np.isinf(hi):
            hi_c = fmax + (fmax - table[-3])
        if mode in ("CAST_RINT", "CAST_NONE"):
            pick = lo_i if (v - lo_c < hi_c - v or (v - lo_c == hi_c - v and tbits[lo_i] % 2 == 0)) else hi_i
        elif mode == "CAST_ROUND":
            pick = lo_i if (v - lo_c < hi_c - v or (v - lo_c == hi_c - v and v < 0)) else hi_i
        elif mode == "CAST_FLOOR":
            pick = lo_i
        elif mode == "CAST_CEIL":
            pick = hi_i
        elif mode == "CAST_TRUNC":
            pick = lo_i if v > 0 else hi_i
        else:  # CAST_ODD
            pick = lo_i if tbits[lo_i] % 2 == 1 else hi_i
        out[k] = tbits[pick]
        if table[pick] == 0 and v < 0:
            out[k] = 0x8000  # a negative value rounded to zero is -0
    return out


@pytest.mark.parametrize("mode", MODES)
def test_cast_modes(probe, mode):
    x = _cast_inputs()
    m = MODES.index(mode)
    out, _ = run_probe(probe, 40 + m, self_bytes=x.view(np.uint8).copy(), out_bytes=4096)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    got_half = out[1024:1536].view(np.uint16)
    exp_half = _narrow_expected(x, np.dtype(np.float16), mode)
    nan = np.isnan(x)
    np.testing.assert_array_equal(np.isnan(got_half.view(np.float16)), nan)
    np.testing.assert_array_equal(got_half[~nan], exp_half[~nan], err_msg=f"float->half {mode}")
    if mode in ("CAST_NONE", "CAST_ODD"):
        return
    got_f = out[:1024].view(np.float32)
    exp_f = _to_integral(x, mode).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got_f), nan)
    np.testing.assert_array_equal(got_f[~nan].view(np.uint32), exp_f[~nan].view(np.uint32), err_msg=mode)
    got_b = out[1536:2048].view(np.uint16)
    exp_b = _narrow_expected(x, bf16, mode)
    np.testing.assert_array_equal(got_b[~nan], exp_b[~nan], err_msg=f"float->bf16 {mode}")
    assert np.isnan(got_b[nan].view(bf16).astype(np.float32)).all()
    got_i = out[2048:2560].view(np.int16)
    with np.errstate(invalid="ignore"):
        exp_i = np.clip(np.nan_to_num(_to_integral(x, mode), nan=0.0), -32768, 32767).astype(np.int16)
    np.testing.assert_array_equal(got_i, exp_i, err_msg=f"float->int16 {mode}")
    if mode == "CAST_RINT":  # the RNE paths the fmod kernel relies on agree with numpy / ml_dtypes
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(got_half[~nan], x[~nan].astype(np.float16).view(np.uint16))
            np.testing.assert_array_equal(got_b[~nan], x[~nan].astype(bf16).view(np.uint16))


# --- static_asserts: code Atlas A2 rejects must not compile -----------------------------------------------


def test_illegal_dtypes_fail_to_compile(probe_source, tiling_dir):
    with pytest.raises(KernelCompileError) as info:
        compile_kernel(probe_source, tiling_dir, "f32", False, extra_flags=("-DSBP_PROBE_BAD=1",))
    err = str(info.value)
    src_lines = probe_source.read_text().splitlines()
    for tag in ["BAD_DIV_BF16", "BAD_ADD_BF16", "BAD_DIV_I16", "BAD_CAST_BF16_I16", "BAD_CAST_I16_BF16",
                "BAD_CAST_BF16_HALF", "BAD_GATHER_U8", "BAD_INDEX_BF16"]:  # fmt: skip
        line = next(i + 1 for i, text in enumerate(src_lines) if tag in text)
        assert f"shim_probe.cpp:{line}:" in err, f"{tag} (line {line}) did not fail to compile"
    assert "is not supported on Atlas A2" in err
    assert "this type pair is not available on Atlas A2" in err
    good = {i + 1 for i, text in enumerate(src_lines) if "// fine" in text}
    assert not any(f"shim_probe.cpp:{line}:" in err for line in good)


def test_scalar_type_must_match_tensor_type(tmp_path, tiling_dir):
    src = tmp_path / "bad_scalar.cpp"
    src.write_text(
        '#include "kernel_operator.h"\nusing namespace AscendC;\n'
        'extern "C" void fmod_tensor(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR) {}\n'
        "void f(LocalTensor<float> t) { Maxs(t, t, 0, 64); }\n"
    )
    with pytest.raises(KernelCompileError, match="Maxs"):
        compile_kernel(src, None, "f32", False)


def test_counter_names_are_the_design_names():
    assert COUNTER_NAMES == ("gmToUbBytes", "ubToGmBytes", "ubHighWater", "dataCopyCalls", "dataCopyNon32")


def test_struct_size_is_exported(probe):
    cdll = ctypes.CDLL(str(probe))
    cdll.sbp_tiling_size_FmodTensor.restype = ctypes.c_uint64
    assert cdll.sbp_tiling_size_FmodTensor() == tiling_size()
    assert math.isfinite(tiling_size())
