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
from collections.abc import Mapping, Sequence
from dataclasses import replace

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
from sbpc.runtime.bounded import (
    F64,
    GELU_SLOPE,
    TRANSCENDENTAL_ULPS,
    BoundContext,
    Bounded,
    absolute,
    array_grid,
    compute_unit,
    finish,
    gamma,
    ints,
    linear,
    nonlinear,
    tiny,
    unit,
)
from sbpc.runtime.error_bounds_grad import GRAD_BOUNDS
from sbpc.runtime.error_bounds_nn import NN_BOUNDS
from sbpc.runtime.op_impls import GELU_C, impl_of, run_numpy
from sbpc.runtime.ops_numpy import LOW_FLOATS, has_flag, int_property, is_integer, result_dtype, scalar_as, scalar_value
from sbpc.runtime.simulator import entry_block, placement_hierarchy

# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------


def _binary(op: Operation, a: Bounded, b: Bounded, ctx: BoundContext) -> Bounded:
    dtype = a.dtype
    ea, eb = a.err, b.err
    if isinstance(op, ops.MaximumOp | ops.MinimumOp):
        if is_integer(dtype):
            return ints(op, (a, b), lambda x, y: np.maximum(x.err, y.err))
        ref = (np.maximum if isinstance(op, ops.MaximumOp) else np.minimum)(a.ref, b.ref)
        grid = None if a.grid is None or b.grid is None else min(a.grid, b.grid)
        return finish(ref, np.maximum(ea, eb), np.maximum(a.mag, b.mag), dtype, grid)
    if is_integer(dtype):
        if isinstance(op, ops.AddOp | ops.SubOp):
            return ints(op, (a, b), lambda x, y: x.err + y.err)
        if isinstance(op, ops.MulOp):
            return ints(op, (a, b), lambda x, y: absolute(x.ref) * y.err + absolute(y.ref) * x.err + x.err * y.err)
        return ints(op, (a, b), None)
    grid = None if a.grid is None or b.grid is None else min(a.grid, b.grid)
    if isinstance(op, ops.AddOp):
        return _certain_infinities(linear(op, a.ref + b.ref, ea + eb, a.mag + b.mag, grid, 1, dtype, ctx), a, b)
    if isinstance(op, ops.SubOp):
        return _certain_infinities(linear(op, a.ref - b.ref, ea + eb, a.mag + b.mag, grid, 1, dtype, ctx), a, b)
    if isinstance(op, ops.MulOp):
        err = absolute(a.ref) * eb + absolute(b.ref) * ea + ea * eb
        grid = None if a.grid is None or b.grid is None else a.grid + b.grid
        return linear(op, a.ref * b.ref, err, a.mag * b.mag + err, grid, 1, dtype, ctx)
    assert isinstance(op, ops.DivOp)
    ref = a.ref / b.ref
    room = absolute(b.ref) - eb
    exact_zero = (b.ref == 0) & (eb == 0) & (ea == 0)
    with np.errstate(all="ignore"):
        err = np.where(room > 0, (ea + absolute(ref) * eb) / room, np.inf)
        mag = np.where(room > 0, a.mag / room, np.inf)
    err = np.where(exact_zero, 0.0, err)
    with np.errstate(all="ignore"):
        rounding = np.where(exact_zero, 0.0, (ctx.devices + 3) * unit(dtype) * (mag + err) + tiny(dtype))
    return finish(ref, err + rounding, np.where(exact_zero, 0.0, mag + err), dtype)


def _certain_infinities(result: Bounded, a: Bounded, b: Bounded) -> Bounded:
    """x ± an exact infinity (a causal mask's -inf) is that infinity in every plan while x stays finite:
    exact there, not the infinite rounding of an infinite magnitude (which would make every bound the
    softmax after it, and the whole backward pass, infinite)."""
    limit = float(ml_dtypes.finfo(result.dtype).max)

    def exact_infinity(x: Bounded) -> np.ndarray:
        return np.isinf(x.ref) & (x.err == 0)

    def finite(x: Bounded) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.isfinite(x.ref) & (absolute(x.ref) + x.err < limit)

    certain = (exact_infinity(a) & finite(b)) | (exact_infinity(b) & finite(a))
    if not bool(np.any(certain)):
        return result
    return replace(result, err=np.where(certain, 0.0, result.err))


