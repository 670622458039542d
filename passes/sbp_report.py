"""The `--sbp-report`: why `infer-sbp` chose each signature, and what it costs.

For every op: the candidates that survived filtering with their OneFlow order value and copy
cost and their α-β boxing time, the chosen signature and why, and the boxing each input needs.
Then the program's total modelled communication under both rules, side by side. The report is
built on clones, so it never changes the module being compiled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from sbpc.dialects.placement import lookup_placement
from sbpc.dialects.sbp import GlobalTensorType
from sbpc.passes.cost_model import PlannerCache, plan_transition
from sbpc.passes.infer_sbp import OpRecord, infer_module
from sbpc.passes.sbp_candidates import element_bytes, format_nd_sig

RULES = ("oneflow", "cost")


@dataclass
class RuleTotals:
    time_us: float
    bytes_sent: float
    ops_with_boxing: int


def _bytes_of(record: OpRecord, planner: PlannerCache) -> float:
    op = record.op
    total = 0.0
    for value, need in zip(op.operands, record.decision.chosen[0], strict=True):
        ty = value.type
        assert isinstance(ty, GlobalTensorType)
        have = ty.nd_sbp
        placement = lookup_placement(op, ty)
        if have is None or placement is None:
            continue
        plan = plan_transition(
            tuple(have), tuple(need), ty.get_shape(), element_bytes(ty), placement.get_hierarchy(), cache=planner
        )
        total += plan.bytes_sent
    return total


def _totals(records: list[OpRecord], planner: PlannerCache) -> RuleTotals:
    return RuleTotals(
        sum(r.decision.comm_us for r in records),
        sum(_bytes_of(r, planner) for r in records),
        sum(1 for r in records if r.boxing),
    )


def build_report(module: ModuleOp, rule: str) -> dict[str, Any]:
    """Per-op detail for `rule`, totals for both rules."""
    per_rule: dict[str, tuple[list[OpRecord], RuleTotals]] = {}
    planner = PlannerCache()  # the report's own, shared by both rules' totals
    for name in RULES:
        records = infer_module(module.clone(), name)
        per_rule[name] = (records, _totals(records, planner))
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
    return {
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


def render_text(report: dict[str, Any]) -> str:
    lines = [f"// sbp-report (rule={report['rule']})"]
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
    for name, t in report["totals"].items():
        lines.append(
            f"total rule={name}: {t['modelled_us']:.3f} us modelled, "
            f"{t['bytes_sent_all_ranks']:g} bytes sent (all ranks), {t['ops_with_boxing']} ops with boxing"
        )
    return "\n".join(lines) + "\n"


def render(report: dict[str, Any], fmt: str) -> str:
    return json.dumps(report, indent=2) + "\n" if fmt == "json" else render_text(report)
