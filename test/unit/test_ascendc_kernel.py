"""Acceptance harness of the EMITTED Ascend C fmod kernels (fmod_tensor, fmod_scalar) on the CPU shim.

Each kernel is printed exactly as `sbp-translate --emit-ascendc` prints it (`lowering.ascendc_kernels`:
same IR, same printer), compiled with `g++ -std=c++17 -Wall -Werror` once per dtype (cached by
`lowering.ascendc_runtime.compile_kernel`), and run on every simulated core with the tiling of
`lowering/ascendc/tiling.py`. Every case checks:

* the tiling key it is meant to hit (every key 0..4 is hit by fmod_tensor, 0 and 3 by fmod_scalar, for
  every dtype: `test_case_table_covers_every_key`);
* the result bit for bit against `lowering/ascendc/fmod_reference.py` (any NaN equals any NaN), and within
  tolerance of `numpy.fmod` where |quotient| < 2^23 and the operands are finite with other != 0 (int16:
  exactly); the output storage outside the view keeps its sentinel bytes;
* the shim counters: UB->GM bytes == bytes(out); GM<->UB == bytes(self)+bytes(other)+bytes(out) for keys 0
  and 1 (fmod_scalar: self + out; fmod_tensor's key 0 reads its one `other` element once per core),
  <= 1.05x that for key 2, and no more than one GM access per logical element and operand for keys 3/4;
  UB high water <= 196608; dataCopyNon32 == 0.

Strided views (keys 3/4) pass the whole storage (`self_storage=` ...) with the view's strides and storage
offset in the tiling; the contiguous keys (0-2) get the address of the view's first element, as aclnn does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.cpu.runner import run_kernel
from sbpc.lowering.ascendc.fmod_reference import fmod_scalar_reference, fmod_tensor_reference, round_scalar_to_dtype
from sbpc.lowering.ascendc.soc import UB_BYTES
from sbpc.lowering.ascendc.tiling import FmodTiling, TensorView, compute_tiling
from sbpc.runtime.ascendc_kernels import kernel_source_dir, library

pytestmark = pytest.mark.cxx
DTYPES: dict[str, np.dtype] = {t.name: t.numpy_dtype() for t in dtypes.FMOD_KERNEL_TYPES}
ALL = tuple(DTYPES)
BIG_DTYPES = ("f32", "f16", "bf16", "i16")  # the 1<<20 and 10^6-element cases, for every dtype
UINT = {2: np.uint16, 4: np.uint32}
SENTINEL = 0xA5
EIGHT_D = (2, 1, 3, 1, 2, 1, 2, 3)


# ---------------------------------------------------------------------------------------------------------
# Libraries: both kernels x four dtypes, compiled two at a time on a cold cache
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    for name in ("fmod_tensor", "fmod_scalar"):
        kernel_source_dir(name)  # print the sources once, before the threads compile them
    jobs = [(name, d) for name in ("fmod_tensor", "fmod_scalar") for d in DTYPES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        for f in [pool.submit(library, name, d) for name, d in jobs]:
            f.result()


PROGRAM = """
sbp.placement @p "npu" [0, 1]
func.func @main(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<8xf32, @p, [B]>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x8xf32, @p, [S(0)]>, !sbp.tensor<8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %1 = sbp.fmod_scalar %a, 2.5 : f32 : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<4x8xf32, @p>
  func.return
}
"""


def test_runtime_compiles_the_emitted_kernel(tmp_path, capsys) -> None:
    """The sources compiled here are byte for byte what `sbp-translate --emit-ascendc` writes."""
    from sbpc.tools.sbp_translate import main

    (tmp_path / "p.mlir").write_text(PROGRAM)
    assert main([str(tmp_path / "p.mlir"), "--emit-ascendc", "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    for name in ("fmod_tensor", "fmod_scalar"):
        compiled = kernel_source_dir(name)
        emitted = tmp_path / "out" / name
        assert (emitted / "op_kernel" / f"{name}.cpp").read_text() == (compiled / f"{name}.cpp").read_text()
        header = f"{name}_tiling.h"
        assert (emitted / "op_host" / header).read_text() == (compiled / header).read_text()


# ---------------------------------------------------------------------------------------------------------
# Data: random values with special values mixed in
# ---------------------------------------------------------------------------------------------------------

INF, NAN = math.inf, math.nan
SPECIAL_SELF = {
    "float": [INF, -INF, NAN, -0.0, 0.0, 1.0, -1.0, 7.5, -7.5, 1000.0, 3.0e-3],
    "i16": [-32768, 32767, 0, 1, -1, 7, -7, 300],
}
SPECIAL_OTHER = {
    "float": [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.1, 3.0, -2.5],
    "i16": [0, -1, 1, -32768, 32767, 2, -3, 7],
}
SCALARS = {
    "float": [2.5, -3.0, 0.7, 1e-3, 0.0, -0.0, INF, -INF, NAN, 1e4, -0.1],
    "i16": [3, -1, 7, 0, -32768, 32767, 1, -5, 2.9],
}


def _family(dtype: str) -> str:
    return "i16" if dtype == "i16" else "float"


def fill(n: int, dtype: str, role: str, rng: np.random.Generator) -> np.ndarray:
    """A 1-D storage of n elements: random magnitudes over several decades, ~12% special values."""
    if dtype == "i16":
        if role == "self":
            v = rng.integers(-32768, 32768, n).astype(np.float64)
        else:
            v = np.where(rng.random(n) < 0.7, rng.integers(-300, 301, n), rng.integers(-32768, 32768, n))
            v = v.astype(np.float64)
    else:
        decades = rng.uniform(-2.0, 3.0 if role == "self" else 1.5, n)
        v = rng.standard_normal(n) * 10.0**decades
    specials = SPECIAL_SELF if role == "self" else SPECIAL_OTHER
    mask = rng.random(n) < 0.12
    v[mask] = rng.choice(np.array(specials[_family(dtype)], dtype=np.float64), int(mask.sum()))
    return v.astype(np.float32).astype(DTYPES[dtype]) if dtype != "i16" else v.astype(np.int16)


# ---------------------------------------------------------------------------------------------------------
# Running one fmod through the emitted kernel
# ---------------------------------------------------------------------------------------------------------


def view_of(view: np.ndarray, storage: np.ndarray) -> TensorView:
    """The TensorView (element strides, storage offset) of a numpy view into a 1-D storage."""
    item = storage.itemsize
    off = view.__array_interface__["data"][0] - storage.__array_interface__["data"][0]
    assert off % item == 0 and all(s % item == 0 and s >= 0 for s in view.strides)
    return TensorView(view.shape, tuple(s // item for s in view.strides), off // item)


def footprint(v: TensorView, size: int) -> np.ndarray:
    """Mask of the storage elements a view covers."""
    idx = np.full(v.shape, v.offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(v.shape, v.strides, strict=True)):
        shape = [1] * len(v.shape)
        shape[d] = n
        idx = idx + np.arange(n, dtype=np.int64).reshape(shape) * s
    mask = np.zeros(size, dtype=bool)
    mask[idx.reshape(-1)] = True
    return mask


@dataclass
class Run:
    tiling: FmodTiling
    counters: dict[str, int]
    out: np.ndarray  # the output view (into its storage)


def launch(
    dtype: str,
    x: np.ndarray,
    xs: np.ndarray,
    other: np.ndarray | float | int,
    os_: np.ndarray | None,
    out: np.ndarray,
    outs: np.ndarray,
    soc: str = "ascend910b",
) -> Run:
    """Tile and run out = fmod(x, other); x/other/out are views into the 1-D storages xs/os_/outs."""
    scalar = not isinstance(other, np.ndarray)
    xv, ov = view_of(x, xs), view_of(out, outs)
    t = compute_tiling(xv, other if scalar else view_of(other, os_), ov, dtype, soc)  # type: ignore[arg-type]
    key = t.tilingKey

    def gm(storage: np.ndarray, v: TensorView) -> np.ndarray:
        # keys 3/4: the storage base (offsets in the tiling); keys 0-2: the address of the view's first element
        return storage if key >= 3 else storage[v.offset :]

    name = "fmod_scalar" if scalar else "fmod_tensor"
    _, counters = run_kernel(
        library(name, dtype),
        x,
        None if scalar else other,  # type: ignore[arg-type]
        x.shape,
        t.to_bytes(),
        t.blockDim,
        key,
        self_storage=gm(xs, xv),
        other_storage=None if scalar else gm(os_, t.other_view),  # type: ignore[arg-type]
        out_storage=gm(outs, ov),
    )
    return Run(t, counters, out)


def same_bits(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Elementwise: identical bit patterns, or both NaN (any payload)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    width = UINT[got.dtype.itemsize]
    eq = np.ascontiguousarray(got).view(width) == np.ascontiguousarray(expected).view(width)
    if got.dtype != np.int16:
        eq |= np.isnan(got.astype(np.float32)) & np.isnan(expected.astype(np.float32))
    return eq


def check_numpy_fmod(x: np.ndarray, y: np.ndarray, got: np.ndarray, dtype: str) -> None:
    """Within tolerance of numpy.fmod where |x/y| < 2^23, x and y finite, y != 0 (int16: exact everywhere)."""
    x64 = x.astype(np.float64)
    y64 = np.broadcast_to(np.asarray(y).astype(np.float64), x.shape)
    g64 = got.astype(np.float64)
    if dtype == "i16":
        with np.errstate(divide="ignore", invalid="ignore"):
            exact = np.where(y64 == 0, 0.0, np.fmod(x64, np.where(y64 == 0, 1.0, y64)))
        np.testing.assert_array_equal(g64, exact)
        return
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = x64 / y64
        m = np.isfinite(x64) & np.isfinite(y64) & (y64 != 0) & (np.abs(q) < 2.0**23)
    xm, ym, gm = x64[m], y64[m], g64[m]
    exact = np.fmod(xm, ym)
    info = ml_dtypes.finfo(DTYPES[dtype])
    # fp32 rounding of q*y (~|x|*2^-24 each step), then the cast to T; a quotient within half an ulp below an
    # integer k truncates to k, so the result may also be the exact one minus sign*|y| (the TBE formula).
    tol = 2.0**-22 * np.abs(xm) + float(info.eps) * np.abs(exact) + float(info.smallest_subnormal)
    d = np.abs(gm - exact)
    ok = (d <= tol) | (np.abs(d - np.abs(ym)) <= tol)
    if not ok.all():
        bad = np.flatnonzero(~ok)[:6]
        pytest.fail(f"not within tolerance of numpy.fmod: {[(xm[i], ym[i], gm[i], exact[i]) for i in bad]}")


def verify(
    run: Run,
    dtype: str,
    x: np.ndarray,
    other: np.ndarray | float | int,
    outs: np.ndarray,
    key: int | None,
    *,
    key2_limit: float = 1.05,
) -> None:
    t, c = run.tiling, run.counters
    ctx = f"{dtype} self{x.shape} key {t.tilingKey} blockDim {t.blockDim} counters {c}"
    if key is not None:
        assert t.tilingKey == key, ctx
    scalar = not isinstance(other, np.ndarray)
    # bit-exact against the TBE-formula emulation
    expected = fmod_scalar_reference(x, other) if scalar else fmod_tensor_reference(x, other)  # type: ignore[arg-type]
    eq = same_bits(run.out, expected)
    if not eq.all():
        y = np.broadcast_to(np.asarray(other), x.shape)
        bad = [np.unravel_index(i, x.shape) for i in np.flatnonzero(~eq)[:6]]
        rows = [(b, x[b], y[b], run.out[b], expected[b]) for b in bad]
        pytest.fail(f"{(~eq).sum()}/{eq.size} differ (index, self, other, got, expected) {rows}; {ctx}")
    # nothing written outside the output view
    ov = view_of(run.out, outs)
    untouched = np.ascontiguousarray(outs).view(np.uint8).reshape(outs.size, outs.itemsize)
    outside = ~footprint(ov, outs.size)
    assert (untouched[outside] == SENTINEL).all(), f"kernel wrote outside the output view; {ctx}"
    # numpy.fmod within tolerance
    y_np = np.asarray(round_scalar_to_dtype(other, DTYPES[dtype])) if scalar else other  # type: ignore[arg-type]
    check_numpy_fmod(x, y_np, run.out, dtype)  # type: ignore[arg-type]
    # counters
    size = DTYPES[dtype].itemsize
    self_b = x.size * size
    other_b = 0 if scalar else np.asarray(other).size * size
    minimum = 2 * self_b + other_b
    moved = c["gmToUbBytes"] + c["ubToGmBytes"]
    assert c["dataCopyNon32"] == 0, ctx
    assert c["ubHighWater"] <= UB_BYTES, ctx
    assert c["ubToGmBytes"] == self_b, ctx  # every output element written exactly once
    if x.size == 0:
        assert moved == 0 and c["ubHighWater"] == 0, ctx
        return
    if t.tilingKey == 0 and not scalar:
        assert moved == 2 * self_b + t.blockDim * size, ctx  # the one `other` element, once per core
    elif t.tilingKey in (0, 1):
        assert moved == minimum, ctx
    elif t.tilingKey == 2:
        assert moved <= key2_limit * minimum, f"{moved / minimum:.4f}x; {ctx}"
    else:  # keys 3/4: each logical element of each operand crosses GM<->UB at most once, except the gaps
        # of a strided run read as its contiguous span (tiling rule 9: stride s with s * sizeof(T) < 32)
        k = t.dimNum

        def reads(stride: int) -> int:
            return stride if t.tileRows == 0 and stride > 1 and stride * size < 32 else 1

        other_reads = 0 if scalar else reads(t.otherStride[k - 1]) if t.tilingKey == 4 else 1
        assert moved <= (1 + reads(t.selfStride[k - 1]) + other_reads) * self_b + t.blockDim * size, ctx


def new_out(shape: tuple[int, ...], dtype: str, lead: int = 3, tail: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """A row-major output view with guard elements before and after it in its storage."""
    n = math.prod(shape)
    outs = np.empty(lead + n + tail, dtype=DTYPES[dtype])
    outs.view(np.uint8).fill(SENTINEL)
    return outs[lead : lead + n].reshape(shape), outs


# ---------------------------------------------------------------------------------------------------------
# The case table
# ---------------------------------------------------------------------------------------------------------

ViewFn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Spec:
    """A view of a storage of `size` elements."""

    size: int
    fn: ViewFn


def contig(shape: tuple[int, ...], offset: int = 0) -> Spec:
    n = math.prod(shape)
    return Spec(offset + n + 2, lambda s: s[offset : offset + n].reshape(shape))


def permuted(storage_shape: tuple[int, ...], axes: tuple[int, ...]) -> Spec:
    """storage.reshape(storage_shape).transpose(axes)."""
    n = math.prod(storage_shape)
    return Spec(n + 1, lambda s: s[:n].reshape(storage_shape).transpose(axes))


@dataclass(frozen=True)
class Case:
    id: str
    self_: Spec
    other: Spec | None  # None: fmod_scalar
    key: int
    out: Spec | None = None  # None: a fresh row-major out (with guards)
    dtypes: tuple[str, ...] = ALL
    key2_limit: float = 1.05


SHAPES: list[tuple[int, ...]] = [(), (0,), (3, 0, 5), (1,), (31,), (32,), (33,), (4097,), (3, 5, 7), EIGHT_D]


def _sid(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "0d"


def tensor_cases() -> list[Case]:
    cases = [Case(f"same-{_sid(s)}", contig(s), contig(s), 1) for s in SHAPES]
    cases.append(Case("same-1M", contig((1 << 20,)), contig((1 << 20,)), 1, dtypes=BIG_DTYPES))
    cases.append(Case("same-33-offsets", contig((33,), 5), contig((33,), 3), 1, out=contig((33,), 7)))
    # 3x5x7: every keep/set-to-1 pattern of other's dims, and lower-rank others
    for keep in range(8):
        oshape = tuple(n if keep >> (2 - d) & 1 else 1 for d, n in enumerate((3, 5, 7)))
        key = {7: 1, 0: 0}.get(keep, 2)
        cases.append(Case(f"bcast357-{_sid(oshape)}", contig((3, 5, 7)), contig(oshape), key))
    for oshape, key in [((), 0), ((1,), 0), ((7,), 2), ((1, 7), 2), ((5, 1), 2), ((5, 7), 2), ((1, 1), 0)]:
        cases.append(Case(f"bcast357-r{len(oshape)}-{_sid(oshape)}", contig((3, 5, 7)), contig(oshape), key))
    cases += [
        Case("bcast8d-3x1x1x1x2x1", contig(EIGHT_D), contig((3, 1, 1, 1, 2, 1)), 2),
        Case("bcast8d-inner3", contig(EIGHT_D), contig((1, 1, 1, 1, 1, 1, 1, 3)), 2),
        Case("bcast-rows-1000x1000", contig((1000, 1000)), contig((1000,)), 2, dtypes=BIG_DTYPES),
        Case("bcast-rows-4097x33", contig((4097, 33)), contig((33,)), 2),
        Case("bcast-cols-64x4097", contig((64, 4097)), contig((64, 1)), 2),
        Case("bcast-offsets", contig((5, 7), 4), contig((7,), 2), 2, out=contig((5, 7), 1)),
        # a run longer than a tile: `other` is re-read per repetition (see test_key2_long_runs_reread_other)
        Case("bcast-longrun-2x20000", contig((2, 20000)), contig((20000,)), 2, key2_limit=1.21),
        # key 0: one `other` element broadcast everywhere (read once per core)
        Case("one-33-(1,)", contig((33,)), contig((1,)), 0),
        Case("one-4097-0d-offset", contig((4097,)), contig((), 6), 0),
        Case("one-8d-0d", contig(EIGHT_D), contig(()), 0),
        # key 3: a strided self with a one-element other (whose storage offset the kernel reads)
        Case("one-T57-0d-offset", permuted((7, 5), (1, 0)), contig((), 9), 3),
        Case("one-T129x257-1x1", permuted((257, 129), (1, 0)), contig((1, 1), 2), 3),
        # key 4: strided / transposed / sliced operands
        Case("T57-row", permuted((7, 5), (1, 0)), contig((7,)), 4),
        Case("slice-col", Spec(84, lambda s: s[:84].reshape(6, 14)[1:, ::2]), contig((5, 1)), 4),
        Case("other-T57", contig((5, 7)), permuted((7, 5), (1, 0)), 4),
        Case("out-T57", contig((5, 7)), contig((5, 7)), 4, out=permuted((7, 5), (1, 0))),
        Case("perm357", permuted((7, 3, 5), (1, 2, 0)), contig((3, 1, 7)), 4),
        Case("other-strided-7", contig((5, 7)), Spec(22, lambda s: s[1:22:3]), 4),
        Case(
            "all-strided",
            Spec(200, lambda s: s[3:199].reshape(14, 14)[2:12:2, 1:14:2]),
            Spec(75, lambda s: s[1:71].reshape(5, 14)[:, ::2]),
            4,
            out=Spec(120, lambda s: s[5:117].reshape(8, 14)[1:6, ::2]),
        ),
        Case("T8d", permuted((3, 2, 1, 2, 2, 1, 3, 1), (4, 5, 0, 7, 3, 2, 1, 6)), contig((2, 1, 1, 3)), 4),
        Case("T129x257-row", permuted((257, 129), (1, 0)), contig((257,)), 4),
        Case("T129x257-col", permuted((257, 129), (1, 0)), contig((129, 1)), 4),
    ]
    return cases


def scalar_cases() -> list[Case]:
    cases = [Case(f"contig-{_sid(s)}", contig(s), None, 0) for s in SHAPES]
    cases += [
        Case("contig-1M", contig((1 << 20,)), None, 0, dtypes=BIG_DTYPES),
        Case("contig-33-offsets", contig((33,), 5), None, 0, out=contig((33,), 2)),
        Case("T57", permuted((7, 5), (1, 0)), None, 3),
        Case("slice", Spec(84, lambda s: s[:84].reshape(6, 14)[1:, ::2]), None, 3),
        Case("slice-rows-contiguous", Spec(84, lambda s: s[:84].reshape(6, 14)[1:4]), None, 0),
        Case("out-T57", contig((5, 7)), None, 3, out=permuted((7, 5), (1, 0))),
        Case("perm357", permuted((7, 3, 5), (1, 2, 0)), None, 3),
        Case("T8d", permuted((3, 2, 1, 2, 2, 1, 3, 1), (4, 5, 0, 7, 3, 2, 1, 6)), None, 3),
        Case("T129x257", permuted((257, 129), (1, 0)), None, 3),
        Case("inner-stride2", Spec(200, lambda s: s[1:199:2]), None, 3),
    ]
    return cases


TENSOR_CASES = tensor_cases()
SCALAR_CASES = scalar_cases()


def _params(cases: list[Case]) -> list:
    return [pytest.param(d, i, id=f"{d}-{c.id}") for i, c in enumerate(cases) for d in c.dtypes]


def materialize(
    case: Case, dtype: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray, np.ndarray]:
    xs = fill(case.self_.size, dtype, "self", rng)
    x = case.self_.fn(xs)
    os_ = other = None
    if case.other is not None:
        os_ = fill(case.other.size, dtype, "other", rng)
        other = case.other.fn(os_)
    if case.out is None:
        out, outs = new_out(x.shape, dtype)
    else:
        outs = np.empty(case.out.size, dtype=DTYPES[dtype])
        outs.view(np.uint8).fill(SENTINEL)
        out = case.out.fn(outs)
    return x, xs, other, os_, out, outs


@pytest.mark.parametrize(("dtype", "index"), _params(TENSOR_CASES))
def test_fmod_tensor_kernel(dtype: str, index: int) -> None:
    case = TENSOR_CASES[index]
    rng = np.random.default_rng(1000 + index)
    x, xs, other, os_, out, outs = materialize(case, dtype, rng)
    assert other is not None
    run = launch(dtype, x, xs, other, os_, out, outs)
    verify(run, dtype, x, other, outs, case.key, key2_limit=case.key2_limit)


@pytest.mark.parametrize(("dtype", "index"), _params(SCALAR_CASES))
def test_fmod_scalar_kernel(dtype: str, index: int) -> None:
    case = SCALAR_CASES[index]
    rng = np.random.default_rng(2000 + index)
    x, xs, _, _, out, outs = materialize(case, dtype, rng)
    scalars = SCALARS[_family(dtype)]
    scalar = scalars[index % len(scalars)]
    run = launch(dtype, x, xs, scalar, None, out, outs)
    verify(run, dtype, x, scalar, outs, case.key)


@pytest.mark.parametrize("dtype", ALL)
def test_case_table_covers_every_key(dtype: str) -> None:
    """The tables hit every key of each kernel for every dtype (each case asserts the key it hits)."""
    assert {c.key for c in TENSOR_CASES if dtype in c.dtypes} == {0, 1, 2, 3, 4}
    assert {c.key for c in SCALAR_CASES if dtype in c.dtypes} == {0, 3}


# ---------------------------------------------------------------------------------------------------------
# Special values: every (self, other) pair, every special scalar
# ---------------------------------------------------------------------------------------------------------


def _array(values: list, dtype: str) -> np.ndarray:
    return np.array(values, dtype=np.float64).astype(np.float32).astype(DTYPES[dtype])


@pytest.mark.parametrize("layout", ["same-shape", "broadcast", "transposed"])
@pytest.mark.parametrize("dtype", ALL)
def test_special_value_pairs(dtype: str, layout: str) -> None:
    fam = _family(dtype)
    sv, ov = _array(SPECIAL_SELF[fam], dtype), _array(SPECIAL_OTHER[fam], dtype)
    grid = np.repeat(sv[:, None], len(ov), axis=1)  # self[i, j] = sv[i], other[j] = ov[j]
    if layout == "transposed":
        xs = np.concatenate([np.ascontiguousarray(grid.T).reshape(-1), grid[:1, :1].reshape(-1)])
        x, key, os_ = xs[: grid.size].reshape(len(ov), len(sv)).T, 4, ov.copy()
        other = os_
    else:
        xs = grid.reshape(-1).copy()
        x = xs.reshape(grid.shape)
        if layout == "same-shape":
            os_ = np.ascontiguousarray(np.broadcast_to(ov, grid.shape)).reshape(-1)
            other, key = os_.reshape(grid.shape), 1
        else:
            os_ = ov.copy()
            other, key = os_, 2
    out, outs = new_out(x.shape, dtype)
    run = launch(dtype, x, xs, other, os_, out, outs)
    verify(run, dtype, x, other, outs, key)


@pytest.mark.parametrize("dtype", ALL)
def test_special_scalars(dtype: str) -> None:
    fam = _family(dtype)
    sv = _array(SPECIAL_SELF[fam] * 3, dtype)  # 24-33 elements
    for scalar in SCALARS[fam]:
        for transposed in (False, True):
            xs = sv.copy()
            x = xs.reshape(3, -1).T if transposed else xs
            out, outs = new_out(x.shape, dtype)
            run = launch(dtype, x, xs, scalar, None, out, outs)
            verify(run, dtype, x, scalar, outs, 3 if transposed else 0)


@pytest.mark.parametrize("transposed", [False, True])
def test_int16_edges(transposed: bool) -> None:
    x_vals = [-32768, -32768, 32767, -32768, 5, -5, 0, 32767, -32768]
    y_vals = [-1, 1, -32768, 32767, 0, 0, 0, -1, -32768]
    want = [0, 0, 32767, -1, 0, 0, 0, 0, 0]
    xs = np.array(x_vals + [0] * 9, np.int16).reshape(2, 9).T.copy().reshape(-1) if transposed else None
    if transposed:
        x = xs[:18].reshape(9, 2).T[0]  # stride 2
    else:
        xs = np.array(x_vals, np.int16)
        x = xs
    os_ = np.array(y_vals, np.int16)
    out, outs = new_out(x.shape, "i16")
    run = launch("i16", x, xs, os_, os_, out, outs)
    verify(run, "i16", x, os_, outs, 4 if transposed else 1)
    assert run.out.tolist() == want
    for scalar, expect in [(-1, [0, 0, 0, 0, 0, 0, 0, 0, 0]), (0, [0] * 9)]:
        out, outs = new_out(x.shape, "i16")
        run = launch("i16", x, xs, scalar, None, out, outs)
        verify(run, "i16", x, scalar, outs, 3 if transposed else 0)
        assert run.out.tolist() == expect


# ---------------------------------------------------------------------------------------------------------
# Counters on the large broadcast case and the known limit of key 2
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", BIG_DTYPES)
def test_key2_traffic_large_row_broadcast(dtype: str) -> None:
    """(1000, 1000) fmod (1000,): 48 cores each read `other` once or twice; GM<->UB <= 1.05x the minimum."""
    rng = np.random.default_rng(7)
    xs, os_ = fill(10**6, dtype, "self", rng), fill(1000, dtype, "other", rng)
    x, other = xs.reshape(1000, 1000), os_
    out, outs = new_out(x.shape, dtype)
    run = launch(dtype, x, xs, other, os_, out, outs)
    verify(run, dtype, x, other, outs, 2)
    c = run.counters
    size = DTYPES[dtype].itemsize
    assert run.tiling.blockDim == 48
    assert c["gmToUbBytes"] + c["ubToGmBytes"] <= 1.05 * (2 * 10**6 + 1000) * size
    assert c["ubHighWater"] <= run.tiling.ub_bytes + 1024  # InitBuffer rounds each buffer up to 32 bytes


def test_key2_long_runs_split_by_columns() -> None:
    """Rows longer than a tile (once re-read per row on one core): split by columns, `other` read once."""
    rng = np.random.default_rng(8)
    xs, os_ = fill(40000, "f32", "self", rng), fill(20000, "f32", "other", rng)
    out, outs = new_out((2, 20000), "f32")
    x = xs.reshape(2, 20000)
    run = launch("f32", x, xs, os_, os_, out, outs)
    verify(run, "f32", x, os_, outs, 2)
    c = run.counters
    assert run.tiling.colBlock > 0 and run.tiling.blockDim == 40
    assert c["gmToUbBytes"] + c["ubToGmBytes"] == (2 * 40000 + 20000) * 4


@pytest.mark.parametrize("dtype", BIG_DTYPES)
@pytest.mark.parametrize("rows", [100, 7, 20])
def test_key2_row_broadcast_uses_every_core(dtype: str, rows: int) -> None:
    """(rows, 1000) fmod (1000,) split by columns: (nearly) every core busy, each reading its slice of
    `other` once, bytes exactly the minimum, self/out rows moved by strided DataCopyPad (no scalar GM)."""
    rng = np.random.default_rng(12)
    xs, os_ = fill(rows * 1000, dtype, "self", rng), fill(1000, dtype, "other", rng)
    x = xs.reshape(rows, 1000)
    out, outs = new_out(x.shape, dtype)
    run = launch(dtype, x, xs, os_, os_, out, outs)
    verify(run, dtype, x, os_, outs, 2)
    t, c = run.tiling, run.counters
    size = DTYPES[dtype].itemsize
    assert t.colBlock > 0 and t.blockDim == math.ceil(1000 / t.colBlock)
    assert t.blockDim >= (32 if rows >= 100 else 2)
    assert c["gmToUbBytes"] + c["ubToGmBytes"] == (2 * rows * 1000 + 1000) * size
    assert c["gmScalarReadBytes"] == c["gmScalarWriteBytes"] == 0


def test_soc_with_40_cores() -> None:
    rng = np.random.default_rng(9)
    xs = fill(1 << 18, "f32", "self", rng)
    out, outs = new_out(xs.shape, "f32")
    run = launch("f32", xs, xs, 2.5, None, out, outs, soc="ascend910b3")
    assert run.tiling.blockDim == 40
    verify(run, "f32", xs, 2.5, outs, 0)


# ---------------------------------------------------------------------------------------------------------
# Random shapes and views (seeded): >= 200 cases through the emitted kernels
# ---------------------------------------------------------------------------------------------------------


def random_view(
    shape: tuple[int, ...], dtype: str, role: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A view of `shape` into a fresh storage: random dim order, slicing steps, padding and storage offset."""
    rank = len(shape)
    layout = rng.integers(0, 3)  # 0 contiguous, 1 permuted, 2 permuted + sliced
    order = rng.permutation(rank) if layout else np.arange(rank)
    steps = [int(rng.integers(1, 3)) if layout == 2 else 1 for _ in range(rank)]
    pads = [int(rng.integers(0, 2)) if layout == 2 else 0 for _ in range(rank)]
    st_shape = tuple(shape[d] * steps[d] + pads[d] for d in order)
    offset = int(rng.integers(0, 4))
    n = math.prod(st_shape)
    storage = fill(offset + n + 2, dtype, role, rng) if role != "out" else np.empty(offset + n + 2, DTYPES[dtype])
    base = storage[offset : offset + n].reshape(st_shape)
    if rank:  # (indexing a 0-d array with () would give a numpy scalar)
        base = base[tuple(slice(0, shape[d] * steps[d], steps[d]) for d in order)]
    view = base.transpose(np.argsort(order))
    assert view.shape == shape
    return view, storage


