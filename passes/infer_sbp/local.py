"""`infer-sbp`'s local rules: one op at a time, in program order (SPEC §2.5, §3).

Each op's candidates come from its `SbpRule` trait.

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
candidates; if none survives, the op gets a located error listing the candidates. The checks of
hints and explicit conversions (`check_hint`, `check_explicit`) and the walk over functions
(`functions`) are the global search's too (`passes/infer_sbp/global_search/`).

One op's way, top-down: `infer_op` reads the op as values (`passes/infer_sbp/cache.py`) and looks its
meta up in the decision memo (OneFlow's GlobalTensorInferCache); on a miss, its candidates
(`passes/infer_sbp/candidates.py`) are scored and one is chosen (`passes/infer_sbp/scoring.py`); then its
results are retyped and its `sbp.signature` set, here. Every table on the way is in the pass's
`InferenceCache`. Keys hold small ints and shape tuples rather than attribute trees where they
are hot (hashing an attribute walks its parameters, building one runs its verifier). Under
rule=oneflow the α-β time of a candidate only feeds the report, so it is computed on first read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.errors import ArgumentError, OpError
from sbpc.dialects.placement import lookup_placement_named
from sbpc.dialects.sbp import NdSbpAttr, SignatureAttr
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import BoxingOp, ToGlobalOp
from sbpc.dialects.signatures import NdSig, SbpRule
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.cost.comm import DEFAULT_MODEL, CommModel, placement_model
from sbpc.passes.infer_sbp.cache import InferenceCache, OpMeta, op_key_of
from sbpc.passes.infer_sbp.candidates import candidates
from sbpc.passes.infer_sbp.scoring import Decision, choose

RULES = ("oneflow", "cost")
"""The op-by-op rules."""


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


def infer_module(
    module: ModuleOp, rule: str, model: CommModel = DEFAULT_MODEL, keep_records: bool = True,
    cache: InferenceCache | None = None,
) -> list[OpRecord]:
    """Infer every function of `module` (with a cache of its own unless one is given); returns the
    report's per-op records (none unless `keep_records`: the pass alone does not need them)."""
    if rule not in RULES:
        raise OpError(module, f"infer-sbp: unknown rule '{rule}' (expected oneflow or cost)")
    if cache is None:
        cache = InferenceCache()
    records: list[OpRecord] | None = [] if keep_records else None
    for f in functions(module):
        infer_function(f, rule, model, cache, records)
    return records or []


