"""The reverse-mode rule of each forward op: given the op and the gradient of its result, the gradients
of its operands, written as sbp ops (forward ops wherever the gradient is one, SPEC §8).

`GradBuilder` emits ops before a fixed point of the function with SBP-free result types, so that the
inference decides every gradient's SBP from the ops' rules (`dialects/signatures.py`,
`dialects/signatures_grad.py`). A rule returns one gradient per operand, None where the operand needs
none (it does not depend on a parameter, or is not a float). An op without a rule (fmod, whose
gradient torch defines only almost everywhere) is a located error when a parameter's gradient flows
through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, UnitAttr, f64, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from sbpc.dialects import sbp_ops as ops
from sbpc.dialects import sbp_ops_grad as g
from sbpc.dialects import sbp_ops_grad_nn as gn
from sbpc.dialects import sbp_ops_nn as nn
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sharding import broadcast_shapes
from sbpc.dialects.tensor_type import GlobalTensorType

Shape = tuple[int, ...]


def free_type(like: GlobalTensorType, shape: Sequence[int] | None = None) -> GlobalTensorType:
    """`like`'s element type and placement, `shape` (default like's), no SBP: the inference decides it."""
    return GlobalTensorType(like.get_shape() if shape is None else tuple(shape), like.element_type, like.placement)


def tensor_type(value: SSAValue) -> GlobalTensorType:
    ty = value.type
    assert isinstance(ty, GlobalTensorType)
    return ty


class GradBuilder:
    """Builds sbp ops before `anchor`, each taking the location of the forward op it differentiates."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor
        self.origin: Operation = anchor

    def emit(self, op_type: type[Operation], operands: Sequence[SSAValue], result: GlobalTensorType,
             properties: dict[str, Attribute] | None = None) -> SSAValue:
        op = op_type.build(operands=list(operands), result_types=[result], properties=properties or {})
        op.location = self.origin.location
        Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        return op.results[0]

    def like(self, op_type: type[Operation], operands: Sequence[SSAValue], shape: Sequence[int] | None = None,
             properties: dict[str, Attribute] | None = None) -> SSAValue:
        """An op whose result has operand 0's element type and placement (and shape, by default)."""
        return self.emit(op_type, operands, free_type(tensor_type(operands[0]), shape), properties)

    # -- the forward ops the gradients are made of --------------------------------------------

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        shape = broadcast_shapes(tensor_type(a).get_shape(), tensor_type(b).get_shape())
        return self.like(ops.AddOp, [a, b], shape)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        shape = broadcast_shapes(tensor_type(a).get_shape(), tensor_type(b).get_shape())
        return self.like(ops.MulOp, [a, b], shape)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        shape = broadcast_shapes(tensor_type(a).get_shape(), tensor_type(b).get_shape())
        return self.like(ops.DivOp, [a, b], shape)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        shape = broadcast_shapes(tensor_type(a).get_shape(), tensor_type(b).get_shape())
        return self.like(ops.SubOp, [a, b], shape)

    def neg(self, a: SSAValue) -> SSAValue:
        return self.like(ops.NegOp, [a])

    def reduce_sum(self, a: SSAValue, axes: Sequence[int], keepdims: bool) -> SSAValue:
        shape = tensor_type(a).get_shape()
        out = [1 if i in axes else d for i, d in enumerate(shape)] if keepdims else [
            d for i, d in enumerate(shape) if i not in axes]
        props: dict[str, Attribute] = {"axes": DenseArrayBase.from_list(i64, list(axes))}
        if keepdims:
            props["keepdims"] = UnitAttr()
        return self.like(ops.ReduceSumOp, [a], out, props)

    def reshape(self, a: SSAValue, shape: Sequence[int]) -> SSAValue:
        if tensor_type(a).get_shape() == tuple(shape):
            return a
        return self.like(ops.ReshapeOp, [a], shape)

    def matmul(self, a: SSAValue, b: SSAValue, ta: bool, tb: bool) -> SSAValue:
        sa, sb = tensor_type(a).get_shape(), tensor_type(b).get_shape()
        m = sa[-1] if ta else sa[-2]
        n = sb[-2] if tb else sb[-1]
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        assert batch is not None
        props: dict[str, Attribute] = {}
        if ta:
            props["transpose_a"] = UnitAttr()
        if tb:
            props["transpose_b"] = UnitAttr()
        return self.like(ops.MatmulOp, [a, b], (*batch, m, n), props)

    def unbroadcast(self, grad: SSAValue, shape: Shape) -> SSAValue:
        """`grad` (of a broadcast result's shape) summed back to the operand shape `shape`."""
        full = tensor_type(grad).get_shape()
        if full == shape:
            return grad
        lead = len(full) - len(shape)
        ones = [lead + i for i, d in enumerate(shape) if d == 1 and full[lead + i] != 1]
        if not ones:
            return self.reduce_sum(grad, list(range(lead)), False)
        summed = self.reduce_sum(grad, [*range(lead), *ones], True)
        return self.reshape(summed, shape)


