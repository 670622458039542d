"""`infer-sbp`: choose an ND-SBP signature for every op and type every result (SPEC §2.5, §3).

Ops are visited in program order; each op's candidates come from its `SbpRule` trait.

* `rule=oneflow` (default) reproduces OneFlow's eager inference bit for bit
  (reference/oneflow.md §1-§3): on a 1-D placement the candidates are sorted by
  (OrderValue, IbnCopyCost); on an ND placement the direct product of per-axis lists is shape-
  and constraint-filtered with swap-with-last removal and scanned greedily with the eager ND
  copy cost. Quirks kept on purpose are listed in docs/oneflow_quirks.md.
* `rule=cost` scores the complete candidate lists (including partial max/min rules OneFlow
  lacks) by the α-β time of the boxing their inputs need, planned by the same model the boxing
  planner uses. It never picks a signature costlier than OneFlow's pick: that pick is among its
  candidates and it minimises the same price.

Hints (`sbp.hint = #sbp.sig<...>`, `?` = any) and result types written with an SBP constrain the
candidates; if none survives, the op gets a located error listing the candidates. Results are
memoised per op meta, as OneFlow's GlobalTensorInferCache does.

Speed (bench/bench_infer_sbp.py): a run caches per input its costs towards each needed ND-SBP,
the candidate lists and their shape filtering, the placement lookups, and builds each distinct
signature attribute and result type once; keys hold small ints and shape tuples rather than
attributes (hashing an attribute walks its parameters, building one runs its verifier). Under
rule=oneflow the α-β time of a candidate only feeds the report, so it is computed on first read.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from dialects.errors import OpError
from dialects.sbp import (
    BROADCAST,
    GlobalTensorType,
    NdSbpAttr,
    PartialAttr,
    SbpAttr,
    SignatureAttr,
    nd_sbp,
)
from dialects.sbp_ops import BoxingOp, CollectiveOp, PlacementOp, ToGlobalOp, describe_op, lookup_placement
from dialects.sharding import fits_shape
from dialects.signatures import NdSig, SbpRule, Sig
from passes.cost_model import (
    DEFAULT_MODEL,
    FLT_MAX,
    VALID_MAX_COPY_COST,
    CommModel,
    eager_nd_cost,
    ibn_copy_cost_1d,
    local_elements,
    step_time,
    transition_time,
)

_ELEMENT_BYTES: dict[Attribute, int] = {}


def element_bytes(ty: GlobalTensorType) -> int:
    elt = ty.element_type
    found = _ELEMENT_BYTES.get(elt)
    if found is None:  # str() runs the printer (~10 µs): once per element type
        if isinstance(elt, IntegerType):
            found = max(1, elt.width.data // 8)
        else:
            found = {"f32": 4, "f16": 2, "bf16": 2}.get(str(elt), 4)
        _ELEMENT_BYTES[elt] = found
    return found


def byte_size(ty: GlobalTensorType) -> float:
    return float(ty.element_count() * element_bytes(ty))


def format_nd_sig(sig: NdSig) -> str:
    ins = ", ".join(s.short_str() for s in sig[0])
    outs = ", ".join(s.short_str() for s in sig[1])
    return f"{ins} -> {outs}"


# ---------------------------------------------------------------------------
# Candidates
# ---------------------------------------------------------------------------


def all_b_sig(op: Operation) -> Sig:
    return (tuple(BROADCAST for _ in op.operands), tuple(BROADCAST for _ in op.results))


def axis_list(rule: SbpRule, op: Operation, n: int, complete: bool) -> list[Sig]:
    """Per-mesh-axis 1-D list: the op's rules (+ partial max/min if complete) + all-B."""
    sigs = list(rule.signatures(op, n))
    if complete:
        sigs += [s for s in rule.extremum_signatures(op, n) if s not in sigs]
    sigs.append(all_b_sig(op))
    return sigs


def axis_lists(rule: SbpRule, op: Operation, hierarchy: Sequence[int], complete: bool) -> list[list[Sig]]:
    """The 1-D list of each mesh axis (computed once per axis size)."""
    lists = {h: axis_list(rule, op, h, complete) for h in set(hierarchy)}
    return [lists[h] for h in hierarchy]


