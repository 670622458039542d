"""Per-rank sbp program -> upstream MLIR 22 dialects only (`sbp-translate --emit-mlir`, SPEC §4.2).

The input is `spmdize`'s output: builtin tensors of the local shapes, sbp compute ops and sbp
collectives carrying `placement`/`src_sbp`/`dst_sbp`. The result uses `shard.grid` per placement,
`linalg.generic` bodies of `arith`/`math` for compute, `tensor` for shapes, and `shard.*` collectives
(reference/wave2.md §2 has the formats and the sbp -> shard mapping). Every op is built as a generic
op and printed in generic form, so no sbp dialect (and no custom syntax xDSL lacks) reaches mlir-opt.
Uneven shards are dynamic dims; where shard's verifier wants a divisible static size, the collective
runs on the dynamic type between two `tensor.cast`s. The numerics are ops_numpy's (linalg_bodies).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FlatSymbolRefAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.shard import ReductionKind, ReductionKindAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap

from sbpc.dialects import collective_ops as coll
from sbpc.dialects import sbp_ops as ops
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import PlacementOp
from sbpc.dialects.sbp import BroadcastAttr, NdSbpAttr, PartialAttr, ReduceKind, SplitAttr
from sbpc.dialects.sharding import local_slices
from sbpc.translate.linalg_bodies import (
    CMPI_EQ,
    SCALAR_BODIES,
    Body,
    builtin_tensor,
    dim_source,
    generic_op,
    identity,
    is_float,
    narrow,
    scalar_body,
    unsigned_operands,
    widen,
)
from sbpc.translate.to_upstream_grad import GRAD_LOWERINGS
from sbpc.translate.to_upstream_nn import NN_LOWERINGS

_INDEX = IndexType()

# collective KIND (dialects.collectives) -> shard op, its tensor-axis properties with the side (src/dst
# SBP) whose split gives them (wave2.md §2's mapping), and whether it carries a reduction kind
_SHARD_OPS: dict[str, tuple[str, tuple[tuple[str, str], ...], bool]] = {
    "all_gather": ("shard.all_gather", (("gather_axis", "src"),), False),
    "all_reduce": ("shard.all_reduce", (), True),
    "reduce_scatter": ("shard.reduce_scatter", (("scatter_axis", "dst"),), True),
    "all_to_all": ("shard.all_to_all", (("split_axis", "dst"), ("concat_axis", "src")), False),
    "all_slice": ("shard.all_slice", (("slice_axis", "dst"),), False),
}
_SHARD_REDUCTION = {ReduceKind.SUM: ReductionKind.SUM, ReduceKind.MAX: ReductionKind.MAX,
                    ReduceKind.MIN: ReductionKind.MIN}


class FuncEmitter:
    """Translates one per-rank `func.func` body op by op, appending to `block`."""

    WIDE_ACCUMULATOR = True
    """matmul / reduce_sum of f16/bf16 accumulate in f32 and round back (ops_numpy's convention)."""

    def __init__(self, block: Block, grids: dict[str, PlacementOp]):
        self.block = block
        self.grids = {name: p.get_hierarchy() for name, p in grids.items()}
        self.placements = grids
        self.values: dict[SSAValue, SSAValue] = {}

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def index(self, value: int) -> SSAValue:
        return self.add(generic_op("arith.constant", [], [_INDEX], {"value": IntegerAttr(value, _INDEX)})).results[0]

    def dim(self, tensor: SSAValue, axis: int) -> SSAValue:
        return self.add(generic_op("tensor.dim", [tensor, self.index(axis)], [_INDEX])).results[0]

    def empty(self, ty: TensorType, dyn_source: Callable[[int], tuple[SSAValue, int]]) -> SSAValue:
        """`tensor.empty` of `ty`; the size of each dynamic dim k is `tensor.dim` of dyn_source(k)."""
        sizes = [self.dim(*dyn_source(k)) for k, n in enumerate(ty.get_shape()) if n == DYNAMIC_INDEX]
        return self.add(generic_op("tensor.empty", sizes, [ty])).results[0]

    def linalg(self, ins: Sequence[SSAValue], init: SSAValue, maps: Sequence[AffineMap],
               iterators: Sequence[IteratorType], body: Region) -> SSAValue:
        props: dict[str, Attribute] = {
            "indexing_maps": ArrayAttr([AffineMapAttr(m) for m in maps]),
            "iterator_types": ArrayAttr([IteratorTypeAttr(it) for it in iterators]),
            "operandSegmentSizes": DenseArrayBase.from_list(i32, [len(ins), 1]),
        }
        return self.add(generic_op("linalg.generic", [*ins, init], [init.type], props, [body])).results[0]

    def filled(self, ty: TensorType, fill: Attribute, dyn_source: Callable[[int], tuple[SSAValue, int]]) -> SSAValue:
        """A tensor of `ty` holding `fill` everywhere (linalg.generic with no input)."""
        empty = self.empty(ty, dyn_source)
        body = Body([ty.element_type])
        rank = len(ty.get_shape())
        identity = AffineMap.identity(rank)
        return self.linalg([], empty, [identity], [IteratorType.PARALLEL] * rank, body.region(
            body.const(fill, ty.element_type)))

    # -- compute ---------------------------------------------------------------------------------

    def elementwise(self, op: Operation, inputs: Sequence[SSAValue],
                    scalar: Callable[[Body, Sequence[SSAValue]], SSAValue]) -> SSAValue:
        """numpy-broadcasting elementwise op: one parallel loop per result dim."""
        out = builtin_tensor(op, op.results[0].type)
        shape = out.get_shape()
        rank = len(shape)
        maps: list[AffineMap] = []
        sources: dict[int, tuple[SSAValue, int]] = {}
        for value in inputs:
            in_shape = builtin_tensor(op, value.type).get_shape()
            lead = rank - len(in_shape)
            exprs: list[AffineExpr] = []
            for j, n in enumerate(in_shape):
                k = lead + j
                if n == 1 and shape[k] != 1:
                    exprs.append(AffineConstantExpr(0))
                else:
                    exprs.append(AffineDimExpr(k))
                    if n == DYNAMIC_INDEX:
                        sources.setdefault(k, (value, j))
            maps.append(AffineMap(rank, 0, tuple(exprs)))
        init = self.empty(out, lambda k: dim_source(op, sources, k))
        body = Body([builtin_tensor(op, v.type).element_type for v in inputs] + [out.element_type])
        result = scalar(body, body.args[: len(inputs)])
        maps.append(AffineMap.identity(rank))
        return self.linalg(inputs, init, maps, [IteratorType.PARALLEL] * rank, body.region(result))

    def matmul(self, op: ops.MatmulOp, a: SSAValue, b: SSAValue) -> SSAValue:
        out = builtin_tensor(op, op.results[0].type)
        shape = out.get_shape()
        rank = len(shape)
        k_dim = rank  # loops: out dims (batch..., m, n), then the contraction k
        sources: dict[int, tuple[SSAValue, int]] = {}

        def operand_map(value: SSAValue, transposed: bool, rows_dim: int, cols_dim: int) -> AffineMap:
            in_shape = builtin_tensor(op, value.type).get_shape()
            lead = (rank - 2) - (len(in_shape) - 2)
            exprs: list[AffineExpr] = []
            for j, n in enumerate(in_shape[:-2]):
                if n == 1 and shape[lead + j] != 1:
                    exprs.append(AffineConstantExpr(0))
                else:
                    exprs.append(AffineDimExpr(lead + j))
                    sources.setdefault(lead + j, (value, j))
            pair = (cols_dim, rows_dim) if transposed else (rows_dim, cols_dim)
            for pos, loop in enumerate(pair):
                exprs.append(AffineDimExpr(loop))
                sources.setdefault(loop, (value, len(in_shape) - 2 + pos))
            return AffineMap(rank + 1, 0, tuple(exprs))

        map_a = operand_map(a, op.transpose_a is not None, rank - 2, k_dim)
        map_b = operand_map(b, op.transpose_b is not None, k_dim, rank - 1)
        acc_ty = self.accumulator(out)
        elt = acc_ty.element_type
        init = self.filled(acc_ty, identity(ReduceKind.SUM, elt), lambda k: dim_source(op, sources, k))
        body = Body([builtin_tensor(op, a.type).element_type, builtin_tensor(op, b.type).element_type, elt])
        x, y, acc = (v if v.type == elt else body.op("arith.extf", [v], elt) for v in body.args)
        mul, add = ("arith.mulf", "arith.addf") if is_float(elt) else ("arith.muli", "arith.addi")
        total = body.op(add, [acc, body.op(mul, [x, y], elt)], elt)
        out_map = AffineMap(rank + 1, 0, tuple(AffineDimExpr(i) for i in range(rank)))
        iterators = [IteratorType.PARALLEL] * rank + [IteratorType.REDUCTION]
        return self.narrowed(self.linalg([a, b], init, [map_a, map_b, out_map], iterators, body.region(total)), out)

    def accumulator(self, ty: TensorType) -> TensorType:
        """The type matmul and reduce_sum accumulate in (f32 for f16/bf16 if WIDE_ACCUMULATOR)."""
        elt = ty.element_type
        if self.WIDE_ACCUMULATOR and is_float(elt) and elt.bitwidth < 32:  # type: ignore[attr-defined]
            return TensorType(f32, ty.get_shape())
        return ty

    def narrowed(self, wide: SSAValue, out: TensorType) -> SSAValue:
        """`wide` (an f32 accumulator) rounded to `out`'s element type; `wide` itself if it is `out`."""
        if wide.type == out:
            return wide
        rank = len(out.get_shape())
        body = Body([self.accumulator(out).element_type, out.element_type])
        result = body.op("arith.truncf", [body.args[0]], out.element_type)
        return self.linalg([wide], self.empty(out, lambda k: (wide, k)), [AffineMap.identity(rank)] * 2,
                           [IteratorType.PARALLEL] * rank, body.region(result))

    def reduce(self, op: ops.ReduceOp, x: SSAValue, kind: ReduceKind) -> SSAValue:
        out = builtin_tensor(op, op.results[0].type)
        in_shape = builtin_tensor(op, x.type).get_shape()
        axes = sorted(int(a) % len(in_shape) for a in op.axes.get_values())
        keep = op.keepdims is not None
        rank = len(out.get_shape())
        exprs: list[AffineExpr] = []
        sources: dict[int, tuple[SSAValue, int]] = {}
        out_dim = 0
        for i in range(len(in_shape)):
            if i in axes:
                exprs.append(AffineDimExpr(rank + axes.index(i)))
                out_dim += keep
            else:
                exprs.append(AffineDimExpr(out_dim))
                sources[out_dim] = (x, i)
                out_dim += 1
        loops = rank + len(axes)
        acc_ty = self.accumulator(out) if kind == ReduceKind.SUM else out
        elt = acc_ty.element_type
        init = self.filled(acc_ty, identity(kind, elt, unsigned_operands(op)), lambda k: dim_source(op, sources, k))
        body = Body([out.element_type, elt])
        v, acc = body.args
        if v.type != elt:
            v = body.op("arith.extf", [v], elt)
        name = {ReduceKind.SUM: "arith.addf", ReduceKind.MAX: "arith.maximumf", ReduceKind.MIN: "arith.minimumf"}
        if not is_float(elt):
            name = {ReduceKind.SUM: "arith.addi", ReduceKind.MAX: "arith.maxsi", ReduceKind.MIN: "arith.minsi"}
            if unsigned_operands(op):
                name = {ReduceKind.SUM: "arith.addi", ReduceKind.MAX: "arith.maxui", ReduceKind.MIN: "arith.minui"}
        result = body.op(name[kind], [acc, v], elt)
        out_map = AffineMap(loops, 0, tuple(AffineDimExpr(i) for i in range(rank)))
        iterators = [IteratorType.PARALLEL] * rank + [IteratorType.REDUCTION] * len(axes)
        return self.narrowed(
            self.linalg([x], init, [AffineMap(loops, 0, tuple(exprs)), out_map], iterators, body.region(result)), out)

    def transpose(self, op: ops.TransposeOp, x: SSAValue) -> SSAValue:
        out = builtin_tensor(op, op.results[0].type)
        perm = [int(p) for p in op.perm.get_values()]
        rank = len(perm)
        inverse = [perm.index(i) for i in range(rank)]
        init = self.empty(out, lambda k: (x, perm[k]))
        body = Body([out.element_type, out.element_type])
        in_map = AffineMap(rank, 0, tuple(AffineDimExpr(inverse[i]) for i in range(rank)))
        return self.linalg([x], init, [in_map, AffineMap.identity(rank)], [IteratorType.PARALLEL] * rank,
                           body.region(body.args[0]))

    def reshape(self, op: ops.ReshapeOp, x: SSAValue) -> SSAValue:
        out = builtin_tensor(op, op.results[0].type)
        shape = out.get_shape()
        dynamic = [k for k, n in enumerate(shape) if n == DYNAMIC_INDEX]
        if len(dynamic) > 1:
            raise OpError(op, f"{op.name}: a per-rank reshape to {out} has more than one uneven dim, which "
                          "tensor.reshape cannot size from the input alone")
        sizes: list[SSAValue] = []
        for n in shape:
            if n != DYNAMIC_INDEX:
                sizes.append(self.index(n))
                continue
            in_shape = builtin_tensor(op, x.type).get_shape()
            count = self.index(1)
            for j in range(len(in_shape)):
                count = self.add(generic_op("arith.muli", [count, self.dim(x, j)], [_INDEX])).results[0]
            static = 1
            for m in shape:
                static *= m if m != DYNAMIC_INDEX else 1
            sizes.append(self.add(generic_op("arith.divui", [count, self.index(static)], [_INDEX])).results[0])
        shape_ty = TensorType(_INDEX, [len(shape)])
        target = self.add(generic_op("tensor.from_elements", sizes, [shape_ty])).results[0]
        return self.add(generic_op("tensor.reshape", [x, target], [out])).results[0]

    def layer_norm(self, op: ops.LayerNormOp, x: SSAValue, gamma: SSAValue, beta: SSAValue) -> SSAValue:
        """ops_numpy's formula over the last axis, in f32 for f16/bf16: mean = Σx/n, c = x - mean,
        var = Σc²/n, c / sqrt(var + eps) · gamma + beta. Four linalg.generic: two reductions over
        the last axis, two parallel loops reading the row statistics broadcast."""
        out = builtin_tensor(op, op.results[0].type)
        shape = out.get_shape()
        rank, n = len(shape), shape[-1]
        if n == DYNAMIC_INDEX:
            raise OpError(op, f"{op.name}: the normalised last axis of {out} is uneven")
        wide = f32 if is_float(out.element_type) and out.element_type.bitwidth < 32 else out.element_type  # type: ignore[attr-defined]
        full, row = TensorType(wide, shape), TensorType(wide, shape[:-1])
        ident = AffineMap.identity(rank)
        to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
        last = AffineMap(rank, 0, (AffineDimExpr(rank - 1),))
        parallel = [IteratorType.PARALLEL] * rank
        reducing = [IteratorType.PARALLEL] * (rank - 1) + [IteratorType.REDUCTION]
        count = FloatAttr(float(n), wide)  # type: ignore[arg-type]

        def row_sum(value: SSAValue, square: bool) -> SSAValue:
            init = self.filled(row, identity(ReduceKind.SUM, wide), lambda k: (x, k))
            body = Body([builtin_tensor(op, value.type).element_type, wide])
            v = widen(body, body.args[0])
            if square:
                v = body.op("arith.mulf", [v, v], wide)
            return self.linalg([value], init, [ident, to_row], reducing,
                               body.region(body.op("arith.addf", [body.args[1], v], wide)))

        total = row_sum(x, False)
        body = Body([out.element_type, wide, wide])
        mean = body.op("arith.divf", [body.args[1], body.const(count, wide)], wide)
        centred = self.linalg([x, total], self.empty(full, lambda k: (x, k)), [ident, to_row, ident], parallel,
                              body.region(body.op("arith.subf", [widen(body, body.args[0]), mean], wide)))
        squares = row_sum(centred, True)
        body = Body([wide, wide, out.element_type, out.element_type, out.element_type])
        c, sq, g, b = body.args[:4]
        var = body.op("arith.divf", [sq, body.const(count, wide)], wide)
        eps = body.const(FloatAttr(op.get_epsilon(), wide), wide)  # type: ignore[arg-type]
        root = body.op("math.sqrt", [body.op("arith.addf", [var, eps], wide)], wide)
        scaled = body.op("arith.mulf", [body.op("arith.divf", [c, root], wide), widen(body, g)], wide)
        result = narrow(body, body.op("arith.addf", [scaled, widen(body, b)], wide), out.element_type)
        return self.linalg([centred, squares, gamma, beta], self.empty(out, lambda k: (x, k)),
                           [ident, to_row, last, last, ident], parallel, body.region(result))

    # -- collectives -----------------------------------------------------------------------------

    def collective(self, op: coll.CollectiveOp, x: SSAValue) -> SSAValue:
        src, dst = _step_sbps(op)
        axes = list(op.get_mesh_axes())
        out = op.results[0].type
        props: dict[str, Attribute] = {
            "grid": FlatSymbolRefAttr(op.placement.root_reference.data),  # type: ignore[union-attr]
            "grid_axes": DenseArrayBase.from_list(i16, axes),
        }
        group = 1
        for a in axes:
            group *= self.grids[op.placement.root_reference.data][a]  # type: ignore[union-attr]
        if op.KIND not in _SHARD_OPS:
            return self.to_partial(op, x, src, dst, axes)
        name, axis_props, reduces = _SHARD_OPS[op.KIND]
        sides = {"src": src, "dst": dst}
        moved: list[int] = []
        for prop, side in axis_props:
            moved.append(_split_dim(op, sides[side], axes))
            props[prop] = IntegerAttr(moved[-1], _INDEX)
        if reduces:
            props["reduction"] = ReductionKindAttr(_SHARD_REDUCTION[_partial_kind(op, src, axes)])
        return self.shard_collective(name, x, builtin_tensor(op, out), props, moved, group)

    def shard_collective(self, name: str, x: SSAValue, out: TensorType, props: dict[str, Attribute],
                         moved: list[int], group: int) -> SSAValue:
        """A shard collective; where a moved dim is uneven (dynamic, or not divisible by the group),
        it is dynamic on both sides, as shard's verifier demands, with `tensor.cast` around it."""
        in_ty = x.type
        assert isinstance(in_ty, TensorType)
        in_shape, out_shape = list(in_ty.get_shape()), list(out.get_shape())
        uneven = any(in_shape[d] == DYNAMIC_INDEX or out_shape[d] == DYNAMIC_INDEX or (in_shape[d] % group
                     and out_shape[d] < in_shape[d]) for d in moved)
        if not uneven:
            return self.add(generic_op(name, [x], [out], props)).results[0]
        for d in moved:
            in_shape[d] = out_shape[d] = DYNAMIC_INDEX
        loose_in, loose_out = TensorType(in_ty.element_type, in_shape), TensorType(out.element_type, out_shape)
        if loose_in != in_ty:
            x = self.add(generic_op("tensor.cast", [x], [loose_in])).results[0]
        result = self.add(generic_op(name, [x], [loose_out], props)).results[0]
        if loose_out != out:
            result = self.add(generic_op("tensor.cast", [result], [out])).results[0]
        return result

    def to_partial(self, op: coll.CollectiveOp, x: SSAValue, src: NdSbpAttr, dst: NdSbpAttr,
                   axes: list[int]) -> SSAValue:
        """B -> P(sum) as MLIR's partition does it: keep on multi-index 0 of `axes`, zero elsewhere;
        B -> P(max/min) is the identity; S(i) -> P(k) is `split_to_partial`."""
        kind = _partial_kind(op, dst, axes)
        out = builtin_tensor(op, op.results[0].type)
        grid = FlatSymbolRefAttr(op.placement.root_reference.data)  # type: ignore[union-attr]
        if not all(isinstance(src[a], BroadcastAttr) for a in axes):
            return self.split_to_partial(op, x, src, dst, kind, out, grid)
        if kind != ReduceKind.SUM:
            return x
        where = self.add(generic_op("shard.process_multi_index", [], [_INDEX] * len(axes),
                                  {"grid": grid, "axes": DenseArrayBase.from_list(i16, axes)}))
        zero = self.index(0)
        keep: SSAValue | None = None
        for index in where.results:
            eq = self.add(generic_op("arith.cmpi", [index, zero], [i1],
                                   {"predicate": IntegerAttr(CMPI_EQ, i64)})).results[0]
            keep = eq if keep is None else self.add(generic_op("arith.andi", [keep, eq], [i1])).results[0]
        assert keep is not None
        zeros = self.filled(out, identity(ReduceKind.SUM, out.element_type), lambda k: (x, k))
        then_block, else_block = Block(), Block()
        then_block.add_op(generic_op("scf.yield", [x]))
        else_block.add_op(generic_op("scf.yield", [zeros]))
        return self.add(generic_op("scf.if", [keep], [out], {}, [Region(then_block), Region(else_block)])).results[0]

    def split_to_partial(self, op: coll.CollectiveOp, x: SSAValue, src: NdSbpAttr, dst: NdSbpAttr,
                         kind: ReduceKind, out: TensorType, grid: FlatSymbolRefAttr) -> SSAValue:
        """S(i) -> P(k): the shard goes at its offset into a buffer of the identity of k. The
        offsets differ per rank (balanced split), so they are a constant table indexed by
        `shard.process_linear_index` (row-major over the grid, sbpc's flat rank order)."""
        placement = self.placements[grid.root_reference.data]
        hierarchy = placement.get_hierarchy()
        shape = [int(n) for n in op.global_shape.get_values()]  # type: ignore[union-attr]
        rows: list[list[int]] = []
        for flat in range(len(placement.get_ranks())):
            coord, rest = [], flat
            for n in reversed(hierarchy):
                coord.insert(0, rest % n)
                rest //= n
            have = local_slices(shape, src, hierarchy, coord)
            want = local_slices(shape, dst, hierarchy, coord)
            rows.append([h[0] - w[0] for h, w in zip(have, want, strict=True)])
        buffer = self.filled(out, identity(kind, out.element_type), lambda k: dim_source(op, {}, k))
        rank = self.add(generic_op("shard.process_linear_index", [], [_INDEX], {"grid": grid})).results[0]
        offsets: list[SSAValue] = []
        for d in range(len(shape)):
            column = [row[d] for row in rows]
            if len(set(column)) == 1:
                offsets.append(self.index(column[0]))
                continue
            table_ty = TensorType(_INDEX, [len(column)])
            table = self.add(generic_op("arith.constant", [], [table_ty], {
                "value": DenseIntOrFPElementsAttr.from_list(table_ty, column)})).results[0]
            offsets.append(self.add(generic_op("tensor.extract", [table, rank], [_INDEX])).results[0])
        x_shape = builtin_tensor(op, x.type).get_shape()
        sizes = [self.dim(x, d) for d, n in enumerate(x_shape) if n == DYNAMIC_INDEX]
        props: dict[str, Attribute] = {
            "operandSegmentSizes": DenseArrayBase.from_list(i32, [1, 1, len(offsets), len(sizes), 0]),
            "static_offsets": DenseArrayBase.from_list(i64, [DYNAMIC_INDEX] * len(offsets)),
            "static_sizes": DenseArrayBase.from_list(i64, list(x_shape)),
            "static_strides": DenseArrayBase.from_list(i64, [1] * len(shape)),
        }
        return self.add(generic_op("tensor.insert_slice", [x, buffer, *offsets, *sizes], [out], props)).results[0]

    # -- dispatch --------------------------------------------------------------------------------

    def enter(self, func: FuncOp) -> None:
        """Called once the arguments are mapped, before the body (the global form annotates them)."""

    def translate(self, op: Operation) -> None:
        args = [self.values[v] for v in op.operands]
        if isinstance(op, ReturnOp):
            self.add(generic_op("func.return", args))
            return
        if op.results and not isinstance(op.results[0].type, TensorType):
            raise OpError(op, f"{op.name} does not have a per-rank tensor result: run spmdize before --emit-mlir")
        result = self.compute(op, args)
        self.values[op.results[0]] = result

    def compute(self, op: Operation, args: list[SSAValue]) -> SSAValue:
        if isinstance(op, coll.CollectiveOp):
            return self.collective(op, args[0])
        if isinstance(op, ops.ConversionOp):
            raise OpError(op, f"{op.name} is left in the per-rank program: run lower-boxing before --emit-mlir")
        lower = LOWERINGS.get(type(op))
        if lower is None:
            raise OpError(op, f"{op.name} has no upstream MLIR form in --emit-mlir")
        return lower(self, op, args)

    def scalar_op(self, op: Operation, args: list[SSAValue]) -> SSAValue:
        """An elementwise op: its scalar body (`linalg_bodies.SCALAR_BODIES`) in a parallel linalg.generic."""
        scalar = scalar_body(op, builtin_tensor(op, op.results[0].type).element_type)
        assert scalar is not None
        return self.elementwise(op, args, scalar)


Lowering = Callable[[FuncEmitter, Any, list[SSAValue]], SSAValue]
LOWERINGS: dict[type[Operation], Lowering] = {
    ops.MatmulOp: lambda e, op, a: e.matmul(op, a[0], a[1]),
    ops.ReduceSumOp: lambda e, op, a: e.reduce(op, a[0], ReduceKind.SUM),
    ops.ReduceMaxOp: lambda e, op, a: e.reduce(op, a[0], ReduceKind.MAX),
    ops.ReduceMinOp: lambda e, op, a: e.reduce(op, a[0], ReduceKind.MIN),
    ops.TransposeOp: lambda e, op, a: e.transpose(op, a[0]),
    ops.ReshapeOp: lambda e, op, a: e.reshape(op, a[0]),
    ops.LayerNormOp: lambda e, op, a: e.layer_norm(op, a[0], a[1], a[2]),
    **dict.fromkeys(SCALAR_BODIES, lambda e, op, a: e.scalar_op(op, a)),
    **NN_LOWERINGS,
    **GRAD_LOWERINGS,
}
"""Compute op class -> how `FuncEmitter` writes it in upstream dialects (called with the emitter, the op
and its translated operands)."""


def _step_sbps(op: coll.CollectiveOp) -> tuple[NdSbpAttr, NdSbpAttr]:
    if op.src_sbp is None or op.dst_sbp is None or op.placement is None:
        raise OpError(op, f"{op.name} is not a per-rank collective: run spmdize before --emit-mlir")
    return op.src_sbp, op.dst_sbp


def _split_dim(op: Operation, sbp: NdSbpAttr, axes: Sequence[int]) -> int:
    dims = {sbp[a].dim for a in axes if isinstance(sbp[a], SplitAttr)}  # type: ignore[union-attr]
    if len(dims) != 1 or not all(isinstance(sbp[a], SplitAttr) for a in axes):
        raise OpError(op, f"{op.name}: {sbp.short_str()} does not split one tensor dim on mesh axes {list(axes)}")
    return dims.pop()


def _partial_kind(op: Operation, sbp: NdSbpAttr, axes: Sequence[int]) -> ReduceKind:
    kinds = {sbp[a].reduce_kind for a in axes if isinstance(sbp[a], PartialAttr)}  # type: ignore[union-attr]
    if len(kinds) != 1 or not all(isinstance(sbp[a], PartialAttr) for a in axes):
        raise OpError(op, f"{op.name}: {sbp.short_str()} is not one partial kind on mesh axes {list(axes)}")
    return kinds.pop()


def builtin_attrs(attrs: dict[str, Attribute]) -> dict[str, Attribute]:
    """Keep sbpc's per-value facts as builtin attributes MLIR can parse (the SBP as its text)."""
    kept: dict[str, Attribute] = {}
    for key, value in attrs.items():
        if isinstance(value, NdSbpAttr):
            kept[key] = StringAttr(value.short_str())
        elif getattr(value, "name", "").startswith("sbp."):  # e.g. #sbp.layout: its text
            kept[key] = StringAttr(str(value))
        else:
            kept[key] = value
    return kept


def _layout(ty: Attribute) -> Attribute | None:
    """The `#sbp.layout` of a per-rank (encoding) or global (layout parameter) argument type."""
    layout = ty.encoding if isinstance(ty, TensorType) else getattr(ty, "layout", None)
    return layout if getattr(layout, "name", "").startswith("sbp.") else None


def _translate_func(func: FuncOp, grids: dict[str, PlacementOp], emitter_cls: type[FuncEmitter]) -> FuncOp:
    arg_types = [builtin_tensor(func, t) for t in func.function_type.inputs.data]
    new = FuncOp(func.sym_name.data, (arg_types, [builtin_tensor(func, t) for t in func.function_type.outputs.data]))
    emitter = emitter_cls(new.body.block, grids)
    for old, arg in zip(func.body.block.args, new.body.block.args, strict=True):
        emitter.values[old] = arg
    emitter.enter(func)
    for op in func.body.block.ops:
        emitter.translate(op)
    layouts = [_layout(t) for t in func.function_type.inputs.data]
    if func.arg_attrs is not None or any(e is not None for e in layouts):
        attrs = [dict(d.data) for d in func.arg_attrs.data] if func.arg_attrs is not None else [{} for _ in arg_types]
        for entry, layout in zip(attrs, layouts, strict=True):
            if layout is not None:
                entry["sbp.layout"] = layout
        new.arg_attrs = ArrayAttr([DictionaryAttr(builtin_attrs(d)) for d in attrs])
    if func.res_attrs is not None:
        new.res_attrs = ArrayAttr([DictionaryAttr(builtin_attrs(dict(d.data))) for d in func.res_attrs.data])
    for key, value in func.attributes.items():
        new.attributes[key] = builtin_attrs({key: value})[key]
    return new


def to_upstream_mlir(module: ModuleOp, emitter_cls: type[FuncEmitter] = FuncEmitter) -> ModuleOp:
    """The per-rank `module` (spmdize's output) as a new module of upstream dialects only
    (`emitter_cls` translates the functions: `to_upstream_global` passes its annotating one)."""
    out: list[Operation] = []
    grids = {op.sym_name.data: op for op in module.ops if isinstance(op, PlacementOp)}
    for op in module.ops:
        if isinstance(op, PlacementOp):
            grid = generic_op("shard.grid", [], [], {
                "sym_name": StringAttr(op.sym_name.data),
                "shape": DenseArrayBase.from_list(i64, list(op.get_hierarchy())),
            })
            grid.attributes["sbp.device_type"] = op.device_type
            grid.attributes["sbp.devices"] = DenseArrayBase.from_list(i64, list(op.get_ranks()))
            out.append(grid)
        elif isinstance(op, FuncOp):
            out.append(_translate_func(op, grids, emitter_cls))
        else:
            raise OpError(op, f"{op.name} has no upstream MLIR form in --emit-mlir")
    return ModuleOp(out)