def random_case(rng: np.random.Generator) -> tuple:
    dtype = ALL[int(rng.integers(0, 4))]
    rank = int(rng.integers(0, 5))
    shape = tuple(int(rng.choice([0, 1, 1, 2, 3, 4, 5, 7, 9, 17])) if rng.random() > 0.05 else 0 for _ in range(rank))
    shape = tuple(s if s or rng.random() < 0.3 else 2 for s in shape)  # fewer empty tensors
    x, xs = random_view(shape, dtype, "self", rng)
    if rng.random() < 0.3:
        scalars = SCALARS[_family(dtype)]
        other, os_ = scalars[int(rng.integers(0, len(scalars)))], None
    else:
        orank = int(rng.integers(0, rank + 1))
        oshape = tuple(n if rng.random() < 0.6 else 1 for n in shape[rank - orank :])
        other, os_ = random_view(oshape, dtype, "other", rng)
    if rng.random() < 0.3:
        out, outs = random_view(shape, dtype, "out", rng)
        outs.view(np.uint8).fill(SENTINEL)
    else:
        out, outs = new_out(shape, dtype)
    return dtype, x, xs, other, os_, out, outs


RANDOM_SEEDS = range(8)
RANDOM_PER_SEED = 32  # 256 cases in all


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_shapes_and_views(seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys: set[int] = set()
    for i in range(RANDOM_PER_SEED):
        dtype, x, xs, other, os_, out, outs = random_case(rng)
        run = launch(dtype, x, xs, other, os_, out, outs)
        try:
            verify(run, dtype, x, other, outs, None)
        except AssertionError as error:
            raise AssertionError(f"random case {seed}/{i}: {error}") from None
        keys.add(run.tiling.tilingKey)
    assert len(keys) >= 3


def test_kernel_sources_are_replaced_atomically(tmp_path) -> None:
    """A reader that opened the previous source keeps reading all of it: the new text arrives by
    rename, never by truncating the shared file in place (ranks compile these files concurrently)."""
    from sbpc.lowering.ascendc.cann_project import write_atomic as _write_atomic

    path = tmp_path / "k.cpp"
    _write_atomic(path, "old source\n" * 100)
    with path.open(encoding="utf-8") as reader:
        _write_atomic(path, "new source\n")
        assert reader.read() == "old source\n" * 100
    assert path.read_text(encoding="utf-8") == "new source\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cpp"]