def nd_candidates(rule: SbpRule, op: Operation, hierarchy: Sequence[int], complete: bool) -> list[NdSig]:
    """The ND list before shape filtering: the direct product of the per-axis lists, mesh axis 0
    major (DfsGetNdSbpSignature), passed through the op's EnumerateNdSbpSignatures hook."""
    product = nd_product(axis_lists(rule, op, hierarchy, complete), len(op.operands), len(op.results))
    return rule.nd_signatures(op, hierarchy, product) if len(hierarchy) > 1 else product


def nd_product(lists: Sequence[Sequence[Sig]], n_ins: int, n_outs: int) -> list[NdSig]:
    """The ND candidates of per-axis 1-D lists, mesh axis 0 major."""
    made: dict[tuple[int, ...], NdSbpAttr] = {}  # nd_sbp by entry ids; `lists` keeps the entries alive

    def nd(entries: tuple[SbpAttr, ...]) -> NdSbpAttr:
        key = tuple(map(id, entries))
        found = made.get(key)
        if found is None:
            found = made[key] = nd_sbp(*entries)
        return found

    result: list[NdSig] = []
    for combo in itertools.product(*lists):
        # column i of the per-axis signatures is operand (result) i's ND-SBP
        ins = tuple(map(nd, zip(*(c[0][:n_ins] for c in combo), strict=True)))
        outs = tuple(map(nd, zip(*(c[1][:n_outs] for c in combo), strict=True)))
        result.append((ins, outs))
    return result


def swap_with_last_filter(items: list[NdSig], keep) -> list[NdSig]:  # type: ignore[no-untyped-def]
    """OneFlow removes rejected candidates by swapping in the last one (order changes).

    Like OneFlow ("go down from the tail to the head"), the scan runs from the last index to
    the first, so the element swapped in has already been kept.
    """
    items = list(items)
    for i in range(len(items) - 1, -1, -1):
        if not keep(items[i]):
            items[i] = items[-1]
            items.pop()
    return items


def contains(sig: NdSig, hint: SignatureAttr | None, required_outs: Sequence[NdSbpAttr | None]) -> bool:
    for cand, want in zip(sig[1], required_outs, strict=True):
        if want is not None and cand != want:
            return False
    if hint is None:
        return True
    for cand, want in zip(sig[0], hint.inputs.data, strict=False):
        if isinstance(want, NdSbpAttr) and cand != want:
            return False
    for cand, want in zip(sig[1], hint.outputs.data, strict=False):
        if isinstance(want, NdSbpAttr) and cand != want:
            return False
    return True


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
        if isinstance(b, PartialAttr) and not isinstance(a, PartialAttr):
            n = hierarchy[d]
            terms.append(step_time("all_reduce", 2.0 * local * (n - 1) / n, n, model))
    return tuple(terms)


