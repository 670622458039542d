"""`--check`'s error bounds of the neural-network ops of SPEC §7 (`dialects/sbp_ops_nn.py`), by the
first-order forward analysis of `runtime/error_bounds.py` (which calls these through `NN_BOUNDS`):

* the data-movement ops (concat, slice, broadcast_to, dropout, where, embedding) move each array of a
  `Bounded` (value, bound, magnitude, fmod's other sides) as they move elements: exact stays exact;
* sigmoid, tanh and silu scale their operand's bound by their largest slope (1/4, 1, 1.1) and add a
  few roundings, as exp and gelu do;
* softmax: a perturbation of at most e per element of a row moves log s_i by at most 2e, so s_i by
  s_i·(exp(2e) - 1), plus the rounding of n exponentials, their sum and a division;
* rms_norm: the rows' mean square moves by 2·mean|x|·e + e² + its rounding, the root by the relative
  half of that (bounded by the whole), then the scaling by gamma, as layer_norm's rule;
* cross_entropy: logsumexp moves by at most the row's largest bound, the picked logit by its own,
  plus the rounding of the sum of n exponentials, the log and the subtraction (relative to the terms,
  not the difference, which may cancel), and of the mesh's sum of the vocab-parallel ranks' terms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import Operation

from sbpc.dialects import sbp_ops_nn as nn
from sbpc.runtime.bounded import (
    F64,
    TRANSCENDENTAL_ULPS,
    BoundContext,
    Bounded,
    compute_unit,
    finish,
    gamma,
    nonlinear,
    unit,
)
from sbpc.runtime.op_impls import run_numpy
from sbpc.runtime.ops_numpy import LOW_FLOATS

SILU_SLOPE = 1.1
"""max |d silu / dx| (1.0998... at x ≈ 2.4), rounded up."""


def _moved(fn: Callable[[list[np.ndarray]], np.ndarray], xs: Sequence[Bounded], dtype: np.dtype) -> Bounded:
    """`fn` (an op that only moves elements) applied to every array of the operands; an operand
    without fmod's other sides contributes its value there, its bound as their core."""
    ref = fn([x.ref for x in xs])
    grids = [x.grid for x in xs]
    grid = None if any(g is None for g in grids) else min(grids)  # type: ignore[type-var]
    alts: tuple[np.ndarray, ...] = ()
    core = None
    if any(x.alts for x in xs):
        alts = tuple(fn([x.alts[k] if x.alts else x.ref for x in xs]) for k in range(2))
        core = fn([x.core if x.core is not None else x.err for x in xs])
    return Bounded(ref, fn([x.err for x in xs]).astype(F64), fn([x.mag for x in xs]).astype(F64), dtype, grid,
                   alts, core)


