"""Global sbp program -> upstream MLIR 22 with `shard` annotations (`sbp-translate --emit-mlir=global`).

The input is `infer-sbp`'s output: global tensors, every op with its `sbp.signature`. The compute is
the same `linalg`/`arith`/`math` as the per-rank form, on the global shapes; sbpc's choice becomes
`shard.sharding` + `shard.shard`: each argument and each op result annotated with its SBP, each
operand annotated for its user with the SBP the op's signature reads, so MLIR's `shard-partition`
inserts the resharding sbpc planned. A partial P(k) has no layout in MLIR 22: it is written as the
value after its pending all-reduce (those mesh axes replicated), the kind kept as `sbp.pending`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FlatSymbolRefAttr,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnitAttr,
    i16,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.dialects.shard import ShardAxesArrayAttr, ShardingType
from xdsl.ir import Operation, SSAValue

from sbpc.dialects import sbp_ops as ops
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import NdSbpAttr, PartialAttr, SignatureAttr, SplitAttr
from sbpc.dialects.sharding import balanced_range
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.translate.to_upstream_mlir import FuncEmitter, builtin_tensor, generic_op, to_upstream_mlir


def split_axes(sbp: NdSbpAttr, rank: int) -> list[list[int]]:
    """shard's `split_axes`: per tensor dim the mesh axes splitting it, major first (sbp is
    mesh-axis-major, so ascending); trailing empty lists dropped, `[[]]` when replicated."""
    axes: list[list[int]] = [[] for _ in range(rank)]
    for mesh_axis, entry in enumerate(sbp):
        if isinstance(entry, SplitAttr):
            axes[entry.dim].append(mesh_axis)
    while len(axes) > 1 and not axes[-1]:
        axes.pop()
    return axes or [[]]


def balanced_offsets(shape: Sequence[int], axes: list[list[int]], hierarchy: Sequence[int]) -> list[int]:
    """`sharded_dims_offsets` of the balanced split: n+1 offsets per split dim."""
    offsets: list[int] = []
    for dim, mesh_axes in enumerate(axes):
        if not mesh_axes:
            continue
        parts = 1
        for a in mesh_axes:
            parts *= hierarchy[a]
        offsets += [balanced_range(shape[dim], parts, i)[0] for i in range(parts)] + [shape[dim]]
    return offsets


def _offsets(shape: Sequence[int], axes: list[list[int]], hierarchy: Sequence[int]) -> list[int] | None:
    """The balanced `sharded_dims_offsets` when some split is uneven, else None (MLIR's default)."""
    uneven = any(shape[dim] % math.prod(hierarchy[a] for a in mesh_axes)
                 for dim, mesh_axes in enumerate(axes) if mesh_axes)  # a 0-d tensor's `[[]]` names no dim
    return balanced_offsets(shape, axes, hierarchy) if uneven else None


class GlobalEmitter(FuncEmitter):
    """Per op: operands annotated for users with the signature's input SBPs, results with its outputs."""

    # sbpc's partials hold the op's element type (an f16 [S(0), P] matmul result is all-reduced in
    # f16); accumulating in it here makes MLIR's partition reduce the same values, not an f32 buffer.
    WIDE_ACCUMULATOR = False

    def annotate(self, value: SSAValue, ty: GlobalTensorType, sbp: NdSbpAttr, for_users: bool) -> SSAValue:
        shape = ty.get_shape()
        axes = split_axes(sbp, len(shape))
        hierarchy = self.grids[ty.placement_name]
        offsets = _offsets(shape, axes, hierarchy)
        props = {
            "grid": FlatSymbolRefAttr(ty.placement_name),
            "split_axes": ShardAxesArrayAttr(ArrayAttr([DenseArrayBase.from_list(i16, a) for a in axes])),
            "operandSegmentSizes": DenseArrayBase.from_list(i32, [0, 0]),
            "static_halo_sizes": DenseArrayBase.from_list(i64, []),
            "static_sharded_dims_offsets": DenseArrayBase.from_list(i64, offsets or []),
        }
        sharding = self.add(generic_op("shard.sharding", [], [ShardingType()], props)).results[0]
        shard = generic_op("shard.shard", [value, sharding], [value.type], {"annotate_for_users": UnitAttr()}
                           if for_users else {})
        pending = [f"{e.short_str()} on grid axis {a}" for a, e in enumerate(sbp) if isinstance(e, PartialAttr)]
        if pending:
            shard.attributes["sbp.pending"] = StringAttr(", ".join(pending))
        return self.add(shard).results[0]

    def enter(self, func: FuncOp) -> None:
        for old in func.body.block.args:
            ty = old.type
            if not isinstance(ty, GlobalTensorType) or ty.nd_sbp is None:
                raise OpError(func, f"argument {old.name_hint or old.index} of @{func.sym_name.data} has no SBP: "
                              "run infer-sbp before --emit-mlir=global")
            self.values[old] = self.annotate(self.values[old], ty, ty.nd_sbp, False)

    def translate(self, op: Operation) -> None:
        if isinstance(op, ReturnOp):
            self.add(generic_op("func.return", [self.values[v] for v in op.operands]))
            return
        sig = op.attributes.get("sbp.signature")
        if not isinstance(sig, SignatureAttr):
            raise OpError(op, f"{op.name} has no sbp.signature: run infer-sbp before --emit-mlir=global")
        args: list[SSAValue] = []
        for value, sbp in zip(op.operands, sig.inputs.data, strict=True):
            ty = value.type
            assert isinstance(ty, GlobalTensorType)
            new = self.values[value]
            args.append(new if isinstance(sbp, NoneAttr) else self.annotate(new, ty, sbp, True))
        if isinstance(op, ops.ConversionOp):  # to_global / boxing: only the SBP changes
            result = args[0]
        else:
            result = self.compute(op, args)
        ty = op.results[0].type
        assert isinstance(ty, GlobalTensorType) and ty.nd_sbp is not None
        builtin_tensor(op, ty)  # a type the compute could build
        self.values[op.results[0]] = self.annotate(result, ty, ty.nd_sbp, False)


def to_upstream_global(module: ModuleOp) -> ModuleOp:
    """The inferred global `module` as upstream MLIR with sbpc's shardings as `shard` annotations."""
    return to_upstream_mlir(module, GlobalEmitter)


class InputsOnlyEmitter(GlobalEmitter):
    """Only the arguments annotated: the program as a user hands it to MLIR's own propagation
    (`--sharding-propagation`), with sbpc's choices left out."""

    def translate(self, op: Operation) -> None:
        if isinstance(op, ReturnOp):
            self.add(generic_op("func.return", [self.values[v] for v in op.operands]))
            return
        args = [self.values[v] for v in op.operands]
        self.values[op.results[0]] = args[0] if isinstance(op, ops.ConversionOp) else self.compute(op, args)


def to_upstream_inputs_only(module: ModuleOp) -> ModuleOp:
    """The global `module` (arguments with SBPs; inference not needed) with only its arguments annotated."""
    return to_upstream_mlir(module, InputsOnlyEmitter)