@pytest.mark.parametrize("dtype", BIG_DTYPES)
@pytest.mark.parametrize("scalar", [False, True])
def test_row_sliced_views_move_row_groups_by_strided_dma(dtype: str, scalar: bool) -> None:
    """Row-sliced self and other (1000 x 1000 of a 1000 x 2000 storage, row stride 2000), contiguous out:
    whole rows move as groups, one strided DataCopyPad (blockCount > 1, srcStride) per operand and tile
    instead of one per row; no scalar GM access; bytes exactly the minimum."""
    rng = np.random.default_rng(11)
    xs = fill(2 * 10**6, dtype, "self", rng)
    x = xs.reshape(1000, 2000)[:, :1000]
    os_ = fill(2 * 10**6, dtype, "other", rng)
    other: np.ndarray | float = 2.5 if scalar else os_.reshape(1000, 2000)[:, 500:1500]
    out, outs = new_out(x.shape, dtype)
    run = launch(dtype, x, xs, other, None if scalar else os_, out, outs)
    verify(run, dtype, x, other, outs, 3 if scalar else 4)
    c, operands = run.counters, 2 if scalar else 3
    size = DTYPES[dtype].itemsize
    assert c["gmScalarReadBytes"] == c["gmScalarWriteBytes"] == 0
    assert c["gmToUbBytes"] + c["ubToGmBytes"] == (operands * 10**6) * size
    rows_per_tile = run.tiling.tileLength // 1000
    assert rows_per_tile > 1
    # one call per operand per tile, and at most one more per core where a core starts or ends mid-row
    tiles = math.ceil(run.tiling.blockLength / (rows_per_tile * 1000)) + 2
    assert c["dataCopyPadCalls"] <= operands * run.tiling.blockDim * tiles, c
    assert c["dataCopyPadCalls"] < operands * 1000 // 2, c  # per-row copies would take >= operands * 1000


