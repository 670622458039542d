"""`--check`'s error bounds of the gradients of the SPEC §7 ops (`dialects/sbp_ops_grad_nn.py`), by the
first-order forward analysis of `runtime/error_bounds.py` (through `error_bounds_grad.GRAD_BOUNDS`):

* slice_grad moves elements (`error_bounds_grad`'s rule of reduce_sum_grad, every array moved alike);
* maximum_grad / minimum_grad select dy, dy/2 or 0: exact where the comparison is certain; where x and
  other lie within their bounds of each other any of the three may come out (|dy| plus dy's bound);
* embedding_grad is linear in dy (a sum of rows): the rows' bounds scatter-added, plus the rounding of
  the longest sum; indices that may differ between plans accept any value;
* cross_entropy_grad: `p = exp(x - m)/s` moves by a relative `expm1(e_x + e_m)` and `e_s/(s - e_s)`, the
  result `dloss·(p - onehot)` by `|dloss|·e_p + e_dloss·(|p - onehot| + e_p)`, plus a few roundings;
* rms_norm_grad / rms_norm_grad_gamma: `error_bounds_grad`'s rules of layer_norm's gradients.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from sbpc.dialects import sbp_ops_grad_nn as gn
from sbpc.runtime.bounded import (
    F64,
    TRANSCENDENTAL_ULPS,
    BoundContext,
    Bounded,
    absolute,
    compute_unit,
    finish,
    gamma,
    linear,
)
from sbpc.runtime.op_impls import run_numpy


def _extremum_grad(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    dy, x, other = xs
    share = run_numpy(op, [np.ones(dy.ref.shape, F64), x.ref.astype(F64), other.ref.astype(F64)])  # 1, 1/2, 0
    ref = dy.ref * share
    near = (x.err + other.err > 0) & (np.abs(x.ref - other.ref) <= x.err + other.err)
    err = np.where(near, absolute(dy.ref) + dy.err, share * dy.err)
    mag = np.where(near, dy.mag + 2.0 * err, share * dy.mag)
    return finish(ref, err, mag, dy.dtype, None if bool(near.any()) else dy.grid)


def _embedding_grad(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    dy, indices = xs
    if np.any(indices.err):
        ref = run_numpy(op, [dy.ref.astype(F64), indices.ref])
        return Bounded(ref, np.full(ref.shape, np.inf), np.full(ref.shape, np.inf), dy.dtype)
    ref = run_numpy(op, [dy.ref.astype(F64), indices.ref])
    err = run_numpy(op, [dy.err, indices.ref])
    mag = run_numpy(op, [dy.mag, indices.ref])
    idx = indices.ref.astype(np.int64).reshape(-1)
    terms = float(np.bincount(idx[(idx >= 0)], minlength=1).max(initial=1)) if idx.size else 1.0
    return linear(op, ref, err, mag, None, terms, dy.dtype, ctx)


def _cross_entropy_grad(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    logits, targets, dloss, m, s = xs
    w, ms = logits.ref.astype(F64), (m.ref.astype(F64), s.ref.astype(F64))
    ref = run_numpy(op, [w, targets.ref, dloss.ref.astype(F64), *ms])
    if np.any(targets.err):
        return Bounded(ref, np.full(ref.shape, np.inf), np.full(ref.shape, np.inf), logits.dtype)
    diff = np.abs(run_numpy(op, [w, targets.ref, np.ones(dloss.ref.shape, F64), *ms]))  # |p - onehot|, 0 off range
    u = compute_unit(logits.dtype)
    d = np.abs(dloss.ref[..., None])
    with np.errstate(all="ignore"):
        p = np.exp(w - ms[0]) / ms[1]
        room = s.ref - s.err
        rel = np.where(room > 0, (1.0 + np.expm1(logits.err + m.err)) * s.ref / room - 1.0, np.inf)
        p_err = np.where(diff > 0, p * (rel + 2.0 * TRANSCENDENTAL_ULPS * u * (1.0 + rel)), 0.0)
        err = d * p_err + dloss.err[..., None] * (diff + p_err)
        err = err + 2.0 * gamma(3, u) * (np.abs(ref) + err)
    return finish(ref, np.broadcast_to(err, ref.shape), np.abs(ref) + err, logits.dtype)


NN_GRAD_BOUNDS: dict[type[Operation], Callable[[Operation, list[Bounded], BoundContext], Bounded]] = {
    gn.MaximumGradOp: _extremum_grad,
    gn.MinimumGradOp: _extremum_grad,
    gn.EmbeddingGradOp: _embedding_grad,
    gn.CrossEntropyGradOp: _cross_entropy_grad,
}
"""Gradient op class -> its bound rule (merged into `error_bounds_grad.GRAD_BOUNDS`)."""