Rule = Callable[[GradBuilder, Operation, SSAValue, Sequence[bool]], list[SSAValue | None]]
"""(builder, forward op, gradient of its result, which operands need one) -> their gradients."""


def _shape(value: SSAValue) -> Shape:
    return tensor_type(value).get_shape()


def _binary(b: GradBuilder, op: Operation, dy: SSAValue, need: Sequence[bool]) -> list[SSAValue | None]:
    lhs, rhs = op.operands
    y = op.results[0]
    da = db = None
    if isinstance(op, ops.AddOp | ops.SubOp):
        da = b.unbroadcast(dy, _shape(lhs)) if need[0] else None
        if need[1]:
            db = b.unbroadcast(dy if isinstance(op, ops.AddOp) else b.neg(dy), _shape(rhs))
    elif isinstance(op, ops.MulOp):
        da = b.unbroadcast(b.mul(dy, rhs), _shape(lhs)) if need[0] else None
        db = b.unbroadcast(b.mul(dy, lhs), _shape(rhs)) if need[1] else None
    else:  # div: d(a/b)/da = 1/b, d(a/b)/db = -y/b
        da = b.unbroadcast(b.div(dy, rhs), _shape(lhs)) if need[0] else None
        db = b.unbroadcast(b.neg(b.div(b.mul(dy, y), rhs)), _shape(rhs)) if need[1] else None
    return [da, db]


def _matmul(b: GradBuilder, op: Operation, dy: SSAValue, need: Sequence[bool]) -> list[SSAValue | None]:
    a, w = op.operands
    ta, tb = op.properties.get("transpose_a") is not None, op.properties.get("transpose_b") is not None
    da = dw = None
    if need[0]:  # y = op(a) @ op(w): d op(a) = dy @ op(w)^T
        da = b.matmul(w, dy, tb, True) if ta else b.matmul(dy, w, False, not tb)
        da = b.unbroadcast(da, _shape(a))
    if need[1]:  # d op(w) = op(a)^T @ dy
        dw = b.matmul(dy, a, True, ta) if tb else b.matmul(a, dy, not ta, False)
        dw = b.unbroadcast(dw, _shape(w))
    return [da, dw]


def _layer_norm(b: GradBuilder, op: Operation, dy: SSAValue, need: Sequence[bool]) -> list[SSAValue | None]:
    assert isinstance(op, ops.LayerNormOp)
    x, gamma, _ = op.operands
    eps: dict[str, Attribute] = {} if op.epsilon is None else {"epsilon": op.epsilon}
    rows = list(range(len(_shape(x)) - 1))
    dx = b.like(g.LayerNormGradOp, [dy, x, gamma], None, eps) if need[0] else None
    dgamma = b.like(g.LayerNormGradGammaOp, [dy, x], _shape(gamma), eps) if need[1] else None
    dbeta = b.reduce_sum(dy, rows, False) if need[2] else None
    return [dx, dgamma, dbeta]