ISSUE_VIEWS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "transposed": lambda s: s[:100_000].reshape(250, 400).T,
    "column-sliced": lambda s: s[:200_000].reshape(400, 500)[:, 100:350],
    "row-sliced": lambda s: s[:200_000].reshape(100, 2000)[:, :1000],
    "3-d permuted": lambda s: s[:100_000].reshape(20, 50, 100).transpose(2, 0, 1),
}
SMALL_VIEWS: dict[str, Callable[[np.ndarray], np.ndarray]] = {  # 10^3 elements (column-sliced 500)
    "transposed": lambda s: s[1 : 1 + 1000].reshape(25, 40).T,
    "column-sliced": lambda s: s[:2000].reshape(40, 50)[:, 10:35],
    "row-sliced": lambda s: s[:2000].reshape(10, 200)[:, :100],
    "3-d permuted": lambda s: s[:1000].reshape(10, 5, 20).transpose(2, 0, 1),
}
BLOCKED_VIEWS = ("transposed", "3-d permuted")
"""Innermost stride != 1: moved as 2-d blocks by strided DMA + UB Gather (tiling rule 8)."""


def _check_strided_traffic(run: Run, view: str, operands: int, size: int, n: int) -> None:
    c = run.counters
    assert c["gmScalarReadBytes"] == c["gmScalarWriteBytes"] == 0, c
    assert c["gmToUbBytes"] + c["ubToGmBytes"] == operands * n * size, c
    assert c["dataCopyNon32"] == 0, c
    if view in BLOCKED_VIEWS:
        # every input element once, plus the padding lanes between rows of narrow tiles
        gathered = (operands - 1) * n * size
        assert run.tiling.tileRows > 0 and gathered <= c["ubGatherBytes"] < 2 * gathered, (run.tiling, c)
    else:
        assert run.tiling.tileRows == 0 and c["ubGatherBytes"] == 0


