"""A float64 run of the global program that carries, per element, how far any correct plan may land.

`bounded_reference` runs the original global program once, as `simulator.reference` does, but every
value is a `Bounded`: its float64 value `ref` (integers: the exact value in their dtype), an error
bound `err` that every correct distributed run of the program in its element type stays within,
whatever the summation order, blocking, BLAS, thread count or CPU, and `mag`, a bound on the sum of
the absolute values of the pieces a partial sum of it may be cut into (rounding errors are relative
to it, since the mesh adds those pieces in its own order). The bound is propagated op by op (a
first-order forward error analysis, SPEC §4.3), with twice the unit roundoff per rounding for margin:

* a value is *exact* (`err == 0`) when its operands are and every partial sum any plan can form lies
  on the operands' dyadic grid below 2^p (p the significand bits): the dyadic default inputs make the
  first matmuls and sums of a program exact, so they are compared bit for bit;
* otherwise linear ops add their operands' bounds and a rounding of (terms + devices + 3)·u·mag;
  nonlinear ops (exp, gelu, layer_norm, div) scale their operand's bound by their slope and add a few
  ulps of rounding; max/min move by at most their operands' bounds;
* `fmod` jumps by `other` where its dividend may cross a multiple of `other` within its bound: there
  `alts` hold the values on the other side, `core` the bound around `ref` and each of them, and `err`
  (what later ops see) widens to `core + |other|`;
* a bound that reaches the type's range (overflow, a divisor whose bound contains 0) is infinite: any
  value is accepted there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from sbpc.dialects import sbp_ops as ops
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import ConversionOp
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.runtime.op_impls import GELU_C, impl_of, run_numpy
from sbpc.runtime.ops_numpy import LOW_FLOATS, has_flag, int_property, is_integer, result_dtype, scalar_as, scalar_value
from sbpc.runtime.simulator import entry_block, placement_hierarchy

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


def _compute_unit(dtype: np.dtype) -> float:
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


def _abs(x: np.ndarray) -> np.ndarray:
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
    return Bounded(ref, np.zeros(value.shape), _abs(value), dtype, own)


def _finish(ref: np.ndarray, err: np.ndarray, mag: np.ndarray, dtype: np.dtype, grid: int | None = None,
            **extra) -> Bounded:
    """A result: NaN bounds and bounds that reach the type's range become infinite."""
    err = np.where(np.isnan(err), np.inf, err)
    limit = float(np.iinfo(dtype).max) if is_integer(dtype) else float(ml_dtypes.finfo(dtype).max)
    with np.errstate(all="ignore"):
        reach = (err > 0) & (_abs(ref) + err >= limit)
    err = np.where(reach, np.inf, err)
    if grid is not None and bool(np.any(err != 0)):
        grid = None
    return Bounded(ref, err.astype(F64), mag.astype(F64), dtype, grid, **extra)


def _exact_sum(mag: np.ndarray, grid: int | None, dtype: np.dtype) -> np.ndarray:
    """Where every partial sum of pieces on grid 2^grid below `mag` is representable in `dtype`."""
    if grid is None:
        return np.zeros(mag.shape, bool)
    info = ml_dtypes.finfo(dtype)
    if np.ldexp(1.0, grid) < float(info.smallest_subnormal):
        return np.zeros(mag.shape, bool)
    with np.errstate(all="ignore"):
        return mag < np.ldexp(1.0, min(int(info.nmant) + 1 + grid, 2000))


def _linear(op: Operation, ref: np.ndarray, err: np.ndarray, mag: np.ndarray, grid: int | None,
            terms: float, dtype: np.dtype, ctx: BoundContext) -> Bounded:
    """A linear op's result: exact where its pieces stay on the grid, else its operands' bound plus the
    rounding of `terms` accumulations and the mesh's addition of up to `devices` pieces."""
    if is_integer(dtype):
        return _finish(ref, err, mag, dtype, 0 if not np.any(err) else None)
    exact = _exact_sum(mag, grid, dtype) & (err == 0)
    mesh = ctx.devices + 3
    rate = gamma(terms + 1, _compute_unit(dtype)) + gamma(mesh, unit(dtype)) + gamma(terms + 2, 2.0**-52)
    rounding = np.where(exact, 0.0, rate * mag + mesh * tiny(dtype))
    return _finish(ref, err + rounding, mag, dtype, grid if bool(exact.all()) else None)


