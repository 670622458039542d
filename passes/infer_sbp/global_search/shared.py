"""`infer-sbp{rule=global}`: the boxing of a value with several uses, charged as the program pays it.

`materialize-boxing` inserts one `sbp.boxing` per (value, target ND-SBP) and shares it among every
use needing that target: every operand of an op with an SBP rule, and every `sbp.to_global` of the
value (a `to_global` becomes a boxing from the same cache). So a value's boxing time is
Σ over the DISTINCT targets its uses need of boxing(source → target), not Σ over its uses: three
matmuls reading one LayerNorm output in [S(0), B] pay one all-gather, not three. This module prices
that as one factor over the value's producer (an op or free-argument variable; none when its SBP is
fixed) and its consumer variables; a consumer using the value twice (`x * x`) is one scope entry.

Tables are computed over classes — a producer's choices with one output SBP are one class, a
consumer's choices needing one set of targets are one class — and expanded to full domains (the
layout of `FactorProblem.factors`). A factor whose full table would exceed `MAX_SHARED_TABLE`
(1e6) entries is not built (nor would elimination stay narrow with it): that value is charged per
consuming edge instead — pairs, an upper bound on its boxing time — and `Shared.exact` is False, so
the report names it. Its lower-bound twin charges each consumer's boxing to t divided by the
number of uses that can need t (Σ_t w·[n_t ≥ 1] ≥ Σ_t w·n_t / c_t since n_t ≤ c_t), also pairs:
`global_search` solves that too, for a proved bound, and prices the plan exactly (`seconds`).
HiGHS reads the factor's structure (`form`, a `global_solver.CoverForm`) rather than its table.
A value with one priced use keeps the plain pair factor (`global_problem.Edge`). An existing
`sbp.boxing` or collective of the input program is its own op, never shared (materialize-boxing
leaves it alone), and is priced on its own. A `to_global` result is a value of its own, as the
report counts it (materialize-boxing folds the uses of an identity `to_global` into its source's:
not modelled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.ir import SSAValue

from sbpc.dialects.sbp import NdSbpAttr
from sbpc.passes.solver.factor import CoverForm

MAX_SHARED_TABLE = 1_000_000
"""The largest factor (full-domain entries) a shared value gets; beyond it, per-edge charging."""


@dataclass
class Shared:
    """One value with at least two priced uses and what its boxings cost.

    `price[k, t]`: seconds of boxing the producer's class k to `targets[t]` (0 where equal);
    `rows[c]`: the class of producer choice c (one row, 0, when the SBP is fixed); `needs[v][c, t]`:
    whether consumer variable v's choice c needs `targets[t]`; `fixed[t]`: a `to_global` needs it."""

    value: SSAValue
    source: int | None
    rows: np.ndarray
    targets: list[NdSbpAttr]
    price: np.ndarray
    needs: dict[int, np.ndarray] = field(default_factory=dict)
    fixed: np.ndarray | None = None
    scope: tuple[int, ...] = ()
    table: np.ndarray | None = None
    """The factor over `scope` (None: too big, charged per edge)."""

    @property
    def exact(self) -> bool:
        return self.table is not None

    def size(self, domains: list[int]) -> int:
        return math.prod(domains[v] for v in self.scope)

    def form(self) -> CoverForm:
        """The factor's structure, for HiGHS's compact formulation."""
        assert self.fixed is not None
        return CoverForm(self.source, self.rows, self.price, self.needs, self.fixed)

    def build(self, domains: list[int]) -> None:
        """The factor table, unless it exceeds `MAX_SHARED_TABLE` entries."""
        consumers = sorted(self.needs)
        self.scope = (*([] if self.source is None else [self.source]), *consumers)
        if self.size(domains) > MAX_SHARED_TABLE:
            return
        assert self.fixed is not None
        needed = self.fixed.reshape((1,) * len(consumers) + (-1,))
        ids = []
        for axis, v in enumerate(consumers):
            classes, of = np.unique(self.needs[v], axis=0, return_inverse=True)
            shape = [1] * len(consumers) + [len(self.targets)]
            shape[axis] = len(classes)
            needed = needed | classes.reshape(shape)
            ids.append(of.reshape(-1))
        table = np.moveaxis(needed.astype(float) @ self.price.T, -1, 0)  # (producer class, consumer classes...)
        table = table[np.ix_(self.rows, *ids)]
        self.table = table if self.source is not None else table[0]

    def targets_of(self, choice: list[int], without: int | None = None) -> np.ndarray:
        """The targets boxed to under `choice` (optionally leaving consumer `without` out)."""
        assert self.fixed is not None
        needed = self.fixed.copy()
        for v, needs in self.needs.items():
            if v != without:
                needed |= needs[choice[v]]
        return needed

    def row(self, choice: list[int]) -> np.ndarray:
        return self.price[self.rows[0 if self.source is None else choice[self.source]]]

    def marginal(self, v: int, choice: list[int]) -> np.ndarray:
        """Per choice of consumer v, what its use adds to the value's boxing given the others'
        choices: the targets it needs that no other use does."""
        price = self.row(choice) * ~self.targets_of(choice, without=v)
        return self.needs[v].astype(float) @ price

    def seconds(self, choice: list[int]) -> float:
        """The value's boxing seconds under `choice`, exactly (one boxing per distinct target)."""
        return float(self.row(choice) @ self.targets_of(choice))

    def pairs(self, lower: bool) -> list[tuple[tuple[int, ...], np.ndarray]]:
        """The per-edge charging of a value left without its factor, as factors of scope ≤ 2: the
        upper bound (every consumer pays its targets; each `to_global` target once) or, with
        `lower`, the lower bound (a target of a `to_global` paid once and by no consumer, any
        other split among the consumers that can need it)."""
        assert self.fixed is not None
        weight = np.ones(len(self.targets))
        if lower:
            able = sum(needs.any(axis=0).astype(float) for needs in self.needs.values())
            weight = np.where(self.fixed, 0.0, 1.0 / np.maximum(able, 1.0))
        prices = self.price[self.rows]  # (producer choices, targets)
        head = () if self.source is None else (self.source,)
        out: list[tuple[tuple[int, ...], np.ndarray]] = [(head, self.conversions() if head else self.conversions()[0])]
        for v, needs in self.needs.items():
            table = prices @ (needs * weight).T
            out.append(((*head, v), table if head else table[0]))
        return out

    def conversions(self) -> np.ndarray:
        """Per producer choice, the boxing of the `to_global` targets (a producer's local cost)."""
        assert self.fixed is not None
        return self.price[self.rows] @ self.fixed.astype(float)