@pytest.mark.parametrize("dtype", BIG_DTYPES)
@pytest.mark.parametrize("view", list(ISSUE_VIEWS))
@pytest.mark.parametrize("size", [1000, 100_000])
def test_issue_views_bit_exact(dtype: str, view: str, size: int) -> None:
    """Keys 3 and 4 on the strided views of issue 15 at 10^3 and 10^5 elements, self and other both strided:
    bit-exact, no scalar GM access, bytes exactly the minimum, whole-block DataCopies; transposes and
    permutations are reordered in UB by Gather (every input element once)."""
    rng = np.random.default_rng(13)
    views = ISSUE_VIEWS if size == 100_000 else SMALL_VIEWS
    xs, os_ = fill(2 * size + 2, dtype, "self", rng), fill(2 * size + 2, dtype, "other", rng)
    x, other = views[view](xs), views[view](os_)
    assert x.size in (size // 2, size)
    for o, key in ((2.5 if dtype != "i16" else 3, 3), (other, 4)):
        out, outs = new_out(x.shape, dtype)
        run = launch(dtype, x, xs, o, None if key == 3 else os_, out, outs)
        verify(run, dtype, x, o, outs, key)
        _check_strided_traffic(run, view, 2 if key == 3 else 3, DTYPES[dtype].itemsize, x.size)


# 3-d permutations that stay 3-d after coalescing, and broadcast `other`s against a transposed self.
PERMUTED_3D: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "batched-transpose": ((20, 50, 100), (0, 2, 1)),
    "reversed": ((20, 50, 100), (2, 1, 0)),
    "rotated": ((20, 50, 100), (1, 2, 0)),
}