def _nonlinear(ref: np.ndarray, err: np.ndarray, dtype: np.dtype, ulps: float = TRANSCENDENTAL_ULPS) -> Bounded:
    """A nonlinear op's result (its operands hold no partial sums): `ulps` roundings of its size."""
    if is_integer(dtype):
        return _finish(ref, err, _abs(ref) + err, dtype, 0 if not np.any(err) else None)
    size = _abs(ref) + err
    total = err + ulps * (unit(dtype) * size + tiny(dtype))
    return _finish(ref, total, size + total, dtype)


def _ints(op: Operation, xs: Sequence[Bounded], keep: Callable[..., np.ndarray] | None) -> Bounded:
    """An integer op: exact in its dtype when its operands are; `keep` bounds what the op does to
    inexact operands (None: any value)."""
    ref = run_numpy(op, [x.ref for x in xs])
    dtype = result_dtype(op)
    if all(not np.any(x.err) for x in xs):
        return Bounded(ref, np.zeros(ref.shape), _abs(ref), dtype, 0)
    err = keep(*xs) if keep is not None else np.full(ref.shape, np.inf)
    return _finish(ref, np.broadcast_to(err, ref.shape), _abs(ref) + err, dtype)


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------


def _binary(op: Operation, a: Bounded, b: Bounded, ctx: BoundContext) -> Bounded:
    dtype = a.dtype
    ea, eb = a.err, b.err
    if isinstance(op, ops.MaximumOp | ops.MinimumOp):
        if is_integer(dtype):
            return _ints(op, (a, b), lambda x, y: np.maximum(x.err, y.err))
        ref = (np.maximum if isinstance(op, ops.MaximumOp) else np.minimum)(a.ref, b.ref)
        grid = None if a.grid is None or b.grid is None else min(a.grid, b.grid)
        return _finish(ref, np.maximum(ea, eb), np.maximum(a.mag, b.mag), dtype, grid)
    if is_integer(dtype):
        if isinstance(op, ops.AddOp | ops.SubOp):
            return _ints(op, (a, b), lambda x, y: x.err + y.err)
        if isinstance(op, ops.MulOp):
            return _ints(op, (a, b), lambda x, y: _abs(x.ref) * y.err + _abs(y.ref) * x.err + x.err * y.err)
        return _ints(op, (a, b), None)
    grid = None if a.grid is None or b.grid is None else min(a.grid, b.grid)
    if isinstance(op, ops.AddOp):
        return _linear(op, a.ref + b.ref, ea + eb, a.mag + b.mag, grid, 1, dtype, ctx)
    if isinstance(op, ops.SubOp):
        return _linear(op, a.ref - b.ref, ea + eb, a.mag + b.mag, grid, 1, dtype, ctx)
    if isinstance(op, ops.MulOp):
        err = _abs(a.ref) * eb + _abs(b.ref) * ea + ea * eb
        grid = None if a.grid is None or b.grid is None else a.grid + b.grid
        return _linear(op, a.ref * b.ref, err, a.mag * b.mag + err, grid, 1, dtype, ctx)
    assert isinstance(op, ops.DivOp)
    ref = a.ref / b.ref
    room = _abs(b.ref) - eb
    exact_zero = (b.ref == 0) & (eb == 0) & (ea == 0)
    with np.errstate(all="ignore"):
        err = np.where(room > 0, (ea + _abs(ref) * eb) / room, np.inf)
        mag = np.where(room > 0, a.mag / room, np.inf)
    err = np.where(exact_zero, 0.0, err)
    with np.errstate(all="ignore"):
        rounding = np.where(exact_zero, 0.0, (ctx.devices + 3) * unit(dtype) * (mag + err) + tiny(dtype))
    return _finish(ref, err + rounding, np.where(exact_zero, 0.0, mag + err), dtype)


def _scalar_of(op: Operation, name: str, dtype: np.dtype) -> float:
    return float(scalar_as(scalar_value(op, name), dtype))