def functions(op: Operation) -> Iterator[func.FuncOp]:
    """The function definitions under `op`, without walking into their bodies."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                if isinstance(child, func.FuncOp):
                    if not child.is_declaration:
                        yield child
                elif child.regions:
                    yield from functions(child)


def infer_function(
    f: func.FuncOp, rule: str, model: CommModel, cache: InferenceCache, records: list[OpRecord] | None = None
) -> None:
    """Infer the ops of `f` in program order and update its type; records go to `records`."""
    for i, arg in enumerate(f.body.block.args):
        if isinstance(arg.type, GlobalTensorType) and arg.type.sbp_pattern is not None:
            raise OpError(
                f, f"func.func @{f.sym_name.data}: argument {i} ({arg.type.describe()}) has `?` entries; "
                "only rule=global decides free arguments"
            )
        if isinstance(arg.type, GlobalTensorType) and arg.type.nd_sbp is None:
            name = f"%{arg.name_hint}" if arg.name_hint else "it"
            raise ArgumentError(
                f, i, f"func.func @{f.sym_name.data}: argument {i} ({arg.type.describe()}) has no SBP; give {name} "
                "one, or let rule=global decide it (sbp-opt -p 'infer-sbp{rule=global}'; sbp-run --rule global, "
                "i.e. --pipeline 'infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize')"
            )
    # list(iter(...)): list(block.ops) would first walk the block to take its length
    ops = list(iter(f.body.block.ops)) if len(f.body.blocks) == 1 else []
    if not ops or any(op.regions for op in ops):  # nested regions: visit every op inside
        ops = list(f.body.walk())
    placements = _Placements(f.body.blocks[0] if f.body.blocks else None, model)
    for arg in f.body.block.args if f.body.blocks else ():  # read first: equal result types share their objects
        if isinstance(arg.type, GlobalTensorType):
            cache.type_info(arg.type)
    for op in ops:
        found = op.get_trait(SbpRule)
        if found is not None:
            infer_op(op, found, rule, cache, placements, records)
            continue
        if op is f or not any(isinstance(v.type, GlobalTensorType) for v in (*op.operands, *op.results)):
            continue
        if isinstance(op, ToGlobalOp | BoxingOp | CollectiveOp):
            check_explicit(op)
            continue
        if isinstance(op, func.ReturnOp):
            continue
        raise OpError(op, f"{describe_op(op)}: {op.name} has no SBP signature rule")
    f.update_function_type()


class _Placements:
    """The hierarchies and cost models of the placements one function's ops refer to. The ops of
    one block see one symbol table (ops with an SBP rule are none), so those of the function's body
    block share their lookups; ops in nested blocks look theirs up each time."""

    def __init__(self, body: Block | None, model: CommModel):
        self.body, self.model = body, model
        self.meshes: dict[str, tuple[tuple[int, ...], CommModel]] = {}

    def mesh(self, op: Operation, name: str) -> tuple[tuple[int, ...], CommModel]:
        """The hierarchy of placement @name and the cost model on its links."""
        shared = op.parent is self.body
        found = self.meshes.get(name) if shared else None
        if found is None:
            placement = lookup_placement_named(op, name)
            if placement is None:
                raise OpError(op, f"{describe_op(op)}: placement @{name} is not defined")
            found = placement.get_hierarchy(), placement_model(placement, self.model)
            if shared:
                self.meshes[name] = found
        return found


def _sbp_of(op: Operation, value: SSAValue, index: int) -> NdSbpAttr:
    ty = value.type
    assert isinstance(ty, GlobalTensorType)
    if ty.nd_sbp is None:
        raise OpError(op, f"{describe_op(op)}: operand {index} has no SBP (its producer was not inferred)")
    return ty.nd_sbp


def check_explicit(op: Operation) -> None:
    for i, v in enumerate(op.operands):
        _sbp_of(op, v, i)
    for r in op.results:
        assert isinstance(r.type, GlobalTensorType)
        if r.type.nd_sbp is None:
            raise OpError(op, f"{describe_op(op)}: the result type of {op.name} must give the target SBP")
    ins = [v.type.nd_sbp for v in op.operands]  # type: ignore[attr-defined]
    outs = [r.type.nd_sbp for r in op.results]  # type: ignore[attr-defined]
    op.attributes["sbp.signature"] = SignatureAttr(ins, outs)


# ---------------------------------------------------------------------------
# One op: read it, decide (memoised), retype it
# ---------------------------------------------------------------------------


def infer_op(
    op: Operation, rule: SbpRule, rule_name: str, cache: InferenceCache,
    placements: _Placements, records: list[OpRecord] | None = None,
) -> Decision:
    """Infer one op: type its results, set its `sbp.signature`, append its record to `records`.
    Communication is priced by `placements`' model on the op's placement's links."""
    if len(cache.decisions) >= cache.max_decisions:
        cache.clear()  # the bound: between ops, when nothing read from the cache is in flight
    # 1. The op as values.
    in_types = tuple([v.type for v in op.operands])
    infos = tuple([cache.type_info(t) for t in in_types])  # type: ignore[arg-type]
    first = infos[0]
    for info in infos:  # a plain loop: `None in sbps` would call each attribute's __eq__
        if info.placement != first.placement:
            raise OpError(op, f"{describe_op(op)}: operands are on different placements")
        if info.nd_sbp is None:
            for i, v in enumerate(op.operands):
                _sbp_of(op, v, i)  # raises for the first operand without an SBP
    hierarchy, model = placements.mesh(op, first.placement)
    hint = op.attributes.get("sbp.hint")
    if hint is not None:
        check_hint(op, hint)
    out_types: list[GlobalTensorType] = [r.type for r in op.results]  # type: ignore[misc]
    required = tuple([t.nd_sbp for t in out_types])
    constrained = any(r is not None for r in required)
    for t in out_types:
        if t.sbp_pattern is not None:
            raise OpError(
                op, f"{describe_op(op)}: result type {t.describe()} has `?` entries; only rule=global decides them")
    op_key = op_key_of(op, out_types)
    in_keys = tuple([info.key for info in infos])
    # Everything the decision depends on: the op, each input's type key (ND-SBP included), the
    # mesh, the hint and required result SBPs, the rule and the cost model.
    key = (
        op_key, in_keys, hierarchy, hint,
        tuple([None if r is None else cache.nd_index(r) for r in required]) if constrained else (),
        rule_name, model,
    )
    decision = cache.decisions.get(key)
    if decision is None:
        decision = cache.decisions[key] = _decide(
            op, rule, rule_name, model, cache, hierarchy, infos, in_types, op_key, in_keys, hint, required)  # type: ignore[arg-type]
    # 4. The retyped result: a result written with an SBP is one the candidates had to produce.
    for r, ty, shape, want, nd in zip(op.results, out_types, op_key[2], required, decision.chosen[1], strict=True):
        if want is None:
            _retype(r, _result_type(cache, ty, shape, nd))
    signature = decision.signature
    if signature is None:
        signature = decision.signature = _signature(cache, decision.chosen)
    op.attributes["sbp.signature"] = signature
    if records is not None:
        records.append(OpRecord(op, decision, in_types, tuple([info.nd_sbp for info in infos])))  # type: ignore[arg-type]
    return decision