@dataclass
class OpMeta:
    rule: str
    hierarchy: tuple[int, ...]
    in_types: tuple[GlobalTensorType, ...]
    in_sbps: tuple[NdSbpAttr, ...]
    constrained: bool
    model: CommModel = field(default=DEFAULT_MODEL)
    out_shapes: tuple[tuple[int, ...], ...] = ()
    run: _Run | None = field(default=None, repr=False, compare=False)
    _inputs: list[_InputCosts] | None = field(default=None, init=False, repr=False, compare=False)

    def ensure_run(self) -> _Run:
        if self.run is None or self.run.model is not self.model:
            self.run = _Run(self.model)
        return self.run

    def inputs(self) -> list[_InputCosts]:
        """The cached per-input costs of the operands (shared by the ops of a run with equal inputs)."""
        if self._inputs is None:
            run = self.ensure_run()
            self._inputs = [run.input_costs(t, have, self.hierarchy) for t, have in zip(
                self.in_types, self.in_sbps, strict=True)]
        return self._inputs

    def input(self, i: int) -> _InputCosts:
        return self.inputs()[i]

    def table(self, cands: list[NdSig]) -> _CandidateTable:
        return self.ensure_run().table(cands)

    def eager_costs(self, cands: list[NdSig]) -> list[float]:
        """Per candidate, the sum over the inputs of OneFlow's eager ND copy cost. The columns
        (one input's cost for every candidate) are cached per run and candidate list, so ops
        with an equal input share them; each distinct needed ND-SBP is priced once."""
        inputs = self.inputs()
        if not inputs:
            return [0.0] * len(cands)
        run = self.ensure_run()
        table = run.table(cands)
        columns = []
        for i, costs in enumerate(inputs):
            key = (id(cands), i, id(costs))
            found = run.columns.get(key)
            if found is None:
                known = costs.eager_by_index
                price = {k: known[k] if k in known else costs.eager_cost(cands[j][0][i])
                         for k, j in table.first_of[i].items()}
                found = run.columns[key] = tuple(map(price.__getitem__, table.needs[i]))
            columns.append(found)
        return [sum(t) for t in zip(*columns, strict=True)]  # the inputs' costs added in order

    def comm_us_later(self, sig: NdSig) -> Callable[[], float]:
        """`comm_us(sig)` on first call; holds the input types, not the run's caches."""
        return partial(_priced_later, self.in_types, self.in_sbps, self.hierarchy, self.model, sig)

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
    in_types: tuple[GlobalTensorType, ...], in_sbps: tuple[NdSbpAttr, ...], hierarchy: tuple[int, ...],
    model: CommModel, sig: NdSig,
) -> float:
    return OpMeta("", hierarchy, in_types, in_sbps, False, model).comm_us(sig)


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
    have = tuple(costs.have_index for costs in meta.inputs())
    first = table.first_match.get(have)
    if first is not None:  # the scan stops there whatever the costs before it
        sig = cands[first]
        return Decision(
            _scored_nd_later(cands, meta), sig, "first candidate whose inputs all match (kAllMatch)",
            meta.comm_us_later(sig),
        )
    costs = meta.eager_costs(cands)
    ratios = table.mismatch_counts(have)
    best = -1
    min_cost, min_ratio = VALID_MAX_COPY_COST, 0
    for j, (cost, ratio) in enumerate(zip(costs, ratios, strict=True)):
        cost = min(cost, FLT_MAX)
        if cost < min_cost * 0.9999999 or (cost <= min_cost * 1.0000001 and ratio < min_ratio):
            best, min_cost, min_ratio = j, cost, ratio
    if best < 0:
        raise ValueError("can't find available sbp signature")
    sig = cands[best]
    return Decision(
        _scored_nd_later(cands, meta), sig, f"lowest eager ND copy cost {min_cost:g}", meta.comm_us_later(sig)
    )


def _scored_nd_later(cands: list[NdSig], meta: OpMeta) -> Callable[[], list[Candidate]]:
    """The scored ND candidates, built on first read from the input types alone (a decision is
    memoised across runs and must not keep a run's caches alive)."""
    return partial(_scored_nd, cands, meta.in_types, meta.in_sbps, meta.hierarchy, meta.model)


def _scored_nd(
    cands: list[NdSig], in_types: tuple[GlobalTensorType, ...], in_sbps: tuple[NdSbpAttr, ...],
    hierarchy: tuple[int, ...], model: CommModel,
) -> list[Candidate]:
    meta = OpMeta("oneflow", hierarchy, in_types, in_sbps, False, model)
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


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


@dataclass
class OpRecord:
    """What the report prints for one op; its texts are built on first use."""

    op: Operation
    decision: Decision
    in_types: tuple[GlobalTensorType, ...]
    in_sbps: tuple[NdSbpAttr, ...]

    @cached_property
    def description(self) -> str:
        """`describe_op(op)` as it read when the op was inferred."""
        return f"{self.op.name}({', '.join(t.describe() for t in self.in_types)})"

    @cached_property
    def boxing(self) -> list[str]:
        return [
            f"operand {i}: {have.short_str()} -> {need.short_str()}"
            for i, (have, need) in enumerate(zip(self.in_sbps, self.decision.chosen[0], strict=True))
            if have != need
        ]


# ---------------------------------------------------------------------------
# Caches. Building an attribute runs its verifier and hashing one walks its parameters, so the
# hot path keys on small ints and shape tuples, and builds each signature and result type once.
# ---------------------------------------------------------------------------

_MEMO: dict[tuple[object, ...], Decision] = {}
"""Decisions per op meta, kept across runs (OneFlow's GlobalTensorInferCache)."""

_ND_INDEX: dict[NdSbpAttr, int] = {}
"""A small int per distinct ND-SBP value (the memo keys hold these, not attribute trees)."""

_MODEL_INDEX: dict[CommModel, int] = {}

_SIGNATURES: dict[tuple[tuple[int, ...], tuple[int, ...]], SignatureAttr] = {}
"""One `#sbp.sig` attribute per distinct signature (by `_ND_INDEX`)."""