@pytest.mark.parametrize("dtype", BIG_DTYPES)
@pytest.mark.parametrize("perm", list(PERMUTED_3D))
def test_3d_permutations_by_blocks(dtype: str, perm: str) -> None:
    storage_shape, axes = PERMUTED_3D[perm]
    rng = np.random.default_rng(17)
    n = math.prod(storage_shape)
    xs, os_ = fill(n, dtype, "self", rng), fill(n, dtype, "other", rng)
    x, other = xs.reshape(storage_shape).transpose(axes), os_.reshape(storage_shape).transpose(axes)
    for o, key in ((2.5 if dtype != "i16" else 3, 3), (other, 4)):
        out, outs = new_out(x.shape, dtype)
        run = launch(dtype, x, xs, o, None if key == 3 else os_, out, outs)
        verify(run, dtype, x, o, outs, key)
        _check_strided_traffic(run, "transposed", 2 if key == 3 else 3, DTYPES[dtype].itemsize, n)


@pytest.mark.parametrize("dtype", BIG_DTYPES)
@pytest.mark.parametrize("inputs", ["contiguous", "transposed"])
def test_transposed_out_leaves_by_columns(dtype: str, inputs: str) -> None:
    """An output view with stride 1 along the rows (out = storage.T): Compute's rows are reordered into
    columns by Gather and leave by one strided DataCopyPad per tile, never by scalar GM writes."""
    rng = np.random.default_rng(23)
    n = 240 * 410
    xs, os_ = fill(n, dtype, "self", rng), fill(n, dtype, "other", rng)
    if inputs == "contiguous":
        x, other = xs.reshape(240, 410), os_.reshape(240, 410)
    else:
        x, other = xs.reshape(410, 240).T, os_.reshape(410, 240).T
    for o, key in ((2.5 if dtype != "i16" else 3, 3), (other, 4)):
        outs = np.empty(n + 5, DTYPES[dtype])
        outs.view(np.uint8).fill(SENTINEL)
        out = outs[3 : 3 + n].reshape(410, 240).T
        run = launch(dtype, x, xs, o, None if key == 3 else os_, out, outs)
        verify(run, dtype, x, o, outs, key)
        c, size = run.counters, DTYPES[dtype].itemsize
        operands = 2 if key == 3 else 3
        assert run.tiling.tileRows > 0 and c["gmScalarReadBytes"] == c["gmScalarWriteBytes"] == 0, c
        assert c["gmToUbBytes"] + c["ubToGmBytes"] == operands * n * size
        gathers = (1 if inputs == "transposed" else 0) * (operands - 1) + 1  # every input, then out
        assert gathers * n * size <= c["ubGatherBytes"] < 2 * gathers * n * size, c


