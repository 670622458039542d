"""The `--sbp-report`: why `infer-sbp` chose each signature, and what it costs.

For every op: the candidates that survived filtering with their OneFlow order value and copy
cost and their α-β boxing time, the chosen signature and why, and the boxing each input needs.
In the text form the program's totals come first: its modelled communication under both rules, side
by side; under rule=global also its own totals and the whole-program section of
passes/infer_sbp/global_search/report.py. The report is built on clones, so it never changes the
module being compiled.

A training step (SPEC §8) adds its values by class (`report_train.py`). `--sbp-report=dot` draws the
plan instead (a step's nodes clustered and coloured by value class): the program compiled on a clone by infer-sbp,
materialize-boxing and lower-boxing, as a Graphviz graph. Ops are nodes, values are edges labelled
with their name, shape and SBP, function arguments are nodes with the SBP they came with, and every
collective (or boxing the planner left) is a coloured node with the bytes it sends over all ranks
(`dialects.collectives.step_bytes_exact`, what the simulator measures).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from sbpc.dialects import dtypes
from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.collectives import step_bytes_exact
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import lookup_placement
from sbpc.dialects.sbp import PartialAttr, SignatureAttr
from sbpc.dialects.sbp_ops import ConversionOp
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.dialects.units import human_bytes
from sbpc.passes.cost.comm import PlannerCache, placement_model, plan_transition
from sbpc.passes.infer_sbp.boxings import shared_boxings
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.candidates import element_bytes, format_nd_sig
from sbpc.passes.infer_sbp.global_search.report import global_records, render_global
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.infer_sbp.local import RULES, OpRecord, infer_module
from sbpc.passes.infer_sbp.report_train import (
    CLASS_COLOURS,
    is_step,
    op_class,
    render_train_text,
    train_section,
    value_classes,
)
from sbpc.passes.lower_boxing import LowerBoxingPass
from sbpc.passes.materialize_boxing import MaterializeBoxingPass

REPORT_RULES = (*RULES, "global")
"""The rules a report can be built for."""


@dataclass
class RuleTotals:
    time_us: float
    bytes_sent: float
    ops_with_boxing: int


def _totals(module: ModuleOp, records: list[OpRecord], planner: PlannerCache) -> RuleTotals:
    """The program's communication: each boxing (`boxings.shared_boxings`: one per value and
    distinct target, as materialize-boxing inserts them, including every `sbp.to_global` that
    changes the SBP) priced once by the planner that lowers it."""
    time_us = 0.0
    sent = 0.0
    for value, targets in shared_boxings(module.walk()).items():
        ty = value.type
        assert isinstance(ty, GlobalTensorType)
        placement = lookup_placement(module, ty)
        if placement is None:
            continue
        for need in targets:
            plan = plan_transition(
                tuple(ty.nd_sbp or ()), tuple(need), ty.get_shape(), element_bytes(ty), placement.get_hierarchy(),
                placement_model(placement), cache=planner,
            )
            time_us += plan.time_us
            sent += plan.bytes_sent
    return RuleTotals(time_us, sent, sum(1 for r in records if r.boxing))


def build_report(
    module: ModuleOp, rule: str, mem: int | None = None, cache: InferenceCache | None = None,
    time_limit: float | None = None,
) -> dict[str, Any]:
    """Per-op detail for `rule`, totals for both op-by-op rules (`RULES`, side by side; and, under
    rule=global, for it and its `global` section; `mem` is its budget in bytes, `time_limit` its
    HiGHS runs' limit in seconds). `cache`: rule=global's, e.g. the pass's that runs next, which
    then takes the report's solutions instead of solving again."""
    per_rule: dict[str, tuple[list[OpRecord], RuleTotals]] = {}
    unavailable: dict[str, str] = {}
    planner = PlannerCache()  # the report's own, shared by both rules' totals
    section: dict[str, Any] | None = None
    inferred: ModuleOp | None = None
    for name in RULES:
        clone = module.clone()
        try:
            records = infer_module(clone, name)
        except OpError as error:
            if name == rule:
                raise _on_original(module, clone, error) from None
            # The other rule's side-by-side total only: e.g. free arguments (rule=global alone takes
            # them) or a result SBP only rule=cost's complete lists produce.
            unavailable[name] = error.message
            continue
        per_rule[name] = (records, _totals(clone, records, planner))
        inferred = clone if name == rule else inferred
    if rule == "global":
        clone = module.clone()
        try:
            records, section = global_records(clone, mem, cache, time_limit)
        except OpError as error:
            raise _on_original(module, clone, error) from None
        totals = _totals(clone, records, planner)
        inferred = clone
        per_rule[rule] = (records, RuleTotals(section["comm_s"] * 1e6, totals.bytes_sent, totals.ops_with_boxing))
    records, _ = per_rule[rule]
    ops = []
    for r in records:
        ops.append(
            {
                "op": r.description,
                "candidates": [
                    {
                        "signature": format_nd_sig(c.sig),
                        "order_value": c.order_value,
                        "oneflow_cost": c.oneflow_cost,
                        "modelled_us": round(c.comm_us, 6),
                    }
                    for c in r.decision.candidates
                ],
                "chosen": format_nd_sig(r.decision.chosen),
                "why": r.decision.reason,
                "boxing": r.boxing,
                "modelled_us": round(r.decision.comm_us, 6),
            }
        )
    report = {
        "rule": rule,
        "ops": ops,
        "totals": {
            name: {
                "modelled_us": round(t.time_us, 6),
                "bytes_sent_all_ranks": t.bytes_sent,
                "ops_with_boxing": t.ops_with_boxing,
            }
            for name, (_, t) in per_rule.items()
        },
    }
    if unavailable:
        report["unavailable"] = unavailable
    if section is not None:
        report["global"] = section
    training = train_section(inferred, conversion_bytes) if inferred is not None else []
    if training:
        report["training"] = training
    return report


def _on_original(module: ModuleOp, clone: ModuleOp, error: OpError) -> OpError:
    """`error`, raised on a clone the report works on, anchored at the same op of `module` (so the
    tools can say where it is in the user's file); unchanged if the op has no original."""
    ops = list(clone.walk())
    originals = list(module.walk())
    if len(ops) == len(originals) and error.op in ops:
        return OpError(originals[ops.index(error.op)], error.message)
    return error


def render_text(report: dict[str, Any]) -> str:
    """The totals and the global summary first (what a reader looks for), then the per-op detail."""
    lines = [f"// sbp-report (rule={report['rule']})"]
    for name, t in report["totals"].items():
        lines.append(
            f"total rule={name}: {t['modelled_us']:.3f} us modelled, "
            f"{t['bytes_sent_all_ranks']:g} bytes sent (all ranks), {t['ops_with_boxing']} ops with boxing"
        )
    for name, message in report.get("unavailable", {}).items():
        lines.append(f"total rule={name}: not available ({message})")
    if "global" in report:
        lines.extend(render_global(report["global"]))
    lines.extend(render_train_text(report.get("training", [])))
    for entry in report["ops"]:
        lines.append(f"op {entry['op']}")
        marked = False
        for c in entry["candidates"]:
            # Lists may repeat a signature (reduce_sum's P -> P per reduced axis, as in OneFlow);
            # every rule picks the first of equals, so only that one is starred.
            mark = "*" if c["signature"] == entry["chosen"] and not marked else " "
            marked = marked or mark == "*"
            lines.append(
                f"  {mark} {c['signature']:<40} order={c['order_value']:g} "
                f"oneflow_cost={c['oneflow_cost']:g} modelled={c['modelled_us']:.3f}us"
            )
        lines.append(f"  chosen: {entry['chosen']} ({entry['why']})")
        lines.append("  boxing: " + ("; ".join(entry["boxing"]) if entry["boxing"] else "none"))
    return "\n".join(lines) + "\n"


def render(report: dict[str, Any], fmt: str) -> str:
    return json.dumps(report, indent=2) + "\n" if fmt == "json" else render_text(report)


# ---------------------------------------------------------------------------
# The plan as a Graphviz graph
# ---------------------------------------------------------------------------

COLLECTIVE_COLOUR = "orange"
LOCAL_COLOUR = "khaki"  # a collective that sends nothing (all_slice, to_partial): a local step
BOXING_COLOUR = "tomato"  # an sbp.boxing or sbp.to_global the planner did not lower


def conversion_bytes(op: ConversionOp) -> int:
    """Bytes a conversion sends, summed over ranks: the exact step of a collective, else the plan."""
    src, dst = op.x.type, op.result.type
    assert isinstance(src, GlobalTensorType) and isinstance(dst, GlobalTensorType)
    placement = lookup_placement(op, src)
    if src.nd_sbp is None or dst.nd_sbp is None or placement is None:
        return 0
    hierarchy = placement.get_hierarchy()
    if isinstance(op, CollectiveOp):
        sent = step_bytes_exact(op.KIND, tuple(src.nd_sbp), tuple(dst.nd_sbp), op.get_mesh_axes(),
                                src.get_shape(), hierarchy, element_bytes(src))
        return sum(sent.values())
    plan = plan_transition(tuple(src.nd_sbp), tuple(dst.nd_sbp), src.get_shape(), element_bytes(src), hierarchy)
    return int(plan.bytes_sent)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _sbp_text(ty: GlobalTensorType) -> str:
    return ty.nd_sbp.short_str() if ty.nd_sbp is not None else "[?]"


def _tensor_text(ty: object) -> str:
    """`f16[64,1024] [S(0), B]` for an edge or argument label."""
    if not isinstance(ty, GlobalTensorType):
        return str(ty)
    elt = dtypes.IR_NAMES.get(ty.element_type) or str(ty.element_type)
    return f"{elt}[{','.join(str(d) for d in ty.get_shape())}] {_sbp_text(ty)}"


def _is_partial(ty: object) -> bool:
    return isinstance(ty, GlobalTensorType) and ty.nd_sbp is not None and any(
        isinstance(e, PartialAttr) for e in ty.nd_sbp
    )


def _op_label(op: Operation) -> tuple[str, dict[str, str]]:
    """Label and extra node attributes of one op."""
    if isinstance(op, ConversionOp):
        sent = conversion_bytes(op)
        src, dst = op.x.type, op.result.type
        assert isinstance(src, GlobalTensorType) and isinstance(dst, GlobalTensorType)
        change = f"{_sbp_text(src)} -> {_sbp_text(dst)}"
        axes = f" mesh axes {list(op.get_mesh_axes())}" if isinstance(op, CollectiveOp) else ""
        colour = BOXING_COLOUR if not isinstance(op, CollectiveOp) else COLLECTIVE_COLOUR if sent else LOCAL_COLOUR
        return (f"{op.name}{axes}\n{change}\n{human_bytes(sent)} sent",
                {"style": "filled", "fillcolor": colour, "shape": "box"})
    sig = op.attributes.get("sbp.signature")
    detail = f"\n{sig.short_str()}" if isinstance(sig, SignatureAttr) else ""
    return op.name + detail, {"shape": "box" if op.name != "func.return" else "oval"}


def render_dot(module: ModuleOp, title: str) -> str:
    """The (global) program as a DOT digraph, one cluster per function."""
    lines = ["digraph sbp_plan {", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    total = 0
    count = 0
    functions = [f for f in module.walk() if isinstance(f, func.FuncOp) and not f.is_declaration]
    if any(is_step(f) for f in functions):
        lines.insert(2, "  newrank=true;")  # edges between a step's class clusters: dot's old ranking fails
    for fi, f in enumerate(functions):
        lines.append(f"  subgraph cluster_{fi} {{")
        lines.append(f"    label={_quote('@' + f.sym_name.data)};")
        node_of: dict[SSAValue, str] = {}
        # A training step's nodes go to one cluster per value class, filled with its colour (report_train).
        classes = value_classes(f) if is_step(f) else None
        groups: dict[str, list[str]] = {}
        edges: list[str] = []

        def place(kind: str, line: str) -> None:
            (groups.setdefault(kind, []) if classes is not None else lines).append(line)

        for ai, arg in enumerate(f.body.block.args):
            node = f"f{fi}_arg{ai}"
            node_of[arg] = node
            name = f"%{arg.name_hint}" if arg.name_hint else f"%arg{ai}"
            kind = classes[arg] if classes is not None else ""
            fill = f', style=filled, fillcolor="{CLASS_COLOURS[kind]}"' if kind else ""
            place(kind, f"    {node} [shape=invhouse, label={_quote(name + chr(10) + _tensor_text(arg.type))}{fill}];")
        for oi, op in enumerate(f.body.block.ops):
            node = f"f{fi}_op{oi}"
            label, attrs = _op_label(op)
            if isinstance(op, ConversionOp):
                total += conversion_bytes(op)
                count += 1
            kind = op_class(op, classes) if classes is not None else ""
            if kind and not isinstance(op, ConversionOp):
                attrs = {**attrs, "style": "filled", "fillcolor": CLASS_COLOURS[kind]}
            extra = "".join(f", {k}={_quote(v)}" for k, v in attrs.items())
            place(kind, f"    {node} [label={_quote(label)}{extra}];")
            for operand in op.operands:
                source = node_of.get(operand)
                if source is None:
                    continue
                name = f"%{operand.name_hint} " if operand.name_hint else ""
                style = ", style=dashed" if _is_partial(operand.type) else ""  # a pending reduction
                # (a step's edges after its clusters, so that each node is first named in its cluster)
                (edges if classes is not None else lines).append(
                    f"    {source} -> {node} [label={_quote(name + _tensor_text(operand.type))}{style}];")
            for result in op.results:
                node_of[result] = node
        for ki, (kind, members) in enumerate(groups.items()):
            lines.append(f"    subgraph cluster_{fi}_{ki} {{")
            lines.append(f'      label={_quote(kind)}; style="rounded,dashed"; color="{CLASS_COLOURS[kind]}";')
            lines.extend("  " + m for m in members)
            lines.append("    }")
        lines.extend(edges)
        lines.append("  }")
    summary = f"{title}: {count} collective(s), {human_bytes(total)} sent (all ranks)"
    lines.append(f"  label={_quote(summary)};")
    lines.append("  labelloc=t;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def report_of(module: ModuleOp, infer: InferSbpPass, fmt: str, planner: str) -> str:
    """The report as `fmt` (text, json or dot) prints it, for the inference `infer` (its rule,
    budget, time limit and cache) and, for dot, the boxing `planner`: what `--sbp-report` and the `report`
    pass write."""
    if fmt == "dot":
        return plan_dot(module, infer, planner)
    return render(build_report(module, infer.rule, infer.budget, infer.cache, infer.time_limit), fmt)


def plan_dot(module: ModuleOp, infer: InferSbpPass, planner: str) -> str:
    """`--sbp-report=dot`: compile a clone with `infer` (the pipeline's infer-sbp, with its options
    — rule=global's `mem` — and its cache), materialize-boxing and lower-boxing{planner}, and draw it."""
    plan = module.clone()
    ctx = Context()
    try:
        infer.apply(ctx, plan)
    except OpError as error:
        raise _on_original(module, plan, error) from None
    MaterializeBoxingPass().apply(ctx, plan)
    LowerBoxingPass(planner=planner).apply(ctx, plan)  # type: ignore[arg-type]
    return render_dot(plan, f"rule={infer.rule}, planner={planner}")