def _structural(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    """slice, broadcast_to, dropout: one operand, moved."""
    return _moved(lambda arrays: run_numpy(op, arrays), xs[:1], xs[0].dtype)


def _concat(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    assert isinstance(op, nn.ConcatOp)
    return _moved(lambda arrays: np.concatenate(arrays, axis=op.get_axis()), xs, xs[0].dtype)


def _indices_exact(index: Bounded) -> bool:
    return not bool(np.any(index.err))


def _where(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    cond, x, y = xs
    if not _indices_exact(cond):
        return _unbounded(op, xs, x.dtype)
    c = cond.ref.astype(bool)
    return _moved(lambda arrays: np.where(c, arrays[0], arrays[1]), [x, y], x.dtype)


def _embedding(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    table, indices = xs
    if not _indices_exact(indices):
        return _unbounded(op, xs, table.dtype)
    return _moved(lambda arrays: run_numpy(op, [arrays[0], indices.ref]), [table], table.dtype)


def _unbounded(op: Operation, xs: Sequence[Bounded], dtype: np.dtype) -> Bounded:
    """Indices or a condition that may differ between plans: any value is accepted."""
    ref = run_numpy(op, [x.ref for x in xs])
    return Bounded(ref, np.full(ref.shape, np.inf), np.full(ref.shape, np.inf), dtype)


def _activation(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    (x,) = xs
    w = x.ref
    with np.errstate(all="ignore"):
        sig = 1.0 / (1.0 + np.exp(-w))
        if isinstance(op, nn.SigmoidOp):
            return nonlinear(sig, 0.25 * x.err, x.dtype)
        if isinstance(op, nn.TanhOp):
            return nonlinear(np.tanh(w), x.err, x.dtype)
        assert isinstance(op, nn.SiluOp)
        size = np.abs(w) + x.err
        return nonlinear(w * sig, SILU_SLOPE * x.err + TRANSCENDENTAL_ULPS * unit(x.dtype) * size, x.dtype)


def _row_max(err: np.ndarray, axis: int) -> np.ndarray:
    return np.max(err, axis=axis, keepdims=True, initial=0.0)


def _softmax(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    assert isinstance(op, nn.SoftmaxOp)
    (x,) = xs
    axis = op.get_axis()
    n = x.ref.shape[axis]
    u = compute_unit(x.dtype)
    with np.errstate(all="ignore"):
        e = np.exp(x.ref - np.max(x.ref, axis=axis, keepdims=True, initial=-np.inf))
        s = e / np.sum(e, axis=axis, keepdims=True)
        moved = np.expm1(2.0 * _row_max(x.err, axis))
        err = s * (moved + gamma(n + 2 * TRANSCENDENTAL_ULPS, u) * (1.0 + moved))
    return nonlinear(s, err, x.dtype, 2.0)


def _rms_norm(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    assert isinstance(op, nn.RmsNormOp)
    x, g = xs
    dtype = x.dtype
    u = compute_unit(dtype)
    n = x.ref.shape[-1]
    eps = float(np.asarray(op.get_epsilon(), np.float32 if dtype in LOW_FLOATS else dtype).astype(F64))
    with np.errstate(all="ignore"):
        ms = (x.ref * x.ref).mean(axis=-1, keepdims=True)
        root = np.sqrt(ms + eps)
        xhat = x.ref / root
        ref = xhat * g.ref
        row = _row_max(x.err, -1)
        dms = 2.0 * np.abs(x.ref).mean(axis=-1, keepdims=True) * row + row * row + 2.0 * gamma(n + 3, u) * ms
        rel = dms / (ms + eps)  # sqrt(a·(1 ± r)) is within a relative r of sqrt(a) for r <= 1/2
        exhat = np.where(rel <= 0.5, (x.err + np.abs(x.ref) * rel / root) / (root * (1.0 - rel)), np.inf)
        exhat = exhat + TRANSCENDENTAL_ULPS * u * np.abs(xhat)
        err = np.abs(g.ref) * exhat + np.abs(xhat) * g.err + g.err * exhat
        err = err + 4.0 * u * (np.abs(ref) + err)
    return nonlinear(ref, err, dtype, 1.0)


def _picked(logits: Bounded, targets: Bounded) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the target is in [0, V), and the target logit and its bound there (0 elsewhere)."""
    w = logits.ref
    t = targets.ref.astype(np.int64)
    valid = (t >= 0) & (t < w.shape[-1])
    if not w.shape[-1]:
        return valid, np.zeros(t.shape), np.zeros(t.shape)
    safe = np.where(valid, t, 0)[..., None]
    picked = np.take_along_axis(w, safe, axis=-1)[..., 0]
    picked_err = np.take_along_axis(logits.err, safe, axis=-1)[..., 0]
    return valid, np.where(valid, picked, 0.0), np.where(valid, picked_err, 0.0)


def _cross_entropy(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    logits, targets = xs
    if not _indices_exact(targets):
        return _unbounded(op, xs, logits.dtype)
    dtype = logits.dtype
    u = compute_unit(dtype)
    w = logits.ref
    n = w.shape[-1]
    valid, picked, picked_err = _picked(logits, targets)
    with np.errstate(all="ignore"):
        m = np.max(w, axis=-1, keepdims=True, initial=-np.inf)
        lse = (m + np.log(np.sum(np.exp(w - m), axis=-1, keepdims=True)))[..., 0]
        ref = np.where(valid, lse - picked, 0.0)
        terms = np.abs(lse) + np.abs(picked)
        err = _row_max(logits.err, -1)[..., 0] + picked_err + gamma(n + 2 * TRANSCENDENTAL_ULPS, u) \
            + _loss_rounding(terms, ref, dtype, ctx)
        err = np.where(valid, err, 0.0)
    return finish(ref, err, np.abs(ref) + err, dtype)


def _loss_rounding(terms: np.ndarray, ref: np.ndarray, dtype: np.dtype, ctx: BoundContext) -> np.ndarray:
    """The rounding of `lse - picked` and, vocab-parallel, of the mesh's sum of the ranks' terms."""
    u = compute_unit(dtype)
    return TRANSCENDENTAL_ULPS * u * terms + (unit(dtype) + gamma(ctx.devices + 3, unit(dtype))) * (terms + np.abs(ref))


def _cross_entropy_from_stats(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    """`m + log(s) - x[t]`: m's bound, s's relative bound (log's slope 1/s), the picked logit's."""
    logits, targets, m, s = xs
    if not _indices_exact(targets):
        return _unbounded(op, xs, logits.dtype)
    valid, picked, picked_err = _picked(logits, targets)
    with np.errstate(all="ignore"):
        lse = (m.ref + np.log(s.ref))[..., 0]
        room = (s.ref - s.err)[..., 0]
        lse_err = m.err[..., 0] + np.where(room > 0, s.err[..., 0] / room, np.inf)
        ref = np.where(valid, lse - picked, 0.0)
        terms = np.abs(lse) + np.abs(picked)
        err = np.where(valid, lse_err + picked_err + _loss_rounding(terms, ref, logits.dtype, ctx), 0.0)
    return finish(ref, err, np.abs(ref) + err, logits.dtype)


NN_BOUNDS: dict[type[Operation], Callable[[Operation, list[Bounded], BoundContext], Bounded]] = {
    nn.SigmoidOp: _activation,
    nn.TanhOp: _activation,
    nn.SiluOp: _activation,
    nn.DropoutOp: _structural,
    nn.SliceOp: _structural,
    nn.BroadcastToOp: _structural,
    nn.ConcatOp: _concat,
    nn.WhereOp: _where,
    nn.EmbeddingOp: _embedding,
    nn.SoftmaxOp: _softmax,
    nn.RmsNormOp: _rms_norm,
    nn.CrossEntropyOp: _cross_entropy,
    nn.CrossEntropyFromStatsOp: _cross_entropy_from_stats,
}
"""op class -> its bound rule (operands' `Bounded`s -> the result's)."""
