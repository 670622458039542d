"""Steps 2 and 3 of `infer-sbp` for one op: score its candidates and choose one.

* `select_oneflow_1d`: OneFlow's 1-D sort by (OrderValue, IbnCopyCost), earliest tie first.
* `select_oneflow_nd`: OneFlow's greedy ND scan (kAllMatch, eager ND copy cost, 1e-7 tolerance).
* `select_cost`: the lowest α-β time of the input boxing each candidate needs, planned by the
  boxing planner's model.

`choose` picks the rule's selection. Each input's costs towards every ND-SBP a candidate needs
are kept in the `InferenceCache` (`InputCosts`, shared by the ops with an equal input), and so
are OneFlow's price functions and the greedy scans. Scored candidate lists and α-β times that only
the report reads are computed on first read, from the input types alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from xdsl.ir import Attribute

from sbpc.dialects.sbp import NdSbpAttr, PartialAttr
from sbpc.dialects.signatures import NdSig
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.cost.comm import CommModel, PlannerCache, local_elements, step_time, transition_time
from sbpc.passes.infer_sbp.cache import CandidateList, InferenceCache, OpMeta, TypeInfo, byte_size, element_bytes
from sbpc.passes.infer_sbp.oneflow_costs import (
    FLT_MAX,
    VALID_MAX_COPY_COST,
    eager_nd_pricer,
    eager_reads_shape,
    ibn_copy_cost_1d,
)

# ---------------------------------------------------------------------------
# Scored candidates and decisions
# ---------------------------------------------------------------------------


class _Deferred:
    """A modelled time given as a number or, when only the report reads it, as a function
    computing it on first read (rule=oneflow: the choice never looks at it, and pricing means
    planning every candidate's boxing)."""

    _comm: float | Callable[[], float]

    @property
    def comm_us(self) -> float:
        if callable(self._comm):
            self._comm = self._comm()
        return self._comm


@dataclass(eq=False)
class Candidate(_Deferred):
    sig: NdSig
    order_value: float = 0.0
    oneflow_cost: float = 0.0
    _comm: float | Callable[[], float] = 0.0


@dataclass(eq=False)
class Decision(_Deferred):
    """The outcome for one op meta: candidates considered, the choice and why. The scored
    candidate list may be given as a function building it on first read (only the report and
    tests read it)."""

    _candidates: list[Candidate] | Callable[[], list[Candidate]]
    chosen: NdSig
    reason: str
    _comm: float | Callable[[], float]
    signature: Attribute | None = None
    """The `#sbp.sig` attribute of `chosen`, kept by `infer-sbp` once built or found (every op given
    this decision gets that one attribute)."""

    @property
    def candidates(self) -> list[Candidate]:
        if callable(self._candidates):
            self._candidates = self._candidates()
        return self._candidates


def choose(cands: CandidateList, meta: OpMeta, model: CommModel) -> Decision:
    """The rule's choice among `cands` (none empty) for the op `meta` describes."""
    if meta.rule == "cost":
        return select_cost(cands, meta, model)
    if len(meta.hierarchy) == 1:
        return select_oneflow_1d(cands, meta, model)
    return select_oneflow_nd(cands, meta, model)


# ---------------------------------------------------------------------------
# Per-input costs
# ---------------------------------------------------------------------------


def input_comm_terms(
    t: GlobalTensorType, have: NdSbpAttr, need: NdSbpAttr, hierarchy: tuple[int, ...], model: CommModel,
    planner: PlannerCache,
) -> tuple[float, ...]:
    """The terms `comm_us` adds for one input, in order: its boxing time, then one all-reduce per
    mesh axis on which it is turned partial."""
    shape, nbytes = t.get_shape(), element_bytes(t)
    terms = [transition_time(have, need, shape, nbytes, hierarchy, model, planner)]
    local = local_elements(shape, tuple(need), hierarchy) * nbytes
    for d, (a, b) in enumerate(zip(have, need, strict=True)):
        if type(b) is PartialAttr and type(a) is not PartialAttr:
            n = hierarchy[d]
            terms.append(step_time("all_reduce", 2.0 * local * (n - 1) / n, n, model, (d,)))
    return tuple(terms)


class InputCosts:
    """The costs of one input (shape, element size, ND-SBP on a hierarchy) towards each ND-SBP a
    candidate needs; shared by every op with an equal input, under one cost model."""

    __slots__ = (
        "_comm", "_ibn", "cache", "eager_by_index", "have", "have_index", "hierarchy", "model", "serial", "shape",
        "size", "ty",
    )

    def __init__(self, cache: InferenceCache, info: TypeInfo, hierarchy: tuple[int, ...], model: CommModel):
        assert info.nd_sbp is not None and info.nd_index is not None
        self.cache, self.ty, self.have, self.hierarchy, self.model = cache, info.ty, info.nd_sbp, hierarchy, model
        self.have_index: int = info.nd_index
        self.serial = cache.serial()
        self.shape: tuple[int, ...] = info.key[0]  # type: ignore[assignment]
        self.size = byte_size(info.ty)
        self._comm: dict[int, tuple[float, ...]] = {}
        self.eager_by_index: dict[int, float] = {}
        """`eager_cost` by the needed ND-SBP's `nd_index`."""
        self._ibn: dict[int, float] = {}

    def has(self, need: NdSbpAttr) -> bool:
        """`have == need`."""
        return self.cache.nd_index(need) == self.have_index

    def comm_terms(self, need: NdSbpAttr) -> tuple[float, ...]:
        key = self.cache.nd_index(need)
        found = self._comm.get(key)
        if found is None:
            found = self._comm[key] = input_comm_terms(
                self.ty, self.have, need, self.hierarchy, self.model, self.cache.planner)
        return found

    def eager_cost(self, need: NdSbpAttr, index: int) -> float:
        """OneFlow's eager ND copy cost from this input to `need` (whose `nd_index` is `index`)."""
        found = self.eager_by_index.get(index)
        if found is None:
            found = self.eager_by_index[index] = self._eager_pricer(need, index)(self.size)
        return found

    def _eager_pricer(self, need: NdSbpAttr, index: int) -> Callable[[float], float]:
        """`eager_nd_pricer` of the transition, shared by every input size (and shape, unless it
        matters: `eager_reads_shape`)."""
        table = self.cache.eager
        key = (self.have_index, index, self.hierarchy)
        found = table.get(key)
        if found is None:
            src, dst = tuple(self.have), tuple(need)
            found = table[key] = {} if eager_reads_shape(src, dst) else eager_nd_pricer(
                src, dst, self.hierarchy, self.shape)
        if isinstance(found, dict):
            by_shape = found.get(self.shape)
            if by_shape is None:
                src, dst = tuple(self.have), tuple(need)
                by_shape = found[self.shape] = eager_nd_pricer(src, dst, self.hierarchy, self.shape)
            return by_shape
        return found

    def ibn_cost(self, need: NdSbpAttr) -> float:
        """OneFlow's 1-D IbnCopyCost from this input to `need`."""
        key = self.cache.nd_index(need)
        found = self._ibn.get(key)
        if found is None:
            found = self._ibn[key] = ibn_copy_cost_1d(self.have[0], need[0], self.size)
        return found


def input_costs(meta: OpMeta, model: CommModel) -> list[InputCosts]:
    """The cached costs of the op's inputs (kept on each `TypeInfo` too, for the next op reading
    the same type)."""
    cache, hierarchy = meta.cache, meta.hierarchy
    result = []
    for info in meta.infos:
        found = info.costs
        if found is None or found.hierarchy != hierarchy or found.model != model:
            shape, nbytes, _, have = info.key
            key = (shape, nbytes, have, hierarchy, model)
            found = cache.inputs.get(key)
            if found is None:
                found = cache.inputs[key] = InputCosts(cache, info, hierarchy, model)
            info.costs = found
        result.append(found)
    return result


def comm_us(meta: OpMeta, model: CommModel, sig: NdSig) -> float:
    """Modelled time of the input boxing `sig` needs.

    Turning a non-partial input into a partial one is free locally but defers a reduction; it is
    charged one all-reduce of that input on those mesh axes (DTensor forbids it).
    """
    total = 0.0
    for costs, need in zip(input_costs(meta, model), sig[0], strict=True):
        for term in costs.comm_terms(need):  # the same additions in the same order
            total += term
    return total


def _later_meta(in_types: tuple[GlobalTensorType, ...], hierarchy: tuple[int, ...], planner: PlannerCache) -> OpMeta:
    """A meta read afresh from input types, with a cache of its own (the report's late pricing:
    a decision outlives the cache it was made with) sharing the deciding cache's planner (its
    tables are pure functions of their keys, bounded on their own)."""
    cache = InferenceCache(planner=planner)
    return OpMeta("", hierarchy, tuple([cache.type_info(t) for t in in_types]), in_types, False, cache)


def _priced_later(in_types: tuple[GlobalTensorType, ...], hierarchy: tuple[int, ...], model: CommModel,
                  sig: NdSig, planner: PlannerCache) -> float:
    return comm_us(_later_meta(in_types, hierarchy, planner), model, sig)


def _comm_us_later(meta: OpMeta, model: CommModel, sig: NdSig) -> Callable[[], float]:
    """`comm_us(sig)` on first call; holds the input types and the planner, not the cache."""
    return partial(_priced_later, meta.in_types, meta.hierarchy, model, sig, meta.cache.planner)


def eager_costs(cands: CandidateList, meta: OpMeta, model: CommModel) -> list[float]:
    """Per candidate, the sum over the inputs of OneFlow's eager ND copy cost. The columns (one
    input's cost for every candidate) are cached per candidate list and input, so ops with an
    equal input share them; each distinct needed ND-SBP is priced once."""
    inputs = input_costs(meta, model)
    if not inputs:
        return [0.0] * len(cands.sigs)
    cache = meta.cache
    needs, first_of = cands.needs(cache), cands.first_of(cache)
    columns = []
    for i, costs in enumerate(inputs):
        key = (cands.serial, i, costs.serial)
        found = cache.columns.get(key)
        if found is None:
            known = costs.eager_by_index
            for k in first_of[i].keys() - known.keys():  # the needs not priced yet for this input
                costs.eager_cost(cands.sigs[first_of[i][k]][0][i], k)
            found = cache.columns[key] = tuple(map(known.__getitem__, needs[i]))
        columns.append(found)
    return list(map(sum, zip(*columns, strict=True)))  # the inputs' costs added in order


# ---------------------------------------------------------------------------
# Selection
# ---------------------------------------------------------------------------


def select_oneflow_1d(cands: CandidateList, meta: OpMeta, model: CommModel) -> Decision:
    scored: list[Candidate] = []
    inputs = input_costs(meta, model)
    for sig in cands.sigs:
        order = 0.0
        cost = 0.0
        for costs, need in zip(inputs, sig[0], strict=True):
            if not meta.constrained and costs.has(need):
                order -= 10
            cost += costs.ibn_cost(need)
        scored.append(Candidate(sig, order, cost, _comm_us_later(meta, model, sig)))
    if len(scored) == 1:
        return Decision(scored, scored[0].sig, "the only candidate left", lambda: scored[0].comm_us)
    best = min(scored, key=lambda c: (c.order_value, c.oneflow_cost))  # min keeps the earliest tie
    reason = f"lowest (OrderValue, IbnCopyCost) = ({best.order_value:g}, {best.oneflow_cost:g})"
    return Decision(scored, best.sig, reason, lambda: best.comm_us)


def select_oneflow_nd(cands: CandidateList, meta: OpMeta, model: CommModel) -> Decision:
    """OneFlow's greedy scan (kAllMatch): the first candidate whose inputs all match, else the
    lowest eager ND copy cost (ties keep the earlier one unless fewer inputs mismatch)."""
    sigs = cands.sigs
    scored_later = partial(_scored_nd, sigs, meta.in_types, meta.hierarchy, model, meta.cache.planner)
    if len(sigs) == 1:
        return Decision(scored_later, sigs[0], "the only candidate left", _comm_us_later(meta, model, sigs[0]))
    cache = meta.cache
    have = tuple([info.nd_index for info in meta.infos])
    first = cands.first_match(cache).get(have)  # type: ignore[arg-type]
    if first is not None:  # the scan stops there whatever the costs before it
        sig = sigs[first]
        return Decision(
            scored_later, sig, "first candidate whose inputs all match (kAllMatch)", _comm_us_later(meta, model, sig))
    # Ops of different kinds share candidate lists (equal per-axis lists) and inputs: the scan
    # depends on those alone, so it is done once per pair.
    scan_key = (cands.serial, *[costs.serial for costs in input_costs(meta, model)])
    found = cache.scans.get(scan_key)
    if found is None:
        found = cache.scans[scan_key] = _greedy_scan(eager_costs(cands, meta, model), cands, have)  # type: ignore[arg-type]
    best, min_cost = found
    sig = sigs[best]
    return Decision(scored_later, sig, f"lowest eager ND copy cost {min_cost:g}", _comm_us_later(meta, model, sig))


def _greedy_scan(costs: list[float], table: CandidateList, have: tuple[int, ...]) -> tuple[int, float]:
    """OneFlow's scan past kAllMatch: the lowest eager cost within 1e-7, a near-tie going to the
    candidate with fewer mismatching inputs; returns (index, cost).

    A clear minimum m (every other cost above m * 1.000001, m below the scan's starting bound,
    so that bound stays under FLT_MAX and clamping changes nothing) is its answer whatever comes
    before it: from any earlier state the scan updates to it strictly (a cost just above
    m * 1.0000001 would not do: times 0.9999999 it can fall to m), and nothing after it comes
    within the tie tolerance. Otherwise the scan runs candidate by candidate
    (`_greedy_scan_exact`)."""
    if costs:
        m = min(costs)
        bound = m * 1.000001
        if m < VALID_MAX_COPY_COST * 0.9999999 and sum(map(bound.__ge__, costs)) == 1:
            return costs.index(m), m
    return _greedy_scan_exact(costs, table, have)


def _greedy_scan_exact(costs: list[float], table: CandidateList, have: tuple[int, ...]) -> tuple[int, float]:
    """`_greedy_scan` as OneFlow writes it, candidate by candidate."""
    best = -1
    min_cost, min_ratio = VALID_MAX_COPY_COST, 0
    for j, cost in enumerate(costs):
        if cost > FLT_MAX:
            cost = FLT_MAX
        # The mismatch count only breaks near-ties, so it is counted only then.
        if cost < min_cost * 0.9999999:
            best, min_cost, min_ratio = j, cost, table.mismatches(j, have)
        elif cost <= min_cost * 1.0000001 and (ratio := table.mismatches(j, have)) < min_ratio:
            best, min_cost, min_ratio = j, cost, ratio
    if best < 0:
        raise ValueError("can't find available sbp signature")
    return best, min_cost


def _scored_nd(
    sigs: list[NdSig], in_types: tuple[GlobalTensorType, ...], hierarchy: tuple[int, ...], model: CommModel,
    planner: PlannerCache,
) -> list[Candidate]:
    """The scored ND candidates, built on first read from the input types and the planner."""
    meta = _later_meta(in_types, hierarchy, planner)
    cands = CandidateList(sigs, meta.cache)
    return [
        Candidate(c, 0.0, min(cost, FLT_MAX), _comm_us_later(meta, model, c))
        for c, cost in zip(sigs, eager_costs(cands, meta, model), strict=True)
    ]


def select_cost(cands: CandidateList, meta: OpMeta, model: CommModel) -> Decision:
    """The lowest modelled boxing time (rounded to 1e-9 us), then the fewest mismatching inputs,
    then the earliest candidate."""
    cache, sigs = meta.cache, cands.sigs
    inputs = input_costs(meta, model)
    needs, first_of = cands.needs(cache), cands.first_of(cache)
    # Per input, its terms towards each distinct ND-SBP a candidate needs (priced once).
    terms = [{k: costs.comm_terms(sigs[j][0][i]) for k, j in first_of[i].items()} for i, costs in enumerate(inputs)]
    times: list[float] = []
    for combo in zip(*needs, strict=True) if inputs else [()] * len(sigs):
        total = 0.0
        for by_need, k in zip(terms, combo, strict=True):
            for term in by_need[k]:  # the additions of `comm_us`, in its order
                total += term
        times.append(total)
    have = tuple(costs.have_index for costs in inputs)
    ratios = cands.mismatch_counts(have, cache) if inputs else [0] * len(sigs)
    best = min(range(len(sigs)), key=lambda j: (round(times[j], 9), ratios[j]))
    scored = [Candidate(sig, 0.0, 0.0, t) for sig, t in zip(sigs, times, strict=True)]
    return Decision(scored, sigs[best], f"lowest modelled boxing time {times[best]:.3f} us", times[best])