def _add_scalar(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    if is_integer(x.dtype):
        return _ints(op, (x,), lambda y: y.err)
    s = _scalar_of(op, "scalar", x.dtype)
    grid = None if x.grid is None else min(x.grid, array_grid(np.asarray(s)))
    return _linear(op, x.ref + s, x.err, x.mag + abs(s), grid, 1, x.dtype, ctx)


def _mul_scalar(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    if is_integer(x.dtype):
        return _ints(op, (x,), None)
    s = _scalar_of(op, "scalar", x.dtype)
    grid = None if x.grid is None else x.grid + array_grid(np.asarray(s))
    return _linear(op, x.ref * s, abs(s) * x.err, abs(s) * x.mag, grid, 1, x.dtype, ctx)


def _unary(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    if isinstance(op, ops.NegOp):
        if is_integer(x.dtype):
            return _ints(op, (x,), lambda y: y.err)
        return replace(x, ref=-x.ref, alts=tuple(-a for a in x.alts))
    if isinstance(op, ops.ReluOp):
        if is_integer(x.dtype):
            return _ints(op, (x,), lambda y: y.err)
        return _finish(np.maximum(x.ref, 0.0), x.err, _abs(x.ref) + x.err, x.dtype, x.grid)
    if isinstance(op, ops.ExpOp):
        if is_integer(x.dtype):
            ref = run_numpy(op, [x.ref])
            big = _abs(ref) > 2.0**50  # float64 exp rounds there by more than one integer
            keep = np.where(big, _abs(ref) * 2.0**-48, 0.0) if not np.any(x.err) else np.inf
            return _finish(ref, np.broadcast_to(keep, ref.shape), _abs(ref), x.dtype)
        with np.errstate(all="ignore"):
            ref = np.exp(x.ref)
            err = ref * np.expm1(x.err)
        return _nonlinear(ref, err, x.dtype, 4.0)
    assert isinstance(op, ops.GeluOp)
    w = x.ref
    with np.errstate(all="ignore"):
        ref = 0.5 * w * (1.0 + np.tanh(GELU_C * (w + 0.044715 * w * w * w)))
    size = np.abs(w) + x.err
    return _nonlinear(ref, GELU_SLOPE * x.err + TRANSCENDENTAL_ULPS * unit(x.dtype) * size, x.dtype)


def _fmod(op: Operation, a: Bounded, b: Bounded | None, ctx: BoundContext) -> Bounded:
    """C fmod (or the TBE formula) by the operand `b` or the scalar `other`: exact, but it jumps by
    `other` where `a / other` may cross an integer within the operands' bounds."""
    dtype = a.dtype
    if is_integer(dtype):
        return _ints(op, (a,) if b is None else (a, b), None)
    if b is None:
        other, eb = np.asarray(_scalar_of(op, "other", dtype)), np.zeros(())
    else:
        other, eb = b.ref, b.err
    other = np.broadcast_to(other, a.ref.shape)
    eb = np.broadcast_to(eb, a.ref.shape)
    with np.errstate(all="ignore"):
        ref = np.fmod(a.ref, other)
        quotient = np.trunc(_abs(a.ref) / _abs(other))
        core = a.err + np.where(eb > 0, quotient * eb, 0.0)
    b = other
    if ctx.ascendc:  # TBE: x - trunc(x / y) * y with an fp32 quotient and two roundings, then the cast
        core = core + 2.0 ** -22 * (_abs(a.ref) + _abs(b)) + unit(dtype) * np.nan_to_num(_abs(ref)) + tiny(dtype)
        core = np.where(np.isinf(a.ref) | np.isinf(b), np.inf, core)
    with np.errstate(all="ignore"):
        core = np.where((_abs(b) <= eb) & (eb > 0), np.inf, core)
        edge = (core > 0) & ((_abs(ref) <= core) | (_abs(b) - _abs(ref) <= core))
        if ctx.ascendc:  # the rounded quotient may truncate to the next integer
            edge |= (_abs(b) - _abs(ref) <= 2.0**-22 * _abs(a.ref)) | (_abs(ref) <= 2.0**-22 * _abs(a.ref))
    core = np.where(np.isnan(ref) & np.isnan(core), 0.0, core)  # NaN (other = 0) is compared as NaN
    step = np.where(edge, _abs(b), np.nan)
    err = np.where(edge, core + _abs(b), core)
    exact = not np.any(err)
    return _finish(ref, err, _abs(ref) + err, dtype, array_grid(ref) if exact else None,
                   alts=(ref + step, ref - step) if bool(edge.any()) else (),
                   core=np.where(np.isnan(core), np.inf, core) if bool(edge.any()) else None)


def _layer_norm(op: Operation, x: Bounded, g: Bounded, b: Bounded, ctx: BoundContext) -> Bounded:
    assert isinstance(op, ops.LayerNormOp)
    dtype = x.dtype
    u = _compute_unit(dtype)
    n = x.ref.shape[-1]
    eps = float(np.asarray(op.get_epsilon(), np.float32 if dtype in LOW_FLOATS else dtype).astype(F64))
    mean = x.ref.mean(axis=-1, keepdims=True)
    centred = x.ref - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    sigma = np.sqrt(var + eps)
    xhat = centred / sigma
    ref = xhat * g.ref + b.ref
    # The rows' input bound, and the rounding of their mean and variance as if it were input error.
    row = x.err.max(axis=-1, keepdims=True) + 2.0 * (gamma(n + 2, u) * _abs(x.ref).mean(axis=-1, keepdims=True)
                                                      + u * _abs(x.ref).max(axis=-1, keepdims=True))
    with np.errstate(all="ignore"):
        dvar = 4.0 * row * np.sqrt(var) + 4.0 * row * row + 2.0 * gamma(n + 3, u) * (var + eps)
        dsigma = dvar / sigma
        room = sigma - dsigma
        exhat = np.where(room > 0, (2.0 * row + np.abs(xhat) * dsigma) / room, np.inf)
        exhat = exhat + TRANSCENDENTAL_ULPS * u * np.abs(xhat)
        err = np.abs(g.ref) * exhat + np.abs(xhat) * g.err + g.err * exhat + b.err
        err = err + 4.0 * u * (np.abs(xhat * g.ref) + np.abs(b.ref) + err)
    return _nonlinear(ref, err, dtype, 1.0)


def _cast(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    target = result_dtype(op)
    if is_integer(target):
        if is_integer(x.dtype):
            return _ints(op, (x,), lambda y: y.err)
        source = x.ref.astype(x.dtype)
        ref = run_numpy(op, [source])
        if not np.any(x.err) and bool(np.all(source.astype(F64) == x.ref)):
            return _finish(ref, np.zeros(ref.shape), _abs(ref), target, 0)
        with np.errstate(all="ignore"):
            spread = np.maximum(np.abs(np.trunc(x.ref + x.err) - np.trunc(x.ref)),
                                np.abs(np.trunc(x.ref - x.err) - np.trunc(x.ref)))
            spread = spread + np.abs(np.trunc(x.ref) - ref.astype(F64))
        return _finish(ref, spread, _abs(ref) + spread, target)
    ref = x.ref.astype(F64)
    representable = (ref.astype(target).astype(F64) == ref) & (x.err == 0)
    rounding = np.where(representable, 0.0, 2.0 * unit(target) * (_abs(ref) + x.err) + tiny(target))
    grid = x.grid if bool(representable.all()) and not is_integer(x.dtype) else None
    if is_integer(x.dtype) and bool(representable.all()):
        grid = 0
    return _finish(ref, x.err + rounding, x.mag + x.err + rounding, target, grid)


# ---------------------------------------------------------------------------
# Contractions and reductions
# ---------------------------------------------------------------------------


def _matmul(op: Operation, a: Bounded, b: Bounded, ctx: BoundContext) -> Bounded:
    if is_integer(a.dtype):
        return _ints(op, (a, b), None)
    k = a.ref.shape[-2] if has_flag(op, "transpose_a") else a.ref.shape[-1]
    with np.errstate(all="ignore"):
        ref = run_numpy(op, [a.ref, b.ref])
        err = (run_numpy(op, [_abs(a.ref), b.err]) + run_numpy(op, [a.err, _abs(b.ref)])
               + run_numpy(op, [a.err, b.err]))
        mag = run_numpy(op, [a.mag, b.mag]) + err
    grid = None if a.grid is None or b.grid is None else a.grid + b.grid
    return _linear(op, ref, err, mag, grid, k, a.dtype, ctx)


def _reduce(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    axes = int_property(op, "axes")
    keepdims = has_flag(op, "keepdims")
    if isinstance(op, ops.ReduceSumOp):
        if is_integer(x.dtype):
            return _ints(op, (x,), lambda y: np.sum(y.err, axis=axes, keepdims=keepdims))
        terms = math.prod(x.ref.shape[a] for a in axes)
        ref = np.sum(x.ref, axis=axes, keepdims=keepdims)
        err = np.sum(x.err, axis=axes, keepdims=keepdims)
        mag = np.sum(x.mag, axis=axes, keepdims=keepdims)
        return _linear(op, ref, err, mag, x.grid, terms, x.dtype, ctx)
    ref = run_numpy(op, [x.ref])
    err = np.max(x.err, axis=axes, keepdims=keepdims, initial=0.0)
    mag = np.max(x.mag, axis=axes, keepdims=keepdims, initial=0.0)
    if is_integer(x.dtype):
        return _finish(ref, err, mag, x.dtype, 0 if not np.any(err) else None)
    return _finish(ref, err, mag, x.dtype, x.grid)


def _structural(op: Operation, x: Bounded) -> Bounded:
    """Transpose and reshape move elements: apply them to every array."""

    def move(arr: np.ndarray) -> np.ndarray:
        return run_numpy(op, [arr])

    return Bounded(move(x.ref), move(x.err), move(x.mag), x.dtype, x.grid, tuple(move(a) for a in x.alts),
                   None if x.core is None else move(x.core))


# ---------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------


def apply(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    """The result of the compute op `op` on bounded operands."""
    if isinstance(op, ops.TransposeOp | ops.ReshapeOp):
        return _structural(op, xs[0])
    if isinstance(op, ops.AddOp | ops.SubOp | ops.MulOp | ops.DivOp | ops.MaximumOp | ops.MinimumOp):
        return _binary(op, xs[0], xs[1], ctx)
    if isinstance(op, ops.AddScalarOp):
        return _add_scalar(op, xs[0], ctx)
    if isinstance(op, ops.MulScalarOp):
        return _mul_scalar(op, xs[0], ctx)
    if isinstance(op, ops.NegOp | ops.ReluOp | ops.ExpOp | ops.GeluOp):
        return _unary(op, xs[0], ctx)
    if isinstance(op, ops.FmodOp | ops.FmodScalarOp):
        return _fmod(op, xs[0], xs[1] if len(xs) > 1 else None, ctx)
    if isinstance(op, ops.LayerNormOp):
        return _layer_norm(op, xs[0], xs[1], xs[2], ctx)
    if isinstance(op, ops.CastOp):
        return _cast(op, xs[0], ctx)
    if isinstance(op, ops.MatmulOp):
        return _matmul(op, xs[0], xs[1], ctx)
    if isinstance(op, ops.ReduceSumOp | ops.ReduceMaxOp | ops.ReduceMinOp):
        return _reduce(op, xs[0], ctx)
    raise OpError(op, f"{op.name} has no error bound for --check")


def mesh_devices(module: ModuleOp, fn: func.FuncOp) -> int:
    """The device count of the widest placement a value of `fn` lives on."""
    widest = 1
    for op in fn.walk():
        for value in (*op.results, *op.operands):
            if isinstance(value.type, GlobalTensorType):
                widest = max(widest, math.prod(placement_hierarchy(op, value.type.placement_name)))
    return widest


def bounded_reference(module: ModuleOp, entry: str, inputs: Sequence[Bounded], ascendc: bool = False,
                      ) -> list[Bounded]:
    """Run the original global program on bounded values (distribution ops are identities)."""
    fn, block = entry_block(module, entry, len(inputs))
    ctx = BoundContext(mesh_devices(module, fn), ascendc)
    env: dict[SSAValue, Bounded] = dict(zip(block.args, inputs, strict=True))
    with np.errstate(all="ignore"):
        for op in block.ops:
            if isinstance(op, func.ReturnOp):
                return [env[v] for v in op.operands]
            if isinstance(op, ConversionOp):
                env[op.results[0]] = env[op.operands[0]]
                continue
            if impl_of(op) is None:
                raise OpError(op, f"{op.name} is not supported by the reference interpreter")
            try:
                env[op.results[0]] = apply(op, [env[v] for v in op.operands], ctx)
            except OpError:
                raise
            except Exception as error:
                raise OpError(op, f"{describe_op(op)}: reference computation failed: {error}") from error
    raise OpError(fn, f"@{entry} has no func.return")
