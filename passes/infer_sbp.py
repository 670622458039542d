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

Candidate lists live in `passes/sbp_candidates.py`, scoring and the per-run caches in
`passes/sbp_scoring.py`. Speed (bench/bench_infer_sbp.py): a run caches per input its costs
towards each needed ND-SBP, the placement lookups, the candidate lists and their shape filtering,
and builds each distinct signature attribute and result type once. Ops of one kind share their
1-D lists when their rule's `list_key` agrees, and filtered lists when their shapes agree up to
extents of at least the device count (which every split fits), so most ops meet a list, its
table and its kAllMatch map already built. Keys hold small ints and shape tuples rather than
attributes (hashing an attribute walks its parameters, building one runs its verifier). Under
rule=oneflow the α-β time of a candidate only feeds the report, so it is computed on first read.
"""

from __future__ import annotations

import gc
import itertools
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, IntegerType, ModuleOp, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import GlobalTensorType, NdSbpAttr, SignatureAttr
from sbpc.dialects.sbp_ops import BoxingOp, ToGlobalOp, describe_op
from sbpc.dialects.signatures import NdSig, SbpRule, swap_with_last_filter
from sbpc.passes.cost_model import DEFAULT_MODEL, CommModel
from sbpc.passes.sbp_candidates import contains, format_nd_sig, nd_product
from sbpc.passes.sbp_scoring import (
    Decision,
    OpMeta,
    _Run,
    clear_interned,
    select_cost,
    select_oneflow_1d,
    select_oneflow_nd,
)

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


_MEMO: dict[tuple[object, ...], Decision] = {}
"""Decisions per op meta, kept across runs (OneFlow's GlobalTensorInferCache)."""


def clear_caches() -> None:
    """Forget every decision and interned value, as in a fresh process (benchmarks, tests)."""
    _MEMO.clear()
    clear_interned()


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


def _property_key(attr: Attribute) -> object:
    to_key = _PROPERTY_KEYS.get(type(attr))
    return attr if to_key is None else to_key(attr)


def decide(op: Operation, rule: SbpRule, meta: OpMeta, hint: SignatureAttr | None,
           required: tuple[NdSbpAttr | None, ...], key: tuple[object, ...]) -> Decision:
    """The decision for an op meta not in the memo; `key` is its memo key (see `infer_op`)."""
    run = meta.run
    complete = meta.rule == "cost"
    one_d = len(meta.hierarchy) == 1
    op_part = key[:3]  # the op's name, properties and result shapes
    in_keys: tuple[tuple[object, ...], ...] = key[3]  # type: ignore[assignment]
    shapes = tuple([k[0] for k in in_keys])
    candidates_key = (op_part, tuple([k[2] for k in in_keys]), shapes, meta.hierarchy, complete)
    cands = run.candidates.get(candidates_key)
    if cands is None:
        # Ops whose rules give the same per-axis lists (equal up to, say, a scalar) share the
        # product, and the shape filter too when their input shapes agree.
        lists, lists_key = run.axis_lists(rule, op, meta.hierarchy, complete, shapes)
        product_key = (lists_key, len(op.operands), len(op.results))
        hooked = not one_d and type(rule).nd_signatures is not SbpRule.nd_signatures
        # The shape filter reads a shape only through `fits_shape`, which passes every split of an
        # extent of at least the device count: extents are capped there (the rule's ND hook
        # reads the shapes themselves).
        fit_shapes = shapes if hooked else run.fit_classes(shapes, meta.hierarchy)
        fitting_key = (product_key, fit_shapes, meta.hierarchy, one_d or complete, op_part if hooked else None)
        cands = run.fitting.get(fitting_key)
        if cands is None:
            product = run.products.get(product_key)
            if product is None:
                product = run.products[product_key] = nd_product(
                    lists, len(op.operands), len(op.results), run.nd_by_entries)
            if hooked:  # OneFlow's EnumerateNdSbpSignatures (reshape)
                product = rule.nd_signatures(op, meta.hierarchy, product)
            # Storage4NdSbp on the inputs, decided once per input position and distinct ND-SBP.
            keep: list[bool] | None = None
            for i, shape in enumerate(fit_shapes):
                fit = run.fitting_column(product, i, shape, meta.hierarchy)
                if fit is not None:
                    keep = fit if keep is None else list(map(operator.and_, keep, fit))
            if keep is None:
                cands = product
            elif one_d or complete:
                cands = list(itertools.compress(product, keep))
            else:  # OneFlow's ND filter reorders (swap-with-last)
                cands = [product[j] for j in swap_with_last_filter(range(len(product)), keep.__getitem__)]
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
    # Unconstrained ops whose candidate list and inputs agree (say, scalar ops with different
    # scalars) get the same decision: the choice reads nothing else.
    shared_key = (id(cands), in_keys, meta.rule) if survivors is cands else None
    decision = run.decisions.get(shared_key) if shared_key is not None else None
    if decision is None:
        if complete:
            decision = select_cost(survivors, meta)
        elif one_d:
            decision = select_oneflow_1d(survivors, meta)
        else:
            decision = select_oneflow_nd(survivors, meta)
        if shared_key is not None:
            run.decisions[shared_key] = decision
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
    rule: Literal["oneflow", "cost"] = "oneflow"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        infer_module(op, self.rule, keep_records=False)


def infer_module(
    module: ModuleOp, rule: str, model: CommModel = DEFAULT_MODEL, keep_records: bool = True
) -> list[OpRecord]:
    """Infer every function of `module`; returns the report's per-op records (none unless
    `keep_records`: the pass alone does not need them)."""
    if rule not in ("oneflow", "cost"):
        raise OpError(module, f"infer-sbp: unknown rule '{rule}' (expected oneflow or cost)")
    records: list[OpRecord] | None = [] if keep_records else None
    run = _Run(model)
    # The pass allocates many small objects; with the cyclic GC on, each collection of the older
    # generations walks the whole module (about half the pass time at 10k ops). Its garbage is
    # freed by reference counting, so the cycle collector is paused for the run.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for f in _functions(module):
            infer_function(f, rule, model, run, records)
    finally:
        if collecting:
            gc.enable()
    return records or []


def _functions(op: Operation) -> Iterator[func.FuncOp]:
    """The function definitions under `op`, without walking into their bodies."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                if isinstance(child, func.FuncOp):
                    if not child.is_declaration:
                        yield child
                elif child.regions:
                    yield from _functions(child)


def _sbp_of(op: Operation, value: SSAValue, index: int) -> NdSbpAttr:
    ty = value.type
    assert isinstance(ty, GlobalTensorType)
    if ty.nd_sbp is None:
        raise OpError(op, f"{describe_op(op)}: operand {index} has no SBP (its producer was not inferred)")
    return ty.nd_sbp


def infer_function(
    f: func.FuncOp, rule: str, model: CommModel, run: _Run | None = None, records: list[OpRecord] | None = None
) -> None:
    """Infer the ops of `f` in program order and update its type; records go to `records`."""
    if run is None or run.model is not model:
        run = _Run(model)
    for i, arg in enumerate(f.body.block.args):
        if isinstance(arg.type, GlobalTensorType) and arg.type.nd_sbp is None:
            raise OpError(
                f, f"func.func @{f.sym_name.data}: argument {i} ({arg.type.describe()}) has no SBP; "
                "global inputs must carry one"
            )
    # list(iter(...)): list(block.ops) would first walk the block to take its length
    ops = list(iter(f.body.block.ops)) if len(f.body.blocks) == 1 else []
    if not ops or any(op.regions for op in ops):  # nested regions: visit every op inside
        ops = list(f.body.walk())
    for op in ops:
        found = run.rule_of(op)
        if found is not None:
            infer_op(op, found, rule, model, run, records)
            continue
        if op is f or not any(isinstance(v.type, GlobalTensorType) for v in (*op.operands, *op.results)):
            continue
        if isinstance(op, ToGlobalOp | BoxingOp | CollectiveOp):
            _check_explicit(op)
            continue
        if isinstance(op, func.ReturnOp):
            continue
        raise OpError(op, f"{describe_op(op)}: {op.name} has no SBP signature rule")
    f.update_function_type()


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


def infer_op(op: Operation, rule: SbpRule, rule_name: str, model: CommModel, run: _Run | None = None,
             records: list[OpRecord] | None = None) -> Decision:
    """Infer one op: type its results, set its `sbp.signature`, append its record to `records`."""
    if run is None or run.model is not model:
        run = _Run(model)
    in_types = tuple([v.type for v in op.operands])
    infos = tuple([run.type_info(t) for t in in_types])
    first = infos[0]
    for info in infos:  # a plain loop: `None in sbps` would call each attribute's __eq__
        if info.placement != first.placement:
            raise OpError(op, f"{describe_op(op)}: operands are on different placements")
        if info.nd_sbp is None:
            for i, v in enumerate(op.operands):
                _sbp_of(op, v, i)  # raises for the first operand without an SBP
    hierarchy = run.hierarchy(op, first.placement)
    hint = op.attributes.get("sbp.hint")
    if hint is not None:
        _check_hint(op, hint)
    out_types: list[GlobalTensorType] = [r.type for r in op.results]  # type: ignore[misc]
    required = tuple([t.nd_sbp for t in out_types])
    out_shapes = tuple([t.get_shape() for t in out_types])
    constrained = any(required)
    # Everything the decision depends on: the op, each input's type key (ND-SBP included), the
    # mesh, the hint and required result SBPs, the rule and the cost model.
    key = (
        op.name, tuple(sorted([(k, _property_key(v)) for k, v in op.properties.items()])) if op.properties else (),
        out_shapes, tuple([info.key for info in infos]), hierarchy, hint,
        tuple([None if r is None else run.nd_index(r) for r in required]) if constrained else (),
        rule_name, run.model_index,
    )
    decision = _MEMO.get(key)
    if decision is None:
        meta = OpMeta(
            rule_name, hierarchy, infos, in_types,  # type: ignore[arg-type]
            # OneFlow's OrderValue is 0 whenever the conf has an entry; an all-`?` hint has none.
            constrained=constrained
            or (hint is not None and any(isinstance(e, NdSbpAttr) for e in (*hint.inputs.data, *hint.outputs.data))),
            run=run,
        )
        decision = decide(op, rule, meta, hint, required, key)  # type: ignore[arg-type]
    for r, ty, shape, want, nd in zip(op.results, out_types, out_shapes, required, decision.chosen[1], strict=True):
        if want is None:  # a result written with an SBP is one the candidates had to produce
            _set_type(r, run.result_type(ty, nd, shape))
    op.attributes["sbp.signature"] = run.signature(decision)
    if records is not None:
        records.append(OpRecord(op, decision, in_types, tuple([info.nd_sbp for info in infos])))  # type: ignore[arg-type]
    return decision


def _check_hint(op: Operation, hint: Attribute) -> None:
    if not isinstance(hint, SignatureAttr):
        raise OpError(op, f"{describe_op(op)}: sbp.hint must be a #sbp.sig<...>")
    if len(hint.inputs.data) != len(op.operands) or len(hint.outputs.data) != len(op.results):
        raise OpError(
            op, f"{describe_op(op)}: hint #sbp.sig<{hint.short_str()}> needs {len(op.operands)} operand "
            f"and {len(op.results)} result entries"
        )