def _scalar_of(op: Operation, name: str, dtype: np.dtype) -> float:
    return float(scalar_as(scalar_value(op, name), dtype))


def _add_scalar(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    if is_integer(x.dtype):
        return ints(op, (x,), lambda y: y.err)
    s = _scalar_of(op, "scalar", x.dtype)
    grid = None if x.grid is None else min(x.grid, array_grid(np.asarray(s)))
    return linear(op, x.ref + s, x.err, x.mag + abs(s), grid, 1, x.dtype, ctx)


def _mul_scalar(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    if is_integer(x.dtype):
        return ints(op, (x,), None)
    s = _scalar_of(op, "scalar", x.dtype)
    grid = None if x.grid is None else x.grid + array_grid(np.asarray(s))
    return linear(op, x.ref * s, abs(s) * x.err, abs(s) * x.mag, grid, 1, x.dtype, ctx)


def _unary(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    if isinstance(op, ops.NegOp):
        if is_integer(x.dtype):
            return ints(op, (x,), lambda y: y.err)
        return replace(x, ref=-x.ref, alts=tuple(-a for a in x.alts))
    if isinstance(op, ops.ReluOp):
        if is_integer(x.dtype):
            return ints(op, (x,), lambda y: y.err)
        return finish(np.maximum(x.ref, 0.0), x.err, absolute(x.ref) + x.err, x.dtype, x.grid)
    if isinstance(op, ops.ExpOp):
        if is_integer(x.dtype):
            ref = run_numpy(op, [x.ref])
            big = absolute(ref) > 2.0**50  # float64 exp rounds there by more than one integer
            keep = np.where(big, absolute(ref) * 2.0**-48, 0.0) if not np.any(x.err) else np.inf
            return finish(ref, np.broadcast_to(keep, ref.shape), absolute(ref), x.dtype)
        with np.errstate(all="ignore"):
            ref = np.exp(x.ref)
            err = ref * np.expm1(x.err)
        return nonlinear(ref, err, x.dtype, 4.0)
    assert isinstance(op, ops.GeluOp)
    w = x.ref
    with np.errstate(all="ignore"):
        ref = 0.5 * w * (1.0 + np.tanh(GELU_C * (w + 0.044715 * w * w * w)))
    size = np.abs(w) + x.err
    return nonlinear(ref, GELU_SLOPE * x.err + TRANSCENDENTAL_ULPS * unit(x.dtype) * size, x.dtype)


def _fmod(op: Operation, a: Bounded, b: Bounded | None, ctx: BoundContext) -> Bounded:
    """C fmod (or the TBE formula) by the operand `b` or the scalar `other`: exact, but it jumps by
    `other` where `a / other` may cross an integer within the operands' bounds."""
    dtype = a.dtype
    if is_integer(dtype):
        return ints(op, (a,) if b is None else (a, b), None)
    if b is None:
        other, eb = np.asarray(_scalar_of(op, "other", dtype)), np.zeros(())
    else:
        other, eb = b.ref, b.err
    other = np.broadcast_to(other, a.ref.shape)
    eb = np.broadcast_to(eb, a.ref.shape)
    with np.errstate(all="ignore"):
        ref = np.fmod(a.ref, other)
        quotient = np.trunc(absolute(a.ref) / absolute(other))
        core = a.err + np.where(eb > 0, quotient * eb, 0.0)
    b = other
    if ctx.ascendc:  # TBE: x - trunc(x / y) * y with an fp32 quotient and two roundings, then the cast
        core = (core + 2.0 ** -22 * (absolute(a.ref) + absolute(b)) + unit(dtype) * np.nan_to_num(absolute(ref))
                + tiny(dtype))
        core = np.where(np.isinf(a.ref) | np.isinf(b), np.inf, core)
    with np.errstate(all="ignore"):
        core = np.where((absolute(b) <= eb) & (eb > 0), np.inf, core)
        edge = (core > 0) & ((absolute(ref) <= core) | (absolute(b) - absolute(ref) <= core))
        if ctx.ascendc:  # the rounded quotient may truncate to the next integer
            edge |= ((absolute(b) - absolute(ref) <= 2.0**-22 * absolute(a.ref))
                     | (absolute(ref) <= 2.0**-22 * absolute(a.ref)))
    core = np.where(np.isnan(ref) & np.isnan(core), 0.0, core)  # NaN (other = 0) is compared as NaN
    step = np.where(edge, absolute(b), np.nan)
    err = np.where(edge, core + absolute(b), core)
    exact = not np.any(err)
    return finish(ref, err, absolute(ref) + err, dtype, array_grid(ref) if exact else None,
                   alts=(ref + step, ref - step) if bool(edge.any()) else (),
                   core=np.where(np.isnan(core), np.inf, core) if bool(edge.any()) else None)


def _layer_norm(op: Operation, x: Bounded, g: Bounded, b: Bounded, ctx: BoundContext) -> Bounded:
    assert isinstance(op, ops.LayerNormOp)
    dtype = x.dtype
    u = compute_unit(dtype)
    n = x.ref.shape[-1]
    eps = float(np.asarray(op.get_epsilon(), np.float32 if dtype in LOW_FLOATS else dtype).astype(F64))
    mean = x.ref.mean(axis=-1, keepdims=True)
    centred = x.ref - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    sigma = np.sqrt(var + eps)
    xhat = centred / sigma
    ref = xhat * g.ref + b.ref
    # The rows' input bound, and the rounding of their mean and variance as if it were input error.
    row = x.err.max(axis=-1, keepdims=True) + 2.0 * (gamma(n + 2, u) * absolute(x.ref).mean(axis=-1, keepdims=True)
                                                      + u * absolute(x.ref).max(axis=-1, keepdims=True))
    with np.errstate(all="ignore"):
        dvar = 4.0 * row * np.sqrt(var) + 4.0 * row * row + 2.0 * gamma(n + 3, u) * (var + eps)
        dsigma = dvar / sigma
        room = sigma - dsigma
        exhat = np.where(room > 0, (2.0 * row + np.abs(xhat) * dsigma) / room, np.inf)
        exhat = exhat + TRANSCENDENTAL_ULPS * u * np.abs(xhat)
        err = np.abs(g.ref) * exhat + np.abs(xhat) * g.err + g.err * exhat + b.err
        err = err + 4.0 * u * (np.abs(xhat * g.ref) + np.abs(b.ref) + err)
    return nonlinear(ref, err, dtype, 1.0)


def _cast(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    target = result_dtype(op)
    if target == np.bool_:  # nonzero is true: exact, but any value where x may be 0 within its bound
        ref = run_numpy(op, [x.ref if is_integer(x.dtype) or x.dtype == np.bool_ else x.ref.astype(x.dtype)])
        flips = (x.err > 0) & (absolute(x.ref) <= x.err)
        return finish(ref, np.where(flips, np.inf, 0.0), ref.astype(F64), target, None if flips.any() else 0)
    if is_integer(target):
        if is_integer(x.dtype):
            return ints(op, (x,), lambda y: y.err)
        source = x.ref.astype(x.dtype)
        ref = run_numpy(op, [source])
        if not np.any(x.err) and bool(np.all(source.astype(F64) == x.ref)):
            return finish(ref, np.zeros(ref.shape), absolute(ref), target, 0)
        with np.errstate(all="ignore"):
            spread = np.maximum(np.abs(np.trunc(x.ref + x.err) - np.trunc(x.ref)),
                                np.abs(np.trunc(x.ref - x.err) - np.trunc(x.ref)))
            spread = spread + np.abs(np.trunc(x.ref) - ref.astype(F64))
        return finish(ref, spread, absolute(ref) + spread, target)
    ref = x.ref.astype(F64)
    representable = (ref.astype(target).astype(F64) == ref) & (x.err == 0)
    rounding = np.where(representable, 0.0, 2.0 * unit(target) * (absolute(ref) + x.err) + tiny(target))
    grid = x.grid if bool(representable.all()) and not is_integer(x.dtype) else None
    if is_integer(x.dtype) and bool(representable.all()):
        grid = 0
    return finish(ref, x.err + rounding, x.mag + x.err + rounding, target, grid)


# ---------------------------------------------------------------------------
# Contractions and reductions
# ---------------------------------------------------------------------------


def _matmul(op: Operation, a: Bounded, b: Bounded, ctx: BoundContext) -> Bounded:
    if is_integer(a.dtype):
        return ints(op, (a, b), None)
    k = a.ref.shape[-2] if has_flag(op, "transpose_a") else a.ref.shape[-1]
    with np.errstate(all="ignore"):
        ref = run_numpy(op, [a.ref, b.ref])
        err = (run_numpy(op, [absolute(a.ref), b.err]) + run_numpy(op, [a.err, absolute(b.ref)])
               + run_numpy(op, [a.err, b.err]))
        mag = run_numpy(op, [a.mag, b.mag]) + err
    grid = None if a.grid is None or b.grid is None else a.grid + b.grid
    return linear(op, ref, err, mag, grid, k, a.dtype, ctx)


def _reduce(op: Operation, x: Bounded, ctx: BoundContext) -> Bounded:
    axes = int_property(op, "axes")
    keepdims = has_flag(op, "keepdims")
    if isinstance(op, ops.ReduceSumOp):
        if is_integer(x.dtype):
            return ints(op, (x,), lambda y: np.sum(y.err, axis=axes, keepdims=keepdims))
        terms = math.prod(x.ref.shape[a] for a in axes)
        ref = np.sum(x.ref, axis=axes, keepdims=keepdims)
        err = np.sum(x.err, axis=axes, keepdims=keepdims)
        mag = np.sum(x.mag, axis=axes, keepdims=keepdims)
        return linear(op, ref, err, mag, x.grid, terms, x.dtype, ctx)
    ref = run_numpy(op, [x.ref])
    err = np.max(x.err, axis=axes, keepdims=keepdims, initial=0.0)
    mag = np.max(x.mag, axis=axes, keepdims=keepdims, initial=0.0)
    if is_integer(x.dtype):
        return finish(ref, err, mag, x.dtype, 0 if not np.any(err) else None)
    return finish(ref, err, mag, x.dtype, x.grid)


def _structural(op: Operation, x: Bounded) -> Bounded:
    """Transpose and reshape move elements: apply them to every array."""

    def move(arr: np.ndarray) -> np.ndarray:
        return run_numpy(op, [arr])

    return Bounded(move(x.ref), move(x.err), move(x.mag), x.dtype, x.grid, tuple(move(a) for a in x.alts),
                   None if x.core is None else move(x.core), None if x.floor is None else move(x.floor))


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
    rule = NN_BOUNDS.get(type(op)) or GRAD_BOUNDS.get(type(op))
    if rule is not None:
        return rule(op, xs, ctx)
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
                      single: Mapping[SSAValue, np.ndarray] | None = None) -> list[Bounded]:
    """Run the original global program on bounded values (distribution ops are identities); `single`:
    the program's values on one device (`simulator.reference`), for the statistical floors of AdamW."""
    fn, block = entry_block(module, entry, len(inputs))
    env: dict[SSAValue, Bounded] = dict(zip(block.args, inputs, strict=True))
    ctx = BoundContext(mesh_devices(module, fn), ascendc, single=single, env=env)
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
