"""`--emit-mlir` forms of the gradients of the SPEC §7 lookups and slice (`dialects/sbp_ops_grad_nn.py`),
merged into `to_upstream_grad.GRAD_LOWERINGS` (f16/bf16 in f32, as `runtime/ops_grad_nn.py` computes):

* embedding_grad: a `linalg.generic` over (vocabulary row, index positions..., hidden) summing dy's rows
  whose index is that row (the index positions a reduction in order, as numpy's `add.at`);
* cross_entropy_grad: one parallel loop over the logits: `dloss·(exp(x - m)/s - onehot)` with the one-hot
  at `target - offset` (the shard's vocabulary range as `to_upstream_nn.embedding` reads it), 0 where the
  target is outside [0, V);
* slice_grad: `tensor.insert_slice` of dy into zeros of the result type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    TensorType,
    i1,
    i32,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from sbpc.dialects import sbp_ops_grad_nn as gn
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import ReduceKind
from sbpc.translate.linalg_bodies import CMPI_EQ, Body, builtin_tensor, generic_op, identity, narrow, widen
from sbpc.translate.to_upstream_nn import Emitter, _select_valid, _vocab_offset, _wide_type

_INDEX = IndexType()


def embedding_grad(e: Emitter, op: gn.EmbeddingGradOp, args: list[SSAValue]) -> SSAValue:
    """`out[v, h] = Σ_i (indices[i] == v) · dy[i, h]`, accumulated in the wide type over i in order."""
    dy, indices = args
    out = builtin_tensor(op, op.results[0].type)
    idx_ty = builtin_tensor(op, indices.type)
    lead = len(idx_ty.get_shape())
    dims = 2 + lead  # (v, i..., h)
    wide = _wide_type(out.element_type)
    acc_ty = TensorType(wide, out.get_shape())
    acc = e.filled(acc_ty, identity(ReduceKind.SUM, wide), lambda k: (dy, lead) if k == 1 else (dy, 0))
    idx_map = AffineMap(dims, 0, tuple(AffineDimExpr(1 + k) for k in range(lead)))
    dy_map = AffineMap(dims, 0, (*(AffineDimExpr(1 + k) for k in range(lead)), AffineDimExpr(dims - 1)))
    out_map = AffineMap(dims, 0, (AffineDimExpr(0), AffineDimExpr(dims - 1)))
    body = Body([idx_ty.element_type, out.element_type, wide])
    row = body.op("linalg.index", [], _INDEX, {"dim": IntegerAttr(0, i64)})
    index = body.op("arith.index_cast", [body.args[0]], _INDEX)
    hit = body.op("arith.cmpi", [index, row], i1, {"predicate": IntegerAttr(CMPI_EQ, i64)})
    zero = body.const(FloatAttr(0.0, wide), wide)  # type: ignore[arg-type]
    term = body.op("arith.select", [hit, widen(body, body.args[1]), zero], wide)
    iterators = [IteratorType.PARALLEL, *([IteratorType.REDUCTION] * lead), IteratorType.PARALLEL]
    summed = e.linalg([indices, dy], acc, [idx_map, dy_map, out_map], iterators,
                      body.region(body.op("arith.addf", [body.args[2], term], wide)))
    if acc_ty == out:
        return summed
    body = Body([wide, out.element_type])
    return e.linalg([summed], e.empty(out, lambda k: (summed, k)), [AffineMap.identity(2)] * 2,
                    [IteratorType.PARALLEL] * 2, body.region(narrow(body, body.args[0], out.element_type)))


def cross_entropy_grad(e: Emitter, op: gn.CrossEntropyGradOp, args: list[SSAValue]) -> SSAValue:
    """One parallel loop over the logits reading the target, dloss and the row statistics per row."""
    logits, targets, dloss, row_max, row_sum = args
    out = builtin_tensor(op, op.results[0].type)
    rank = len(out.get_shape())
    global_ty = op.global_operand(0)
    vocab = global_ty.get_shape()[-1] if global_ty is not None else out.get_shape()[-1]
    if vocab == DYNAMIC_INDEX:
        raise OpError(op, f"{op.name}: the vocabulary size is unknown")
    offset = _vocab_offset(e, op)
    wide = _wide_type(out.element_type)
    ident = AffineMap.identity(rank)
    to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
    kept = AffineMap(rank, 0, (*(AffineDimExpr(i) for i in range(rank - 1)), AffineConstantExpr(0)))
    elt = out.element_type
    body = Body([elt, builtin_tensor(op, targets.type).element_type, elt, elt, elt, elt])
    w, t, d, m, s = widen(body, body.args[0]), body.args[1], *(widen(body, v) for v in body.args[2:5])
    p = body.op("arith.divf", [body.op("math.exp", [body.op("arith.subf", [w, m], wide)], wide), s], wide)
    target = body.op("arith.index_cast", [t], _INDEX)
    valid, _ = _select_valid(body, target, body.const(IntegerAttr(vocab, _INDEX), _INDEX))
    column = body.op("arith.addi", [body.op("linalg.index", [], _INDEX, {"dim": IntegerAttr(rank - 1, i64)}),
                                    offset], _INDEX)
    hit = body.op("arith.cmpi", [column, target], i1, {"predicate": IntegerAttr(CMPI_EQ, i64)})
    zero, one = (body.const(FloatAttr(v, wide), wide) for v in (0.0, 1.0))  # type: ignore[arg-type]
    diff = body.op("arith.subf", [p, body.op("arith.select", [hit, one, zero], wide)], wide)
    grad = body.op("arith.select", [valid, body.op("arith.mulf", [d, diff], wide), zero], wide)
    return e.linalg([logits, targets, dloss, row_max, row_sum], e.empty(out, lambda k: (logits, k)),
                    [ident, to_row, to_row, kept, kept, ident], [IteratorType.PARALLEL] * rank,
                    body.region(narrow(body, grad, elt)))


def slice_grad(e: Emitter, op: gn.SliceGradOp, args: list[SSAValue]) -> SSAValue:
    """dy inserted at the slice's static offsets and strides into zeros; an uneven (unsliced, split) axis
    takes its size from dy."""
    (dy,) = args
    out = builtin_tensor(op, op.results[0].type)
    dy_shape = builtin_tensor(op, dy.type).get_shape()
    start, _, step = op.get_bounds()
    zeros = e.filled(out, identity(ReduceKind.SUM, out.element_type), lambda k: (dy, k))
    sizes = [e.dim(dy, k) for k, n in enumerate(dy_shape) if n == DYNAMIC_INDEX]
    props: dict[str, Attribute] = {
        "operandSegmentSizes": DenseArrayBase.from_list(i32, [1, 1, 0, len(sizes), 0]),
        "static_offsets": DenseArrayBase.from_list(i64, list(start)),
        "static_sizes": DenseArrayBase.from_list(i64, list(dy_shape)),
        "static_strides": DenseArrayBase.from_list(i64, list(step)),
    }
    return e.add(generic_op("tensor.insert_slice", [dy, zeros, *sizes], [out], props)).results[0]


NN_GRAD_LOWERINGS: dict[type[Operation], Callable[[Any, Any, list[SSAValue]], SSAValue]] = {
    gn.EmbeddingGradOp: embedding_grad,
    gn.CrossEntropyGradOp: cross_entropy_grad,
    gn.SliceGradOp: slice_grad,
}
"""op class -> its lowering (merged into `to_upstream_grad.GRAD_LOWERINGS`)."""
