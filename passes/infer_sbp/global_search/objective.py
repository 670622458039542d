"""The objective of `infer-sbp{rule=global}` evaluated on any inferred program (SPEC §3.1).

`plan_objective(module)` prices the signatures a module already carries — whichever rule chose
them — with the whole-program model the search minimises: Σ op compute time (compute_model), Σ
boxing time (the α-β planner on the placement's links) once per value and distinct target SBP
among what its consumers' signatures need and its `to_global`s ask (`boxings.shared_boxings`:
the boxings materialize-boxing inserts and shares, the bytes `sbp-run` counts) and the return's
(`return_conversions`: a training step's updated parameters and state brought back to their
arguments' SBP) — plus every `sbp.boxing` or
collective already in the program, and the per-device memory (arguments' local bytes plus the
most local bytes live at one op in program order; a training step's donated arguments only up to
their last use, `problem.donated_arguments`; a step of K micro-batches charges its updates' compute and
the boxings only they and the return read 1/K, `problem.boxing_share`). So plans of rule=oneflow, rule=cost and
rule=global compare under one objective.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.errors import OpError
from sbpc.dialects.flops import FlopModel
from sbpc.dialects.sbp import NdSbpAttr, SignatureAttr
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import BoxingOp, ToGlobalOp
from sbpc.dialects.signatures import SbpRule
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.autodiff import STEP_OPS, micro_batches, tied_results
from sbpc.passes.cost.compute import local_bytes, op_compute_s
from sbpc.passes.infer_sbp.boxings import shared_boxings
from sbpc.passes.infer_sbp.global_search.problem import Mesh, Pricer, boxing_share, donated_arguments, mesh_of
from sbpc.passes.infer_sbp.local import functions


@dataclass(frozen=True)
class PlanObjective:
    """Modelled seconds of compute and communication, their sum, and peak per-device bytes."""

    compute_s: float
    comm_s: float
    total_s: float
    memory_bytes: int


def plan_objective(module: ModuleOp, pricer: Pricer | None = None) -> PlanObjective:
    """The global model's objective of an inferred `module` (every function; memory: the largest)."""
    pricer = Pricer() if pricer is None else pricer
    compute = comm = 0.0
    memory = 0
    for f in functions(module):
        c, m, b = function_objective(f, pricer)
        compute, comm, memory = compute + c, comm + m, max(memory, b)
    return PlanObjective(compute, comm, compute + comm, memory)


def _sbp(anchor: func.FuncOp | object, value: SSAValue) -> NdSbpAttr:
    ty = value.type
    assert isinstance(ty, GlobalTensorType)
    if ty.nd_sbp is None:
        raise OpError(anchor, f"plan_objective: {ty.describe()} has no SBP (run infer-sbp first)")  # type: ignore[arg-type]
    return ty.nd_sbp


def return_conversions(f: func.FuncOp) -> list[tuple[SSAValue, NdSbpAttr]]:
    """The boxings `materialize-boxing` inserts at the return: each operand whose SBP differs from its
    declared result type's, or for a training step's tied result (`autodiff.tied_results`) from its
    argument's SBP, the layout the next step takes it in."""
    ret = f.body.block.last_op
    if not isinstance(ret, func.ReturnOp):
        return []
    wanted = list(f.function_type.outputs.data)
    inputs = f.function_type.inputs.data
    for r, a in tied_results(f):
        if isinstance(inputs[a], GlobalTensorType) and inputs[a].nd_sbp is not None:  # type: ignore[attr-defined]
            wanted[r] = inputs[a]
    found: list[tuple[SSAValue, NdSbpAttr]] = []
    for v, want in zip(ret.operands, wanted, strict=True):
        ty = v.type
        if isinstance(ty, GlobalTensorType) and isinstance(want, GlobalTensorType) and ty.nd_sbp is not None \
                and want.nd_sbp is not None and ty.nd_sbp != want.nd_sbp:
            found.append((v, want.nd_sbp))
    return found


