"""What `infer-sbp` reads of an op, as plain values, and the one cache of what it derived.

`InferenceCache` is the only cache of the inference: an explicit object with an owner (the
`InferSbpPass` instance, so a process compiling several programs or `--split-input-file` chunks
reuses it, as OneFlow's GlobalTensorInferCache does; the report and tests make their own), a
bound (`max_decisions`: past it the whole cache is cleared before the next op) and `clear()`,
which forgets everything at once. Every table is keyed by values: attributes (hashed by value),
shapes, and small ints the cache itself hands out (`nd_index` for ND-SBPs, `serial` for
candidate lists and input costs), which it never reuses, even across `clear()`, so a key built
before a clear can never name a different value after it. The boxing planner's tables (for
rule=cost) are the `PlannerCache` it owns as `planner`, cleared with it.

`solutions` is rule=global's memo of whole-function solves (`passes/infer_sbp/global_search/search.py`), keyed by
the function's printed text, the placements it reads and the budget, so that the `--sbp-report`
and the pass, given one cache, solve a function once. It holds at most `max_solutions` entries
(the oldest is dropped first) and is cleared with the rest.

`CandidateList` is a candidate list as the cache holds it: the signatures, a serial number and
the table of small ints the scoring reads. The tables are filled by the modules of the inference
in the order one op meets them:
`passes/infer_sbp/candidates.py` (candidate lists), `passes/infer_sbp/scoring.py` (scores and choice),
`passes/infer_sbp/local.py` (the decision memo, result types and signature attributes).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, IntegerType, UnitAttr
from xdsl.ir import Attribute, Operation

from sbpc.dialects import dtypes
from sbpc.dialects.sbp import NdSbpAttr
from sbpc.dialects.signatures import NdSig
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.cost.comm import PlannerCache


def _dense_array_key(attr: DenseArrayBase) -> object:
    elt = attr.elt_type
    if type(elt) is IntegerType:  # the packed bytes with their integer type (cheaper than unpacking)
        return (elt.width.data, elt.signedness.data, attr.data.data)
    return tuple(attr.get_values())


_PROPERTY_KEYS: dict[type[Attribute], Callable[[Attribute], object]] = {
    DenseArrayBase: _dense_array_key,  # type: ignore[dict-item]
    IntegerAttr: lambda a: (a.value.data, a.type),  # type: ignore[attr-defined]
    FloatAttr: lambda a: (a.value.data, a.type),  # type: ignore[attr-defined]
    UnitAttr: lambda a: True,
}
"""Properties as plain Python values: hashing and comparing an attribute walks its parameters
(keyed by exact class: an isinstance check against an attribute class goes through ABCMeta)."""


def property_key(attr: Attribute) -> object:
    to_key = _PROPERTY_KEYS.get(type(attr))
    return attr if to_key is None else to_key(attr)


def op_key_of(op: Operation, out_types: Sequence[GlobalTensorType]) -> tuple[object, ...]:
    """What an op's candidates read of the op itself: its name, properties and result shapes."""
    return (
        op.name, tuple(sorted([(k, property_key(v)) for k, v in op.properties.items()])) if op.properties else (),
        tuple([t.get_shape() for t in out_types]),
    )


def element_bytes(ty: GlobalTensorType) -> int:
    return dtypes.size_of(ty.element_type)


def byte_size(ty: GlobalTensorType) -> float:
    return float(ty.element_count() * element_bytes(ty))


class TypeInfo:
    """One `!sbp.tensor` as plain values. `key`: (shape, element bytes, integer-ness, ND-SBP
    index or None), all a decision reads of an input type (rules may depend on integer-ness);
    `placement`: the placement's symbol name (a flat symbol: the type verifier says so)."""

    __slots__ = ("costs", "key", "nd_index", "nd_sbp", "placement", "ty")

    def __init__(self, cache: InferenceCache, ty: GlobalTensorType):
        self.ty = ty
        nd = self.nd_sbp = ty.nd_sbp
        self.placement = ty.placement.root_reference.data
        self.nd_index = None if nd is None else cache.nd_index(nd)
        elt = ty.element_type
        self.key = (ty.get_shape(), element_bytes(ty), isinstance(elt, IntegerType), self.nd_index)
        self.costs: Any = None
        """The input's `sbp_scoring.InputCosts` once an op has read it as an input."""


@dataclass(slots=True)
class OpMeta:
    """What a decision reads of an op: the rule's name, the mesh, its inputs (as `TypeInfo`s and
    as the types themselves, for the report's late pricing), whether a hint or a result SBP
    constrains it (OneFlow's OrderValue), and the cache the decision fills."""

    rule: str
    hierarchy: tuple[int, ...]
    infos: tuple[TypeInfo, ...]
    in_types: tuple[GlobalTensorType, ...]
    constrained: bool
    cache: InferenceCache