class _InputCosts:
    """The costs of one input (shape, element size, ND-SBP on a hierarchy) towards each ND-SBP a
    candidate needs; shared by every op of a run with an equal input."""

    __slots__ = ("_comm", "_ibn", "eager_by_index", "have", "have_index", "hierarchy", "run", "ty")

    def __init__(self, run: _Run, ty: GlobalTensorType, have: NdSbpAttr, hierarchy: tuple[int, ...]):
        self.run, self.ty, self.have, self.hierarchy = run, ty, have, hierarchy
        self.have_index = run.nd_index(have)
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

    def eager_cost(self, need: NdSbpAttr) -> float:
        """OneFlow's eager ND copy cost from this input to `need`."""
        key = self.run.nd_index(need)
        found = self.eager_by_index.get(key)
        if found is None:
            t = self.ty
            found = eager_nd_cost(tuple(self.have), tuple(need), byte_size(t), self.hierarchy, t.get_shape())
            self.eager_by_index[key] = found
        return found

    def ibn_cost(self, need: NdSbpAttr) -> float:
        """OneFlow's 1-D IbnCopyCost from this input to `need`."""
        key = self.run.nd_index(need)
        found = self._ibn.get(key)
        if found is None:
            found = self._ibn[key] = ibn_copy_cost_1d(self.have[0], need[0], byte_size(self.ty))
        return found


class _CandidateTable:
    """A candidate list as small ints: per input position, the `_ND_INDEX` each candidate needs."""

    __slots__ = ("first_match", "first_of", "needs")

    def __init__(self, run: _Run, cands: list[NdSig]):
        n_ins = len(cands[0][0]) if cands else 0
        self.needs = tuple(tuple(run.nd_index(sig[0][i]) for sig in cands) for i in range(n_ins))
        # Per input position, a candidate needing each distinct ND-SBP (to price it once).
        self.first_of = [{k: j for j, k in reversed(list(enumerate(column)))} for column in self.needs]
        # The first candidate needing each combination of inputs (kAllMatch's pick).
        self.first_match: dict[tuple[int, ...], int] = {}
        for j, combo in enumerate(zip(*self.needs, strict=True)):
            self.first_match.setdefault(combo, j)

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
        self._types: dict[int, tuple[GlobalTensorType, tuple[object, ...]]] = {}
        self._inputs: dict[tuple[object, ...], _InputCosts] = {}
        self._placements: dict[tuple[int, str], tuple[object, PlacementOp | None, tuple[int, ...]]] = {}
        self._rules: dict[type[Operation], SbpRule | None] = {}
        self._results: dict[tuple[object, ...], GlobalTensorType] = {}
        self._fits: dict[tuple[object, ...], bool] = {}
        self._lists: list[object] = []
        self.candidates: dict[tuple[object, ...], list[NdSig]] = {}
        self.products: dict[tuple[object, ...], list[NdSig]] = {}
        self.columns: dict[tuple[object, ...], tuple[float, ...]] = {}
        self._tables: dict[int, tuple[list[NdSig], _CandidateTable]] = {}
        self.fitting: dict[tuple[object, ...], list[NdSig]] = {}

    def table(self, cands: list[NdSig]) -> _CandidateTable:
        """The int table of a candidate list, by its id (the list is kept referenced)."""
        found = self._tables.get(id(cands))
        if found is None:
            found = self._tables[id(cands)] = (cands, _CandidateTable(self, cands))
        return found[1]

    def lists_key(self, lists: list[list[Sig]]) -> tuple[object, ...]:
        """Per-axis 1-D lists by the ids of their entries (kept referenced for the run)."""
        self._lists.append(lists)
        return tuple(tuple((tuple(map(id, ins)), tuple(map(id, outs))) for ins, outs in sigs) for sigs in lists)

    def fits(self, nd: NdSbpAttr, shape: tuple[int, ...], hierarchy: tuple[int, ...]) -> bool:
        """`fits_shape`, once per ND-SBP, shape and hierarchy."""
        key = (self.nd_index(nd), shape, hierarchy)
        found = self._fits.get(key)
        if found is None:
            found = self._fits[key] = fits_shape(nd, shape, hierarchy)
        return found

    def signature(self, decision: Decision) -> SignatureAttr:
        """The decision's `#sbp.sig`, one attribute per distinct signature."""
        if decision._signature is None:
            ins, outs = decision.chosen
            key = (tuple(map(self.nd_index, ins)), tuple(map(self.nd_index, outs)))
            found = _SIGNATURES.get(key)
            if found is None:
                found = _SIGNATURES[key] = decision.signature()
            decision._signature = found
        return decision._signature

    def nd_index(self, nd: NdSbpAttr) -> int:
        found = self._nds.get(id(nd))
        if found is None:
            found = self._nds[id(nd)] = (nd, _ND_INDEX.setdefault(nd, len(_ND_INDEX)))
        return found[1]

    def type_key(self, ty: GlobalTensorType) -> tuple[object, ...]:
        """(shape, element bytes, ND-SBP index or None, integer-ness): all a decision reads of an
        input type (rules may depend on integer-ness)."""
        found = self._types.get(id(ty))
        if found is None:
            nd = ty.nd_sbp
            key = (ty.get_shape(), element_bytes(ty), None if nd is None else self.nd_index(nd),
                   isinstance(ty.element_type, IntegerType))
            found = self._types[id(ty)] = (ty, key)
        return found[1]

    def input_costs(self, ty: GlobalTensorType, have: NdSbpAttr, hierarchy: tuple[int, ...]) -> _InputCosts:
        shape, nbytes, _, _ = self.type_key(ty)
        key = (shape, nbytes, self.nd_index(have), hierarchy)
        found = self._inputs.get(key)
        if found is None:
            found = self._inputs[key] = _InputCosts(self, ty, have, hierarchy)
        return found

    def placement(self, op: Operation, ty: GlobalTensorType) -> tuple[PlacementOp | None, tuple[int, ...]]:
        """`lookup_placement(op, ty)` and its hierarchy. Ops with an SBP rule are no symbol
        tables, so the lookup depends on the op's block only."""
        block = op.parent
        key = (id(block), ty.placement_name)
        found = self._placements.get(key)
        if found is None or block is None:
            placement = lookup_placement(op, ty)
            hierarchy = placement.get_hierarchy() if isinstance(placement, PlacementOp) else ()
            found = self._placements[key] = (block, placement, hierarchy)
        return found[1], found[2]  # type: ignore[return-value]

    def rule_of(self, op: Operation) -> SbpRule | None:
        cls = type(op)
        if cls not in self._rules:
            self._rules[cls] = op.get_trait(SbpRule)
        return self._rules[cls]

    def result_type(self, ty: GlobalTensorType, nd: NdSbpAttr, shape: tuple[int, ...]) -> GlobalTensorType:
        """`ty.with_sbp(nd)` (`shape` is ty's), one object per distinct result type. Element types
        and layouts are keyed by id: the cached type holds the objects, so no id is reused."""
        key = (shape, id(ty.element_type), ty.placement_name, id(ty.layout), self.nd_index(nd))
        found = self._results.get(key)
        if found is None:
            found = self._results[key] = ty.with_sbp(nd)
        return found


