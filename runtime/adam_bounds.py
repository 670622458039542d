"""`--check`'s bounds of AdamW's ops (SPEC §8, `dialects/sbp_ops_grad.py`): `sbp.adam_moment1`,
`sbp.adam_moment2` and `sbp.adamw_update`, by the forward analysis of `runtime/error_bounds.py` (which
reads them through `error_bounds_grad.GRAD_BOUNDS`).

The update is `w·decay - step_size·q` with q = m'/(√v'/√bc2 + eps) (bc1, bc2 the bias corrections at
`step`, step_size = lr/bc1). Where a gradient g cancels to rounding, m' and v' are rounding-sized and
q may take any value in about [-1, 1]: a rounding-level change of g moves the update by O(lr).

* **Moments** are linear in the state: g's bound e gives (1-β1)·e on m' and (1-β2)·(2|g|e + e²) on
  v', plus their roundings.
* **The quotient over its operands' box.** For m' within e_m of m and v' within e_v of v, q is
  increasing in m' and, in v', decreasing where m' ≥ 0 and increasing where m' < 0, so its range is
  at the box's corners: exact for any size of e, with no first-order step (the rule this replaced let
  √v fall by at most e/(2√v), which √v - √(v - e) exceeds when e is near v).
* **Adam's cap.** Whatever gradient g' a plan computed, |q'| ≤ Q. With a = β1|m_s|, b = 1 - β1,
  c = β2·v_s, d = 1 - β2 (m_s, v_s the state the step starts from), Cauchy–Schwarz gives
  (a + b|g'|)² ≤ (a²/c + b²/d)·(c + d·g'²), that is |m'| ≤ √(a²/c + b²/d)·√v', so
  Q = √bc2·√(a²/c + b²/d), with a few roundings added. From a zero state (c = a = 0) Q = √bc2·b/√d,
  which at step 1 is 1 - β1 = bc1: |step_size·q'| ≤ lr. The cap needs m' and v' computed from the
  same rounded g' — both moment ops read one gradient value, and materialize-boxing boxes a value once
  per target SBP; a plan adding ≥ 3 partial pieces of it in two different orders for the two moments
  could exceed Q by that sum's rounding over eps — and it needs v_s > 0 wherever m_s ≠ 0 (a state
  Adam reaches; `train_step.state_inputs`). Then |q' - q| ≤ Q + |q|: q's bound is the smaller of that
  and the box's.
* **Floors.** Those bounds are worst cases, and `check.judge` tightens a bound to the single-device
  run's statistics (`check.single_device_tolerance`), which see a tensor's rms error, not the few
  elements of q that are ill-conditioned. So each op also sets `Bounded.floor`, the same analysis run
  from the gradient's *statistical* tolerance (what g would be judged with, were it a result) instead
  of its bound: the moments' floors carry g's tolerance through the same formulas, and the update may
  lie wherever m' and v' within their floors take it (capped as above). Without the single-device
  values (`BoundContext.single` None) there is no floor.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from sbpc.dialects import sbp_ops_grad as g
from sbpc.dialects.sbp_ops import ConversionOp
from sbpc.runtime.bounded import TRANSCENDENTAL_ULPS, BoundContext, Bounded, absolute, finish, linear, unit
from sbpc.runtime.check import single_device_tolerance
from sbpc.runtime.ops_grad import adamw_factors

CAP_ROUNDINGS = 4.0
"""Roundings (of `unit(dtype)`) each side of Adam's cap allows: the moments' two or three, the quotient's."""


def _source(value: SSAValue) -> SSAValue:
    """`value` before the conversion ops (which only say how it is distributed) that carry it."""
    while isinstance(value.owner, ConversionOp):
        value = value.owner.operands[0]
    return value


def statistical(value: SSAValue, x: Bounded, ctx: BoundContext) -> np.ndarray | None:
    """What `check.judge` would hold `x` (the value `value`) to, were it a result: its bound tightened to
    the single-device statistics, never below its floor; None without the single-device run."""
    if not np.any(x.err):
        return np.zeros(x.ref.shape)
    single = None if ctx.single is None else ctx.single.get(value)
    if single is None or single.shape != x.ref.shape:
        return None
    found = single_device_tolerance(single, x)
    if x.floor is not None:
        found = np.maximum(found, x.floor)
    return np.fmin(x.err, found)


def _term_spread(first: bool, grad: np.ndarray, e_grad: np.ndarray) -> np.ndarray:
    """How far the moment's term (g, or g² for the second) moves when g moves by `e_grad`."""
    return e_grad if first else 2.0 * absolute(grad) * e_grad + e_grad * e_grad


