"""The `--sbp-report` of a training step (SPEC §8, issue 24 item 4): its values by class and what each
class costs.

Classes (`value_classes`), from the function's `sbp.train_step` and what the `autodiff` pass builds:
`weights` (the parameters and their updates), `optimizer state` (the moments and theirs), `gradients`
(every value computed from the loss seed `sbp.ones_like`: the backward pass, parameter gradients
included), `activations` (the forward values, the loss, and what the backward recomputes from them)
and `inputs` (the other arguments: the batch, the targets). A conversion (`sbp.boxing`, a collective,
`sbp.to_global`) belongs to the class of the value it converts.

Per class the report gives the chosen SBP patterns (how many values of the class take each, and the
weights' and moments' by name), the per-device bytes of the class at the step's memory peak (§3.1's
liveness, `global_search/objective.py`'s `peak_memory`; they add up to the step's memory), and the
bytes its collectives send over all ranks by collective kind, in the plan as `materialize-boxing` and
`lower-boxing` write it (`report.conversion_bytes`, what the simulator measures, handed in by the
report). `--sbp-report=dot` draws the step with its nodes clustered and coloured by class
(`CLASS_COLOURS`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from sbpc.dialects import sbp_ops_grad as g
from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.placement import lookup_placement
from sbpc.dialects.sbp_ops import ConversionOp
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.dialects.units import human_bytes
from sbpc.passes.autodiff import TRAIN_STEP
from sbpc.passes.cost.compute import local_bytes
from sbpc.passes.infer_sbp.global_search.objective import live_ranges, peak_memory
from sbpc.passes.lower_boxing import LowerBoxingPass
from sbpc.passes.materialize_boxing import MaterializeBoxingPass

WEIGHTS, STATE, GRADIENTS, ACTIVATIONS, INPUTS = "weights", "optimizer state", "gradients", "activations", "inputs"
CLASSES = (WEIGHTS, STATE, GRADIENTS, ACTIVATIONS, INPUTS)

CLASS_COLOURS = {WEIGHTS: "lightskyblue", STATE: "palegreen", GRADIENTS: "pink", ACTIVATIONS: "lightyellow",
                 INPUTS: "lightgrey"}
"""The DOT fill colour of each class's nodes (collectives keep the plan's orange, framed by class)."""


def is_step(f: func.FuncOp) -> bool:
    return TRAIN_STEP in f.attributes


def value_classes(f: func.FuncOp) -> dict[SSAValue, str]:
    """The class of every tensor value of the step `f` (module docstring)."""
    marker = f.attributes[TRAIN_STEP]
    params = {int(v) for v in marker.data["params"].get_values()}  # type: ignore[attr-defined]
    state = {int(v) for v in marker.data["state"].get_values()}  # type: ignore[attr-defined]
    found: dict[SSAValue, str] = {}
    for i, arg in enumerate(f.body.block.args):
        found[arg] = WEIGHTS if i in params else STATE if i in state else INPUTS
    for op in f.body.block.ops:
        if not op.results:
            continue
        if isinstance(op, ConversionOp):
            kind = found.get(op.operands[0], ACTIVATIONS)
        elif isinstance(op, g.AdamMoment1Op | g.AdamMoment2Op):
            kind = STATE
        elif isinstance(op, g.SgdUpdateOp | g.AdamwUpdateOp):
            kind = WEIGHTS
        elif isinstance(op, g.OnesLikeOp) or any(found.get(v) == GRADIENTS for v in op.operands):
            kind = GRADIENTS
        else:
            kind = ACTIVATIONS
        for r in op.results:
            found[r] = kind
    return found


def op_class(op: Operation, classes: dict[SSAValue, str]) -> str:
    """An op's class: its result's, a conversion's source's, the return's `weights`."""
    if op.results:
        return classes.get(op.results[0], ACTIVATIONS)
    return WEIGHTS if isinstance(op, func.ReturnOp) else ACTIVATIONS


def _hierarchy(module: ModuleOp, ty: GlobalTensorType) -> tuple[int, ...]:
    placement = lookup_placement(module, ty)
    return placement.get_hierarchy() if placement is not None else (1,)


