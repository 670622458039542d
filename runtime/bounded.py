"""The values `--check`'s bounded reference carries (`Bounded`), and the rounding rules every op's error
bound is built from (`runtime/error_bounds.py` for the ops of SPEC §2.4, `runtime/error_bounds_nn.py`
for those of §7; the analysis itself is described there): one ulp of a dtype (`unit`), n roundings
(`gamma`), exact sums on a dyadic grid, a linear op's and a nonlinear op's result (`linear`,
`nonlinear`), an integer op's (`ints`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from xdsl.ir import Operation, SSAValue

from sbpc.runtime.op_impls import run_numpy
from sbpc.runtime.ops_numpy import LOW_FLOATS, is_integer, result_dtype

F64 = np.dtype(np.float64)
GELU_SLOPE = 1.13
"""max |d gelu_tanh / dx| (1.1289... at x ≈ ±2.4), rounded up."""
TRANSCENDENTAL_ULPS = 8.0
"""Rounding budget of exp, tanh and sqrt chains, in units of `unit(dtype)` (libm and torch differ by a few)."""


def unit(dtype: np.dtype) -> float:
    """Twice the unit roundoff of a float dtype (one ulp relative): the budget of one rounding."""
    return 2.0 ** -ml_dtypes.finfo(dtype).nmant


def tiny(dtype: np.dtype) -> float:
    return float(ml_dtypes.finfo(dtype).smallest_subnormal)


def compute_unit(dtype: np.dtype) -> float:
    """The unit of the arithmetic ops run in: f16 and bf16 compute in float32."""
    return unit(np.dtype(np.float32)) if dtype in LOW_FLOATS else unit(dtype)


def gamma(n: float, u: float) -> float:
    """n·u / (1 - n·u): the relative error of n roundings (inf when they may lose every bit)."""
    return n * u / (1.0 - n * u) if n * u < 0.5 else math.inf


@dataclass
class Bounded:
    """A value of the global program: float64 value, per-element bound, magnitude, and for fmod the
    values on the other side of a jump (module docstring)."""

    ref: np.ndarray
    err: np.ndarray
    mag: np.ndarray
    dtype: np.dtype
    grid: int | None = None
    """log2 of a power of two every piece of an exact value is a multiple of (None: not known to be exact)."""
    alts: tuple[np.ndarray, ...] = ()
    core: np.ndarray | None = None
    floor: np.ndarray | None = None
    """Where a value is ill-conditioned in a way the single-device run's statistics cannot see (AdamW's
    m/√v where a gradient cancels to rounding, `runtime/adam_bounds.py`): the least tolerance
    `check.judge` may tighten the bound to, per element (None: no such floor)."""

    @property
    def exact(self) -> bool:
        return self.grid is not None


@dataclass
class BoundContext:
    """What the rules read besides the operands."""

    devices: int
    """How many devices the widest placement has (partial sums add at most that many pieces)."""
    ascendc: bool = False
    """fmod runs the TBE formula (`lowering/ascendc/fmod_reference.py`): C fmod within its rounding."""
    notes: dict[str, int] = field(default_factory=dict)
    single: Mapping[SSAValue, np.ndarray] | None = None
    """Every value of the program as one device computes it in its element types (`simulator.reference`),
    when the check has run it: the rules that set a statistical `Bounded.floor` read their operands' here."""
    env: Mapping[SSAValue, Bounded] | None = None
    """The bounded values computed so far, for a rule that looks through its operands' definitions
    (AdamW's cap reads the state its moments started from)."""


def absolute(x: np.ndarray) -> np.ndarray:
    return np.abs(x.astype(F64))


def array_grid(x: np.ndarray) -> int:
    """log2 of the largest power of two all finite elements of `x` are multiples of (1000 if all are 0)."""
    v = x.astype(F64)
    nz = v[(v != 0) & np.isfinite(v)]
    if nz.size == 0:
        return 1000
    mantissa, exponent = np.frexp(nz)
    k = np.abs(mantissa * 2.0**53).astype(np.int64)
    low = np.log2((k & -k).astype(F64)).astype(np.int64)
    return int((exponent - 53 + low).min())