class CandidateList:
    """A candidate list with a serial number (its name in the cache's keys) and, built on first
    use, its table of small ints: per input position, the `nd_index` each candidate needs."""

    __slots__ = ("_first_match", "_first_of", "_needs", "serial", "sigs")

    def __init__(self, sigs: list[NdSig], cache: InferenceCache):
        self.sigs = sigs
        self.serial = cache.serial()
        self._needs: tuple[tuple[int, ...], ...] | None = None
        self._first_of: list[dict[int, int]] = []
        self._first_match: dict[tuple[int, ...], int] = {}

    def needs(self, cache: InferenceCache) -> tuple[tuple[int, ...], ...]:
        if self._needs is None:
            n_ins = len(self.sigs[0][0]) if self.sigs else 0
            ins = [sig[0] for sig in self.sigs]
            self._needs = tuple(tuple(map(cache.nd_index, map(itemgetter(i), ins))) for i in range(n_ins))
            # Per input position, a candidate needing each distinct ND-SBP (to price it once).
            self._first_of = [{k: j for j, k in reversed(list(enumerate(column)))} for column in self._needs]
            # The first candidate needing each combination of inputs (kAllMatch's pick).
            for j, combo in enumerate(zip(*self._needs, strict=True)):
                self._first_match.setdefault(combo, j)
        return self._needs

    def first_of(self, cache: InferenceCache) -> list[dict[int, int]]:
        self.needs(cache)
        return self._first_of

    def first_match(self, cache: InferenceCache) -> dict[tuple[int, ...], int]:
        self.needs(cache)
        return self._first_match

    def mismatches(self, j: int, have: tuple[int, ...]) -> int:
        """How many inputs candidate j needs in another ND-SBP than they have (table built)."""
        assert self._needs is not None
        return sum([column[j] != h for column, h in zip(self._needs, have, strict=True)])

    def mismatch_counts(self, have: tuple[int, ...], cache: InferenceCache) -> list[int]:
        """Per candidate, how many inputs it needs in another ND-SBP than they have."""
        needs = self.needs(cache)
        counts = [0] * (len(needs[0]) if needs else 0)
        for column, h in zip(needs, have, strict=True):
            counts = [c + (k != h) for c, k in zip(counts, column, strict=True)]
        return counts


class InferenceCache:
    """Every table `infer-sbp` keeps, keyed by values and cleared as a whole (see the module)."""

    def __init__(self, max_decisions: int = 100_000, planner: PlannerCache | None = None, max_solutions: int = 16):
        self.max_decisions = max_decisions
        """The bound: more memoised decisions than this, and the cache is cleared before the next op
        (the other tables grow with the decisions, never faster than a few entries each)."""
        self.max_solutions = max_solutions
        """The bound of `solutions` (one entry per function solved: its key text and a choice per op)."""
        self._serials = itertools.count()
        self._nd_numbers = itertools.count()
        self.planner = PlannerCache() if planner is None else planner
        """The boxing planner's tables (rule=cost prices inputs by planned transitions); bounded
        on its own, cleared with this cache; the report's late pricing shares the deciding one's."""
        self._new_tables()

    def clear(self) -> None:
        """Forget everything, as a fresh cache would (handed-out numbers are not reused)."""
        self.planner.clear()
        self._new_tables()

    def _new_tables(self) -> None:
        # passes/infer_sbp/local.py: decisions per op meta, result types, signature attributes.
        self.decisions: dict[tuple[object, ...], Any] = {}
        self.shared_decisions: dict[tuple[object, ...], Any] = {}
        """Decisions of unconstrained ops by (candidate list serial, input keys, rule): the choice
        reads nothing else, so ops of different kinds with one list share it."""
        self.result_types: dict[tuple[object, ...], GlobalTensorType] = {}
        self.signatures: dict[tuple[tuple[NdSbpAttr, ...], tuple[NdSbpAttr, ...]], Attribute] = {}
        self.nd_ids: dict[NdSbpAttr, int] = {}
        self.types: dict[GlobalTensorType, TypeInfo] = {}
        # passes/infer_sbp/candidates.py: lists by what they depend on, shape filters.
        self.candidates: dict[tuple[object, ...], Any] = {}
        self.axis_lists: dict[tuple[object, ...], tuple[Any, int]] = {}
        self.list_serials: dict[tuple[object, ...], int] = {}
        self.products: dict[tuple[object, ...], Any] = {}
        self.fitting: dict[tuple[object, ...], Any] = {}
        self.fit_classes: dict[tuple[object, ...], tuple[tuple[int, ...], ...]] = {}
        self.fits: dict[tuple[object, ...], bool] = {}
        self.nd_by_entries: dict[tuple[Attribute, ...], NdSbpAttr] = {}
        # passes/infer_sbp/scoring.py: per-input costs, OneFlow's price functions, scans.
        self.inputs: dict[tuple[object, ...], Any] = {}
        self.eager: dict[tuple[object, ...], Any] = {}
        self.scans: dict[tuple[int, ...], tuple[int, float]] = {}
        self.columns: dict[tuple[int, ...], tuple[float, ...]] = {}
        # passes/infer_sbp/global_search/search.py: rule=global's solutions by problem key (see `remember_solution`).
        self.solutions: dict[tuple[object, ...], Any] = {}

    def remember_solution(self, key: tuple[object, ...], solution: object) -> None:
        """Keep rule=global's `solution` under `key`, dropping the oldest beyond `max_solutions`."""
        while len(self.solutions) >= self.max_solutions:
            del self.solutions[next(iter(self.solutions))]
        self.solutions[key] = solution

    def tables(self) -> Iterator[dict[Any, Any]]:
        return (v for v in vars(self).values() if isinstance(v, dict))

    def size(self) -> int:
        """Entries held, over every table (the planner's included)."""
        return sum(map(len, self.tables())) + self.planner.size()

    def serial(self) -> int:
        """A number never handed out before (names a candidate list or an input's costs in keys)."""
        return next(self._serials)

    def nd_index(self, nd: NdSbpAttr) -> int:
        """A small int per distinct ND-SBP value (keys hold these rather than attribute trees)."""
        found = self.nd_ids.get(nd)
        if found is None:
            found = self.nd_ids[nd] = next(self._nd_numbers)
        return found

    def type_info(self, ty: GlobalTensorType) -> TypeInfo:
        found = self.types.get(ty)
        if found is None:
            assert isinstance(ty, GlobalTensorType)
            found = self.types[ty] = TypeInfo(self, ty)
        return found