def _unary(b: GradBuilder, op: Operation, dy: SSAValue, need: Sequence[bool]) -> list[SSAValue | None]:
    (x,) = op.operands
    if isinstance(op, ops.NegOp):
        return [b.neg(dy)]
    if isinstance(op, ops.ExpOp):
        return [b.mul(dy, op.results[0])]
    if isinstance(op, ops.ReluOp):
        return [b.like(g.ReluGradOp, [dy, x])]
    if isinstance(op, ops.GeluOp):
        return [b.like(g.GeluGradOp, [dy, x])]
    if isinstance(op, ops.AddScalarOp | ops.ConversionOp):
        return [dy]
    if isinstance(op, ops.MulScalarOp):
        return [b.like(ops.MulScalarOp, [dy], None, {"scalar": op.properties["scalar"]})]
    if isinstance(op, ops.CastOp):
        return [b.emit(ops.CastOp, [dy], free_type(tensor_type(x)))]
    if isinstance(op, ops.ReshapeOp):
        return [b.reshape(dy, _shape(x))]
    if isinstance(op, ops.TransposeOp):
        perm = list(op.get_perm())
        inverse = [perm.index(i) for i in range(len(perm))]
        return [b.like(ops.TransposeOp, [dy], _shape(x), {"perm": DenseArrayBase.from_list(i64, inverse)})]
    if isinstance(op, ops.ReduceMaxOp | ops.ReduceMinOp):
        props = {"axes": op.axes, **({"keepdims": UnitAttr()} if op.keepdims is not None else {})}
        return [b.emit(g.ReduceExtremumGradOp, [dy, x, op.results[0]], free_type(tensor_type(x)), props)]
    assert isinstance(op, ops.ReduceSumOp)
    props: dict[str, Attribute] = {"axes": op.axes}
    if op.keepdims is not None:
        props["keepdims"] = UnitAttr()
    return [b.emit(g.ReduceSumGradOp, [dy], free_type(tensor_type(x)), props)]


def _nn(b: GradBuilder, op: Operation, dy: SSAValue, need: Sequence[bool]) -> list[SSAValue | None]:
    """The ops of SPEC §7 whose gradients are forward ops: sigmoid, tanh, silu, softmax, dropout,
    broadcast_to, where, concat."""
    y = op.results[0]
    if isinstance(op, nn.SigmoidOp):  # σ' = σ - σ²
        return [b.mul(dy, b.sub(y, b.mul(y, y)))]
    if isinstance(op, nn.TanhOp):  # tanh' = 1 - tanh²
        return [b.sub(dy, b.mul(dy, b.mul(y, y)))]
    if isinstance(op, nn.SiluOp):  # (x·σ)' = σ + x·(σ - σ²)
        (x,) = op.operands
        s = b.like(nn.SigmoidOp, [x])
        return [b.mul(dy, b.add(s, b.mul(x, b.sub(s, b.mul(s, s)))))]
    if isinstance(op, nn.SoftmaxOp):  # y·(dy - Σ_axis dy·y)
        return [b.mul(y, b.sub(dy, b.reduce_sum(b.mul(dy, y), [op.get_axis()], True)))]
    if isinstance(op, nn.DropoutOp):  # the identity at inference
        return [dy]
    if isinstance(op, nn.BroadcastToOp):
        return [b.unbroadcast(dy, _shape(op.operands[0]))]
    if isinstance(op, nn.WhereOp):
        cond, x, other = op.operands
        zeros = b.like(ops.MulScalarOp, [dy], None, {"scalar": FloatAttr(0.0, f64)})
        ty = free_type(tensor_type(dy))
        dx = b.unbroadcast(b.emit(nn.WhereOp, [cond, dy, zeros], ty), _shape(x)) if need[1] else None
        dother = b.unbroadcast(b.emit(nn.WhereOp, [cond, zeros, dy], ty), _shape(other)) if need[2] else None
        return [None, dx, dother]
    assert isinstance(op, nn.ConcatOp)
    axis = op.get_axis()
    shape = _shape(dy)
    found: list[SSAValue | None] = []
    offset = 0
    for value, wanted in zip(op.operands, need, strict=True):
        extent = _shape(value)[axis]
        if wanted:
            start = [offset if k == axis else 0 for k in range(len(shape))]
            stop = [offset + extent if k == axis else d for k, d in enumerate(shape)]
            props: dict[str, Attribute] = {"start": DenseArrayBase.from_list(i64, start),
                                           "stop": DenseArrayBase.from_list(i64, stop),
                                           "step": DenseArrayBase.from_list(i64, [1] * len(shape))}
            found.append(b.like(nn.SliceOp, [dy], _shape(value), props))
        else:
            found.append(None)
        offset += extent
    return found