def input_bounded(value: np.ndarray, grid: int | None = None) -> Bounded:
    """A global input: exact, on its own dyadic grid (`grid` if given: a partial input's pieces are finer)."""
    dtype = value.dtype
    ref = value if is_integer(dtype) else value.astype(F64)
    own = array_grid(value) if not is_integer(dtype) else 0
    if grid is not None and own is not None:
        own = min(own, grid)
    return Bounded(ref, np.zeros(value.shape), absolute(value), dtype, own)


def finish(ref: np.ndarray, err: np.ndarray, mag: np.ndarray, dtype: np.dtype, grid: int | None = None,
            **extra) -> Bounded:
    """A result: NaN bounds and bounds that reach the type's range become infinite."""
    err = np.where(np.isnan(err), np.inf, err)
    limit = 1.0 if dtype == np.bool_ else float(np.iinfo(dtype).max) if is_integer(dtype) else float(
        ml_dtypes.finfo(dtype).max)
    with np.errstate(all="ignore"):
        reach = (err > 0) & (absolute(ref) + err >= limit)
    err = np.where(reach, np.inf, err)
    if grid is not None and bool(np.any(err != 0)):
        grid = None
    return Bounded(ref, err.astype(F64), mag.astype(F64), dtype, grid, **extra)


def exact_sum(mag: np.ndarray, grid: int | None, dtype: np.dtype) -> np.ndarray:
    """Where every partial sum of pieces on grid 2^grid below `mag` is representable in `dtype`."""
    if grid is None:
        return np.zeros(mag.shape, bool)
    info = ml_dtypes.finfo(dtype)
    if np.ldexp(1.0, grid) < float(info.smallest_subnormal):
        return np.zeros(mag.shape, bool)
    with np.errstate(all="ignore"):
        return mag < np.ldexp(1.0, min(int(info.nmant) + 1 + grid, 2000))


def linear(op: Operation, ref: np.ndarray, err: np.ndarray, mag: np.ndarray, grid: int | None,
            terms: float, dtype: np.dtype, ctx: BoundContext) -> Bounded:
    """A linear op's result: exact where its pieces stay on the grid, else its operands' bound plus the
    rounding of `terms` accumulations and the mesh's addition of up to `devices` pieces."""
    if is_integer(dtype):
        return finish(ref, err, mag, dtype, 0 if not np.any(err) else None)
    exact = exact_sum(mag, grid, dtype) & (err == 0)
    mesh = ctx.devices + 3
    rate = gamma(terms + 1, compute_unit(dtype)) + gamma(mesh, unit(dtype)) + gamma(terms + 2, 2.0**-52)
    rounding = np.where(exact, 0.0, rate * mag + mesh * tiny(dtype))
    return finish(ref, err + rounding, mag, dtype, grid if bool(exact.all()) else None)


def nonlinear(ref: np.ndarray, err: np.ndarray, dtype: np.dtype, ulps: float = TRANSCENDENTAL_ULPS) -> Bounded:
    """A nonlinear op's result (its operands hold no partial sums): `ulps` roundings of its size."""
    if is_integer(dtype):
        return finish(ref, err, absolute(ref) + err, dtype, 0 if not np.any(err) else None)
    size = absolute(ref) + err
    total = err + ulps * (unit(dtype) * size + tiny(dtype))
    return finish(ref, total, size + total, dtype)


def ints(op: Operation, xs: Sequence[Bounded], keep: Callable[..., np.ndarray] | None) -> Bounded:
    """An integer op: exact in its dtype when its operands are; `keep` bounds what the op does to
    inexact operands (None: any value)."""
    ref = run_numpy(op, [x.ref for x in xs])
    dtype = result_dtype(op)
    if all(not np.any(x.err) for x in xs):
        return Bounded(ref, np.zeros(ref.shape), absolute(ref), dtype, 0)
    err = keep(*xs) if keep is not None else np.full(ref.shape, np.inf)
    return finish(ref, np.broadcast_to(err, ref.shape), absolute(ref) + err, dtype)