def function_objective(f: func.FuncOp, pricer: Pricer) -> tuple[float, float, int]:
    """(compute s, communication s, memory bytes) of one inferred function."""
    compute = comm = 0.0
    meshes: dict[str, Mesh] = {}
    share = 1.0 / micro_batches(f)  # a step of K micro-batches: its per-step part per micro-batch

    def mesh(anchor: object, ty: GlobalTensorType) -> Mesh:
        found = meshes.get(ty.placement_name)
        if found is None:
            found = meshes[ty.placement_name] = mesh_of(anchor, ty)  # type: ignore[arg-type]
        return found

    def nbytes(value: SSAValue) -> int:
        ty = value.type
        if not isinstance(ty, GlobalTensorType):
            return 0
        return local_bytes(ty, _sbp(f, value), mesh(f, ty).hierarchy)

    block = f.body.block
    ops = list(block.ops)
    for op in ops:
        if op.get_trait(SbpRule) is not None:
            sig = op.attributes.get("sbp.signature")
            if not isinstance(sig, SignatureAttr):
                raise OpError(op, f"{describe_op(op)}: no sbp.signature (run infer-sbp first)")
            ins: list[NdSbpAttr] = list(sig.inputs.data)  # type: ignore[arg-type]
            outs: list[NdSbpAttr] = list(sig.outputs.data)  # type: ignore[arg-type]
            in_types = [v.type for v in op.operands]
            m = mesh(op, in_types[0] if in_types else op.results[0].type)  # type: ignore[arg-type]
            seconds = op_compute_s(op, op.get_trait(FlopModel), in_types, [r.type for r in op.results],  # type: ignore[arg-type]
                                   (ins, outs), m.hierarchy, m.device)
            compute += seconds * share if isinstance(op, STEP_OPS) else seconds
            for v in op.operands:
                _sbp(op, v)
        elif isinstance(op, ToGlobalOp):
            _sbp(op, op.operands[0])
            _sbp(op, op.results[0])
        elif isinstance(op, BoxingOp | CollectiveOp):  # already in the program: its own op, not shared
            src, dst = op.operands[0], op.results[0]
            comm += pricer.boxing_s(src.type, _sbp(op, src), _sbp(op, dst), mesh(op, src.type))  # type: ignore[arg-type]
    boxings = shared_boxings(ops)
    for v, target in return_conversions(f):
        boxings.setdefault(v, {})[target] = None
    for v, targets in boxings.items():
        weight = boxing_share(v, share)
        for need in targets:
            comm += weight * pricer.boxing_s(v.type, _sbp(f, v), need, mesh(f, v.type))  # type: ignore[arg-type]
    peak, _ = peak_memory(f, nbytes)
    return compute, comm, peak


LiveRange = tuple[SSAValue, int, int]
"""A value live from the op at the first index to the op at the second (program order)."""


def live_ranges(f: func.FuncOp) -> tuple[list[SSAValue], list[LiveRange]]:
    """(the arguments live throughout, the live range of every other value): a training step's donated
    arguments (`problem.donated_arguments`) from the first op to their last use, an op's result from
    its op to its last use (its op if unused) — the liveness SPEC §3.1's memory counts."""
    block = f.body.block
    ops = list(block.ops)
    position = {op: t for t, op in enumerate(ops)}
    donated = donated_arguments(f) if ops else set()
    always = [a for i, a in enumerate(block.args) if i not in donated]
    ranges: list[LiveRange] = [(block.args[i], 0, max((position[u.operation] for u in block.args[i].uses), default=0))
                               for i in sorted(donated)]
    for t, op in enumerate(ops):
        for r in op.results:
            ranges.append((r, t, max((position[u.operation] for u in r.uses), default=t)))
    return always, ranges


def peak_memory(f: func.FuncOp, nbytes: Callable[[SSAValue], int]) -> tuple[int, int]:
    """(the per-device bytes at the step's peak, the index of the op where it is reached first):
    the arguments live throughout plus the most bytes of `live_ranges` live at one op."""
    always, ranges = live_ranges(f)
    count = len(f.body.block.ops)
    delta = [0] * (count + 1)
    for value, first, last in ranges:
        size = nbytes(value)
        delta[first] += size
        delta[last + 1] -= size
    peak = live = 0
    at = 0
    for t in range(count):
        live += delta[t]
        if live > peak:
            peak, at = live, t
    return sum(nbytes(a) for a in always) + peak, at