def _decide(
    op: Operation, rule: SbpRule, rule_name: str, model: CommModel, cache: InferenceCache, hierarchy: tuple[int, ...],
    infos: tuple[object, ...], in_types: tuple[GlobalTensorType, ...], op_key: tuple[object, ...],
    in_keys: tuple[tuple[object, ...], ...], hint: SignatureAttr | None, required: tuple[NdSbpAttr | None, ...],
) -> Decision:
    """The decision for an op meta not in the memo: 2. candidates, 3. scores and choice."""
    constrained = any(r is not None for r in required)
    meta = OpMeta(
        rule_name, hierarchy, infos, in_types,  # type: ignore[arg-type]
        # OneFlow's OrderValue is 0 whenever the conf has an entry; an all-`?` hint has none.
        constrained=constrained
        or (hint is not None and any(isinstance(e, NdSbpAttr) for e in (*hint.inputs.data, *hint.outputs.data))),
        cache=cache,
    )
    cands = candidates(op, rule, meta, op_key, in_keys, hint, required)
    if hint is not None or constrained:
        return choose(cands, meta, model)
    # Unconstrained ops whose candidate list and inputs agree (say, scalar ops with different
    # scalars) get the same decision: the choice reads nothing else.
    shared_key = (cands.serial, in_keys, rule_name, model)
    decision = cache.shared_decisions.get(shared_key)
    if decision is None:
        decision = cache.shared_decisions[shared_key] = choose(cands, meta, model)
    return decision


def _result_type(
    cache: InferenceCache, ty: GlobalTensorType, shape: tuple[int, ...], nd: NdSbpAttr
) -> GlobalTensorType:
    """`ty.with_sbp(nd)`, one object per distinct result type (attribute construction verifies).
    Keyed by `ty`'s parameters as plain values (its shape is `shape`; its placement a flat symbol,
    as its verifier requires): results parsed apart are distinct objects, and comparing two equal
    types walks every parameter. An equal type the cache has already read (say, a function
    argument's) lends its object, so later lookups of either find it by identity."""
    key = (shape, ty.element_type, ty.placement_name, ty.layout, nd)
    found = cache.result_types.get(key)
    if found is None:
        made = ty.with_sbp(nd)
        known = cache.types.get(made)
        found = cache.result_types[key] = made if known is None else known.ty
    return found


def _retype(value: SSAValue, ty: Attribute) -> None:
    if value.type is not ty:
        Rewriter.replace_value_with_new_type(value, ty)


def _signature(cache: InferenceCache, chosen: NdSig) -> Attribute:
    """The `#sbp.sig` of a chosen signature, one attribute per distinct signature."""
    found = cache.signatures.get(chosen)
    if found is None:
        found = cache.signatures[chosen] = SignatureAttr(list(chosen[0]), list(chosen[1]))
    return found


def check_hint(op: Operation, hint: Attribute) -> None:
    if not isinstance(hint, SignatureAttr):
        raise OpError(op, f"{describe_op(op)}: sbp.hint must be a #sbp.sig<...>")
    if len(hint.inputs.data) != len(op.operands) or len(hint.outputs.data) != len(op.results):
        raise OpError(
            op, f"{describe_op(op)}: hint #sbp.sig<{hint.short_str()}> needs {len(op.operands)} operand "
            f"and {len(op.results)} result entries"
        )