RUN_VIEWS: dict[str, Callable[[np.ndarray], np.ndarray]] = {  # no unit-stride dim: tiling rule 9
    "one column": lambda s: s[: 400 * 250].reshape(400, 250)[:, 7],  # stride 250: one element per block
    "stepped columns": lambda s: s[: 200 * 600].reshape(200, 600)[:, 1::2],  # stride 2: contiguous spans
    "broadcast self": lambda s: np.broadcast_to(s[:300].reshape(300, 1), (300, 200)),  # stride 0
}


@pytest.mark.parametrize("dtype", BIG_DTYPES)
@pytest.mark.parametrize("view", list(RUN_VIEWS))
def test_strided_runs_move_by_dma(dtype: str, view: str) -> None:
    """Views without a unit-stride dim: runs move in chunks by one DataCopyPad each (the contiguous span
    when a 32-byte sector holds several elements, else one element per block) and a Gather packs them;
    no element by scalar GM access."""
    rng = np.random.default_rng(29)
    xs, os_ = fill(200 * 600, dtype, "self", rng), fill(200 * 600, dtype, "other", rng)
    x, other = RUN_VIEWS[view](xs), RUN_VIEWS[view](os_)
    size = DTYPES[dtype].itemsize
    for o, key in ((2.5 if dtype != "i16" else 3, 3), (other, 4)):
        out, outs = new_out(x.shape, dtype)
        run = launch(dtype, x, xs, o, None if key == 3 else os_, out, outs)
        verify(run, dtype, x, o, outs, key)
        c, n, inputs = run.counters, x.size, 1 if key == 3 else 2
        assert run.tiling.tileRows == 0 and c["gmScalarWriteBytes"] == 0, c
        if view == "broadcast self" and key == 4:  # other's runs are one element each, Duplicated: one read a run
            assert c["gmScalarReadBytes"] <= n * size // 150 and c["ubGatherBytes"] == n * size, c
        else:
            assert c["gmScalarReadBytes"] == 0 and c["ubGatherBytes"] == inputs * n * size, c
        if view == "one column":  # every element its own 32-byte block: bytes exact, bursts padded
            assert c["gmToUbBytes"] == inputs * n * size and c["gmBurstPadBytes"] >= inputs * n * (32 - size), c
        elif view == "stepped columns":  # chunks of a row read as their spans: 2 x the elements, less a gap each
            assert inputs * 1.9 * n * size < c["gmToUbBytes"] < inputs * 2 * n * size, c


