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
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from dialects.errors import OpError
from dialects.sbp import (
    BROADCAST,
    GlobalTensorType,
    NdSbpAttr,
    PartialAttr,
    SignatureAttr,
    SplitAttr,
    nd_sbp,
)
from dialects.sbp_ops import BoxingOp, CollectiveOp, PlacementOp, ToGlobalOp, describe_op, lookup_placement
from dialects.signatures import SbpRule, Sig
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

NdSig = tuple[tuple[NdSbpAttr, ...], tuple[NdSbpAttr, ...]]

def element_bytes(ty: GlobalTensorType) -> int:
    elt = ty.element_type
    if isinstance(elt, IntegerType):
        return max(1, elt.width.data // 8)
    return {"f32": 4, "f16": 2, "bf16": 2}.get(str(elt), 4)


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


def nd_candidates(rule: SbpRule, op: Operation, hierarchy: Sequence[int], complete: bool) -> list[NdSig]:
    """Direct product of the per-axis lists, mesh axis 0 major (DfsGetNdSbpSignature)."""
    lists = {h: axis_list(rule, op, h, complete) for h in set(hierarchy)}
    result: list[NdSig] = []
    for combo in itertools.product(*(lists[h] for h in hierarchy)):
        ins = tuple(nd_sbp(*(c[0][i] for c in combo)) for i in range(len(op.operands)))
        outs = tuple(nd_sbp(*(c[1][i] for c in combo)) for i in range(len(op.results)))
        result.append((ins, outs))
    return result


def fits_shape(nd: NdSbpAttr, shape: Sequence[int], hierarchy: Sequence[int]) -> bool:
    """Storage4NdSbp's check: each split axis must hold at least h_d elements (floor division)."""
    extents = list(shape)
    for d, entry in enumerate(nd):
        if isinstance(entry, SplitAttr):
            if entry.dim >= len(extents) or extents[entry.dim] < hierarchy[d]:
                return False
            extents[entry.dim] //= hierarchy[d]
    return True


def swap_with_last_filter(items: list[NdSig], keep) -> list[NdSig]:  # type: ignore[no-untyped-def]
    """OneFlow removes rejected candidates by swapping in the last one (order changes)."""
    items = list(items)
    i = 0
    while i < len(items):
        if keep(items[i]):
            i += 1
        else:
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


@dataclass
class Candidate:
    sig: NdSig
    order_value: float = 0.0
    oneflow_cost: float = 0.0
    comm_us: float = 0.0


@dataclass
class Decision:
    """The outcome for one op meta: candidates considered, the choice and why."""

    candidates: list[Candidate]
    chosen: NdSig
    reason: str
    comm_us: float


@dataclass
class OpMeta:
    rule: str
    hierarchy: tuple[int, ...]
    in_types: tuple[GlobalTensorType, ...]
    in_sbps: tuple[NdSbpAttr, ...]
    constrained: bool
    model: CommModel = field(default=DEFAULT_MODEL)

    def comm_us(self, sig: NdSig) -> float:
        """Modelled time of the input boxing `sig` needs.

        Turning a non-partial input into a partial one is free locally but defers a reduction;
        it is charged one all-reduce of that input on those mesh axes (DTensor forbids it).
        """
        total = 0.0
        for t, have, need in zip(self.in_types, self.in_sbps, sig[0], strict=True):
            shape, nbytes = t.get_shape(), element_bytes(t)
            total += transition_time(have, need, shape, nbytes, self.hierarchy, self.model)
            local = local_elements(shape, tuple(need), self.hierarchy) * nbytes
            for d, (a, b) in enumerate(zip(have, need, strict=True)):
                if isinstance(b, PartialAttr) and not isinstance(a, PartialAttr):
                    total += step_time("all_reduce", local, self.hierarchy[d], self.model)
        return total


def select_oneflow_1d(cands: list[NdSig], meta: OpMeta) -> Decision:
    scored: list[Candidate] = []
    for sig in cands:
        order = 0.0
        cost = 0.0
        for t, have, need in zip(meta.in_types, meta.in_sbps, sig[0], strict=True):
            if not meta.constrained and have == need:
                order -= 10
            cost += ibn_copy_cost_1d(have[0], need[0], byte_size(t))
        scored.append(Candidate(sig, order, cost, meta.comm_us(sig)))
    if len(scored) == 1:
        return Decision(scored, scored[0].sig, "the only candidate left", scored[0].comm_us)
    best = min(scored, key=lambda c: (c.order_value, c.oneflow_cost))  # min keeps the earliest tie
    reason = f"lowest (OrderValue, IbnCopyCost) = ({best.order_value:g}, {best.oneflow_cost:g})"
    return Decision(scored, best.sig, reason, best.comm_us)


def select_oneflow_nd(cands: list[NdSig], meta: OpMeta) -> Decision:
    scored: list[Candidate] = []
    for sig in cands:
        cost = sum(
            eager_nd_cost(tuple(have), tuple(need), byte_size(t), meta.hierarchy, t.get_shape())
            for t, have, need in zip(meta.in_types, meta.in_sbps, sig[0], strict=True)
        )
        scored.append(Candidate(sig, 0.0, min(cost, FLT_MAX), meta.comm_us(sig)))
    if len(scored) == 1:
        return Decision(scored, scored[0].sig, "the only candidate left", scored[0].comm_us)
    best: Candidate | None = None
    min_cost, min_ratio = VALID_MAX_COPY_COST, 0
    for cand in scored:
        ratio = sum(1 for have, need in zip(meta.in_sbps, cand.sig[0], strict=True) if have != need)
        if ratio == 0:
            return Decision(scored, cand.sig, "first candidate whose inputs all match (kAllMatch)", cand.comm_us)
        if cand.oneflow_cost < min_cost * 0.9999999 or (
            cand.oneflow_cost <= min_cost * 1.0000001 and ratio < min_ratio
        ):
            best, min_cost, min_ratio = cand, cand.oneflow_cost, ratio
    if best is None:
        raise ValueError("can't find available sbp signature")
    return Decision(scored, best.sig, f"lowest eager ND copy cost {best.oneflow_cost:g}", best.comm_us)


def select_cost(cands: list[NdSig], meta: OpMeta) -> Decision:
    scored = [Candidate(sig, 0.0, 0.0, meta.comm_us(sig)) for sig in cands]

    def key(c: Candidate) -> tuple[float, int]:
        mismatches = sum(1 for have, need in zip(meta.in_sbps, c.sig[0], strict=True) if have != need)
        return (round(c.comm_us, 9), mismatches)

    best = min(scored, key=key)
    return Decision(scored, best.sig, f"lowest modelled boxing time {best.comm_us:.3f} us", best.comm_us)


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


@dataclass
class OpRecord:
    """What the report prints for one op."""

    op: Operation
    description: str
    decision: Decision
    boxing: list[str]


_MEMO: dict[tuple[object, ...], Decision] = {}


def _memo_key(op: Operation, meta: OpMeta, hint: Attribute | None, required: tuple[object, ...]) -> tuple[object, ...]:
    props = tuple(sorted((k, v) for k, v in op.properties.items()))
    shapes = tuple((t.get_shape(), t.element_type) for t in meta.in_types)
    outs = tuple(r.type.get_shape() if isinstance(r.type, GlobalTensorType) else None for r in op.results)
    return (op.name, props, shapes, outs, meta.in_sbps, meta.hierarchy, hint, required, meta.rule, meta.model)


def decide(op: Operation, rule: SbpRule, meta: OpMeta, hint: SignatureAttr | None,
           required: tuple[NdSbpAttr | None, ...]) -> Decision:
    key = _memo_key(op, meta, hint, required)
    if (found := _MEMO.get(key)) is not None:
        return found
    complete = meta.rule == "cost"
    cands = nd_candidates(rule, op, meta.hierarchy, complete)
    one_d = len(meta.hierarchy) == 1
    shapes = [t.get_shape() for t in meta.in_types]

    def fits(sig: NdSig) -> bool:
        return all(fits_shape(nd, s, meta.hierarchy) for nd, s in zip(sig[0], shapes, strict=True))

    def constrained(sig: NdSig) -> bool:
        return contains(sig, hint, required)

    if one_d or complete:
        cands = [c for c in cands if fits(c)]
        survivors = [c for c in cands if constrained(c)]
    else:
        cands = swap_with_last_filter(cands, fits)
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
    if value.type != ty:
        Rewriter.replace_value_with_new_type(value, ty)


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
    for f in module.walk():
        if isinstance(f, func.FuncOp) and not f.is_declaration:
            records += infer_function(f, rule, model)
    return records


def _sbp_of(op: Operation, value: SSAValue, index: int) -> NdSbpAttr:
    ty = value.type
    assert isinstance(ty, GlobalTensorType)
    if ty.nd_sbp is None:
        raise OpError(op, f"{describe_op(op)}: operand {index} has no SBP (its producer was not inferred)")
    return ty.nd_sbp


def infer_function(f: func.FuncOp, rule: str, model: CommModel) -> list[OpRecord]:
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
        if isinstance(op, ToGlobalOp | BoxingOp | CollectiveOp):
            _check_explicit(op)
            continue
        if isinstance(op, func.ReturnOp):
            continue
        found = op.get_trait(SbpRule)
        if found is None:
            raise OpError(op, f"{describe_op(op)}: {op.name} has no SBP signature rule")
        records.append(infer_op(op, found, rule, model))
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


def infer_op(op: Operation, rule: SbpRule, rule_name: str, model: CommModel) -> OpRecord:
    in_types = tuple(v.type for v in op.operands)
    assert all(isinstance(t, GlobalTensorType) for t in in_types)
    placement = lookup_placement(op, in_types[0])  # type: ignore[arg-type]
    assert isinstance(placement, PlacementOp)
    names = {t.placement_name for t in in_types}  # type: ignore[attr-defined]
    if len(names) > 1:
        raise OpError(op, f"{describe_op(op)}: operands are on different placements")
    in_sbps = tuple(_sbp_of(op, v, i) for i, v in enumerate(op.operands))
    hint = op.attributes.get("sbp.hint")
    if hint is not None and not isinstance(hint, SignatureAttr):
        raise OpError(op, f"{describe_op(op)}: sbp.hint must be a #sbp.sig<...>")
    if hint is not None and (len(hint.inputs.data) != len(op.operands) or len(hint.outputs.data) != len(op.results)):
        raise OpError(
            op, f"{describe_op(op)}: hint #sbp.sig<{hint.short_str()}> needs {len(op.operands)} operand "
            f"and {len(op.results)} result entries"
        )
    required = tuple(r.type.nd_sbp for r in op.results)  # type: ignore[attr-defined]
    meta = OpMeta(
        rule_name, placement.get_hierarchy(), in_types, in_sbps,  # type: ignore[arg-type]
        constrained=hint is not None or any(required), model=model,
    )
    decision = decide(op, rule, meta, hint, required)
    ins, outs = decision.chosen
    for r, nd in zip(op.results, outs, strict=True):
        assert isinstance(r.type, GlobalTensorType)
        _set_type(r, r.type.with_sbp(nd))
    op.attributes["sbp.signature"] = SignatureAttr(list(ins), list(outs))
    boxing = [
        f"operand {i}: {have.short_str()} -> {need.short_str()}"
        for i, (have, need) in enumerate(zip(in_sbps, ins, strict=True))
        if have != need
    ]
    return OpRecord(op, describe_op(op), decision, boxing)
