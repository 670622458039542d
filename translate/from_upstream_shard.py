"""Upstream MLIR with `shard` annotations -> the sbp dialect (`sbp-translate --import-shard`).

The inverse of `--emit-mlir=global` (translate/to_upstream_global.py), and the way in for a user's own
MLIR program: `shard.grid` becomes an `sbp.placement` (device type and ranks from sbpc's discardable
attributes when present, else "npu" and 0..n-1; a `?` axis sized by `--grid NAME=SHAPE`, else a
located error where the grid is used); `shard.sharding` split_axes become ND-SBPs
(reference/wave2.md §2: tensor dim i split by grid axes [a, b] is S(i) on a and b; a grid axis in
no list is B; a partial, which MLIR 22 cannot write, is read from `--emit-mlir=global`'s `sbp.pending`).

* `shard.shard %v` on a function argument gives the argument's SBP (a plain one, else one for
  users: MLIR's partition types the argument by the shard op using it). An argument without one is
  replicated, as MLIR's partition reads it, or, with `free_args` (`--free-args`), has no SBP for
  `infer-sbp{rule=global}` to decide (SPEC §2.5). Any later one with another SBP is an
  `sbp.to_global`. On an op result it is, as in MLIR, a requirement on the value, not on the op:
  the op's result is left to inference (it produces what its operands imply, e.g. the partial sum
  of a k-split matmul) and an `sbp.to_global` to the annotated SBP follows, which later users read.
* `shard.shard %v annotate_for_users` is the SBP its users see: an op's `sbp.hint` input entry; for
  `func.return`, an `sbp.to_global` to that SBP before the return (the function result carries it).
* an annotation of an init tensor (`tensor.empty`, `linalg.fill`, a constant: never data in sbp) is
  the sharding of the result of the linalg op it is the `outs` of (MLIR: a DPS result has its
  init's sharding): a requirement after that op when its result has no annotation of its own.
* compute ops are recognised by translate/raise_linalg.py (a matmul or reduction into data is the op
  and then the combining op with that data).

What has no sbp form is a located error at the op: halo sizes, offsets other than the balanced
split, a grid axis list not in ascending (major-first = sbp's mesh-axis order) order, dynamic dims,
element types sbp tensors cannot hold (`index`), constants used as data, unknown ops.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import MatmulOp as LinalgMatmulOp
from xdsl.dialects.linalg.ops import NamedOperation
from xdsl.dialects.shard import GridOp, ShardingOp, ShardOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from sbpc.dialects import dtypes
from sbpc.dialects import sbp_ops as ops
from sbpc.dialects.errors import OpError
from sbpc.dialects.layout import LayoutAttr
from sbpc.dialects.placement import PlacementOp
from sbpc.dialects.sbp import BroadcastAttr, NdSbpAttr, PartialAttr, ReduceKind, SbpAttr, SignatureAttr, SplitAttr
from sbpc.dialects.sbp_dialect import SBP
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.translate.raise_linalg import AUXILIARY, Raised, Raiser, op_name, tensor_type, through_shards
from sbpc.translate.to_upstream_global import balanced_offsets

UPSTREAM_DIALECTS = ("builtin", "func", "arith", "math", "linalg", "tensor", "tosa", "shard", "scf")
DEFAULT_DEVICE_TYPE = "npu"
MAX_GRID_DEVICES = 1 << 20
"""The largest grid imported: its placement lists every rank (8 MB of ranks, megabytes of text)."""
_PENDING = re.compile(r"(P(?:\((?:sum|max|min)\))?) on grid axis (\d+)")


@irdl_op_definition
class BatchMatmulOp(NamedOperation):
    """`linalg.batch_matmul` (xDSL 0.74 has only linalg.matmul): the same, with a batch loop."""

    name = "linalg.batch_matmul"
    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True
    get_hidden_region = LinalgMatmulOp.__dict__["get_hidden_region"]
    get_default_indexing_maps = LinalgMatmulOp.get_default_indexing_maps
    get_indexing_maps = LinalgMatmulOp.get_indexing_maps

    indexing_maps = prop_def(
        ArrayAttr[AffineMapAttr],
        default_value=ArrayAttr([
            AffineMapAttr(AffineMap.from_callable(lambda b, i, _, k: (b, i, k))),
            AffineMapAttr(AffineMap.from_callable(lambda b, _, j, k: (b, k, j))),
            AffineMapAttr(AffineMap.from_callable(lambda b, i, j, _: (b, i, j))),
        ]),
    )

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return ArrayAttr([IteratorTypeAttr.parallel()] * 3 + [IteratorTypeAttr.reduction()])


def import_context() -> Context:
    """The upstream dialects an imported program may use; other ops parse (generic form) and are
    then reported by name."""
    ctx = Context(allow_unregistered=True)
    dialects = get_all_dialects()
    for name in UPSTREAM_DIALECTS:
        ctx.register_dialect(name, dialects[name])
    ctx.load_op(BatchMatmulOp)
    return ctx


class Grid:
    """One `shard.grid` and the placement it becomes. A grid with a `?` axis has no placement until
    `--grid NAME=SHAPE` sizes it (`sizes`); used unsized, it is a located error at the use."""

    def __init__(self, op: GridOp, sizes: dict[str, tuple[int, ...]]):
        verified(op)
        self.name = op.sym_name.data
        declared = tuple(int(n) for n in op.shape.get_values())
        where = f"shard.grid @{self.name}"
        given = sizes.get(self.name)
        self.placement: PlacementOp | None = None
        if given is not None:
            if len(given) != len(declared) or any(d not in (DYNAMIC_INDEX, g) for d, g in zip(declared, given)):
                raise OpError(op, f"{where}: --grid {self.name}={'x'.join(map(str, given))} does not fit its "
                              f"shape {_shape_text(declared)} (it sizes the `?` axes; the static ones must match)")
            declared = given
        self.shape = declared
        if any(n == DYNAMIC_INDEX for n in self.shape):
            return  # unsized: an error where it is used
        if not self.shape or any(n <= 0 for n in self.shape):
            raise OpError(op, f"{where}: shape {list(self.shape)} has no static size on every "
                          "axis (sbp placements are concrete device lists)")
        count = math.prod(self.shape)  # Python ints: a product past int64 is caught here, not wrapped
        if count > MAX_GRID_DEVICES:
            raise OpError(op, f"{where}: shape {'x'.join(map(str, self.shape))} has {count} devices; sbpc "
                          f"imports grids of at most {MAX_GRID_DEVICES} devices (a placement lists every rank)")
        device_type = op.attributes.get("sbp.device_type", StringAttr(DEFAULT_DEVICE_TYPE))
        if not isinstance(device_type, StringAttr):
            raise OpError(op, f"{where}: sbp.device_type must be a string, got {device_type}")
        devices = op.attributes.get("sbp.devices")
        if devices is None:
            ranks = list(range(count))
        elif not isinstance(devices, DenseArrayBase):
            raise OpError(op, f"{where}: sbp.devices must be an array<i64: ...> of ranks, got {devices}")
        else:
            ranks = [int(r) for r in devices.get_values()]
            if len(ranks) != count:
                raise OpError(op, f"{where}: sbp.devices lists {len(ranks)} rank{'' if len(ranks) == 1 else 's'} "
                              f"for a grid of {count} devices (shape {list(self.shape)}): give one rank per device")
        self.placement = PlacementOp(self.name, device_type.data, self.shape, ranks)

    def used(self, at: Operation) -> Grid:
        """This grid, used by `at`: a located error if it has no size."""
        if self.placement is None:
            raise OpError(at, f"{op_name(at)}: grid @{self.name} has shape {_shape_text(self.shape)}, sized only at "
                          "run time; an sbp placement lists its devices: give the size with "
                          f"`--grid {self.name}={'x'.join('N' if n == DYNAMIC_INDEX else str(n) for n in self.shape)}`")
        return self


def _shape_text(shape: Sequence[int]) -> str:
    return "x".join("?" if n == DYNAMIC_INDEX else str(n) for n in shape)


def parse_grid_sizes(specs: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """`--grid NAME=2x4` options as {name: shape}; ValueError with the user-facing text if malformed."""
    sizes: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        found = re.fullmatch(r"@?([A-Za-z_][\w$.]*)=(\d+(?:x\d+)*)", spec.strip())
        if found is None:
            raise ValueError(f"--grid {spec!r}: expected NAME=SHAPE, e.g. --grid grid_1d=4 or --grid mesh=2x4")
        shape = tuple(int(n) for n in found.group(2).split("x"))
        if any(n <= 0 for n in shape):
            raise ValueError(f"--grid {spec!r}: every axis needs at least one device")
        if found.group(1) in sizes and sizes[found.group(1)] != shape:
            raise ValueError(f"--grid {spec!r}: @{found.group(1)} is sized twice")
        sizes[found.group(1)] = shape
    return sizes


def verified(op: Operation) -> None:
    """Check `op`'s own constraints (property kinds, xDSL's verifier), which an unverified upstream
    module may break, before reading it: a located error, not a Python one deep in the importer."""
    try:
        op.verify(verify_nested_ops=False)
    except VerifyException as error:
        message = str(error)
        raise OpError(op, message if message.startswith(op.name) else f"{op.name}: {message}") from error


def nd_sbp_of(shard: ShardOp, grids: dict[str, Grid]) -> tuple[Grid, NdSbpAttr]:
    """The ND-SBP a `shard.shard` gives its value (its `shard.sharding` read against the value's shape)."""
    verified(shard)
    sharding = shard.sharding.owner
    if not isinstance(sharding, ShardingOp):
        raise OpError(shard, "shard.shard: the sharding is not a shard.sharding op of this function")
    verified(sharding)
    grid = grids.get(sharding.grid.root_reference.data)
    if grid is None:
        raise OpError(sharding, f"shard.sharding: unknown grid @{sharding.grid.root_reference.data}")
    grid.used(sharding)
    shape = tensor_type(shard, shard.src).get_shape()
    if DYNAMIC_INDEX in shape:
        raise OpError(shard, f"shard.shard: {shard.src.type} has a dynamic dim; sbp global tensors have static shapes")
    if sharding.static_halo_sizes.get_values() or sharding.dynamic_halo_sizes:
        raise OpError(sharding, "shard.sharding: halo sizes have no sbp form (SBP splits do not overlap)")
    if sharding.dynamic_sharded_dims_offsets:
        raise OpError(sharding, "shard.sharding: dynamic sharded_dims_offsets have no sbp form")
    axes = [[int(a) for a in dim.get_values()] for dim in sharding.split_axes.axes.data]
    if len(axes) > len(shape) and any(axes[len(shape):]):
        raise OpError(sharding, f"shard.sharding: split_axes has {len(axes)} entries for a rank-{len(shape)} tensor")
    entries: list[SbpAttr] = [BroadcastAttr()] * len(grid.shape)
    for dim, mesh_axes in enumerate(axes):
        if mesh_axes != sorted(mesh_axes):
            raise OpError(sharding, f"shard.sharding: split_axes {mesh_axes} of tensor dim {dim} are minor-major; "
                          "sbp splits a dim on several mesh axes in ascending (major-first) order only")
        for a in mesh_axes:
            if not 0 <= a < len(grid.shape):
                raise OpError(sharding, f"shard.sharding: grid axis {a} is not an axis of @{grid.name} "
                              f"(shape {list(grid.shape)})")
            if not isinstance(entries[a], BroadcastAttr):
                raise OpError(sharding, f"shard.sharding: grid axis {a} splits two tensor dims")
            entries[a] = SplitAttr(dim)
    offsets = [int(v) for v in sharding.static_sharded_dims_offsets.get_values()]
    if offsets and offsets != balanced_offsets(shape, axes, grid.shape):
        raise OpError(sharding, f"shard.sharding: sharded_dims_offsets {offsets} are not the balanced split "
                      f"of {list(shape)} (expected {balanced_offsets(shape, axes, grid.shape)}); sbp splits only "
                      "that way")
    pending = shard.attributes.get("sbp.pending")
    if isinstance(pending, StringAttr):
        for kind, axis in _PENDING.findall(pending.data):
            a = int(axis)
            if not 0 <= a < len(grid.shape) or not isinstance(entries[a], BroadcastAttr):
                raise OpError(shard, f"shard.shard: sbp.pending names grid axis {a}, which is not replicated")
            entries[a] = PartialAttr(ReduceKind(kind[2:-1]) if "(" in kind else ReduceKind.SUM)
    return grid, NdSbpAttr(entries)


class FuncImporter:
    """Translates one annotated `func.func` into an sbp function."""

    SKIPPED: ClassVar[tuple[str, ...]] = AUXILIARY

    def __init__(self, func: FuncOp, grids: dict[str, Grid], raiser: Raiser, free_args: bool = False):
        self.func = func
        self.grids = grids
        self.raiser = raiser
        self.free_args = free_args
        self.values: dict[SSAValue, SSAValue] = {}
        self.reads: dict[SSAValue, tuple[Grid, NdSbpAttr]] = {}  # a for-users shard -> what its users read
        self.arg_sbp: dict[SSAValue, tuple[Grid, NdSbpAttr]] = {}
        self.arg_shard: dict[SSAValue, ShardOp] = {}
        self.absorbed: set[Operation] = set()
        self.inits: set[SSAValue] = set()  # tensors of init ops and their annotations: never data
        self.origins: list[tuple[Operation, Operation]] = []  # each sbp op built and the op it comes from

    def default_grid(self, op: Operation, what: str) -> Grid:
        """The grid of a value no annotation places: the one grid the function's annotations name,
        else (a function naming none: MLIR leaves it unsharded, the same on any grid) the module's
        first; several is a located error."""
        named = {o.grid.root_reference.data for o in self.func.walk() if isinstance(o, ShardingOp)}
        found = [g for name, g in self.grids.items() if name in named] if named else list(self.grids.values())[:1]
        if len(found) != 1:
            raise OpError(op, f"{what} has no shard annotation and the function uses {len(found)} grids "
                          f"({', '.join('@' + g.name for g in found)}): annotate it with shard.shard")
        return found[0].used(op)

    def scan(self) -> None:
        """First pass: each argument's SBP, and the generics a recognised layer_norm absorbs. An
        argument's SBP is its first plain `shard.shard`, else its first `annotate_for_users` one
        (MLIR's partition gives a block argument the sharding of the shard op using it, either
        kind). Every plain annotation is read here, so that one with no sbp form (a halo) is
        reported before what follows from it."""
        read: dict[SSAValue, tuple[Grid, NdSbpAttr]] = {}
        for op in self.func.body.block.ops:
            if isinstance(op, ShardOp) and op.annotate_for_users is None and not isinstance(op.src.owner, ShardOp):
                sbp = nd_sbp_of(op, self.grids)
                if isinstance(op.src, BlockArgument) and op.src not in self.arg_shard:
                    self.arg_shard[op.src] = op
                    self.arg_sbp[op.src] = sbp
            elif isinstance(op, ShardOp) and isinstance(op.src, BlockArgument) and op.src not in read:
                read[op.src] = nd_sbp_of(op, self.grids)
            found = self.raiser.layer_norm(op)
            if found is not None:
                self.absorbed.update(found[1])
        for arg, sbp in read.items():
            self.arg_sbp.setdefault(arg, sbp)

    def translate(self) -> FuncOp:
        verified(self.func)
        blocks = len(self.func.body.blocks)
        if blocks != 1:
            raise OpError(self.func, f"@{self.func.sym_name.data} has {blocks} blocks; --import-shard reads "
                          "functions of one block (no branches between blocks)")
        self.scan()
        args: list[Attribute] = []
        for arg in self.func.body.block.args:
            ty = tensor_type(self.func, arg)
            grid, sbp = self.arg_sbp.get(arg) or (self.default_grid(self.func, f"argument {arg.index}"), None)
            if sbp is None and not self.free_args:  # MLIR's partition reads it replicated
                sbp = NdSbpAttr([BroadcastAttr()] * len(grid.shape))
            args.append(self.global_type(self.func, ty, grid, sbp, self.layout(arg.index)))
        new = FuncOp(self.func.sym_name.data, (args, []))
        for old, value in zip(self.func.body.block.args, new.body.block.args, strict=True):
            self.values[old] = value
            value.name_hint = old.name_hint
        block = new.body.block
        for op in self.func.body.block.ops:
            if op in self.absorbed or op_name(op) in self.SKIPPED or (
                    op.results and not any(isinstance(r.type, TensorType) for r in op.results)):
                self.inits.update(r for r in op.results if isinstance(r.type, TensorType))
                continue  # init tensors, constants, index arithmetic of shapes: never data here
            if isinstance(op, ReturnOp):
                returned = [self.returned(op, v, block) for v in op.operands]
                block.add_op(ReturnOp(*returned))
                new.function_type = FunctionType.from_lists(args, [v.type for v in returned])
                continue
            if isinstance(op, ShardOp):
                self.shard(op, block)
                continue
            raised = self.raise_op(op)
            if raised is None:  # a fill: an init tensor, not data
                continue
            self.build(op, raised, block)
        return new

    def global_type(self, op: Operation, ty: TensorType, grid: Grid, sbp: NdSbpAttr | None,
                    layout: LayoutAttr | None = None) -> GlobalTensorType:
        shape = ty.get_shape()
        if any(n == DYNAMIC_INDEX for n in shape):
            raise OpError(op, f"{op_name(op)}: {ty} has a dynamic dim; sbp global tensors have static shapes")
        if ty.element_type not in dtypes.IR_NAMES:
            raise OpError(op, f"{op_name(op)}: {ty} has element type {ty.element_type}, which sbp tensors cannot hold "
                          f"(they hold {dtypes.names(dtypes.IR_TYPES)})")
        return GlobalTensorType(shape, ty.element_type, grid.name, sbp, layout)

    def layout(self, index: int) -> LayoutAttr | None:
        """An argument's `#sbp.layout`, kept by `--emit-mlir` as the text of its `sbp.layout` attribute."""
        attrs = self.func.arg_attrs
        text = attrs.data[index].data.get("sbp.layout") if attrs is not None else None
        if not isinstance(text, StringAttr):
            return None
        ctx = Context()
        ctx.load_dialect(SBP)
        try:
            layout = Parser(ctx, text.data).parse_attribute()
        except ParseError as error:
            raise OpError(self.func, f"argument {index}: sbp.layout {text.data!r} is not an #sbp.layout: "
                          f"{error.msg}") from error
        if not isinstance(layout, LayoutAttr):
            raise OpError(self.func, f"argument {index}: sbp.layout {text.data!r} is not an #sbp.layout")
        return layout

    def value(self, user: Operation, v: SSAValue) -> SSAValue:
        if v not in self.values:
            origin = through_shards(v).owner
            what = op_name(origin) if isinstance(origin, Operation) else "a block argument"
            if v in self.inits:
                raise OpError(user, f"{op_name(user)}: an operand is the tensor {what} builds, used as data; sbp has "
                              "no constant op (constants and init tensors can only be a linalg op's outs: pass the "
                              "tensor as a function argument)")
            raise OpError(user, f"{op_name(user)}: an operand produced by {what} has no sbp form")
        return self.values[v]

    def shard(self, op: ShardOp, block: Block) -> None:
        if op.src in self.inits:  # the annotation of an init tensor: what the op filling it produces
            nd_sbp_of(op, self.grids)
            self.inits.add(op.result)
            return
        src = self.value(op, op.src)
        if op.annotate_for_users is not None:
            self.values[op.result] = src
            self.reads[op.result] = nd_sbp_of(op, self.grids)
            return
        if self.arg_shard.get(op.src) is op:  # an argument's own annotation: already in its type
            self.values[op.result] = src
            return
        self.values[op.result] = self.to_global(op, src, *nd_sbp_of(op, self.grids), block)

    def init_sbp(self, init: SSAValue) -> tuple[Grid, NdSbpAttr] | None:
        """The annotation nearest the use of an init tensor (through `linalg.fill`), or None."""
        owner = init.owner
        if isinstance(owner, ShardOp):
            return nd_sbp_of(owner, self.grids)
        if isinstance(owner, Operation) and op_name(owner) == "linalg.fill":
            return self.init_sbp(owner.operands[-1])
        return None

    def returned(self, op: ReturnOp, v: SSAValue, block: Block) -> SSAValue:
        """A returned value; one annotated for its users is returned with the SBP they see."""
        value = self.value(op, v)
        if v not in self.reads:
            return value
        shard = v.owner
        assert isinstance(shard, ShardOp)
        return self.to_global(shard, value, *self.reads[v], block)

    def to_global(self, origin: Operation, src: SSAValue, grid: Grid, sbp: NdSbpAttr, block: Block) -> SSAValue:
        """`src` converted to `sbp` on `grid` (itself if its type has that SBP already)."""
        current = src.type
        assert isinstance(current, GlobalTensorType)
        if current.placement_name == grid.name and current.nd_sbp == sbp:
            return src
        ty = GlobalTensorType(current.get_shape(), current.element_type, grid.name, sbp)
        converted = self.add(origin, ops.ToGlobalOp.create(operands=[src], result_types=[ty]), block)
        converted.name_hint = origin.results[0].name_hint
        return converted

    def raise_op(self, op: Operation) -> Raised | None:
        found = self.raiser.layer_norm(op)
        if found is not None:
            return found[0]
        if op_name(op) == "linalg.generic":
            return self.raiser.generic(op)
        raised = self.raiser.named(op)
        if raised is None:
            raise OpError(op, f"{op_name(op)} has no sbp form (--import-shard reads linalg, tensor reshapes, tosa "
                          "and shard annotations)")
        return raised

    def build(self, op: Operation, raised: Raised, block: Block) -> None:
        """The sbp op(s) of `op`: the op, its accumulation into data (`raised.combine`), and the
        requirement its init tensor's annotation states (MLIR: a DPS op's result has its init's
        sharding) when the result has no annotation of its own."""
        if len(op.results) != 1 or not raised.operands:
            what = f"{len(op.results)} results" if len(op.results) != 1 else "no data operand"
            raise OpError(op, f"{op_name(op)} with {what} has no sbp form")
        operands = [self.value(op, v) for v in raised.operands]
        first = operands[0].type
        assert isinstance(first, GlobalTensorType)
        ty = self.global_type(op, tensor_type(op, op.results[0]), self.grids[first.placement_name], None)
        result = self.built(op, raised.cls.create(operands=operands, result_types=[ty], properties=raised.props),
                            raised.operands, block)
        if raised.combine is not None:
            cls, other = raised.combine
            combined = cls.create(operands=[result, self.value(op, other)], result_types=[ty])
            result = self.built(op, combined, [op.results[0], other], block)
        result.name_hint = op.results[0].name_hint
        own = any(isinstance(u.operation, ShardOp) and u.operation.annotate_for_users is None
                  for u in op.results[0].uses)
        if raised.init in self.inits and not own:
            required = self.init_sbp(raised.init)
            if required is not None:
                result = self.to_global(op, result, *required, block)
        self.values[op.results[0]] = result

    def built(self, origin: Operation, new: Operation, read: Sequence[SSAValue], block: Block) -> SSAValue:
        """`new` added, with the SBPs its operands are read as (`read`: their upstream values) as its hint."""
        hint = [self.reads[v][1] if v in self.reads else None for v in read]
        if any(h is not None for h in hint):
            new.attributes["sbp.hint"] = SignatureAttr(hint, [None])
        return self.add(origin, new, block)

    def add(self, origin: Operation, new: Operation, block: Block) -> SSAValue:
        block.add_op(new)
        self.origins.append((new, origin))
        return new.results[0]


def import_shard(module: ModuleOp, grid_sizes: dict[str, tuple[int, ...]] | None = None, *,
                 free_args: bool = False, trace: dict[SSAValue, SSAValue] | None = None) -> ModuleOp:
    """The `shard`-annotated upstream `module` as an sbp program (global types, SBP on the arguments,
    hints where it annotates operands, conversions where it annotates results and returned values).

    `grid_sizes` sizes `?` grids (`--grid`); `free_args` leaves unannotated arguments without an SBP
    (for `infer-sbp{rule=global}` to decide) instead of replicated; `trace`, if given, receives each
    upstream value and the sbp value standing for it."""
    sizes = grid_sizes or {}
    grids: dict[str, Grid] = {}
    out: list[Operation] = []
    raiser = Raiser()
    funcs: list[FuncOp] = []
    origins: list[tuple[Operation, Operation]] = []
    verified(module)  # one block: `module.ops` below needs it
    for op in module.ops:
        if isinstance(op, GridOp):
            grid = Grid(op, sizes)
            grids[grid.name] = grid
            if grid.placement is not None:
                out.append(grid.placement)
        elif isinstance(op, FuncOp):
            funcs.append(op)
        else:
            raise OpError(op, f"{op_name(op)} at module level has no sbp form (expected shard.grid and func.func)")
    if not grids and funcs:
        raise OpError(funcs[0], "the module has no shard.grid: nothing says which devices the program runs on")
    unknown = sorted(set(sizes) - set(grids))
    if unknown:
        raise OpError(module, f"--grid {unknown[0]}=...: the module has no shard.grid @{unknown[0]} (its grids: "
                      f"{', '.join('@' + g for g in grids) or 'none'})")
    for func in funcs:
        if func.is_declaration:
            raise OpError(func, f"@{func.sym_name.data} is a declaration; --import-shard needs a body")
        importer = FuncImporter(func, grids, raiser, free_args)
        out.append(importer.translate())
        origins += importer.origins
        if trace is not None:
            trace.update(importer.values)
    imported = ModuleOp(out)
    for new, origin in origins:  # in the module, so that placements resolve; errors at the source op
        try:
            new.verify()
        except VerifyException as error:
            raise OpError(origin, f"{op_name(origin)} as {new.name}: {error}") from error
    return imported

