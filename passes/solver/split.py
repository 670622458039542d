"""The lower twin's split of a shared boxing among its consumers, and its ascent to a better bound.

A shared value pays one boxing per distinct target its uses need (`factor.CoverForm`): a factor
over its producer and every consumer, too wide to eliminate or diffuse where values fan out. Its
lower twin charges each consumer v, for each target t it needs, the share w[v][t] of the target's
price; any split with w ≥ 0 and Σ_v w[v][t] ≤ 1 is at most the exact charge (the shares of the
uses needing t sum to at most 1, and t is paid once if any needs it), so every plan's twin value is
at most its exact value and any lower bound of the twin bounds the problem. `lower_split` is the
even split over the consumers that can need each target (`GlobalProblem.factors(lower=True)`).

The even split is loose where a value has many consumers and few of them need a target in good
plans (gen_dag 2000: the twin's bound 32 % below the plan). `ascend` moves the shares: at the
twin's plan x, the twin's value rises with w[v][t] by price[class of x's producer, t] where x's v
needs t — a supergradient of the twin's optimum where x is its minimiser (Lagrangian duality: the
best split is the LP's of the exact covers, which HiGHS finds within 0.06 % of the optimum on
gen_dag 200). Projected steps (Polyak's, toward the best plan's exact value) alternate with a few
diffusion sweeps (`lagrange.Messages`, whose pair tables take each step's change in place, so the
messages carry over); x is the diffusion's TRW-S decoding, every plan decoded is priced exactly and
the best few, polished by the caller's descent, are kept as starts. Every step's bound is the
diffusion's sum of minima of that step's twin: a proved bound whatever the steps were.
Measured on gen_dag 2000 (`bench/global_wide.py`): bound 372.7 → 471.6 µs in 160 steps (80: 470.8;
240: 471.8); 472.3 µs with the values whose table is over two variables kept exact in the twin
(`SharedValue.pairwise`), against the exact covers' LP optimum 472.68 µs. Smaller Polyak steps
(a target a third or half of the way to the plan) and larger ones (2x, 4x) did worse in 160 steps;
smoothed (log-sum-exp) diffusion at the final shares did not raise it either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sbpc.dialects.units import US_PER_SECOND
from sbpc.passes.solver.factor import CoverForm
from sbpc.passes.solver.lagrange import Messages

STEPS, STEP_SWEEPS, POLISH_EVERY, STARTS = 160, 5, 5, 3
"""Split steps, diffusion sweeps after each, steps between polished decodings, starts kept."""


def lower_split(form: CoverForm) -> dict[int, np.ndarray]:
    """Per consumer, its share of each target's price: an even split among the consumers that can
    need the target; none of a target a `to_global` needs (the producer pays it, once)."""
    able = {v: needs.any(axis=0) for v, needs in form.needs.items()}
    count = sum(a.astype(float) for a in able.values())
    even = np.where(form.fixed, 0.0, 1.0 / np.maximum(count, 1.0))
    return {v: np.where(a, even, 0.0) for v, a in able.items()}


def split_table(form: CoverForm, v: int, share: np.ndarray) -> np.ndarray:
    """Consumer v's charge with `share` of each target's price: (producer choices, v's choices),
    or (1, v's choices) without a producer variable."""
    return form.price[form.rows] @ (form.needs[v] * share).T


@dataclass
class Ascent:
    """What `ascend` found: the best bound (µs, without the twin's constant), the best plans
    decoded (exact value in seconds, choice), cheapest first."""

    bound: float
    plans: list[tuple[float, list[int]]] = field(default_factory=list)


def ascend(
    messages: Messages, forms: list[CoverForm], value: Callable[[list[int]], float],
    polish: Callable[[list[int]], list[int]], constant: float, deadline: float | None = None,
    steps: int = STEPS,
) -> Ascent:
    """Projected supergradient steps on the shares of `forms` (see the module docstring);
    `messages` diffuses the lower twin built with `lower_split`'s shares of them. `value`: a plan's exact seconds;
    `polish`: a plan improved (exactly); `constant`: the twin's constant (µs), for the steps'
    target. Work limit: `steps`; `deadline` only cuts it short."""
    shares = [lower_split(f) for f in forms]
    able = [{v: needs.any(axis=0) for v, needs in f.needs.items()} for f in forms]
    found = Ascent(messages.bound())
    best: dict[tuple[int, ...], float] = {}
    for step in range(steps):
        if deadline is not None and time.perf_counter() > deadline:
            break
        low = messages.bound()
        found.bound = max(found.bound, low)
        choice = [int(c) for c in messages.decode()]
        best.setdefault(tuple(choice), value(choice))
        if step % POLISH_EVERY == 0:  # the polished plan prices the step; the decoded one moves it
            polished = polish(choice)
            best.setdefault(tuple(polished), value(polished))
        upper = min(best.values()) * US_PER_SECOND - constant
        rises = [_rise(f, choice) for f in forms]
        norm = sum(float((r * r).sum()) for rise in rises for r in rise.values())
        if norm == 0.0 or upper <= low:
            break
        size = (upper - low) / norm
        for f, share, can, rise in zip(forms, shares, able, rises, strict=True):
            _step(messages, f, share, can, rise, size)
        messages.sweep(STEP_SWEEPS)
    found.bound = max(found.bound, messages.bound())
    found.plans = sorted((v, list(c)) for c, v in best.items())[:STARTS]
    return found


def _rise(form: CoverForm, choice: list[int]) -> dict[int, np.ndarray]:
    """Per consumer, the twin's rise (µs) per unit of its share of each target at `choice`.
    (Shares per producer class as well, the LP's full freedom, did no better on gen_dag 2000 and
    took 30 % longer.)"""
    prices = form.price[form.rows[0 if form.source is None else choice[form.source]]] * US_PER_SECOND
    return {v: prices * needs[choice[v]] for v, needs in form.needs.items()}


def _step(messages: Messages, form: CoverForm, share: dict[int, np.ndarray], can: dict[int, np.ndarray],
          rise: dict[int, np.ndarray], size: float) -> None:
    """Move the shares by `size` · rise, project them back (≥ 0, none where a consumer cannot need
    the target or a `to_global` pays it, Σ over consumers ≤ 1), and add the change of each
    consumer's charge to the reparametrised twin."""
    consumers = list(share)
    moved = np.array([share[v] + size * rise[v] for v in consumers])  # consumers × targets
    moved = np.where(np.array([can[v] for v in consumers]), np.maximum(moved, 0.0), 0.0)
    moved[:, form.fixed] = 0.0
    for t in np.flatnonzero(moved.sum(axis=0) > 1.0):
        moved[:, t] = _capped(moved[:, t])
    for v, new in zip(consumers, moved, strict=True):
        change = new - share[v]
        if not change.any():
            continue
        share[v] = new
        delta = split_table(form, v, change) * US_PER_SECOND
        if form.source is None:
            messages.theta[v] += delta[0]
        elif form.source < v:
            messages.pair[form.source, v] += delta
        else:
            messages.pair[v, form.source] += delta.T


def _capped(column: np.ndarray) -> np.ndarray:
    """The Euclidean projection of a nonnegative vector summing above 1 onto {x ≥ 0, Σ x = 1}."""
    ordered = np.sort(column)[::-1]
    total = np.cumsum(ordered)
    last = np.flatnonzero(ordered * np.arange(1, len(ordered) + 1) > total - 1.0)[-1]
    return np.maximum(column - (total[last] - 1.0) / (last + 1), 0.0)