@pytest.mark.parametrize("dtype", BIG_DTYPES)
def test_strided_out_run_moves_by_dma(dtype: str) -> None:
    """An output column (stride 16, no unit-stride dim): each chunk is spread by Brcb and written by one
    DataCopyPad of one-element blocks; nothing by scalar GM writes, the gaps keep their sentinels."""
    rng = np.random.default_rng(31)
    n = 20_000
    xs, os_ = fill(n, dtype, "self", rng), fill(n, dtype, "other", rng)
    for o, key in ((2.5 if dtype != "i16" else 3, 3), (os_, 4)):
        outs = np.empty(16 * n + 4, DTYPES[dtype])
        outs.view(np.uint8).fill(SENTINEL)
        out = outs[2 : 2 + 16 * n].reshape(n, 16)[:, 3]
        run = launch(dtype, xs, xs, o, None if key == 3 else os_, out, outs)
        verify(run, dtype, xs, o, outs, key)
        c = run.counters
        assert c["gmScalarWriteBytes"] == c["gmScalarReadBytes"] == 0, c
        assert c["ubToGmBytes"] == n * DTYPES[dtype].itemsize, c


@pytest.mark.parametrize("dtype", BIG_DTYPES)
def test_broadcast_other_against_a_transposed_self(dtype: str) -> None:
    """Row, column and one-element `other`s broadcast over a transposed self: one block each, then Gather."""
    rng = np.random.default_rng(19)
    xs = fill(300 * 170, dtype, "self", rng)
    x = xs.reshape(300, 170).T  # (170, 300), strides (1, 170)
    for shape in [(300,), (170, 1), (1, 1)]:
        os_ = fill(math.prod(shape), dtype, "other", rng)
        other = os_.reshape(shape)
        out, outs = new_out(x.shape, dtype)
        run = launch(dtype, x, xs, other, os_, out, outs)
        verify(run, dtype, x, other, outs, 4 if shape != (1, 1) else 3)
        # a one-element other is read once per core (key 3: scalar-like), nothing else element by element
        scalar_reads = run.tiling.blockDim * DTYPES[dtype].itemsize if shape == (1, 1) else 0
        assert run.tiling.tileRows > 0 and run.counters["gmScalarReadBytes"] == scalar_reads
