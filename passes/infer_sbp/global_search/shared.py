"""`infer-sbp{rule=global}`: the shared boxing of a value with several uses, over undecided choices.

The rule — one boxing per (value, distinct target), as materialize-boxing inserts them — is
`passes/infer_sbp/boxings.py`'s; its IR-free form, what one plan pays, is `solver.factor.CoverForm`
(`cover_value`). This module makes a factor of it for the search: one factor over the value's
producer (an op or free-argument variable; none when its SBP is fixed) and its consumer
variables; a consumer using the value twice (`x * x`) is one scope entry.

Tables are computed over classes — a producer's choices with one output SBP are one class, a
consumer's choices needing one set of targets are one class — and expanded to full domains (the
layout of `FactorProblem.factors`). A factor whose full table would exceed `MAX_SHARED_TABLE`
(1e6) entries is not built (nor would elimination stay narrow with it): that value is charged per
consuming edge instead — pairs, an upper bound on its boxing time — and `Shared.exact` is False, so
the report names it. Its lower-bound twin charges each consumer's boxing to t divided by the
number of uses that can need t (Σ_t w·[n_t ≥ 1] ≥ Σ_t w·n_t / c_t since n_t ≤ c_t; `solver.split`), also pairs:
`global_search` solves that too, for a proved bound, and prices the plan exactly (`seconds`).
HiGHS reads the factor's structure (its `CoverForm`) rather than its table.
A value with one priced use keeps the plain pair factor (`global_problem.Edge`). A `to_global`
result is a value of its own, as the report counts it (materialize-boxing folds the uses of an
identity `to_global` into its source's: not modelled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from sbpc.dialects.sbp import NdSbpAttr
from sbpc.passes.solver.factor import CoverForm, cover_marginal, cover_table, cover_value
from sbpc.passes.solver.split import lower_split, split_table

MAX_SHARED_TABLE = 1_000_000
"""The largest factor (full-domain entries) a shared value gets; beyond it, per-edge charging."""


@dataclass
class Shared:
    """One value with at least two priced uses and what its boxings cost: its `form` (see
    `CoverForm`: the producer variable `source`, `rows[c]` the class of producer choice c,
    `price[k, t]` the seconds of boxing class k to `targets[t]`, `needs[v][c, t]` whether consumer
    v's choice c needs target t, `fixed[t]` whether a `to_global` needs it)."""

    value: SSAValue
    targets: list[NdSbpAttr]
    form: CoverForm
    scope: tuple[int, ...] = ()
    table: np.ndarray | None = None
    """The factor over `scope` (None: too big, charged per edge)."""

    @property
    def source(self) -> int | None:
        return self.form.source

    @property
    def needs(self) -> dict[int, np.ndarray]:
        return self.form.needs

    @property
    def exact(self) -> bool:
        return self.table is not None

    @property
    def pairwise(self) -> bool:
        """Whether its table is over at most two variables (no producer variable and two
        consumers, or one consumer using it twice): the twins keep it exact."""
        return self.table is not None and len(self.scope) <= 2

    def size(self, domains: list[int]) -> int:
        return math.prod(domains[v] for v in self.scope)

    def build(self, domains: list[int]) -> None:
        """The factor table, unless it exceeds `MAX_SHARED_TABLE` entries."""
        form = self.form
        consumers = sorted(form.needs)
        self.scope = (*([] if form.source is None else [form.source]), *consumers)
        if self.size(domains) > MAX_SHARED_TABLE:
            return
        self.table = cover_table(form)

    def marginal(self, v: int, choice: list[int]) -> np.ndarray:
        """Per choice of consumer v, what its use adds to the value's boxing given the others'
        choices: the targets it needs that no other use does."""
        return cover_marginal(self.form, v, choice)

    def seconds(self, choice: list[int]) -> float:
        """The value's boxing seconds under `choice`, exactly (one boxing per distinct target)."""
        return cover_value(self.form, choice)

    def pairs(self, lower: bool) -> list[tuple[tuple[int, ...], np.ndarray]]:
        """The per-edge charging of a value left without its factor, as factors of scope ≤ 2: the
        upper bound (every consumer pays its targets; each `to_global` target once) or, with
        `lower`, the lower bound (a target of a `to_global` paid once and by no consumer, any
        other split among the consumers that can need it)."""
        form = self.form
        shares = lower_split(form) if lower else {v: np.ones(len(self.targets)) for v in form.needs}
        head = () if form.source is None else (form.source,)
        out: list[tuple[tuple[int, ...], np.ndarray]] = [(head, self.conversions() if head else self.conversions()[0])]
        for v in form.needs:
            table = split_table(form, v, shares[v])
            out.append(((*head, v), table if head else table[0]))
        return out

    def conversions(self) -> np.ndarray:
        """Per producer choice, the boxing of the `to_global` targets (a producer's local cost)."""
        return self.form.price[self.form.rows] @ self.form.fixed.astype(float)
