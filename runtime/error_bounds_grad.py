"""`--check`'s error bounds of the backward and optimizer ops of SPEC §8 (`dialects/sbp_ops_grad.py`), by
the first-order forward analysis of `runtime/error_bounds.py` (which calls these through `GRAD_BOUNDS`):

* ones_like is exact; reduce_sum_grad (and slice_grad) moves every array of a `Bounded` as it moves elements;
* reduce_extremum_grad: exact where each group's ties are certain; where an element lies within the
  bounds of the extremum, any candidate of that group may take any share of dy;
* relu_grad is dy or 0: exact where x's sign is certain; where x lies within its bound of 0 either
  may come out, so the bound there is |dy| plus dy's bound;
* gelu_grad scales dy by gelu'(x), which moves by at most max|gelu''| (< 1) times x's bound;
* layer_norm_grad / layer_norm_grad_gamma: each row's σ moves by at most twice the row's largest input
  bound (centring at most doubles it, the rms is 1-Lipschitz), x̂ and 1/σ by that relative amount, and
  the result is linear in dy with a row operator of norm ≤ (2 + |x̂|)·max|gamma|/σ; rms_norm_grad /
  rms_norm_grad_gamma alike without the centring (the rms moves by the row's largest bound, the norm
  ≤ (1 + |x̂|)·max|gamma|·r);
* sgd_update is linear: `|1 - lr·wd|·err(w) + lr·err(g)` plus its roundings;
* AdamW's moments and update (and their conditioning where a gradient cancels): `runtime/adam_bounds.py`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from sbpc.dialects import sbp_ops_grad as g
from sbpc.dialects import sbp_ops_grad_nn as gn
from sbpc.runtime.adam_bounds import adamw_update, moment
from sbpc.runtime.bounded import (
    F64,
    TRANSCENDENTAL_ULPS,
    BoundContext,
    Bounded,
    absolute,
    compute_unit,
    finish,
    linear,
    unit,
)
from sbpc.runtime.error_bounds_grad_nn import NN_GRAD_BOUNDS
from sbpc.runtime.op_impls import run_numpy
from sbpc.runtime.ops_grad import gelu_slope, layer_norm_parts

GELU_CURVATURE = 1.0
"""max |d² gelu_tanh / dx²| (0.80 at x = 0), rounded up."""


def _ones_like(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    (x,) = xs
    ones = np.ones(x.ref.shape, F64)
    return Bounded(ones, np.zeros(x.ref.shape), ones, x.dtype, 0)


def _expand(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    (dy,) = xs

    def move(arr: np.ndarray) -> np.ndarray:
        return run_numpy(op, [arr])

    return Bounded(move(dy.ref), move(dy.err), move(dy.mag), dy.dtype, dy.grid, tuple(move(a) for a in dy.alts),
                   None if dy.core is None else move(dy.core))


def _extremum_grad(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    """dy spread over x's elements equal to y: exact where every group's ties are certain; in a group
    where an element lies within the bounds of y, any of its candidates may take any share of dy."""
    assert isinstance(op, g.ReduceExtremumGradOp)
    dy, x, y = xs
    axes = op.get_axes()
    keep = _keep_shape(op, x.ref.shape)
    ref = run_numpy(op, [dy.ref.astype(F64), x.ref.astype(F64), y.ref.astype(F64)])
    yk, y_err = y.ref.reshape(keep), y.err.reshape(keep)
    with np.errstate(all="ignore"):
        tie = x.ref == yk
        count = np.maximum(tie.sum(axis=axes, keepdims=True), 1)
        near = np.abs(x.ref - yk) <= x.err + y_err
        group = np.any(near & ((x.err > 0) | (y_err > 0)), axis=axes, keepdims=True)
        err = np.where(group & near, (absolute(dy.ref) + dy.err).reshape(keep),
                       np.where(tie, dy.err.reshape(keep) / count, 0.0))
        err = err + np.where(tie & (count > 1), 2.0 * unit(dy.dtype) * np.abs(ref), 0.0)  # dy / count rounds
        mag = np.where(near, (dy.mag + dy.err).reshape(keep), 0.0) + err
    exact = not bool(group.any()) and int(count.max(initial=1)) == 1
    return finish(ref, np.broadcast_to(err, ref.shape), np.broadcast_to(mag, ref.shape), dy.dtype,
                  dy.grid if exact else None)


def _keep_shape(op: g.ReduceExtremumGradOp, shape: tuple[int, ...]) -> tuple[int, ...]:
    axes = op.get_axes()
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _relu_grad(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    dy, x = xs
    on = x.ref > 0
    either = (x.err > 0) & (np.abs(x.ref) <= x.err)
    ref = np.where(on, dy.ref, 0.0)
    err = np.where(either, absolute(dy.ref) + dy.err, np.where(on, dy.err, 0.0))
    mag = np.where(on | either, dy.mag, 0.0) + np.where(either, err, 0.0)
    return finish(ref, err, mag, dy.dtype, None if bool(either.any()) else dy.grid)


def _gelu_grad(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    dy, x = xs
    u = compute_unit(dy.dtype)
    with np.errstate(all="ignore"):
        slope = gelu_slope(x.ref.astype(F64))
        slope_err = GELU_CURVATURE * x.err + TRANSCENDENTAL_ULPS * u * (np.abs(slope) + 1.0)
        err = np.abs(slope) * dy.err + (absolute(dy.ref) + dy.err) * slope_err
        mag = (np.abs(slope) + slope_err) * dy.mag + err
    return linear(op, dy.ref * slope, err, mag, None, TRANSCENDENTAL_ULPS, dy.dtype, ctx)


def _rows(op: Operation, x: Bounded) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """x̂, the row scale (1/σ, or 1/rms for rms_norm's gradients), the relative move of both per row (inf
    where the row's bound may swamp the scale) and the constant of the row operator's norm (2 + |x̂|
    with centring, 1 + |x̂| without)."""
    assert isinstance(op, g.NormGrad)
    xr = x.ref.astype(F64)
    with np.errstate(all="ignore"):
        if isinstance(op, gn.RmsNormGradOp | gn.RmsNormGradGammaOp):  # the rms is 1-Lipschitz
            scale = 1.0 / np.sqrt((xr * xr).mean(axis=-1, keepdims=True) + op.get_epsilon())
            xhat, k, centre = xr * scale, x.err.max(axis=-1, keepdims=True, initial=0.0) * scale, 1.0
        else:  # centring at most doubles the bound
            xhat, scale = layer_norm_parts(xr, op.get_epsilon())
            k, centre = 2.0 * x.err.max(axis=-1, keepdims=True, initial=0.0) * scale, 2.0
        rel = np.where(k < 0.25, 4.0 * k, np.inf)
    return xhat, scale, rel, centre


def _layer_norm_grad(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    """layer_norm's and rms_norm's input gradient (`_rows` says which)."""
    dy, x, gamma = xs
    n = x.ref.shape[-1]
    u = compute_unit(dy.dtype)
    xhat, rstd, rel, centre = _rows(op, x)
    ref = run_numpy(op, [dy.ref.astype(F64), x.ref.astype(F64), gamma.ref.astype(F64)])
    big_g = float(np.max(absolute(gamma.ref) + gamma.err, initial=0.0))
    with np.errstate(all="ignore"):
        row = lambda a: a.max(axis=-1, keepdims=True, initial=0.0)  # noqa: E731
        size = big_g * row(dy.mag + dy.err) + row(dy.mag) * float(np.max(gamma.err, initial=0.0))
        spread = rstd * (centre + np.abs(xhat))
        from_dy = spread * (big_g * row(dy.err) + row(dy.mag) * float(np.max(gamma.err, initial=0.0)))
        from_x = 2.0 * rel * (np.abs(ref) + spread * size) * (1.0 + row(np.abs(xhat)))
        rounding = 4.0 * (n + TRANSCENDENTAL_ULPS) * u * spread * size
        err = from_dy + from_x + rounding
    return finish(ref, err, spread * size + err, dy.dtype)


def _layer_norm_grad_gamma(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    """layer_norm's and rms_norm's gamma gradient (`_rows` says which)."""
    dy, x = xs
    n = x.ref.shape[-1]
    xhat, _, rel, _ = _rows(op, x)
    with np.errstate(all="ignore"):
        dxhat = rel * (1.0 + np.abs(xhat)) + TRANSCENDENTAL_ULPS * compute_unit(dy.dtype) * (1.0 + np.abs(xhat))

        def rows(a: np.ndarray) -> np.ndarray:
            return np.broadcast_to(a, x.ref.shape).reshape(-1, n).sum(axis=0)

        ref = rows(dy.ref * xhat)
        err = rows(dy.err * np.abs(xhat) + (absolute(dy.ref) + dy.err) * dxhat)
        mag = rows(dy.mag * (np.abs(xhat) + dxhat)) + err
    terms = x.ref.size // max(n, 1)
    return linear(op, ref, err, mag, None, terms + TRANSCENDENTAL_ULPS, dy.dtype, ctx)


def _sgd_update(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    assert isinstance(op, g.SgdUpdateOp)
    w, grad = xs
    lr, wd = op.hyper()
    ref = w.ref - lr * (grad.ref + wd * w.ref)
    err = abs(1.0 - lr * wd) * w.err + lr * grad.err
    mag = w.mag + lr * (grad.mag + wd * w.mag)
    return linear(op, ref, err, mag, None, 3, w.dtype, ctx)


GRAD_BOUNDS: dict[type[Operation], Callable[[Operation, list[Bounded], BoundContext], Bounded]] = {
    g.OnesLikeOp: _ones_like,
    g.ReduceSumGradOp: _expand,
    gn.SliceGradOp: _expand,
    g.ReduceExtremumGradOp: _extremum_grad,
    g.ReluGradOp: _relu_grad,
    g.GeluGradOp: _gelu_grad,
    g.LayerNormGradOp: _layer_norm_grad,
    g.LayerNormGradGammaOp: _layer_norm_grad_gamma,
    gn.RmsNormGradOp: _layer_norm_grad,
    gn.RmsNormGradGammaOp: _layer_norm_grad_gamma,
    g.SgdUpdateOp: _sgd_update,
    g.AdamMoment1Op: moment,
    g.AdamMoment2Op: moment,
    g.AdamwUpdateOp: adamw_update,
    **NN_GRAD_BOUNDS,
}
"""Backward/optimizer op class -> its bound rule (read by `error_bounds.apply`; the SPEC §7 ops' gradients
from `runtime/error_bounds_grad_nn.py`)."""