def _nn_grad(b: GradBuilder, op: Operation, dy: SSAValue, need: Sequence[bool]) -> list[SSAValue | None]:
    """The SPEC §7 ops whose gradients are ops of `dialects/sbp_ops_grad_nn.py`: rms_norm, embedding,
    cross_entropy (its rows' max and Σ exp by forward ops, all-reduced where the logits are vocab-split),
    slice, maximum/minimum (each operand broadcast to dy's shape first, the gradient summed back)."""
    if isinstance(op, nn.RmsNormOp):
        x, gamma = op.operands
        eps: dict[str, Attribute] = {} if op.epsilon is None else {"epsilon": op.epsilon}
        dx = b.like(gn.RmsNormGradOp, [dy, x, gamma], None, eps) if need[0] else None
        return [dx, b.like(gn.RmsNormGradGammaOp, [dy, x], _shape(gamma), eps) if need[1] else None]
    if isinstance(op, nn.EmbeddingOp):
        table, indices = op.operands
        return [b.emit(gn.EmbeddingGradOp, [dy, indices], free_type(tensor_type(table))), None]
    if isinstance(op, nn.CrossEntropyOp):
        logits, targets = op.operands
        last = len(_shape(logits)) - 1
        rows = [*_shape(logits)[:-1], 1]
        keep: dict[str, Attribute] = {"axes": DenseArrayBase.from_list(i64, [last]), "keepdims": UnitAttr()}
        row_max = b.like(ops.ReduceMaxOp, [logits], rows, keep)
        row_sum = b.reduce_sum(b.like(ops.ExpOp, [b.sub(logits, row_max)]), [last], True)
        return [b.emit(gn.CrossEntropyGradOp, [logits, targets, dy, row_max, row_sum], free_type(tensor_type(logits))),
                None]
    if isinstance(op, nn.SliceOp):
        props = {k: op.properties[k] for k in ("start", "stop", "step")}
        return [b.emit(gn.SliceGradOp, [dy], free_type(tensor_type(op.operands[0])), props)]
    assert isinstance(op, ops.MaximumOp | ops.MinimumOp)
    grad_op = gn.MaximumGradOp if isinstance(op, ops.MaximumOp) else gn.MinimumGradOp
    shape = _shape(dy)
    lhs, rhs = (v if _shape(v) == shape else b.like(nn.BroadcastToOp, [v], shape) for v in op.operands)
    da = b.unbroadcast(b.like(grad_op, [dy, lhs, rhs]), _shape(op.operands[0])) if need[0] else None
    db = b.unbroadcast(b.like(grad_op, [dy, rhs, lhs]), _shape(op.operands[1])) if need[1] else None
    return [da, db]


RULES: dict[type[Operation], Rule] = {
    **dict.fromkeys((ops.AddOp, ops.SubOp, ops.MulOp, ops.DivOp), _binary),
    ops.MatmulOp: _matmul,
    ops.LayerNormOp: _layer_norm,
    **dict.fromkeys((ops.NegOp, ops.ExpOp, ops.ReluOp, ops.GeluOp, ops.AddScalarOp, ops.MulScalarOp, ops.CastOp,
                     ops.ReshapeOp, ops.TransposeOp, ops.ReduceSumOp, ops.ReduceMaxOp, ops.ReduceMinOp, ops.ToGlobalOp,
                     ops.BoxingOp), _unary),
    **dict.fromkeys((nn.SigmoidOp, nn.TanhOp, nn.SiluOp, nn.SoftmaxOp, nn.DropoutOp, nn.BroadcastToOp, nn.WhereOp,
                     nn.ConcatOp), _nn),
    **dict.fromkeys((nn.RmsNormOp, nn.EmbeddingOp, nn.CrossEntropyOp, nn.SliceOp, ops.MaximumOp, ops.MinimumOp),
                    _nn_grad),
}
"""Forward op class -> its reverse-mode rule."""


def operand_grads(b: GradBuilder, op: Operation, dy: SSAValue, need: Sequence[bool]) -> list[SSAValue | None]:
    """The gradients of `op`'s operands (None where `need` is False) given its result's `dy`."""
    rule = RULES.get(type(op))
    if rule is None:
        raise OpError(op, f"autodiff: {describe_op(op)} has no gradient rule, and a parameter's gradient "
                          "flows through it")
    b.origin = op
    found = rule(b, op, dy, need)
    return [grad if wanted else None for grad, wanted in zip(found, need, strict=True)]
