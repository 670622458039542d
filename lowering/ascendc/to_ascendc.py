"""`lower-to-ascendc`: local `sbp.fmod` / `sbp.fmod_scalar` -> `ascendc.launch` of a tiled kernel.

Run after `spmdize`. Each fmod op becomes a launch of the module's `ascendc.kernel @fmod_tensor`
(or `@fmod_scalar`, created once), carrying the concrete tiling of every rank's local shape: the
tiling math is `lowering/ascendc/tiling.py` (pure Python), fed with each shard's shape, the strides of its
`#sbp.layout` (row-major when absent) and the SoC. The kernel's per-tile program is the TBE
formula (reference/ascendc.md §1.5): cast up to fp32 (CAST_NONE), Div, truncation toward zero
(Cast fp32->fp32 CAST_TRUNC), Mul, Sub, cast down (half CAST_NONE, bf16 and int16 CAST_RINT).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from sbpc.dialects import ascendc, dtypes
from sbpc.dialects.errors import OpError
from sbpc.dialects.layout import LayoutAttr
from sbpc.dialects.placement import PlacementOp, lookup_placement_named
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import FmodOp, FmodScalarOp
from sbpc.lowering.ascendc.host_table import TilingCase, program_cases
from sbpc.lowering.ascendc.soc import DEFAULT_SOC, SocName
from sbpc.lowering.ascendc.tiling import TensorView, compute_tiling

KERNELS = {"fmod_tensor": "FmodTensor", "fmod_scalar": "FmodScalar"}


def tile_program(scalar: bool) -> list[Operation]:
    """The per-tile program of the fmod kernel, as ascendc ops on named buffers."""

    def s(v: str) -> StringAttr:
        return StringAttr(v)

    up = DictionaryAttr({t.name: s(t.cast_up) for t in dtypes.FMOD_KERNEL_TYPES if t.cast_up is not None})
    down = DictionaryAttr({t.name: s(t.cast_down) for t in dtypes.FMOD_KERNEL_TYPES if t.cast_down is not None})
    ops: list[Operation] = [ascendc.CopyInOp.build(properties={"src": s("self"), "dst": s("x")})]
    if not scalar:
        ops.append(ascendc.CopyInOp.build(properties={"src": s("other"), "dst": s("y")}))
    ops.append(ascendc.CastOp.build(properties={"dst": s("x32"), "src": s("x"), "modes": up}))
    if not scalar:
        ops.append(ascendc.CastOp.build(properties={"dst": s("y32"), "src": s("y"), "modes": up}))
    ops += [
        ascendc.DuplicateOp.build(properties={"dst": s("y32"), "scalar": s("other" if not scalar else "tiling")}),
        ascendc.DivOp.build(properties={"dst": s("q32"), "src0": s("x32"), "src1": s("y32")}),
        ascendc.CastOp.build(properties={"dst": s("q32"), "src": s("q32"), "mode": s("CAST_TRUNC")}),
        ascendc.MulOp.build(properties={"dst": s("q32"), "src0": s("q32"), "src1": s("y32")}),
        ascendc.SubOp.build(properties={"dst": s("z32"), "src0": s("x32"), "src1": s("q32")}),
        ascendc.CastOp.build(properties={"dst": s("z"), "src": s("z32"), "modes": down}),
        ascendc.CopyOutOp.build(properties={"src": s("z"), "dst": s("out")}),
    ]
    return ops


def make_kernel(name: str) -> ascendc.KernelOp:
    scalar = name == "fmod_scalar"
    props: dict[str, Attribute] = {"sym_name": StringAttr(name), "op_type": StringAttr(KERNELS[name])}
    if scalar:
        props["scalar"] = UnitAttr()
    return ascendc.KernelOp.build(properties=props, regions=[Region(Block(tile_program(scalar)))])


def _rank_shapes(op: Operation, value: SSAValue, ranks: int) -> list[tuple[int, ...]]:
    """Each rank's local shape: the `sbp.local_shapes` table of the defining op, or the static shape."""
    ty = value.type
    assert isinstance(ty, TensorType)
    owner = value.owner
    table = None
    if isinstance(owner, Operation):
        table = owner.attributes.get("sbp.local_shapes") or owner.properties.get("local_shapes")
    elif isinstance(owner, Block) and isinstance(parent := owner.parent_op(), func.FuncOp):
        table = _arg_table(parent, value)
    if isinstance(table, ArrayAttr):
        return [tuple(a.get_values()) for a in table.data]  # type: ignore[attr-defined]
    shape = ty.get_shape()
    if any(d < 0 for d in shape):
        raise OpError(op, f"{describe_op(op)}: a dynamic local shape has no per-rank table (run spmdize)")
    return [tuple(shape)] * ranks


def _arg_table(f: func.FuncOp, value: SSAValue) -> ArrayAttr | None:
    if f.arg_attrs is None:
        return None
    index = f.body.block.args.index(value)  # type: ignore[arg-type]
    attrs = f.arg_attrs.data[index]
    table = attrs.data.get("sbp.local_shapes")
    return table if isinstance(table, ArrayAttr) else None


def _view(value: SSAValue, shape: tuple[int, ...]) -> TensorView:
    ty = value.type
    assert isinstance(ty, TensorType)
    layout = ty.encoding
    if isinstance(layout, LayoutAttr):
        pairs = layout.layout.strides_for_flat_modes()
        if pairs is not None:
            return TensorView(shape, tuple(s for _, s in pairs), layout.layout.offset)
    return TensorView.row_major(shape)


def _scalar_value(attr: Attribute) -> float | int:
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    assert isinstance(attr, IntegerAttr)
    return int(attr.value.data)