def train_section(inferred: ModuleOp, conversion_bytes: Callable[[ConversionOp], int]) -> list[dict[str, Any]]:
    """The training-step part of the report of an inferred module: one entry per step function (none
    without one). The collectives come from a clone compiled on by materialize-boxing and lower-boxing,
    each counted by `conversion_bytes` (the report's, `report.conversion_bytes`)."""
    steps = [f for f in inferred.walk() if isinstance(f, func.FuncOp) and not f.is_declaration and is_step(f)]
    if not steps:
        return []
    lowered = inferred.clone()
    MaterializeBoxingPass().apply(Context(), lowered)
    LowerBoxingPass().apply(Context(), lowered)
    lowered_steps = {f.sym_name.data: f for f in lowered.walk() if isinstance(f, func.FuncOp) and is_step(f)}
    return [_step_entry(inferred, f, lowered_steps[f.sym_name.data], conversion_bytes) for f in steps]


def _step_entry(module: ModuleOp, f: func.FuncOp, lowered: func.FuncOp,
                conversion_bytes: Callable[[ConversionOp], int]) -> dict[str, Any]:
    classes = value_classes(f)

    def nbytes(value: SSAValue) -> int:
        ty = value.type
        if not isinstance(ty, GlobalTensorType) or ty.nd_sbp is None:
            return 0
        return local_bytes(ty, ty.nd_sbp, _hierarchy(module, ty))

    peak, at = peak_memory(f, nbytes)
    always, ranges = live_ranges(f)
    at_peak = [*always, *(v for v, first, last in ranges if first <= at <= last)]
    entry: dict[str, Any] = {"function": f.sym_name.data, "memory_bytes": peak, "classes": {}}
    names = {i: f"%{a.name_hint}" if a.name_hint else f"%arg{i}" for i, a in enumerate(f.body.block.args)}
    for kind in CLASSES:
        members = [v for v, c in classes.items() if c == kind and isinstance(v.type, GlobalTensorType)]
        patterns = Counter(v.type.nd_sbp.short_str() if v.type.nd_sbp is not None else "?"  # type: ignore[attr-defined]
                           for v in members)
        entry["classes"][kind] = {
            "values": len(members),
            "sbp": dict(patterns.most_common()),
            "bytes_at_peak": sum(nbytes(v) for v in at_peak if classes.get(v) == kind),
            "collective_bytes": {},
        }
        if kind in (WEIGHTS, STATE):
            entry["classes"][kind]["by_name"] = {
                names[i]: a.type.nd_sbp.short_str() for i, a in enumerate(f.body.block.args)  # type: ignore[attr-defined]
                if classes[a] == kind and isinstance(a.type, GlobalTensorType) and a.type.nd_sbp is not None}
    lowered_classes = value_classes(lowered)
    for op in lowered.body.block.ops:
        if isinstance(op, ConversionOp):
            kind = lowered_classes.get(op.operands[0], ACTIVATIONS)
            name = op.KIND if isinstance(op, CollectiveOp) else op.name.removeprefix("sbp.")
            sent = entry["classes"][kind]["collective_bytes"]
            sent[name] = sent.get(name, 0) + conversion_bytes(op)
    return entry


def render_train_text(section: list[dict[str, Any]]) -> list[str]:
    """The text form: per step, per class its SBP patterns, bytes at the peak and collective bytes."""
    lines: list[str] = []
    for step in section:
        lines.append(f"training step @{step['function']}: {human_bytes(step['memory_bytes'])} per device at the peak")
        for kind, c in step["classes"].items():
            if not c["values"]:
                continue
            patterns = ", ".join(f"{p} x{n}" for p, n in c["sbp"].items())
            sent = ", ".join(f"{k} {human_bytes(b)}" for k, b in c["collective_bytes"].items() if b) or "none"
            count = f"{c['values']} value{'s' if c['values'] != 1 else ''}"
            lines.append(f"  {kind}: {count} ({patterns}); {human_bytes(c['bytes_at_peak'])} at the "
                         f"peak; collectives: {sent}")
            if "by_name" in c:
                lines.append("    " + ", ".join(f"{n} {s}" for n, s in c["by_name"].items()))
    return lines