def _op_key(op: Operation, out_shapes: tuple[tuple[int, ...], ...]) -> tuple[object, ...]:
    """What an op's candidate list depends on besides its input shapes."""
    props = tuple(sorted(op.properties.items())) if op.properties else ()
    return (op.name, props, out_shapes)


def _memo_key(op: Operation, meta: OpMeta, hint: Attribute | None,
              required: tuple[NdSbpAttr | None, ...]) -> tuple[object, ...]:
    """Everything the decision depends on: the op, each input's `type_key` (its ND-SBP included),
    the mesh, the hint and required result SBPs, the rule and the cost model."""
    run = meta.ensure_run()
    ins = tuple(map(run.type_key, meta.in_types))
    outs = tuple(None if r is None else run.nd_index(r) for r in required) if any(required) else ()
    return (_op_key(op, meta.out_shapes), ins, meta.hierarchy, hint, outs, meta.rule, run.model_index)


def decide(op: Operation, rule: SbpRule, meta: OpMeta, hint: SignatureAttr | None,
           required: tuple[NdSbpAttr | None, ...]) -> Decision:
    key = _memo_key(op, meta, hint, required)
    if (found := _MEMO.get(key)) is not None:
        return found
    run = meta.ensure_run()
    complete = meta.rule == "cost"
    one_d = len(meta.hierarchy) == 1
    shapes = tuple(k[0] for k in key[1])  # type: ignore[attr-defined]
    candidates_key = (key[0], tuple(k[3] for k in key[1]), shapes, meta.hierarchy, complete)  # type: ignore[attr-defined]
    cands = run.candidates.get(candidates_key)
    if cands is None:
        # Ops whose rules give the same per-axis lists (equal up to, say, a scalar) share the
        # product, and the shape filter too when their input shapes agree.
        lists = axis_lists(rule, op, meta.hierarchy, complete)
        product_key = (run.lists_key(lists), len(op.operands), len(op.results))
        hooked = not one_d and type(rule).nd_signatures is not SbpRule.nd_signatures
        fitting_key = (product_key, shapes, meta.hierarchy, one_d or complete, key[0] if hooked else None)
        cands = run.fitting.get(fitting_key)
        if cands is None:
            product = run.products.get(product_key)
            if product is None:
                product = run.products[product_key] = nd_product(lists, len(op.operands), len(op.results))
            if hooked:  # OneFlow's EnumerateNdSbpSignatures (reshape)
                product = rule.nd_signatures(op, meta.hierarchy, product)
            # Storage4NdSbp on the inputs, decided once per input position and distinct ND-SBP.
            table = run.table(product)
            ok = [{k for k, j in table.first_of[i].items() if run.fits(product[j][0][i], s, meta.hierarchy)}
                  for i, s in enumerate(shapes)]
            keep = [all(k in allowed for k, allowed in zip(combo, ok, strict=True))
                    for combo in zip(*table.needs, strict=True)] if ok else [True] * len(product)
            if one_d or complete:
                cands = [c for c, kept in zip(product, keep, strict=True) if kept]
            else:
                kept_at = {id(c): kept for c, kept in zip(product, keep, strict=True)}
                cands = swap_with_last_filter(product, lambda c: kept_at[id(c)])
            run.fitting[fitting_key] = cands
        run.candidates[candidates_key] = cands

    def constrained(sig: NdSig) -> bool:
        return contains(sig, hint, required)

    if hint is None and all(r is None for r in required):
        survivors = cands  # nothing to contain: either filter keeps all, in order
    elif one_d or complete:
        survivors = [c for c in cands if constrained(c)]
    else:
        survivors = swap_with_last_filter(cands, constrained)
    if not survivors:
        listed = "; ".join(format_nd_sig(c) for c in cands) or "none"
        wanted = (hint.short_str() if hint is not None else "") + (
            (" and " if hint is not None else "") + "result " + ", ".join(r.short_str() for r in required if r)
            if any(required) else ""
        )
        raise OpError(op, f"{describe_op(op)}: no SBP signature satisfies {wanted}; candidates: {listed}")
    if complete:
        decision = select_cost(survivors, meta)
    elif one_d:
        decision = select_oneflow_1d(survivors, meta)
    else:
        decision = select_oneflow_nd(survivors, meta)
    _MEMO[key] = decision
    return decision


