"""Scoring and choosing among `infer-sbp`'s candidates, and the per-run caches behind it.

* `select_oneflow_1d`: OneFlow's 1-D sort by (OrderValue, IbnCopyCost), earliest tie first.
* `select_oneflow_nd`: OneFlow's greedy ND scan (kAllMatch, eager ND copy cost, 1e-7 tolerance).
* `select_cost`: the lowest α-β time of the input boxing each candidate needs, planned by the
  boxing planner's model.

A run (`_Run`) caches per input its costs towards each needed ND-SBP (`_InputCosts`), each
candidate list as small ints (`_CandidateTable`), placements, result types and signature
attributes: building an attribute runs its verifier and hashing one walks its parameters, so the
hot path keys on small ints and shape tuples. Scored candidate lists and α-β times that only the
report reads are computed on first read.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from operator import itemgetter

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation

from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import GlobalTensorType, NdSbpAttr, PartialAttr, SignatureAttr
from sbpc.dialects.sbp_ops import describe_op, lookup_placement_named
from sbpc.dialects.sharding import fits_shape
from sbpc.dialects.signatures import NdSig, SbpRule, Sig
from sbpc.passes.cost_model import CommModel, local_elements, step_time, transition_time
from sbpc.passes.oneflow_costs import (
    FLT_MAX,
    VALID_MAX_COPY_COST,
    Pricer,
    eager_nd_pricer,
    eager_reads_shape,
    ibn_copy_cost_1d,
)
from sbpc.passes.sbp_candidates import axis_lists, byte_size, element_bytes

# ---------------------------------------------------------------------------
# Selection
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

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Candidate) and (self.sig, self.order_value, self.oneflow_cost, self.comm_us) == (
            other.sig, other.order_value, other.oneflow_cost, other.comm_us)


@dataclass(eq=False)
class Decision(_Deferred):
    """The outcome for one op meta: candidates considered, the choice and why. The scored
    candidate list may be given as a function building it on first read (only the report and
    tests read it)."""

    _candidates: list[Candidate] | Callable[[], list[Candidate]]
    chosen: NdSig
    reason: str
    _comm: float | Callable[[], float]
    _signature: SignatureAttr | None = field(default=None, repr=False, compare=False)

    @property
    def candidates(self) -> list[Candidate]:
        if callable(self._candidates):
            self._candidates = self._candidates()
        return self._candidates

    def signature(self) -> SignatureAttr:
        """The `#sbp.sig` of the choice, built once (attribute construction runs the verifier)."""
        if self._signature is None:
            self._signature = SignatureAttr(list(self.chosen[0]), list(self.chosen[1]))
        return self._signature


def input_comm_terms(
    t: GlobalTensorType, have: NdSbpAttr, need: NdSbpAttr, hierarchy: tuple[int, ...], model: CommModel
) -> tuple[float, ...]:
    """The terms `OpMeta.comm_us` adds for one input, in order: its boxing time, then one
    all-reduce per mesh axis on which it is turned partial."""
    shape, nbytes = t.get_shape(), element_bytes(t)
    terms = [transition_time(have, need, shape, nbytes, hierarchy, model)]
    local = local_elements(shape, tuple(need), hierarchy) * nbytes
    for d, (a, b) in enumerate(zip(have, need, strict=True)):
        if type(b) is PartialAttr and type(a) is not PartialAttr:
            n = hierarchy[d]
            terms.append(step_time("all_reduce", 2.0 * local * (n - 1) / n, n, model))
    return tuple(terms)


@dataclass(slots=True)
class OpMeta:
    """What a decision reads of an op: its inputs (as the run's `_TypeInfo`s, and the types
    themselves for the report's late pricing), the mesh, whether a hint or result SBP
    constrains it."""

    rule: str
    hierarchy: tuple[int, ...]
    infos: tuple[_TypeInfo, ...]
    in_types: tuple[GlobalTensorType, ...]
    constrained: bool
    run: _Run
    _inputs: list[_InputCosts] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def of_types(cls, rule: str, hierarchy: tuple[int, ...], in_types: tuple[GlobalTensorType, ...],
                 model: CommModel) -> OpMeta:
        """A meta read afresh from input types, in a run of its own (the report's late pricing)."""
        run = _Run(model)
        return cls(rule, hierarchy, tuple([run.type_info(t) for t in in_types]), in_types, False, run)

    def inputs(self) -> list[_InputCosts]:
        """The cached per-input costs of the operands (shared by the ops of a run with equal inputs)."""
        if self._inputs is None:
            self._inputs = [self.run.input_costs(info, self.hierarchy) for info in self.infos]
        return self._inputs

    def have_indices(self) -> tuple[int, ...]:
        """The `_ND_INDEX` of each input's ND-SBP."""
        return tuple([info.nd_index for info in self.infos])

    def table(self, cands: list[NdSig]) -> _CandidateTable:
        return self.run.table(cands)

    def eager_costs(self, cands: list[NdSig]) -> list[float]:
        """Per candidate, the sum over the inputs of OneFlow's eager ND copy cost. The columns
        (one input's cost for every candidate) are cached per run and candidate list, so ops
        with an equal input share them; each distinct needed ND-SBP is priced once."""
        inputs = self.inputs()
        if not inputs:
            return [0.0] * len(cands)
        run = self.run
        table = run.table(cands)
        columns = []
        for i, costs in enumerate(inputs):
            key = (id(cands), i, id(costs))
            found = run.columns.get(key)
            if found is None:
                known = costs.eager_by_index
                first_of = table.first_of[i]
                for k in first_of.keys() - known.keys():  # the needs not priced yet for this input
                    costs.eager_cost(cands[first_of[k]][0][i], k)
                found = run.columns[key] = tuple(map(known.__getitem__, table.needs[i]))
            columns.append(found)
        return list(map(sum, zip(*columns, strict=True)))  # the inputs' costs added in order

    def comm_us_later(self, sig: NdSig) -> Callable[[], float]:
        """`comm_us(sig)` on first call; holds the input types, not the run's caches."""
        return partial(_priced_later, self.in_types, self.hierarchy, self.run.model, sig)

    def comm_us(self, sig: NdSig) -> float:
        """Modelled time of the input boxing `sig` needs.

        Turning a non-partial input into a partial one is free locally but defers a reduction;
        it is charged one all-reduce of that input on those mesh axes (DTensor forbids it).
        """
        total = 0.0
        for costs, need in zip(self.inputs(), sig[0], strict=True):
            for term in costs.comm_terms(need):  # the same additions in the same order
                total += term
        return total


def _priced_later(
    in_types: tuple[GlobalTensorType, ...], hierarchy: tuple[int, ...], model: CommModel, sig: NdSig
) -> float:
    return OpMeta.of_types("", hierarchy, in_types, model).comm_us(sig)


def select_oneflow_1d(cands: list[NdSig], meta: OpMeta) -> Decision:
    scored: list[Candidate] = []
    for sig in cands:
        order = 0.0
        cost = 0.0
        for costs, need in zip(meta.inputs(), sig[0], strict=True):
            if not meta.constrained and costs.has(need):
                order -= 10
            cost += costs.ibn_cost(need)
        scored.append(Candidate(sig, order, cost, meta.comm_us_later(sig)))
    if len(scored) == 1:
        return Decision(scored, scored[0].sig, "the only candidate left", lambda: scored[0].comm_us)
    best = min(scored, key=lambda c: (c.order_value, c.oneflow_cost))  # min keeps the earliest tie
    reason = f"lowest (OrderValue, IbnCopyCost) = ({best.order_value:g}, {best.oneflow_cost:g})"
    return Decision(scored, best.sig, reason, lambda: best.comm_us)


def select_oneflow_nd(cands: list[NdSig], meta: OpMeta) -> Decision:
    """OneFlow's greedy scan (kAllMatch): the first candidate whose inputs all match, else the
    lowest eager ND copy cost (ties keep the earlier one unless fewer inputs mismatch)."""
    if len(cands) == 1:
        sig = cands[0]
        return Decision(_scored_nd_later(cands, meta), sig, "the only candidate left", meta.comm_us_later(sig))
    table = meta.table(cands)
    have = meta.have_indices()
    first = table.first_match.get(have)
    if first is not None:  # the scan stops there whatever the costs before it
        sig = cands[first]
        return Decision(
            _scored_nd_later(cands, meta), sig, "first candidate whose inputs all match (kAllMatch)",
            meta.comm_us_later(sig),
        )
    # Ops of different kinds share candidate lists (equal per-axis lists) and inputs: the scan
    # depends on those alone, so a run does it once per pair.
    run = meta.run
    scan_key = (id(cands), *map(id, meta.inputs()))
    found = run.scans.get(scan_key)
    if found is None:
        found = run.scans[scan_key] = _greedy_scan(meta.eager_costs(cands), table, have)
    best, min_cost = found
    sig = cands[best]
    return Decision(
        _scored_nd_later(cands, meta), sig, f"lowest eager ND copy cost {min_cost:g}", meta.comm_us_later(sig)
    )


def _greedy_scan(costs: list[float], table: _CandidateTable, have: tuple[int, ...]) -> tuple[int, float]:
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


def _greedy_scan_exact(costs: list[float], table: _CandidateTable, have: tuple[int, ...]) -> tuple[int, float]:
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


def _scored_nd_later(cands: list[NdSig], meta: OpMeta) -> Callable[[], list[Candidate]]:
    """The scored ND candidates, built on first read from the input types alone (a decision is
    memoised across runs and must not keep a run's caches alive)."""
    return partial(_scored_nd, cands, meta.in_types, meta.hierarchy, meta.run.model)


def _scored_nd(
    cands: list[NdSig], in_types: tuple[GlobalTensorType, ...], hierarchy: tuple[int, ...], model: CommModel,
) -> list[Candidate]:
    meta = OpMeta.of_types("oneflow", hierarchy, in_types, model)
    return [
        Candidate(c, 0.0, min(cost, FLT_MAX), meta.comm_us_later(c))
        for c, cost in zip(cands, meta.eager_costs(cands), strict=True)
    ]


def select_cost(cands: list[NdSig], meta: OpMeta) -> Decision:
    """The lowest modelled boxing time (rounded to 1e-9 us), then the fewest mismatching inputs,
    then the earliest candidate."""
    table = meta.table(cands)
    inputs = meta.inputs()
    # Per input, its terms towards each distinct ND-SBP a candidate needs (priced once).
    terms = [{k: costs.comm_terms(cands[j][0][i]) for k, j in table.first_of[i].items()}
             for i, costs in enumerate(inputs)]
    times: list[float] = []
    for combo in zip(*table.needs, strict=True) if inputs else [()] * len(cands):
        total = 0.0
        for by_need, k in zip(terms, combo, strict=True):
            for term in by_need[k]:  # the additions of `OpMeta.comm_us`, in its order
                total += term
        times.append(total)
    have = tuple(costs.have_index for costs in inputs)
    ratios = table.mismatch_counts(have) if inputs else [0] * len(cands)
    best = min(range(len(cands)), key=lambda j: (round(times[j], 9), ratios[j]))
    scored = [Candidate(sig, 0.0, 0.0, t) for sig, t in zip(cands, times, strict=True)]
    return Decision(scored, cands[best], f"lowest modelled boxing time {times[best]:.3f} us", times[best])


def _lists_key(lists: list[list[Sig]]) -> tuple[object, ...]:
    """Per-axis 1-D lists by the ids of their entries (the caller keeps them referenced)."""
    sides = tuple(chain.from_iterable(chain.from_iterable(lists)))  # (ins, outs) of every signature
    return (tuple(map(len, lists)), tuple(map(len, sides)), tuple(map(id, chain.from_iterable(sides))))


_ND_INDEX: dict[NdSbpAttr, int] = {}
"""A small int per distinct ND-SBP value (the memo keys hold these, not attribute trees)."""

_MODEL_INDEX: dict[CommModel, int] = {}

_SIGNATURES: dict[tuple[tuple[int, ...], tuple[int, ...]], SignatureAttr] = {}
"""One `#sbp.sig` attribute per distinct signature (by `_ND_INDEX`)."""


def clear_interned() -> None:
    """Forget the process-wide interned ND-SBP indices and signature attributes (memo keys hold
    the indices: clear the memo with them)."""
    _ND_INDEX.clear()
    _SIGNATURES.clear()


class _InputCosts:
    """The costs of one input (shape, element size, ND-SBP on a hierarchy) towards each ND-SBP a
    candidate needs; shared by every op of a run with an equal input."""

    __slots__ = ("_comm", "_ibn", "eager_by_index", "have", "have_index", "hierarchy", "run", "shape", "size", "ty")

    def __init__(self, run: _Run, info: _TypeInfo, hierarchy: tuple[int, ...]):
        assert info.nd_sbp is not None
        self.run, self.ty, self.have, self.hierarchy = run, info.ty, info.nd_sbp, hierarchy
        self.have_index = info.nd_index
        self.shape: tuple[int, ...] = info.key[0]  # type: ignore[assignment]
        self.size = byte_size(info.ty)
        self._comm: dict[int, tuple[float, ...]] = {}
        self.eager_by_index: dict[int, float] = {}
        """`eager_cost` by the needed ND-SBP's `_ND_INDEX`."""
        self._ibn: dict[int, float] = {}

    def has(self, need: NdSbpAttr) -> bool:
        """`have == need`."""
        return self.run.nd_index(need) == self.have_index

    def comm_terms(self, need: NdSbpAttr) -> tuple[float, ...]:
        key = self.run.nd_index(need)
        found = self._comm.get(key)
        if found is None:
            found = self._comm[key] = input_comm_terms(self.ty, self.have, need, self.hierarchy, self.run.model)
        return found

    def eager_cost(self, need: NdSbpAttr, index: int) -> float:
        """OneFlow's eager ND copy cost from this input to `need` (whose `_ND_INDEX` is `index`)."""
        found = self.eager_by_index.get(index)
        if found is None:
            pricer = self.run.eager_pricer(self.have, self.have_index, need, index, self.hierarchy, self.shape)
            found = self.eager_by_index[index] = pricer(self.size)
        return found

    def ibn_cost(self, need: NdSbpAttr) -> float:
        """OneFlow's 1-D IbnCopyCost from this input to `need`."""
        key = self.run.nd_index(need)
        found = self._ibn.get(key)
        if found is None:
            found = self._ibn[key] = ibn_copy_cost_1d(self.have[0], need[0], self.size)
        return found


class _CandidateTable:
    """A candidate list as small ints: per input position, the `_ND_INDEX` each candidate needs."""

    __slots__ = ("first_match", "first_of", "needs")

    def __init__(self, run: _Run, cands: list[NdSig]):
        n_ins = len(cands[0][0]) if cands else 0
        ins = [sig[0] for sig in cands]
        self.needs = tuple(tuple(map(run.nd_index, map(itemgetter(i), ins))) for i in range(n_ins))
        # Per input position, a candidate needing each distinct ND-SBP (to price it once).
        self.first_of = [{k: j for j, k in reversed(list(enumerate(column)))} for column in self.needs]
        # The first candidate needing each combination of inputs (kAllMatch's pick).
        self.first_match: dict[tuple[int, ...], int] = {}
        for j, combo in enumerate(zip(*self.needs, strict=True)):
            self.first_match.setdefault(combo, j)

    def mismatches(self, j: int, have: tuple[int, ...]) -> int:
        """How many inputs candidate j needs in another ND-SBP than they have."""
        return sum([column[j] != h for column, h in zip(self.needs, have, strict=True)])

    def mismatch_counts(self, have: tuple[int, ...]) -> list[int]:
        """Per candidate, how many inputs it needs in another ND-SBP than they have."""
        counts = [0] * (len(self.needs[0]) if self.needs else 0)
        for column, h in zip(self.needs, have, strict=True):
            counts = [c + (k != h) for c, k in zip(counts, column, strict=True)]
        return counts


class _Run:
    """The caches of one pass run. Objects cached by id are referenced here, so no id is reused."""

    def __init__(self, model: CommModel):
        self.model = model
        self.model_index = _MODEL_INDEX.setdefault(model, len(_MODEL_INDEX))
        self._nds: dict[int, tuple[NdSbpAttr, int]] = {}
        self._types: dict[int, _TypeInfo] = {}
        self._elements: dict[int, tuple[int, bool]] = {}
        self._fitting_columns: dict[tuple[object, ...], list[bool] | None] = {}
        self._signatures: dict[int, tuple[NdSig, SignatureAttr]] = {}
        self.scans: dict[tuple[int, ...], tuple[int, float]] = {}
        self.decisions: dict[tuple[object, ...], Decision] = {}
        """Decisions of unconstrained ops by (candidate list id, input type keys, rule)."""
        self._inputs: dict[tuple[object, ...], _InputCosts] = {}
        self._placements: dict[tuple[int, str], tuple[object, tuple[int, ...]]] = {}
        self._last_block: object = None
        self._last_placement = ""
        self._last_hierarchy: tuple[int, ...] = ()
        self.nd_by_entries: dict[tuple[int, ...], tuple[tuple[object, ...], NdSbpAttr]] = {}
        """ND-SBPs of `nd_product` by the ids of their entries (held with them)."""
        self._rules: dict[type[Operation], SbpRule | None] = {}
        self._results: dict[tuple[object, ...], GlobalTensorType] = {}
        self._fits: dict[tuple[object, ...], bool] = {}
        self._fit_classes: dict[tuple[object, ...], tuple[object, ...]] = {}
        self._lists: list[object] = []
        self._axis_lists: dict[tuple[object, ...], tuple[list[list[Sig]], tuple[object, ...]]] = {}
        self.candidates: dict[tuple[object, ...], list[NdSig]] = {}
        self.products: dict[tuple[object, ...], list[NdSig]] = {}
        self.columns: dict[tuple[object, ...], tuple[float, ...]] = {}
        self._tables: dict[int, tuple[list[NdSig], _CandidateTable]] = {}
        self.fitting: dict[tuple[object, ...], list[NdSig]] = {}
        self._eager: dict[tuple[object, ...], Pricer | dict[tuple[int, ...], Pricer]] = {}

    def table(self, cands: list[NdSig]) -> _CandidateTable:
        """The int table of a candidate list, by its id (the list is kept referenced)."""
        found = self._tables.get(id(cands))
        if found is None:
            found = self._tables[id(cands)] = (cands, _CandidateTable(self, cands))
        return found[1]

    def eager_pricer(self, have: NdSbpAttr, have_index: int, need: NdSbpAttr, need_index: int,
                     hierarchy: tuple[int, ...], shape: tuple[int, ...]) -> Pricer:
        """`eager_nd_pricer` of a transition, shared by every input size (and shape, unless it
        matters: `eager_reads_shape`)."""
        key = (have_index, need_index, hierarchy)
        found = self._eager.get(key)
        if found is None:
            src, dst = tuple(have), tuple(need)
            found = {} if eager_reads_shape(src, dst) else eager_nd_pricer(src, dst, hierarchy, shape)
            self._eager[key] = found
        if isinstance(found, dict):
            by_shape = found.get(shape)
            if by_shape is None:
                by_shape = found[shape] = eager_nd_pricer(tuple(have), tuple(need), hierarchy, shape)
            return by_shape
        return found

    def axis_lists(self, rule: SbpRule, op: Operation, hierarchy: tuple[int, ...], complete: bool,
                   in_shapes: tuple[tuple[int, ...], ...]) -> tuple[list[list[Sig]], tuple[object, ...]]:
        """`axis_lists` of the op and a key telling them apart by value: ops of one kind whose
        rule gives them equal `list_key`s share their lists."""
        list_key = rule.list_key(op, in_shapes)
        key = None if list_key is None else (type(op), list_key, hierarchy, complete)
        found = None if key is None else self._axis_lists.get(key)
        if found is None:
            lists = axis_lists(rule, op, hierarchy, complete)
            found = (lists, _lists_key(lists))
            if key is not None:
                self._axis_lists[key] = found
            self._lists.append(lists)  # lists_key holds the ids of their entries
        return found

    def fit_classes(self, shapes: tuple[tuple[int, ...], ...], hierarchy: tuple[int, ...]) -> tuple[object, ...]:
        """`shapes` with every extent capped at the device count: `fits_shape` gives the same
        answer for the capped shape (an extent of at least prod(hierarchy) fits every split)."""
        key = (shapes, hierarchy)
        found = self._fit_classes.get(key)
        if found is None:
            cap = math.prod(hierarchy)
            found = self._fit_classes[key] = tuple([tuple([min(d, cap) for d in s]) for s in shapes])
        return found

    def fitting_column(self, cands: list[NdSig], i: int, shape: tuple[int, ...],
                       hierarchy: tuple[int, ...]) -> list[bool] | None:
        """Per candidate, whether input i's needed ND-SBP fits `shape` (`fits_shape`; None: all
        do); decided once per distinct ND-SBP and shape, cached per candidate list, input
        position and shape."""
        key = (id(cands), i, shape, hierarchy)
        if key in self._fitting_columns:
            return self._fitting_columns[key]
        table = self.table(cands)
        first_of = table.first_of[i]
        fits = self._fits
        allowed = set()
        for k, j in first_of.items():
            ok = fits.get((k, shape, hierarchy))
            if ok is None:
                ok = fits[(k, shape, hierarchy)] = fits_shape(cands[j][0][i], shape, hierarchy)
            if ok:
                allowed.add(k)
        found = None if len(allowed) == len(first_of) else list(map(allowed.__contains__, table.needs[i]))
        self._fitting_columns[key] = found
        return found

    def signature(self, decision: Decision) -> SignatureAttr:
        """The decision's `#sbp.sig`, one attribute per distinct signature."""
        if decision._signature is None:
            chosen = decision.chosen
            by_id = self._signatures.get(id(chosen))  # candidates are shared by the decisions of a run
            if by_id is None:
                key = (tuple(map(self.nd_index, chosen[0])), tuple(map(self.nd_index, chosen[1])))
                found = _SIGNATURES.get(key)
                if found is None:
                    found = _SIGNATURES[key] = decision.signature()
                by_id = self._signatures[id(chosen)] = (chosen, found)
            decision._signature = by_id[1]
        return decision._signature

    def nd_index(self, nd: NdSbpAttr) -> int:
        found = self._nds.get(id(nd))
        if found is None:
            found = self._nds[id(nd)] = (nd, _ND_INDEX.setdefault(nd, len(_ND_INDEX)))
        return found[1]

    def type_info(self, ty: GlobalTensorType) -> _TypeInfo:
        """What a decision reads of a type, once per type object (inferred ops share their result
        types: see `result_type`)."""
        found = self._types.get(id(ty))
        if found is None:
            assert isinstance(ty, GlobalTensorType)
            found = self._types[id(ty)] = _TypeInfo(self, ty)
        return found

    def element_facts(self, ty: GlobalTensorType) -> tuple[int, bool]:
        """(bytes, integer-ness) of ty's element type, by id (the run holds the type)."""
        elt = ty.element_type
        found = self._elements.get(id(elt))
        if found is None:
            found = self._elements[id(elt)] = (element_bytes(ty), isinstance(elt, IntegerType))
        return found

    def input_costs(self, info: _TypeInfo, hierarchy: tuple[int, ...]) -> _InputCosts:
        """The costs of an input, shared by the inputs of equal shape, element size and ND-SBP
        (kept on its `_TypeInfo` too, for the next op reading the same type)."""
        found = info.costs
        if found is not None and found.hierarchy == hierarchy:
            return found
        shape, nbytes, _, have = info.key
        key = (shape, nbytes, have, hierarchy)
        found = self._inputs.get(key)
        if found is None:
            found = self._inputs[key] = _InputCosts(self, info, hierarchy)
        info.costs = found
        return found

    def hierarchy(self, op: Operation, placement: str) -> tuple[int, ...]:
        """The hierarchy of the placement named `placement`, seen from `op`. Ops with an SBP rule
        are no symbol tables, so the lookup depends on the op's block only."""
        block = op.parent
        if block is self._last_block and placement == self._last_placement:  # ops come block by block
            return self._last_hierarchy
        key = (id(block), placement)
        found = self._placements.get(key)
        if found is None or block is None:
            op_def = lookup_placement_named(op, placement)
            if op_def is None:
                raise OpError(op, f"{describe_op(op)}: placement @{placement} is not defined")
            found = self._placements[key] = (block, op_def.get_hierarchy())
        if block is not None:
            self._last_block, self._last_placement, self._last_hierarchy = block, placement, found[1]
        return found[1]

    def rule_of(self, op: Operation) -> SbpRule | None:
        cls = type(op)
        if cls not in self._rules:
            self._rules[cls] = op.get_trait(SbpRule)
        return self._rules[cls]

    def result_type(self, ty: GlobalTensorType, nd: NdSbpAttr, shape: tuple[int, ...]) -> GlobalTensorType:
        """`ty.with_sbp(nd)` (`shape` is ty's), one object per distinct result type. Element types,
        layouts and ND-SBPs are keyed by id: the cached type holds the objects, so no id is reused.
        The placement is a flat symbol (the type verifier rejects nested references)."""
        key = (shape, id(ty.element_type), ty.placement.root_reference.data, id(ty.layout), id(nd))
        found = self._results.get(key)
        if found is None:
            found = self._results[key] = ty.with_sbp(nd)
        return found


class _TypeInfo:
    """One type as plain values. `key`: (shape, element bytes, integer-ness, ND-SBP index or
    None), all a decision reads of an input type (rules may depend on integer-ness);
    `placement`: the placement's symbol name; `costs`: its `_InputCosts` once read as an input."""

    __slots__ = ("costs", "key", "nd_index", "nd_sbp", "placement", "ty")

    def __init__(self, run: _Run, ty: GlobalTensorType):
        self.ty = ty
        nd = self.nd_sbp = ty.nd_sbp
        shape = ty.get_shape()
        self.placement = ty.placement.root_reference.data  # a flat symbol (verified)
        self.nd_index = None if nd is None else run.nd_index(nd)
        self.key = (shape, *run.element_facts(ty), self.nd_index)
        self.costs: _InputCosts | None = None
