"""`--emit-mlir` forms of the neural-network ops of SPEC §7 (`dialects/sbp_ops_nn.py`) that are not a
scalar body (those are `linalg_bodies.SCALAR_BODIES`): softmax as `linalg.softmax`, rms_norm and
cross_entropy as row reductions and a parallel `linalg.generic` (f16/bf16 in f32, as the runtime),
embedding as a `linalg.generic` extracting table rows, concat as `tensor.concat`, slice as
`tensor.extract_slice`, where and broadcast_to as broadcasting elementwise loops.

A vocab-split embedding shard looks up its own rows only: its first row's global index is a
constant table indexed by `shard.process_linear_index` (as `to_upstream_mlir.split_to_partial` reads
offsets), from the operands' global types that `spmdize` recorded. `to_upstream_mlir.LOWERINGS`
holds these with the others; each takes the emitter, the op and its translated operands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FlatSymbolRefAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from sbpc.dialects import sbp_ops_nn as nn
from sbpc.dialects.collectives import mesh_coords
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import lookup_placement_named
from sbpc.dialects.sbp import ReduceKind
from sbpc.dialects.sharding import local_slices
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.translate.linalg_bodies import (
    CMPI_EQ,
    CMPI_SGE,
    CMPI_SLT,
    Body,
    builtin_tensor,
    generic_op,
    identity,
    is_float,
    narrow,
    widen,
)

_INDEX = IndexType()
DimSource = Callable[[int], tuple[SSAValue, int]]


class Emitter(Protocol):
    """What these lowerings use of `to_upstream_mlir.FuncEmitter`."""

    def add(self, op: Operation) -> Operation: ...
    def index(self, value: int) -> SSAValue: ...
    def dim(self, tensor: SSAValue, axis: int) -> SSAValue: ...
    def empty(self, ty: TensorType, dyn_source: DimSource) -> SSAValue: ...
    def filled(self, ty: TensorType, fill: Attribute, dyn_source: DimSource) -> SSAValue: ...
    def linalg(self, ins: Sequence[SSAValue], init: SSAValue, maps: Sequence[AffineMap],
               iterators: Sequence[IteratorType], body: Region) -> SSAValue: ...
    def elementwise(self, op: Operation, inputs: Sequence[SSAValue],
                    scalar: Callable[[Body, Sequence[SSAValue]], SSAValue]) -> SSAValue: ...


def _wide_type(elt: Attribute) -> Attribute:
    return f32 if is_float(elt) and elt.bitwidth < 32 else elt  # type: ignore[attr-defined]


def _converted(e: Emitter, x: SSAValue, to: Attribute) -> SSAValue:
    """`x` with its elements extended (f16/bf16 -> f32) or truncated to `to`; `x` if it has them."""
    ty = x.type
    assert isinstance(ty, TensorType)
    if ty.element_type == to:
        return x
    out = TensorType(to, ty.get_shape())
    rank = len(ty.get_shape())
    body = Body([ty.element_type, to])
    value = body.args[0]
    result = widen(body, value) if to == f32 else narrow(body, value, to)
    return e.linalg([x], e.empty(out, lambda k: (x, k)), [AffineMap.identity(rank)] * 2,
                    [IteratorType.PARALLEL] * rank, body.region(result))


def _row_maps(rank: int, axis: int | None = None) -> tuple[AffineMap, AffineMap, list[IteratorType],
                                                          list[IteratorType]]:
    """The identity, the map dropping dim `axis` (default the last), the parallel iterators and
    those reducing along `axis`."""
    axis = rank - 1 if axis is None else axis
    ident = AffineMap.identity(rank)
    to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank) if i != axis))
    reducing = [IteratorType.REDUCTION if i == axis else IteratorType.PARALLEL for i in range(rank)]
    return ident, to_row, [IteratorType.PARALLEL] * rank, reducing


def _uneven_last(op: Operation, ty: TensorType) -> None:
    if ty.get_shape()[-1] == DYNAMIC_INDEX:
        raise OpError(op, f"{op.name}: the last axis of {ty}, which the op reduces, is uneven")


# ---------------------------------------------------------------------------
# Normalisations
# ---------------------------------------------------------------------------


def _row_max(e: Emitter, op: Operation, x: SSAValue, wide: Attribute, axis: int) -> SSAValue:
    """The maximum along `axis` (NaN-propagating, as numpy's), in `wide`."""
    in_ty = builtin_tensor(op, x.type)
    shape = in_ty.get_shape()
    ident, to_row, _, reducing = _row_maps(len(shape), axis)
    row = TensorType(wide, [n for k, n in enumerate(shape) if k != axis])
    init = e.filled(row, identity(ReduceKind.MAX, wide), lambda k: (x, k if k < axis else k + 1))
    body = Body([in_ty.element_type, wide])
    peak = body.op("arith.maximumf", [body.args[1], widen(body, body.args[0])], wide)
    return e.linalg([x], init, [ident, to_row], reducing, body.region(peak))


def softmax(e: Emitter, op: nn.SoftmaxOp, args: list[SSAValue]) -> SSAValue:
    """ops_nn's `exp(x - max) / Σ exp(x - max)` along the axis, in f32 for f16/bf16: the maximum and
    the sum of exponentials along it, then a parallel loop reading both broadcast."""
    (x,) = args
    out = builtin_tensor(op, op.results[0].type)
    shape = out.get_shape()
    axis = op.get_axis()
    if shape[axis] == DYNAMIC_INDEX:
        raise OpError(op, f"{op.name}: axis {axis} of {out}, which the op reduces, is uneven")
    wide = _wide_type(out.element_type)
    peak = _row_max(e, op, x, wide, axis)

    def shifted_exp(b: Body, v: SSAValue, m: Sequence[SSAValue]) -> SSAValue:
        return b.op("math.exp", [b.op("arith.subf", [v, m[0]], wide)], wide)

    sums = _row_sum(e, op, x, wide, shifted_exp, [peak], axis)
    ident, to_row, parallel, _ = _row_maps(len(shape), axis)
    body = Body([out.element_type, wide, wide, out.element_type])
    result = body.op("arith.divf", [shifted_exp(body, widen(body, body.args[0]), [body.args[1]]), body.args[2]], wide)
    return e.linalg([x, peak, sums], e.empty(out, lambda k: (x, k)), [ident, to_row, to_row, ident], parallel,
                    body.region(narrow(body, result, out.element_type)))


def _row_sum(e: Emitter, op: Operation, x: SSAValue, wide: Attribute,
             term: Callable[[Body, SSAValue, Sequence[SSAValue]], SSAValue],
             extra: Sequence[SSAValue] = (), axis: int | None = None) -> SSAValue:
    """Σ along `axis` (default the last) of `term(body, element, extra elements)`, accumulated in
    `wide`; `extra` are row tensors read broadcast along the axis."""
    in_ty = builtin_tensor(op, x.type)
    shape = in_ty.get_shape()
    rank = len(shape)
    axis = rank - 1 if axis is None else axis
    ident, to_row, _, reducing = _row_maps(rank, axis)
    row = TensorType(wide, [n for k, n in enumerate(shape) if k != axis])
    init = e.filled(row, identity(ReduceKind.SUM, wide), lambda k: (x, k if k < axis else k + 1))
    body = Body([in_ty.element_type, *(v.type.element_type for v in extra), wide])  # type: ignore[attr-defined]
    value = term(body, widen(body, body.args[0]) if is_float(in_ty.element_type) else body.args[0],
                 body.args[1:-1])
    total = body.op("arith.addf", [body.args[-1], value], wide)
    return e.linalg([x, *extra], init, [ident, *([to_row] * len(extra)), to_row], reducing, body.region(total))


def rms_norm(e: Emitter, op: nn.RmsNormOp, args: list[SSAValue]) -> SSAValue:
    """ops_nn's `x / sqrt(Σx²/n + eps) · gamma`, in f32 for f16/bf16: a row sum of squares, then
    one parallel loop reading it broadcast."""
    x, gamma = args
    out = builtin_tensor(op, op.results[0].type)
    _uneven_last(op, out)
    shape = out.get_shape()
    rank, n = len(shape), shape[-1]
    wide = _wide_type(out.element_type)
    squares = _row_sum(e, op, x, wide, lambda b, v, _: b.op("arith.mulf", [v, v], wide))
    ident, to_row, parallel, _ = _row_maps(rank)
    last = AffineMap(rank, 0, (AffineDimExpr(rank - 1),))
    body = Body([out.element_type, wide, out.element_type, out.element_type])
    v, sq, g = widen(body, body.args[0]), body.args[1], widen(body, body.args[2])
    mean = body.op("arith.divf", [sq, body.const(FloatAttr(float(n), wide), wide)], wide)  # type: ignore[arg-type]
    eps = body.const(FloatAttr(op.get_epsilon(), wide), wide)  # type: ignore[arg-type]
    root = body.op("math.sqrt", [body.op("arith.addf", [mean, eps], wide)], wide)
    result = narrow(body, body.op("arith.mulf", [body.op("arith.divf", [v, root], wide), g], wide), out.element_type)
    return e.linalg([x, squares, gamma], e.empty(out, lambda k: (x, k)), [ident, to_row, last, ident], parallel,
                    body.region(result))


# ---------------------------------------------------------------------------
# Lookups
# ---------------------------------------------------------------------------


def _index_of(body: Body, value: SSAValue) -> SSAValue:
    return body.op("arith.index_cast", [value], _INDEX)


def _select_valid(body: Body, local: SSAValue, size: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(whether 0 <= local < size, local there else 0), on index values."""
    zero = body.const(IntegerAttr(0, _INDEX), _INDEX)
    low = body.op("arith.cmpi", [local, zero], i1, {"predicate": IntegerAttr(CMPI_SGE, i64)})
    high = body.op("arith.cmpi", [local, size], i1, {"predicate": IntegerAttr(CMPI_SLT, i64)})
    held = body.op("arith.andi", [low, high], i1)
    return held, body.op("arith.select", [held, local, zero], _INDEX)


def _vocab_offset(e: Emitter, op: nn.VocabParallelOp) -> SSAValue:
    """The global index of the first row operand 0's shard holds, on this rank (0 in the global form)."""
    if isinstance(op.operands[0].type, GlobalTensorType):
        return e.index(0)
    ty = op.global_operand(0)
    placement = None if ty is None else lookup_placement_named(op, ty.placement_name)
    if ty is None or placement is None or ty.nd_sbp is None:
        raise OpError(op, f"{op.name}: the per-rank op lacks its operands' global types ({nn.GLOBAL_OPERANDS})")
    hierarchy = placement.get_hierarchy()
    axis = op.vocab_axis()
    offsets = [local_slices(ty.get_shape(), ty.nd_sbp, hierarchy, c)[axis][0] for c in mesh_coords(hierarchy)]
    if len(set(offsets)) == 1:
        return e.index(offsets[0])
    grid = FlatSymbolRefAttr(ty.placement_name)
    rank = e.add(generic_op("shard.process_linear_index", [], [_INDEX], {"grid": grid})).results[0]
    table_ty = TensorType(_INDEX, [len(offsets)])
    table = e.add(generic_op("arith.constant", [], [table_ty], {
        "value": DenseIntOrFPElementsAttr.from_list(table_ty, offsets)})).results[0]
    return e.add(generic_op("tensor.extract", [table, rank], [_INDEX])).results[0]


def embedding(e: Emitter, op: nn.EmbeddingOp, args: list[SSAValue]) -> SSAValue:
    """One parallel loop over [indices..., hidden]: the table element at (index - offset, hidden)
    where this shard holds that row, else 0 (`tensor.extract` from the table in the body)."""
    table, indices = args
    out = builtin_tensor(op, op.results[0].type)
    rank = len(out.get_shape())
    offset, rows = _vocab_offset(e, op), e.dim(table, 0)
    idx_map = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
    sources: dict[int, tuple[SSAValue, int]] = {k: (indices, k) for k in range(rank - 1)}
    sources[rank - 1] = (table, 1)
    init = e.empty(out, lambda k: sources[k])
    body = Body([builtin_tensor(op, indices.type).element_type, out.element_type])
    local = body.op("arith.subi", [_index_of(body, body.args[0]), offset], _INDEX)
    held, safe = _select_valid(body, local, rows)
    column = body.op("linalg.index", [], _INDEX, {"dim": IntegerAttr(rank - 1, i64)})
    value = body.op("tensor.extract", [table, safe, column], out.element_type)
    zero = body.const(identity(ReduceKind.SUM, out.element_type), out.element_type)
    result = body.op("arith.select", [held, value, zero], out.element_type)
    return e.linalg([indices], init, [idx_map, AffineMap.identity(rank)], [IteratorType.PARALLEL] * rank,
                    body.region(result))


def cross_entropy(e: Emitter, op: nn.CrossEntropyOp, args: list[SSAValue]) -> SSAValue:
    """ops_nn's `m + log(Σ exp(x - m)) - x[t]` (0 where t is outside [0, V)), in f32 for f16/bf16: a
    row maximum, a row sum of exponentials, then a loop over the rows extracting the target logit."""
    logits, targets = args
    in_ty = builtin_tensor(op, logits.type)
    _uneven_last(op, in_ty)
    wide = _wide_type(in_ty.element_type)
    peak = _row_max(e, op, logits, wide, len(in_ty.get_shape()) - 1)
    sums = _row_sum(e, op, logits, wide, lambda b, v, m: b.op("math.exp", [b.op("arith.subf", [v, m[0]], wide)],
                                                              wide), [peak])
    return _loss_rows(e, op, logits, targets, (peak, sums), False, e.index(0), in_ty.get_shape()[-1])


def cross_entropy_from_stats(e: Emitter, op: nn.CrossEntropyFromStatsOp, args: list[SSAValue]) -> SSAValue:
    """ops_nn's vocab-parallel last step: the row terms `m + log(s)` on the shard whose range starts at
    0, minus the target logit where this shard holds it (its range's start as `embedding` reads it)."""
    logits, targets, row_max, row_sum = args
    global_ty = op.global_operand(0)
    vocab = global_ty.get_shape()[-1] if global_ty is not None else builtin_tensor(op, logits.type).get_shape()[-1]
    if vocab == DYNAMIC_INDEX:
        raise OpError(op, f"{op.name}: the vocabulary size is unknown (no {nn.GLOBAL_OPERANDS})")
    return _loss_rows(e, op, logits, targets, (row_max, row_sum), True, _vocab_offset(e, op), vocab)


def _loss_rows(e: Emitter, op: Operation, logits: SSAValue, targets: SSAValue, stats: tuple[SSAValue, SSAValue],
               kept: bool, offset: SSAValue, vocab: int) -> SSAValue:
    """One loop over the rows: `m + log(s)` where the shard starts at global index 0, minus the
    target logit (at `target - offset`) where the shard holds it; 0 where the target is outside
    [0, vocab). `stats` (m, s) are rows, or rows with a kept last dim of 1 (`kept`)."""
    in_ty = builtin_tensor(op, logits.type)
    out = builtin_tensor(op, op.results[0].type)
    out_rank = len(out.get_shape())
    wide = _wide_type(out.element_type)
    stat_types = [builtin_tensor(op, v.type).element_type for v in stats]
    body = Body([builtin_tensor(op, targets.type).element_type, *stat_types, out.element_type])
    t, m, s = body.args[0], widen(body, body.args[1]), widen(body, body.args[2])
    target = _index_of(body, t)
    valid, _ = _select_valid(body, target, body.const(IntegerAttr(vocab, _INDEX), _INDEX))
    local = body.op("arith.subi", [target, offset], _INDEX)
    held, safe = _select_valid(body, local, e.dim(logits, len(in_ty.get_shape()) - 1))
    where = [body.op("linalg.index", [], _INDEX, {"dim": IntegerAttr(i, i64)}) for i in range(out_rank)]
    zero = body.const(identity(ReduceKind.SUM, wide), wide)
    picked = widen(body, body.op("tensor.extract", [logits, *where, safe], in_ty.element_type))
    picked = body.op("arith.select", [held, picked, zero], wide)
    first = body.op("arith.cmpi", [offset, body.const(IntegerAttr(0, _INDEX), _INDEX)], i1,
                    {"predicate": IntegerAttr(CMPI_EQ, i64)})
    lse = body.op("arith.select", [first, body.op("arith.addf", [m, body.op("math.log", [s], wide)], wide), zero],
                  wide)
    loss = body.op("arith.select", [valid, body.op("arith.subf", [lse, picked], wide), zero], wide)
    ident_out = AffineMap.identity(out_rank)
    row_map = AffineMap(out_rank, 0, (*(AffineDimExpr(i) for i in range(out_rank)), AffineConstantExpr(0))) \
        if kept else ident_out
    return e.linalg([targets, *stats], e.empty(out, lambda k: (targets, k)), [ident_out, row_map, row_map, ident_out],
                    [IteratorType.PARALLEL] * out_rank, body.region(narrow(body, loss, out.element_type)))


# ---------------------------------------------------------------------------
# Data movement and selection
# ---------------------------------------------------------------------------


def concat(e: Emitter, op: nn.ConcatOp, args: list[SSAValue]) -> SSAValue:
    out = builtin_tensor(op, op.results[0].type)
    if len(args) == 1:
        return args[0]
    return e.add(generic_op("tensor.concat", args, [out], {"dim": IntegerAttr(op.get_axis(), i64)})).results[0]


def slice_(e: Emitter, op: nn.SliceOp, args: list[SSAValue]) -> SSAValue:
    """`tensor.extract_slice` with static offsets and strides; an uneven (unsliced, split) axis
    takes its size from the operand."""
    (x,) = args
    out = builtin_tensor(op, op.results[0].type)
    start, _, step = op.get_bounds()
    shape = out.get_shape()
    sizes = [e.dim(x, k) for k, n in enumerate(shape) if n == DYNAMIC_INDEX]
    props: dict[str, Attribute] = {
        "operandSegmentSizes": DenseArrayBase.from_list(i32, [1, 0, len(sizes), 0]),
        "static_offsets": DenseArrayBase.from_list(i64, list(start)),
        "static_sizes": DenseArrayBase.from_list(i64, list(shape)),
        "static_strides": DenseArrayBase.from_list(i64, list(step)),
    }
    return e.add(generic_op("tensor.extract_slice", [x, *sizes], [out], props)).results[0]


def where(e: Emitter, op: nn.WhereOp, args: list[SSAValue]) -> SSAValue:
    elt = builtin_tensor(op, op.results[0].type).element_type
    return e.elementwise(op, args, lambda b, a: b.op("arith.select", list(a), elt))


def broadcast_to(e: Emitter, op: nn.BroadcastToOp, args: list[SSAValue]) -> SSAValue:
    return e.elementwise(op, args, lambda b, a: a[0])


NN_LOWERINGS: dict[type[Operation], Callable[[Any, Any, list[SSAValue]], SSAValue]] = {
    nn.SoftmaxOp: softmax,
    nn.RmsNormOp: rms_norm,
    nn.EmbeddingOp: embedding,
    nn.CrossEntropyOp: cross_entropy,
    nn.CrossEntropyFromStatsOp: cross_entropy_from_stats,
    nn.ConcatOp: concat,
    nn.SliceOp: slice_,
    nn.WhereOp: where,
    nn.BroadcastToOp: broadcast_to,
}
"""op class -> its lowering (the emitter, the op, its translated operands)."""