def _set_type(value: SSAValue, ty: Attribute) -> None:
    """Retype `value` in place: its uses stay (Rewriter.replace_value_with_new_type would build a
    new value, rebuild the op's result list and move every use)."""
    if value.type is not ty:
        value._type = ty  # pyright: ignore[reportPrivateUsage]


@dataclass(frozen=True)
class InferSbpPass(ModulePass):
    """Choose an ND-SBP signature for every op and type every result.

    Options: `rule=oneflow` (default, OneFlow's eager inference) or `rule=cost` (α-β model).
    """

    name = "infer-sbp"
    rule: str = "oneflow"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        infer_module(op, self.rule)


def infer_module(module: ModuleOp, rule: str, model: CommModel = DEFAULT_MODEL) -> list[OpRecord]:
    if rule not in ("oneflow", "cost"):
        raise OpError(module, f"infer-sbp: unknown rule '{rule}' (expected oneflow or cost)")
    records: list[OpRecord] = []
    run = _Run(model)
    # The pass allocates many small objects; with the cyclic GC on, each collection of the older
    # generations walks the whole module (about half the pass time at 10k ops). Its garbage is
    # freed by reference counting, so the cycle collector is paused for the run.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for f in module.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                records += infer_function(f, rule, model, run)
    finally:
        if collecting:
            gc.enable()
    return records


def _sbp_of(op: Operation, value: SSAValue, index: int) -> NdSbpAttr:
    ty = value.type
    assert isinstance(ty, GlobalTensorType)
    if ty.nd_sbp is None:
        raise OpError(op, f"{describe_op(op)}: operand {index} has no SBP (its producer was not inferred)")
    return ty.nd_sbp