def moment(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    """β·s + (1-β)·g (first moment) or β·s + (1-β)·g² (second), and its floor (module docstring)."""
    assert isinstance(op, g.AdamMoment1Op | g.AdamMoment2Op)
    state, grad = xs
    beta = op.get_beta()
    first = isinstance(op, g.AdamMoment1Op)
    term = grad.ref if first else grad.ref * grad.ref
    term_err = _term_spread(first, grad.ref, grad.err)
    term_mag = grad.mag if first else absolute(grad.ref) ** 2 + term_err
    mag = beta * state.mag + (1.0 - beta) * term_mag + absolute(state.ref) + absolute(term)
    out = linear(op, beta * state.ref + (1.0 - beta) * term, beta * state.err + (1.0 - beta) * term_err, mag,
                 None, 4, state.dtype, ctx)
    tau_state = statistical(op.operands[0], state, ctx)
    tau_grad = statistical(op.operands[1], grad, ctx)
    if tau_state is None or tau_grad is None:
        return out
    spread = beta * tau_state + (1.0 - beta) * _term_spread(first, grad.ref, tau_grad)
    rounding = 4.0 * unit(state.dtype) * (beta * absolute(state.ref) + (1.0 - beta) * absolute(term) + spread)
    out.floor = np.fmin(out.err, spread + rounding)
    return out


def quotient_spread(m: np.ndarray, e_m: np.ndarray, v: np.ndarray, e_v: np.ndarray, bc2_sqrt: float,
                    eps: float) -> np.ndarray:
    """max |q' - q| for q = m/(√v/bc2_sqrt + eps), over m' ∈ [m ± e_m], v' ∈ [max(v - e_v, 0), v + e_v]:
    q is monotone in each, so the extremes are at the box's corners."""
    with np.errstate(all="ignore"):
        low = np.sqrt(np.maximum(v - e_v, 0.0)) / bc2_sqrt + eps  # the smallest denominator
        high = np.sqrt(np.maximum(v + e_v, 0.0)) / bc2_sqrt + eps
        q = m / (np.sqrt(np.maximum(v, 0.0)) / bc2_sqrt + eps)
        top, bottom = m + e_m, m - e_m
        q_max = np.where(top >= 0, top / low, top / high)
        q_min = np.where(bottom <= 0, bottom / low, bottom / high)
        spread = np.maximum(q_max - q, q - q_min)
    spread = np.where((e_m == 0) & (e_v == 0), 0.0, spread)
    return np.where(np.isnan(spread), np.inf, spread)


def _moments_of_one_gradient(op: g.AdamwUpdateOp, ctx: BoundContext
                             ) -> tuple[g.AdamMoment1Op, g.AdamMoment2Op, SSAValue] | None:
    """The update's two moment ops and the gradient both read, None if they are not such a pair (or
    the bounded values so far are not at hand)."""
    m_op, v_op = (_source(op.operands[k]).owner for k in (1, 2))
    if not (isinstance(m_op, g.AdamMoment1Op) and isinstance(v_op, g.AdamMoment2Op)) or ctx.env is None:
        return None
    grad = _source(m_op.operands[1])
    if grad is not _source(v_op.operands[1]) or m_op.operands[0] not in ctx.env or v_op.operands[0] not in ctx.env:
        return None
    return m_op, v_op, grad


def adam_cap(op: g.AdamwUpdateOp, ctx: BoundContext) -> np.ndarray | None:
    """Q ≥ |m'/(√v'/√bc2 + eps)| for any gradient (module docstring), or None where the update's moments
    are not two moment ops of one gradient."""
    found = _moments_of_one_gradient(op, ctx)
    if found is None:
        return None
    m_op, v_op, _ = found
    assert ctx.env is not None
    m_state, v_state = ctx.env[m_op.operands[0]], ctx.env[v_op.operands[0]]
    _, _, bc2_sqrt, _ = adamw_factors(op)
    b1, b2 = m_op.get_beta(), v_op.get_beta()
    slack = CAP_ROUNDINGS * unit(m_state.dtype)
    with np.errstate(all="ignore"):
        a = (b1 + slack) * (absolute(m_state.ref) + m_state.err)
        c = b2 * np.maximum(v_state.ref - v_state.err, 0.0) * (1.0 - slack)
        b, d = 1.0 - b1 + slack, (1.0 - b2) * (1.0 - slack)
        ratio = np.where(a == 0, 0.0, a * a / c) + b * b / d
        return bc2_sqrt * np.sqrt(np.where(np.isnan(ratio), np.inf, ratio)) * (1.0 + slack)


def _gradient_spread(op: g.AdamwUpdateOp, q: np.ndarray, ctx: BoundContext) -> np.ndarray | None:
    """max |q(g') - q| over g' within the gradient's statistical tolerance, q(g') the quotient both
    moments make of one g' from the (exact) state: the floor's quotient with m' and v' moving together.
    None where the moments are not of one gradient, the state is not exact or no tolerance is known."""
    found = _moments_of_one_gradient(op, ctx)
    if found is None:
        return None
    m_op, v_op, grad = found
    assert ctx.env is not None
    m_state, v_state, grad_b = ctx.env[m_op.operands[0]], ctx.env[v_op.operands[0]], ctx.env.get(grad)
    tau = None if grad_b is None else statistical(grad, grad_b, ctx)
    if tau is None or grad_b is None or np.any(m_state.err) or np.any(v_state.err):
        return None
    _, _, bc2_sqrt, eps = adamw_factors(op)
    b1, b2 = m_op.get_beta(), v_op.get_beta()
    big_a, b, big_c, d, k = b1 * m_state.ref, 1.0 - b1, b2 * v_state.ref, 1.0 - b2, 1.0 / bc2_sqrt

    def quotient(x: np.ndarray) -> np.ndarray:
        return (big_a + b * x) / (k * np.sqrt(big_c + d * x * x) + eps)

    with np.errstate(all="ignore"):
        lo, hi = grad_b.ref - tau, grad_b.ref + tau
        values = [quotient(lo), quotient(hi)]
        # Stationary points: b·eps·√(C + D·x²) = k·(D·A·x - b·C), squared a quadratic in x.
        a2 = k * k * d * d * big_a * big_a - b * b * eps * eps * d
        a1 = -2.0 * k * k * d * big_a * b * big_c
        a0 = k * k * b * b * big_c * big_c - b * b * eps * eps * big_c
        root, quadratic = np.sqrt(a1 * a1 - 4.0 * a2 * a0), a2 != 0
        # (a root the squaring added is still a point of the interval: it cannot widen the range)
        for x in (np.where(quadratic, (-a1 + root) / (2.0 * a2), np.nan),
                  np.where(quadratic, (-a1 - root) / (2.0 * a2), np.nan),
                  np.where(~quadratic & (a1 != 0), -a0 / a1, np.nan)):
            inside = np.isfinite(x) & (x > lo) & (x < hi)
            values.append(np.where(inside, quotient(np.where(inside, x, lo)), values[0]))
        stacked = np.stack(values)
        spread = np.maximum(stacked.max(axis=0) - q, q - stacked.min(axis=0))
    return np.where(np.isnan(spread), np.inf, spread)


def adamw_update(op: Operation, xs: list[Bounded], ctx: BoundContext) -> Bounded:
    """`w·decay - step_size·q`: q's bound the smaller of the box's and Adam's cap; its floor from the
    gradient's statistical tolerance, or else the moments' floors (module docstring)."""
    assert isinstance(op, g.AdamwUpdateOp)
    w, m, v = xs
    decay, step_size, bc2_sqrt, eps = adamw_factors(op)
    u = unit(w.dtype)
    cap = adam_cap(op, ctx)
    with np.errstate(all="ignore"):
        q = m.ref / (np.sqrt(np.maximum(v.ref, 0.0)) / bc2_sqrt + eps)
        terms = np.abs(w.ref * decay) + step_size * np.abs(q)

        def moved(e_w: np.ndarray, spread: np.ndarray) -> np.ndarray:
            if cap is not None:
                spread = np.fmin(spread, cap + np.abs(q))
            return abs(decay) * e_w + step_size * spread + TRANSCENDENTAL_ULPS * u * (terms + step_size * spread)

        err = moved(w.err, quotient_spread(m.ref, m.err, v.ref, v.err, bc2_sqrt, eps))
        out = finish(w.ref * decay - step_size * q, err, terms + err, w.dtype)
        tau_w = statistical(op.operands[0], w, ctx)
        spread = _gradient_spread(op, q, ctx)
        if spread is None:
            tau_m = m.floor if m.floor is not None else statistical(op.operands[1], m, ctx)
            tau_v = v.floor if v.floor is not None else statistical(op.operands[2], v, ctx)
            if tau_m is not None and tau_v is not None:
                spread = quotient_spread(m.ref, tau_m, v.ref, tau_v, bc2_sqrt, eps)
        if tau_w is not None and spread is not None:
            out.floor = np.fmin(out.err, moved(tau_w, spread))
    return out