def _dict(fields: dict[str, object]) -> DictionaryAttr:
    out: dict[str, Attribute] = {}
    for k, v in fields.items():
        if isinstance(v, bool | int):
            out[k] = IntegerAttr(int(v), i64)
        elif isinstance(v, float):
            out[k] = FloatAttr(v, f32)
        elif isinstance(v, str):
            out[k] = StringAttr(v)
        elif isinstance(v, list | tuple):
            out[k] = DenseArrayBase.from_list(i64, [int(x) for x in v])
    return DictionaryAttr(out)


def rank_count(f: func.FuncOp, module: ModuleOp) -> int:
    name = f.attributes.get("sbp.placement")
    if isinstance(name, SymbolRefAttr):
        found = lookup_placement_named(f, name.root_reference.data)
        return len(found.get_ranks()) if found is not None else 1
    first = next((op for op in module.ops if isinstance(op, PlacementOp)), None)
    return len(first.get_ranks()) if first is not None else 1


def rank_views(
    op: Operation, self_v: SSAValue, other_v: SSAValue | None, result: SSAValue, ranks: int
) -> list[tuple[TensorView, TensorView | None, TensorView]]:
    """Each rank's (self, other or None for a scalar, out) views: local shapes at the types' layouts."""
    self_shapes = _rank_shapes(op, self_v, ranks)
    out_shapes = _rank_shapes(op, result, ranks)
    other_shapes = _rank_shapes(op, other_v, ranks) if other_v is not None else None
    return [
        (
            _view(self_v, self_shapes[r]),
            _view(other_v, other_shapes[r]) if other_v is not None and other_shapes is not None else None,
            _view(result, out_shapes[r]),
        )
        for r in range(ranks)
    ]


def launch_cases(launch: ascendc.LaunchOp) -> list[TilingCase]:
    """The tiling cases of a launch's ranks on every platform (`host_table.program_cases`): its operands'
    views as `lower` tiled them, the scalar as the rank's tiling holds it (rounded to the dtype)."""
    ty = launch.args[0].type
    assert isinstance(ty, TensorType)
    elt = dtypes.of_xdsl(ty.element_type)
    if elt is None or not elt.fmod_kernel:
        raise OpError(launch, f"ascendc.launch: fmod kernels support {dtypes.FMOD_KERNEL_SUPPORT}")
    other_v = launch.args[1] if len(launch.args) > 1 else None
    tilings = launch.tilings.data
    cases: list[TilingCase] = []
    for (self_view, other_view, out_view), tiling in zip(
        rank_views(launch, launch.args[0], other_v, launch.result, len(tilings)), tilings, strict=True
    ):
        other: TensorView | float = other_view if other_view is not None else _tiling_scalar(tiling)
        cases += program_cases(self_view, other, out_view, elt.name)
    return cases


def _tiling_scalar(tiling: DictionaryAttr) -> float:
    scalar = tiling.data.get("scalarOther")
    if not isinstance(scalar, FloatAttr):
        raise ValueError("ascendc.launch of a scalar kernel: a rank's tiling has no scalarOther")
    return float(scalar.value.data)


@dataclass(frozen=True)
class LowerToAscendcPass(ModulePass):
    """Lower local fmod ops to launches of tiled Ascend C kernels. Option: `soc=ascend910b`."""

    name = "lower-to-ascendc"
    soc: SocName = DEFAULT_SOC

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels: dict[str, ascendc.KernelOp] = {
            k.sym_name.data: k for k in op.ops if isinstance(k, ascendc.KernelOp)
        }
        for f in [f for f in op.ops if isinstance(f, func.FuncOp) and not f.is_declaration]:
            ranks = rank_count(f, op)
            for target in [o for o in f.body.walk() if isinstance(o, FmodOp | FmodScalarOp)]:
                name = "fmod_scalar" if isinstance(target, FmodScalarOp) else "fmod_tensor"
                if name not in kernels:
                    kernels[name] = make_kernel(name)
                    Rewriter.insert_op(kernels[name], InsertPoint.at_end(op.body.block))
                self.lower(target, name, ranks)

    def lower(self, target: FmodOp | FmodScalarOp, name: str, ranks: int) -> None:
        self_v = target.self_
        ty = self_v.type
        if not isinstance(ty, TensorType):
            raise OpError(target, f"{describe_op(target)}: run spmdize before lower-to-ascendc")
        elt = dtypes.of_xdsl(ty.element_type)
        if elt is None or not elt.fmod_kernel:
            raise OpError(target, f"{describe_op(target)}: fmod kernels support {dtypes.FMOD_KERNEL_SUPPORT}")
        dtype = elt.name
        other_v = target.other if isinstance(target, FmodOp) else None
        tilings: list[DictionaryAttr] = []
        views = rank_views(target, self_v, other_v, target.result, ranks)
        for r, (self_view, other_view, out_view) in enumerate(views):
            other = other_view if other_view is not None else _scalar_value(target.other)  # type: ignore[arg-type]
            try:
                tiling = compute_tiling(self_view, other, out_view, dtype, self.soc)
            except ValueError as error:
                raise OpError(target, f"{describe_op(target)}: {error}") from None
            tilings.append(_dict({"rank": r, "dtype": dtype, **tiling.to_json(), **tiling.fields()}))
        operands = [self_v] if isinstance(target, FmodScalarOp) else [self_v, target.other]
        launch = ascendc.LaunchOp.build(
            operands=[operands],
            result_types=[target.result.type],
            properties={"kernel": SymbolRefAttr(name), "tilings": ArrayAttr(tilings)},
        )
        launch.attributes.update(target.attributes)  # keep the per-rank shape table and the signature
        Rewriter.replace_op(target, launch)

