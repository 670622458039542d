"""`--emit-mlir` forms of the backward and optimizer ops of SPEC §8 (`dialects/sbp_ops_grad.py`), as
`linalg.generic` loops of `arith`/`math` bodies (f16/bf16 in f32, as `runtime/ops_grad.py` computes):

* relu_grad, gelu_grad, ones_like, sgd_update, the AdamW moments and update: one parallel loop of their scalar formula;
* reduce_sum_grad: a parallel loop over the result reading dy without the reduced dims;
* reduce_extremum_grad: a reduction counting each group's ties, then a parallel loop selecting dy / count;
* layer_norm_grad / layer_norm_grad_gamma: row sums of x and of the centred squares (σ), of dy·gamma and
  dy·gamma·(x - mean), then a parallel loop (dx), or a reduction over the rows (dgamma); rms_norm_grad /
  rms_norm_grad_gamma alike from Σx² and Σ dy·gamma·x;
* maximum_grad / minimum_grad: one parallel loop selecting dy, dy/2 on a tie, or 0;
* embedding_grad, cross_entropy_grad, slice_grad: `to_upstream_grad_nn.py`.

`to_upstream_mlir.LOWERINGS` holds these with the others; each takes the emitter, the op and its
translated operands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IntegerAttr, TensorType, f32, i1, i64
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap

from sbpc.dialects import sbp_ops_grad as g
from sbpc.dialects import sbp_ops_grad_nn as gn
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import ReduceKind
from sbpc.translate.linalg_bodies import Body, builtin_tensor, identity, is_float, narrow, widen
from sbpc.translate.to_upstream_grad_nn import NN_GRAD_LOWERINGS
from sbpc.translate.to_upstream_nn import Emitter

CMPF_OGT = 2
GELU_C = 0.7978845608028654
GELU_K = 0.044715


def _wide(elt: Attribute) -> Attribute:
    return f32 if is_float(elt) and elt.bitwidth < 32 else elt  # type: ignore[attr-defined]


def _const(body: Body, value: float, ty: Attribute) -> SSAValue:
    return body.const(FloatAttr(value, ty), ty)  # type: ignore[arg-type]


def _scalar(op: Operation, formula: Callable[[Body, Sequence[SSAValue], Attribute], SSAValue]
            ) -> Callable[[Body, Sequence[SSAValue]], SSAValue]:
    """A body computing `formula` on the widened elements, rounded back to the result type."""
    out = builtin_tensor(op, op.results[0].type).element_type
    wide = _wide(out)
    return lambda b, a: narrow(b, formula(b, [widen(b, v) for v in a], wide), out)


def _relu_grad(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
    dy, x = a
    positive = b.op("arith.cmpf", [x, _const(b, 0.0, t)], i1, {"predicate": IntegerAttr(CMPF_OGT, i64)})
    return b.op("arith.select", [positive, dy, _const(b, 0.0, t)], t)


def _gelu_grad(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
    dy, x = a

    def mul(*vs: SSAValue) -> SSAValue:
        out = vs[0]
        for v in vs[1:]:
            out = b.op("arith.mulf", [out, v], t)
        return out

    def add(p: SSAValue, q: SSAValue) -> SSAValue:
        return b.op("arith.addf", [p, q], t)

    c, k, half, one = (_const(b, v, t) for v in (GELU_C, GELU_K, 0.5, 1.0))
    th = b.op("math.tanh", [mul(c, add(x, mul(k, x, x, x)))], t)
    left = mul(half, add(one, th))
    sech2 = b.op("arith.subf", [one, mul(th, th)], t)
    right = mul(half, x, sech2, c, add(one, mul(_const(b, 3.0 * GELU_K, t), x, x)))
    return mul(dy, add(left, right))


def _sgd(op: g.SgdUpdateOp) -> Callable[[Body, Sequence[SSAValue], Attribute], SSAValue]:
    lr, wd = op.hyper()

    def formula(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
        w, grad = a
        d = b.op("arith.addf", [grad, b.op("arith.mulf", [_const(b, wd, t), w], t)], t) if wd else grad
        return b.op("arith.addf", [w, b.op("arith.mulf", [_const(b, -lr, t), d], t)], t)

    return formula


def _moment(op: g.AdamMoment1Op | g.AdamMoment2Op) -> Callable[[Body, Sequence[SSAValue], Attribute], SSAValue]:
    beta = op.get_beta()
    first = isinstance(op, g.AdamMoment1Op)

    def formula(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
        s, grad = a
        if first:  # s + (1-β)·(g - s)
            diff = b.op("arith.subf", [grad, s], t)
            return b.op("arith.addf", [s, b.op("arith.mulf", [_const(b, 1.0 - beta, t), diff], t)], t)
        square = b.op("arith.mulf", [b.op("arith.mulf", [_const(b, 1.0 - beta, t), grad], t), grad], t)
        return b.op("arith.addf", [b.op("arith.mulf", [s, _const(b, beta, t)], t), square], t)

    return formula


def _adamw(op: g.AdamwUpdateOp) -> Callable[[Body, Sequence[SSAValue], Attribute], SSAValue]:
    lr, b1, b2, eps, wd, step = op.hyper()
    decay, step_size, bc2_sqrt = 1.0 - lr * wd, lr / (1.0 - b1**step), (1.0 - b2**step) ** 0.5

    def formula(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
        w, m, v = a
        root = b.op("arith.divf", [b.op("math.sqrt", [v], t), _const(b, bc2_sqrt, t)], t)
        denom = b.op("arith.addf", [root, _const(b, eps, t)], t)
        step_v = b.op("arith.divf", [b.op("arith.mulf", [_const(b, -step_size, t), m], t), denom], t)
        return b.op("arith.addf", [b.op("arith.mulf", [w, _const(b, decay, t)], t), step_v], t)

    return formula


def _elementwise(formula_of: Callable[[Any], Callable[[Body, Sequence[SSAValue], Attribute], SSAValue]]
                 ) -> Callable[[Any, Any, list[SSAValue]], SSAValue]:
    return lambda e, op, a: e.elementwise(op, a, _scalar(op, formula_of(op)))


def reduce_sum_grad(e: Emitter, op: g.ReduceSumGradOp, args: list[SSAValue]) -> SSAValue:
    """dy read without the reduced dims (or at index 0 of them, keepdims) at every result index."""
    (dy,) = args
    out = builtin_tensor(op, op.results[0].type)
    shape = out.get_shape()
    rank = len(shape)
    axes = set(op.get_axes())
    keep = op.keepdims is not None
    exprs: list[AffineExpr] = []
    sources: dict[int, tuple[SSAValue, int]] = {}
    for k in range(rank):
        if k in axes:
            if keep:
                exprs.append(AffineConstantExpr(0))
            continue
        sources[k] = (dy, len(exprs))
        exprs.append(AffineDimExpr(k))

    def source(k: int) -> tuple[SSAValue, int]:
        if k not in sources:
            raise OpError(op, f"{op.name}: the uneven result dim {k} (a broadcast dim) is not the size of dy's dims")
        return sources[k]

    body = Body([out.element_type, out.element_type])
    return e.linalg([dy], e.empty(out, source), [AffineMap(rank, 0, tuple(exprs)), AffineMap.identity(rank)],
                    [IteratorType.PARALLEL] * rank, body.region(body.args[0]))


CMPF_OEQ = 1


def reduce_extremum_grad(e: Emitter, op: g.ReduceExtremumGradOp, args: list[SSAValue]) -> SSAValue:
    """`x == y ? dy / count : 0`: a reduction counting the ties per group, then a parallel loop reading
    dy, y and the count without the reduced dims (or at index 0 of them, keepdims)."""
    dy, x, y = args
    out = builtin_tensor(op, op.results[0].type)
    shape = out.get_shape()
    rank = len(shape)
    axes = set(op.get_axes())
    keep = op.keepdims is not None
    exprs: list[AffineExpr] = []
    for k in range(rank):
        if k in axes:
            if keep:
                exprs.append(AffineConstantExpr(0))
            continue
        exprs.append(AffineDimExpr(k))
    reduced = AffineMap(rank, 0, tuple(exprs))
    ident = AffineMap.identity(rank)
    x_elt = builtin_tensor(op, x.type).element_type
    wide = _wide(x_elt)
    count_ty = TensorType(wide, builtin_tensor(op, y.type).get_shape())
    counts = e.filled(count_ty, identity(ReduceKind.SUM, wide), lambda k: (y, k))
    body = Body([x_elt, x_elt, wide])
    tie = body.op("arith.cmpf", [body.args[0], body.args[1]], i1, {"predicate": IntegerAttr(CMPF_OEQ, i64)})
    one = body.op("arith.select", [tie, _const(body, 1.0, wide), _const(body, 0.0, wide)], wide)
    iterators = [IteratorType.REDUCTION if k in axes else IteratorType.PARALLEL for k in range(rank)]
    counted = e.linalg([x, y], counts, [ident, reduced, reduced], iterators,
                       body.region(body.op("arith.addf", [body.args[2], one], wide)))
    body = Body([out.element_type, x_elt, x_elt, wide, out.element_type])
    d, xv, yv, c = widen(body, body.args[0]), body.args[1], body.args[2], body.args[3]
    tie = body.op("arith.cmpf", [xv, yv], i1, {"predicate": IntegerAttr(CMPF_OEQ, i64)})
    share = body.op("arith.divf", [d, c], wide)
    result = narrow(body, body.op("arith.select", [tie, share, _const(body, 0.0, wide)], wide), out.element_type)
    return e.linalg([dy, x, y, counted], e.empty(out, lambda k: (x, k)), [reduced, ident, reduced, reduced, ident],
                    [IteratorType.PARALLEL] * rank, body.region(result))


RowSum = Callable[[Sequence[SSAValue], Sequence[AffineMap], Callable[[Body, Sequence[SSAValue]], SSAValue]], SSAValue]


def _row_summer(e: Emitter, op: Operation, x: SSAValue) -> tuple[RowSum, Attribute, int]:
    """(row_sum(ins, their maps, term): Σ over x's last axis of `term` of the widened elements, in the
    wide type; the wide type; x's rank). x's last axis must be even (whole on the rank)."""
    ty = builtin_tensor(op, x.type)
    shape = ty.get_shape()
    rank = len(shape)
    if shape[-1] == DYNAMIC_INDEX:
        raise OpError(op, f"{op.name}: the normalised last axis of {ty} is uneven")
    wide = _wide(ty.element_type)
    to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
    reducing = [IteratorType.PARALLEL] * (rank - 1) + [IteratorType.REDUCTION]
    row_ty = TensorType(wide, shape[:-1])

    def row_sum(ins: Sequence[SSAValue], maps: Sequence[AffineMap],
                term: Callable[[Body, Sequence[SSAValue]], SSAValue]) -> SSAValue:
        init = e.filled(row_ty, identity(ReduceKind.SUM, wide), lambda k: (x, k))
        body = Body([*(v.type.element_type for v in ins), wide])  # type: ignore[attr-defined]
        total = body.op("arith.addf", [body.args[-1], term(body, [widen(body, v) for v in body.args[:-1]])], wide)
        return e.linalg(list(ins), init, [*maps, to_row], reducing, body.region(total))

    return row_sum, wide, rank


def _row_stats(e: Emitter, op: Operation, dy: SSAValue, x: SSAValue, gamma: SSAValue | None
               ) -> tuple[SSAValue, SSAValue, SSAValue | None, SSAValue | None, Attribute]:
    """(centred x, Σ centred², and with gamma Σ dy·γ and Σ dy·γ·centred per row, the wide type)."""
    row_sum, wide, rank = _row_summer(e, op, x)
    ty = builtin_tensor(op, x.type)
    shape = ty.get_shape()
    n = shape[-1]
    ident = AffineMap.identity(rank)
    to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
    last = AffineMap(rank, 0, (AffineDimExpr(rank - 1),))
    total = row_sum([x], [ident], lambda b, a: a[0])
    body = Body([ty.element_type, wide, wide])
    mean = body.op("arith.divf", [body.args[1], _const(body, float(n), wide)], wide)
    centred = e.linalg([x, total], e.empty(TensorType(wide, shape), lambda k: (x, k)), [ident, to_row, ident],
                       [IteratorType.PARALLEL] * rank,
                       body.region(body.op("arith.subf", [widen(body, body.args[0]), mean], wide)))
    squares = row_sum([centred], [ident], lambda b, a: b.op("arith.mulf", [a[0], a[0]], wide))
    if gamma is None:
        return centred, squares, None, None, wide
    gsum = row_sum([dy, gamma], [ident, last], lambda b, a: b.op("arith.mulf", [a[0], a[1]], wide))
    gcsum = row_sum([dy, gamma, centred], [ident, last, ident], lambda b, a: b.op(
        "arith.mulf", [b.op("arith.mulf", [a[0], a[1]], wide), a[2]], wide))
    return centred, squares, gsum, gcsum, wide


def _rstd(body: Body, squares: SSAValue, n: int, eps: float, wide: Attribute) -> SSAValue:
    var = body.op("arith.divf", [squares, _const(body, float(n), wide)], wide)
    root = body.op("math.sqrt", [body.op("arith.addf", [var, _const(body, eps, wide)], wide)], wide)
    return body.op("arith.divf", [_const(body, 1.0, wide), root], wide)


def layer_norm_grad(e: Emitter, op: g.LayerNormGradOp, args: list[SSAValue]) -> SSAValue:
    """`rstd·(dy·γ - Σdy·γ/n - c·rstd²·Σ(dy·γ·c)/n)` with c = x - mean."""
    dy, x, gamma = args
    out = builtin_tensor(op, op.results[0].type)
    shape = out.get_shape()
    rank, n = len(shape), shape[-1]
    centred, squares, gsum, gcsum, wide = _row_stats(e, op, dy, x, gamma)
    assert gsum is not None and gcsum is not None
    ident = AffineMap.identity(rank)
    to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
    last = AffineMap(rank, 0, (AffineDimExpr(rank - 1),))
    body = Body([out.element_type, out.element_type, wide, wide, wide, wide, out.element_type])
    d, gm, c, sq, gs, gcs = widen(body, body.args[0]), widen(body, body.args[1]), *body.args[2:6]
    rstd = _rstd(body, sq, n, op.get_epsilon(), wide)
    count = _const(body, float(n), wide)
    mean_g = body.op("arith.divf", [gs, count], wide)
    mean_gc = body.op("arith.divf", [gcs, count], wide)
    proj = body.op("arith.mulf", [body.op("arith.mulf", [c, rstd], wide), body.op("arith.mulf", [mean_gc, rstd], wide)],
                   wide)
    inner = body.op("arith.subf", [body.op("arith.subf", [body.op("arith.mulf", [d, gm], wide), mean_g], wide), proj],
                    wide)
    result = narrow(body, body.op("arith.mulf", [rstd, inner], wide), out.element_type)
    return e.linalg([dy, gamma, centred, squares, gsum, gcsum], e.empty(out, lambda k: (x, k)),
                    [ident, last, ident, to_row, to_row, to_row, ident], [IteratorType.PARALLEL] * rank,
                    body.region(result))


def layer_norm_grad_gamma(e: Emitter, op: g.LayerNormGradGammaOp, args: list[SSAValue]) -> SSAValue:
    """`Σ_rows dy · c · rstd`: a reduction over every axis but the last."""
    dy, x = args
    out = builtin_tensor(op, op.results[0].type)
    shape = builtin_tensor(op, x.type).get_shape()
    rank, n = len(shape), shape[-1]
    centred, squares, _, _, wide = _row_stats(e, op, dy, x, None)
    ident = AffineMap.identity(rank)
    to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
    last = AffineMap(rank, 0, (AffineDimExpr(rank - 1),))
    acc = TensorType(wide, out.get_shape())
    init = e.filled(acc, identity(ReduceKind.SUM, wide), lambda k: (x, rank - 1))
    body = Body([builtin_tensor(op, dy.type).element_type, wide, wide, wide])
    d, c, sq, total = widen(body, body.args[0]), *body.args[1:]
    term = body.op("arith.mulf", [body.op("arith.mulf", [d, c], wide), _rstd(body, sq, n, op.get_epsilon(), wide)],
                   wide)
    iterators = [IteratorType.REDUCTION] * (rank - 1) + [IteratorType.PARALLEL]
    summed = e.linalg([dy, centred, squares], init, [ident, ident, to_row, last], iterators,
                      body.region(body.op("arith.addf", [total, term], wide)))
    return _narrowed(e, summed, acc, out)


def _rms_stats(e: Emitter, op: Operation, dy: SSAValue, x: SSAValue, gamma: SSAValue | None
               ) -> tuple[SSAValue, SSAValue | None, Attribute]:
    """(Σ x², and with gamma Σ dy·γ·x per row, the wide type) of rms_norm's gradients."""
    row_sum, wide, rank = _row_summer(e, op, x)
    ident = AffineMap.identity(rank)
    last = AffineMap(rank, 0, (AffineDimExpr(rank - 1),))

    squares = row_sum([x], [ident], lambda b, a: b.op("arith.mulf", [a[0], a[0]], wide))
    if gamma is None:
        return squares, None, wide
    gxsum = row_sum([dy, gamma, x], [ident, last, ident], lambda b, a: b.op(
        "arith.mulf", [b.op("arith.mulf", [a[0], a[1]], wide), a[2]], wide))
    return squares, gxsum, wide


def rms_norm_grad(e: Emitter, op: gn.RmsNormGradOp, args: list[SSAValue]) -> SSAValue:
    """`r·(dy·γ - x·r²·Σ(dy·γ·x)/n)` with r = 1/√(Σx²/n + eps)."""
    dy, x, gamma = args
    out = builtin_tensor(op, op.results[0].type)
    shape = out.get_shape()
    rank, n = len(shape), shape[-1]
    squares, gxsum, wide = _rms_stats(e, op, dy, x, gamma)
    assert gxsum is not None
    ident = AffineMap.identity(rank)
    to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
    last = AffineMap(rank, 0, (AffineDimExpr(rank - 1),))
    body = Body([out.element_type, out.element_type, out.element_type, wide, wide, out.element_type])
    d, xv, gm = (widen(body, v) for v in body.args[:3])
    sq, gxs = body.args[3:5]
    r = _rstd(body, sq, n, op.get_epsilon(), wide)
    mean_gx = body.op("arith.divf", [gxs, _const(body, float(n), wide)], wide)
    scaled = body.op("arith.mulf", [xv, body.op("arith.mulf", [r, r], wide)], wide)
    proj = body.op("arith.mulf", [scaled, mean_gx], wide)
    inner = body.op("arith.subf", [body.op("arith.mulf", [d, gm], wide), proj], wide)
    result = narrow(body, body.op("arith.mulf", [r, inner], wide), out.element_type)
    return e.linalg([dy, x, gamma, squares, gxsum], e.empty(out, lambda k: (x, k)),
                    [ident, ident, last, to_row, to_row, ident], [IteratorType.PARALLEL] * rank, body.region(result))


def rms_norm_grad_gamma(e: Emitter, op: gn.RmsNormGradGammaOp, args: list[SSAValue]) -> SSAValue:
    """`Σ_rows dy · x · r`: a reduction over every axis but the last."""
    dy, x = args
    out = builtin_tensor(op, op.results[0].type)
    shape = builtin_tensor(op, x.type).get_shape()
    rank, n = len(shape), shape[-1]
    squares, _, wide = _rms_stats(e, op, dy, x, None)
    ident = AffineMap.identity(rank)
    to_row = AffineMap(rank, 0, tuple(AffineDimExpr(i) for i in range(rank - 1)))
    last = AffineMap(rank, 0, (AffineDimExpr(rank - 1),))
    acc = TensorType(wide, out.get_shape())
    init = e.filled(acc, identity(ReduceKind.SUM, wide), lambda k: (x, rank - 1))
    elt = builtin_tensor(op, dy.type).element_type
    body = Body([elt, elt, wide, wide])
    d, xv, sq, total = widen(body, body.args[0]), widen(body, body.args[1]), *body.args[2:]
    term = body.op("arith.mulf", [body.op("arith.mulf", [d, xv], wide), _rstd(body, sq, n, op.get_epsilon(), wide)],
                   wide)
    iterators = [IteratorType.REDUCTION] * (rank - 1) + [IteratorType.PARALLEL]
    summed = e.linalg([dy, x, squares], init, [ident, ident, to_row, last], iterators,
                      body.region(body.op("arith.addf", [total, term], wide)))
    return _narrowed(e, summed, acc, out)


def _narrowed(e: Emitter, summed: SSAValue, acc: TensorType, out: TensorType) -> SSAValue:
    """A 1-D wide accumulator rounded to the result type (itself when they agree)."""
    if acc == out:
        return summed
    body = Body([acc.element_type, out.element_type])
    return e.linalg([summed], e.empty(out, lambda k: (summed, k)), [AffineMap.identity(1)] * 2,
                    [IteratorType.PARALLEL], body.region(narrow(body, body.args[0], out.element_type)))


CMPF_OLT = 4


def _extremum_grad(op: gn.MaximumGradOp | gn.MinimumGradOp) -> Callable[[Body, Sequence[SSAValue], Attribute],
                                                                         SSAValue]:
    wins = CMPF_OGT if isinstance(op, gn.MaximumGradOp) else CMPF_OLT

    def formula(b: Body, a: Sequence[SSAValue], t: Attribute) -> SSAValue:
        dy, x, other = a
        win = b.op("arith.cmpf", [x, other], i1, {"predicate": IntegerAttr(wins, i64)})
        tie = b.op("arith.cmpf", [x, other], i1, {"predicate": IntegerAttr(CMPF_OEQ, i64)})
        half = b.op("arith.mulf", [dy, _const(b, 0.5, t)], t)
        return b.op("arith.select", [win, dy, b.op("arith.select", [tie, half, _const(b, 0.0, t)], t)], t)

    return formula


GRAD_LOWERINGS: dict[type[Operation], Callable[[Any, Any, list[SSAValue]], SSAValue]] = {
    g.ReluGradOp: _elementwise(lambda op: _relu_grad),
    g.GeluGradOp: _elementwise(lambda op: _gelu_grad),
    g.OnesLikeOp: _elementwise(lambda op: lambda b, a, t: _const(b, 1.0, t)),
    g.SgdUpdateOp: _elementwise(_sgd),
    g.AdamMoment1Op: _elementwise(_moment),
    g.AdamMoment2Op: _elementwise(_moment),
    g.AdamwUpdateOp: _elementwise(_adamw),
    g.ReduceSumGradOp: reduce_sum_grad,
    g.ReduceExtremumGradOp: reduce_extremum_grad,
    g.LayerNormGradOp: layer_norm_grad,
    g.LayerNormGradGammaOp: layer_norm_grad_gamma,
    gn.RmsNormGradOp: rms_norm_grad,
    gn.RmsNormGradGammaOp: rms_norm_grad_gamma,
    gn.MaximumGradOp: _elementwise(_extremum_grad),
    gn.MinimumGradOp: _elementwise(_extremum_grad),
    **NN_GRAD_LOWERINGS,
}
"""op class -> its lowering (the emitter, the op, its translated operands)."""
