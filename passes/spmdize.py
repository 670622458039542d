"""`spmdize`: the per-rank program, on local shapes with builtin `tensor<...>` types.

Run after `lower-boxing`. Every `!sbp.tensor` becomes the type of one rank's shard. Splits are
balanced (the first `n % k` ranks get one more element), so shards of an unevenly split axis
differ between ranks: such a dim is printed dynamic (`?`), and the exact shapes are kept in
per-rank tables, never assumed equal:

* a function gets `sbp.placement = @p`; each argument and result gets `sbp.sbp` (its ND-SBP)
  and `sbp.global_shape`;
* an op whose result has a dynamic dim gets `sbp.local_shapes = [array<i64: ...>, ...]`, one
  entry per rank in flat (row-major mesh) order; `sbp.reshape` keeps its table as the
  `local_shapes` property since its output shape cannot be derived from its input;
* a collective keeps `mesh_axes` and gets `placement`, `src_sbp`, `dst_sbp` and `global_shape`,
  which name the mesh axes and tensor axes it moves;
* a vocab-parallel lookup (`sbp.embedding`, `sbp.cross_entropy`) gets `sbp.global_operands`, its
  operands' global types, from which a rank reads the vocabulary range its shard holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.collectives import mesh_coords
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import PlacementOp, lookup_placement
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import BoxingOp, ReshapeOp, ToGlobalOp
from sbpc.dialects.sbp_ops_nn import GLOBAL_OPERANDS, VocabParallelOp
from sbpc.dialects.sharding import local_shape
from sbpc.dialects.tensor_type import GlobalTensorType

DYNAMIC = DYNAMIC_INDEX


def shard_shapes(ty: GlobalTensorType, placement: PlacementOp) -> list[tuple[int, ...]]:
    """Every rank's local shape, flat rank order."""
    sbp = ty.nd_sbp
    assert sbp is not None
    hierarchy = placement.get_hierarchy()
    return [local_shape(ty.get_shape(), sbp, hierarchy, c) for c in mesh_coords(hierarchy)]


def local_type(shapes: list[tuple[int, ...]], ty: GlobalTensorType) -> TensorType:
    """The per-rank type: dims that differ between ranks are dynamic; the layout becomes the encoding."""
    dims = [s if all(x[i] == s for x in shapes) else DYNAMIC for i, s in enumerate(shapes[0])]
    layout = ty.local_layout
    return TensorType(ty.element_type, dims, layout) if layout is not None else TensorType(ty.element_type, dims)


def _table(shapes: list[tuple[int, ...]]) -> ArrayAttr:
    return ArrayAttr(DenseArrayBase.from_list(i64, list(s)) for s in shapes)


class _Localizer:
    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def shapes(self, op: Operation, ty: GlobalTensorType) -> list[tuple[int, ...]]:
        if ty.nd_sbp is None:
            raise OpError(op, f"{describe_op(op)}: a value has no SBP; run infer-sbp before spmdize")
        placement = lookup_placement(self.anchor, ty)
        assert placement is not None
        return shard_shapes(ty, placement)

    def convert(self, op: Operation, value: SSAValue) -> tuple[TensorType, list[tuple[int, ...]]] | None:
        ty = value.type
        if not isinstance(ty, GlobalTensorType):
            return None
        shapes = self.shapes(op, ty)
        new = local_type(shapes, ty)
        Rewriter.replace_value_with_new_type(value, new)
        return new, shapes


def is_per_rank(f: func.FuncOp) -> bool:
    """Whether `f` is already spmdize's output: no global type in its signature, and the ND-SBP of
    its boundary values kept as `sbp.sbp` attributes."""
    types = (*f.function_type.inputs.data, *f.function_type.outputs.data)
    if any(isinstance(t, GlobalTensorType) for t in types):
        return False
    attrs = (*(f.arg_attrs.data if f.arg_attrs else ()), *(f.res_attrs.data if f.res_attrs else ()))
    return any("sbp.sbp" in a.data for a in attrs)


def spmdize_function(f: func.FuncOp) -> None:
    if is_per_rank(f):  # idempotent: rewriting again would drop the boundary attributes
        return
    loc = _Localizer(f)
    for op in f.body.walk():  # collectives read their step off the global types, before any rewrite
        if isinstance(op, BoxingOp | ToGlobalOp):  # reject before rewriting, so the message shows global types
            raise OpError(op, f"{describe_op(op)}: run lower-boxing (and materialize-boxing) before spmdize")
        if any(isinstance(r.type, GlobalTensorType) and r.type.nd_sbp is None for r in op.results):
            raise OpError(op, f"{describe_op(op)}: a value has no SBP; run infer-sbp before spmdize")
        if isinstance(op, CollectiveOp) and isinstance(op.x.type, GlobalTensorType):
            src, dst = op.x.type, op.result.type
            assert isinstance(dst, GlobalTensorType)
            op.properties["placement"] = SymbolRefAttr(src.placement_name)
            op.properties["src_sbp"] = src.sbp
            op.properties["dst_sbp"] = dst.sbp
            op.properties["global_shape"] = DenseArrayBase.from_list(i64, list(src.get_shape()))
        if isinstance(op, VocabParallelOp):  # its shard's vocabulary range is read off the global types
            op.attributes[GLOBAL_OPERANDS] = ArrayAttr([v.type for v in op.operands])
    arg_attrs: list[DictionaryAttr] = []
    placement_name: str | None = None
    for arg in list(f.body.block.args):
        ty = arg.type
        if isinstance(ty, GlobalTensorType):
            placement_name = placement_name or ty.placement_name
            converted = loc.convert(f, arg)
            assert converted is not None
            arg_attrs.append(_boundary_attrs(ty, converted[1] if DYNAMIC in converted[0].get_shape() else None))
        else:
            arg_attrs.append(DictionaryAttr({}))
    res_attrs = [
        _boundary_attrs(t) if isinstance(t, GlobalTensorType) else DictionaryAttr({})
        for t in f.function_type.outputs.data
    ]
    for op in list(f.body.walk()):
        if op is f:
            continue
        if isinstance(op, BoxingOp | ToGlobalOp):
            raise OpError(op, f"{describe_op(op)}: run lower-boxing (and materialize-boxing) before spmdize")
        for r in list(op.results):
            converted = loc.convert(op, r)
            if converted is None:
                continue
            new, shapes = converted
            if isinstance(op, ReshapeOp):
                op.properties["local_shapes"] = _table(shapes)
            elif DYNAMIC in new.get_shape():
                op.attributes["sbp.local_shapes"] = _table(shapes)
    f.update_function_type()
    f.arg_attrs = ArrayAttr(arg_attrs)
    f.res_attrs = ArrayAttr(res_attrs)
    if placement_name is not None:
        f.attributes["sbp.placement"] = SymbolRefAttr(placement_name)


def _boundary_attrs(ty: GlobalTensorType, shapes: list[tuple[int, ...]] | None = None) -> DictionaryAttr:
    attrs: dict[str, Attribute] = {
        "sbp.sbp": ty.sbp,
        "sbp.global_shape": DenseArrayBase.from_list(i64, list(ty.get_shape())),
    }
    if shapes is not None:
        attrs["sbp.local_shapes"] = _table(shapes)
    return DictionaryAttr(attrs)


@dataclass(frozen=True)
class SpmdizePass(ModulePass):
    """Rewrite the global program into the per-rank program on local shapes."""

    name = "spmdize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                spmdize_function(f)