def infer_function(f: func.FuncOp, rule: str, model: CommModel, run: _Run | None = None) -> list[OpRecord]:
    if run is None or run.model is not model:
        run = _Run(model)
    for i, arg in enumerate(f.body.block.args):
        if isinstance(arg.type, GlobalTensorType) and arg.type.nd_sbp is None:
            raise OpError(
                f, f"func.func @{f.sym_name.data}: argument {i} ({arg.type.describe()}) has no SBP; "
                "global inputs must carry one"
            )
    records: list[OpRecord] = []
    for op in list(f.body.walk()):
        if op is f or not any(isinstance(v.type, GlobalTensorType) for v in (*op.operands, *op.results)):
            continue
        found = run.rule_of(op)
        if found is not None:
            records.append(infer_op(op, found, rule, model, run))
            continue
        if isinstance(op, ToGlobalOp | BoxingOp | CollectiveOp):
            _check_explicit(op)
            continue
        if isinstance(op, func.ReturnOp):
            continue
        raise OpError(op, f"{describe_op(op)}: {op.name} has no SBP signature rule")
    f.update_function_type()
    return records


def _check_explicit(op: Operation) -> None:
    for i, v in enumerate(op.operands):
        _sbp_of(op, v, i)
    for r in op.results:
        assert isinstance(r.type, GlobalTensorType)
        if r.type.nd_sbp is None:
            raise OpError(op, f"{describe_op(op)}: the result type of {op.name} must give the target SBP")
    ins = [v.type.nd_sbp for v in op.operands]  # type: ignore[attr-defined]
    outs = [r.type.nd_sbp for r in op.results]  # type: ignore[attr-defined]
    op.attributes["sbp.signature"] = SignatureAttr(ins, outs)


def infer_op(op: Operation, rule: SbpRule, rule_name: str, model: CommModel, run: _Run | None = None) -> OpRecord:
    if run is None or run.model is not model:
        run = _Run(model)
    in_types = tuple(v.type for v in op.operands)
    assert all(isinstance(t, GlobalTensorType) for t in in_types)
    placement, hierarchy = run.placement(op, in_types[0])  # type: ignore[arg-type]
    assert isinstance(placement, PlacementOp)
    first = in_types[0].placement  # type: ignore[attr-defined]
    if any(t.placement is not first and t.placement != first for t in in_types):  # type: ignore[attr-defined]
        raise OpError(op, f"{describe_op(op)}: operands are on different placements")
    in_sbps = tuple(t.nd_sbp for t in in_types)  # type: ignore[attr-defined]
    if any(nd is None for nd in in_sbps):
        in_sbps = tuple(_sbp_of(op, v, i) for i, v in enumerate(op.operands))  # raises for the first
    hint = op.attributes.get("sbp.hint")
    if hint is not None and not isinstance(hint, SignatureAttr):
        raise OpError(op, f"{describe_op(op)}: sbp.hint must be a #sbp.sig<...>")
    if hint is not None and (len(hint.inputs.data) != len(op.operands) or len(hint.outputs.data) != len(op.results)):
        raise OpError(
            op, f"{describe_op(op)}: hint #sbp.sig<{hint.short_str()}> needs {len(op.operands)} operand "
            f"and {len(op.results)} result entries"
        )
    out_types: list[GlobalTensorType] = [r.type for r in op.results]  # type: ignore[misc]
    assert all(isinstance(t, GlobalTensorType) for t in out_types)
    required = tuple(t.nd_sbp for t in out_types)
    out_shapes = tuple(t.get_shape() for t in out_types)
    meta = OpMeta(
        rule_name, hierarchy, in_types, in_sbps,  # type: ignore[arg-type]
        # OneFlow's OrderValue is 0 whenever the conf has an entry; an all-`?` hint has none.
        constrained=any(required)
        or (hint is not None and any(isinstance(e, NdSbpAttr) for e in (*hint.inputs.data, *hint.outputs.data))),
        model=model,
        out_shapes=out_shapes,
        run=run,
    )
    decision = decide(op, rule, meta, hint, required)
    for r, ty, shape, want, nd in zip(op.results, out_types, out_shapes, required, decision.chosen[1], strict=True):
        if want is None:  # a result written with an SBP is one the candidates had to produce
            _set_type(r, run.result_type(ty, nd, shape))
    op.attributes["sbp.signature"] = run.signature(decision)
    return OpRecord(op, decision, in_types, in_sbps)  # type: ignore[arg-type]
