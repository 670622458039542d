"""The ATen -> sbp mapping of `from_torch` (SPEC §7): one handler per ATen op, on the ops of §2.4.

A handler takes the `Builder`, the node's arguments (translated values `Val`, capture-time constants
`Const`, Python scalars and lists) and keyword arguments, and returns the value of the node (a list
for multi-result ops such as `split`). The result's type comes from torch's metadata of the node
(`Builder.result_type`), so that a shape or dtype disagreement with torch is the verifier's located
error rather than a silent difference. The ops of §7 (softmax, embedding, slice, concat, where,
broadcast_to, dropout, and attention with them) are mapped in `from_torch_nn`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import DenseArrayBase, Float32Type, FloatAttr, IntegerAttr, IntegerType, UnitAttr, i64
from xdsl.ir import Attribute, Operation

from sbpc.dialects import dtypes
from sbpc.dialects.sbp_ops import (
    AddOp,
    AddScalarOp,
    CastOp,
    DivOp,
    ExpOp,
    GeluOp,
    LayerNormOp,
    MatmulOp,
    MaximumOp,
    MinimumOp,
    MulOp,
    MulScalarOp,
    NegOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceSumOp,
    ReluOp,
    SubOp,
    TransposeOp,
)
from sbpc.translate.from_torch_builder import Builder, Const, Handler, Val

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def scalar_attr(value: float | int | bool, element: Attribute) -> Attribute:
    """`value` as the `scalar` property of an op on `element` tensors (a float or an integer attribute)."""
    row = dtypes.of_xdsl(element)
    if row is not None and row.is_float:
        return FloatAttr(float(value), element)  # type: ignore[arg-type]
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"scalar {value} on an integer tensor")
    assert isinstance(element, IntegerType)
    return IntegerAttr(int(value), element)


def axis(dim: int, rank: int) -> int:
    """A torch dim (negative counts from the end) as an axis in 0..rank-1."""
    return dim + rank if dim < 0 else dim


def axes_attr(axes: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(axes))


def like(b: Builder, shape: Sequence[int], of: Val) -> Any:
    """The type of a tensor of `shape` with `of`'s element type."""
    return b.tensor_type(shape, of.element_type)


def is_scalar(x: Any) -> bool:
    return isinstance(x, int | float | bool) or (isinstance(x, Const) and x.tensor.dim() == 0)


def scalar_value(x: Any) -> float | int | bool:
    return x.tensor.item() if isinstance(x, Const) else x


def cast_to(b: Builder, v: Val, element: Attribute) -> Val:
    """`v` converted to `element` (torch's type promotion made explicit), or `v` itself."""
    if v.element_type == element:
        return v
    return b.create(CastOp, [v], b.tensor_type(v.shape, element))


def operands(b: Builder, *xs: Any) -> list[Val]:
    """Tensor operands in the node's result element type (scalars as 0-d constant arguments)."""
    element = b.result_type().element_type
    out = []
    for x in xs:
        if isinstance(x, int | float | bool):
            import torch

            x = Const(torch.tensor(x, dtype=b.node.meta["val"].dtype), f"{b.node.name}_scalar")
        out.append(cast_to(b, b.tensor(x), element))
    return out


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------


def _binary(cls: type[Operation], scalar_form: str | None = None) -> Handler:
    """A tensor-tensor op; with a scalar right operand `add_scalar` / `mul_scalar` (a float division by
    `s` as a multiplication by `1/s`: within one rounding of torch's quotient)."""

    def handle(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
        x, y = args[0], args[1]
        alpha = kwargs.get("alpha", args[2] if len(args) > 2 else 1)
        if alpha != 1:
            y = scalar_value(y) * alpha if is_scalar(y) else times(b, b.tensor(y), alpha)
        if scalar_form is not None and isinstance(x, Val) and is_scalar(y):
            element = b.result_type().element_type
            s = scalar_value(y)
            if scalar_form == "add":
                return _scalar_op(b, AddScalarOp, cast_to(b, x, element), s)
            if scalar_form == "sub":
                return _scalar_op(b, AddScalarOp, cast_to(b, x, element), -s)
            if scalar_form == "mul":
                return _scalar_op(b, MulScalarOp, cast_to(b, x, element), s)
            if scalar_form == "div" and dtypes.of_xdsl(element).is_float and s != 0:
                return _scalar_op(b, MulScalarOp, cast_to(b, x, element), 1.0 / s)
        if scalar_form in ("add", "mul") and is_scalar(x) and isinstance(y, Val):
            return handle(b, [y, x], {})
        lhs, rhs = operands(b, x, y)
        return b.create(cls, [lhs, rhs])

    return handle


def _scalar_op(b: Builder, cls: type[Operation], x: Val, s: float | int | bool) -> Val:
    return b.create(cls, [x], b.tensor_type(x.shape, x.element_type), {"scalar": scalar_attr(s, x.element_type)})


def times(b: Builder, x: Val, s: float | int) -> Val:
    """`x * s` (sbp.mul_scalar)."""
    return _scalar_op(b, MulScalarOp, x, s)


def _unary(cls: type[Operation]) -> Handler:
    def handle(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
        (x,) = operands(b, args[0])
        return b.create(cls, [x])

    return handle


def _power(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    """`x ** 1` and `x ** 2` (as `x * x`, which torch's pow computes exactly so too); other powers have no sbp op."""
    exponent = args[1]
    if exponent == 1:
        return b.tensor(args[0])
    if exponent != 2:
        raise b.error(f"pow with exponent {exponent!r}: sbp has x ** 2 (as x * x) only")
    (x,) = operands(b, args[0])
    return b.create(MulOp, [x, x])


def _mse_loss(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    """`F.mse_loss`: `(x - t)²`, then its mean (reduction 1, torch's default), sum (2) or itself (0)."""
    x, t = operands(b, args[0], args[1])
    reduction = kwargs.get("reduction", args[2] if len(args) > 2 else 1)
    diff = b.create(SubOp, [x, t], like(b, tuple(b.node.args[0].meta["val"].shape), x))
    square = b.create(MulOp, [diff, diff], like(b, diff.shape, diff))
    if reduction == 0:
        return square
    total = reduce(b, ReduceSumOp, square, None, False)
    return total if reduction == 2 else times(b, total, 1.0 / max(1, math.prod(square.shape)))


def _gelu(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    approximate = kwargs.get("approximate", args[1] if len(args) > 1 else "none")
    if approximate != "tanh":
        raise b.error("gelu with approximate='none' (the erf form) has no sbp op: sbp.gelu is the tanh form "
                      "(use F.gelu(x, approximate='tanh') / nn.GELU(approximate='tanh'))")
    return b.create(GeluOp, [b.tensor(args[0])])


# ---------------------------------------------------------------------------
# Contractions
# ---------------------------------------------------------------------------


def matmul(b: Builder, a: Val, c: Val, result_type: Any = None) -> Val:
    """`a @ c`, a transpose of the last two axes of either folded into `transpose_a` / `transpose_b`."""
    if len(a.shape) < 2 or len(c.shape) < 2:
        raise b.error(f"matmul of a rank-{len(a.shape)} and a rank-{len(c.shape)} tensor: sbp.matmul needs rank >= 2 "
                      "(unsqueeze the vector operand)")
    props: dict[str, Attribute] = {}
    if a.transposed_from is not None:
        a, props["transpose_a"] = a.transposed_from, UnitAttr()
    if c.transposed_from is not None:
        c, props["transpose_b"] = c.transposed_from, UnitAttr()
    return b.create(MatmulOp, [a, c], result_type, props)


def _matmul(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    a, c = operands(b, args[0], args[1])
    return matmul(b, a, c)


def _linear(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    x, w = operands(b, args[0], args[1])
    bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
    out = (*x.shape[:-1], w.shape[0])
    y = b.create(MatmulOp, [x, w], like(b, out, x), {"transpose_b": UnitAttr()})
    if bias is None:
        return y
    (bias,) = operands(b, bias)
    return b.create(AddOp, [y, bias])


def _addmm(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    bias, m1, m2 = operands(b, *args[:3])
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    y = matmul(b, m1, m2)
    if alpha != 1:
        y = times(b, y, alpha)
    if beta != 1:
        bias = times(b, bias, beta)
    return b.create(AddOp, [y, bias])


# ---------------------------------------------------------------------------
# Data movement (views are lazy: `Builder.use` emits one reshape where a value is consumed)
# ---------------------------------------------------------------------------


def _view(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    x = b.tensor(args[0])
    return Val(x.value, tuple(b.node.meta["val"].shape))


def _identity(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    return b.tensor(args[0])


def _assertion(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """torch.export's runtime checks of a value's metadata: nothing to compute (static shapes)."""
    return None


def transpose(b: Builder, x: Val, perm: Sequence[int]) -> Val:
    """`x` permuted; a swap of the last two axes remembers `x` for `matmul`'s transpose flags."""
    perm = [axis(p, len(x.shape)) for p in perm]
    if perm == list(range(len(x.shape))):
        return x
    y = b.create(TransposeOp, [x], like(b, [x.shape[p] for p in perm], x), {"perm": axes_attr(perm)})
    rank = len(perm)
    if rank >= 2 and perm == [*range(rank - 2), rank - 1, rank - 2]:
        return Val(y.value, y.shape, transposed_from=x)
    return y


def _permute(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    return transpose(b, b.tensor(args[0]), list(args[1]))


def _transpose(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    x = b.tensor(args[0])
    perm = list(range(len(x.shape)))
    i, j = axis(args[1], len(perm)), axis(args[2], len(perm))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(b, x, perm)


def _t(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    x = b.tensor(args[0])
    return transpose(b, x, list(reversed(range(len(x.shape)))))


def _to_copy(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    x = b.tensor(args[0])
    return cast_to(b, x, b.result_type().element_type)


# ---------------------------------------------------------------------------
# Reductions and normalisation
# ---------------------------------------------------------------------------


def reduce(b: Builder, cls: type[Operation], x: Val, dims: Sequence[int] | None, keepdim: bool) -> Val:
    """`cls` over `dims` (all axes when None or empty, as torch)."""
    rank = len(x.shape)
    axes = sorted({axis(d, rank) for d in dims}) if dims else list(range(rank))
    shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keepdim else [
        d for i, d in enumerate(x.shape) if i not in axes]
    props: dict[str, Attribute] = {"axes": axes_attr(axes)}
    if keepdim:
        props["keepdims"] = UnitAttr()
    return b.create(cls, [x], like(b, shape, x), props)


def _reduction(cls: type[Operation], mean: bool = False) -> Handler:
    def handle(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
        (x,) = operands(b, args[0])
        dims = args[1] if len(args) > 1 else kwargs.get("dim")
        dims = [dims] if isinstance(dims, int) else dims
        keepdim = bool(kwargs.get("keepdim", args[2] if len(args) > 2 else False))
        y = reduce(b, cls, x, dims, keepdim)
        if mean:
            count = math.prod(x.shape) // max(1, math.prod(y.shape))
            y = times(b, y, 1.0 / count)
        return y

    return handle


def ones_like_last(b: Builder, x: Val, value: float, name: str) -> Val:
    """A 1-D constant of `x`'s last-axis size filled with `value` (an absent LayerNorm weight or bias)."""
    import torch

    row = dtypes.of_xdsl(x.element_type)
    dtype = getattr(torch, row.numpy_name if row is not None and row.numpy_name else "float32")
    return b.tensor(Const(torch.full((x.shape[-1],), value, dtype=dtype), name))


def _layer_norm(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    (x,) = operands(b, args[0])
    normalized = list(args[1])
    if len(normalized) != 1:
        raise b.error(f"layer_norm over {len(normalized)} trailing axes: sbp.layer_norm normalises the last axis only")
    weight = kwargs.get("weight", args[2] if len(args) > 2 else None)
    bias = kwargs.get("bias", args[3] if len(args) > 3 else None)
    eps = kwargs.get("eps", args[4] if len(args) > 4 else 1e-5)
    gamma = b.tensor(weight) if weight is not None else ones_like_last(b, x, 1.0, f"{b.node.name}_weight")
    beta = b.tensor(bias) if bias is not None else ones_like_last(b, x, 0.0, f"{b.node.name}_bias")
    return b.create(LayerNormOp, [x, gamma, beta], None, {"epsilon": FloatAttr(float(eps), Float32Type())})


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


def aten() -> Any:
    """`torch.ops.aten` (torch imported on first use)."""
    import torch

    return torch.ops.aten


def kept_ops() -> list[Any]:
    """The ops torch's default decompositions would split but that map to one sbp op (or a better
    decomposition of sbpc's own): they stay whole in the captured graph."""
    ops = aten()
    return [ops.linear.default, ops.matmul.default, ops.layer_norm.default, ops.rms_norm.default,
            ops.softmax.int, ops._softmax.default, ops.gelu.default, ops.silu.default, ops.embedding.default,
            ops.cross_entropy_loss.default, ops.scaled_dot_product_attention.default, ops.dropout.default,
            ops.split.Tensor, ops.triu.default, ops.tril.default, ops.sigmoid.default, ops.tanh.default,
            ops.mean.dim, ops.t.default, ops.mse_loss.default]


def handlers() -> dict[Any, Handler]:
    """ATen op overload -> handler, for the ops of §2.4."""
    ops = aten()
    view = [ops.view.default, ops._unsafe_view.default, ops.reshape.default, ops.unsqueeze.default,
            ops.squeeze.dim, ops.squeeze.dims, ops.squeeze.default, ops.flatten.using_ints]
    identity = [ops.clone.default, ops.contiguous.default, ops.alias.default, ops.detach.default,
                ops.lift_fresh_copy.default]
    table: dict[Any, Handler] = {op: _view for op in view}
    table.update({op: _identity for op in identity})
    table.update({op: _assertion for op in (ops._assert_tensor_metadata.default, ops._assert_scalar.default)})
    table.update({
        ops.add.Tensor: _binary(AddOp, "add"), ops.add.Scalar: _binary(AddOp, "add"),
        ops.sub.Tensor: _binary(SubOp, "sub"), ops.sub.Scalar: _binary(SubOp, "sub"),
        ops.mul.Tensor: _binary(MulOp, "mul"), ops.mul.Scalar: _binary(MulOp, "mul"),
        ops.div.Tensor: _binary(DivOp, "div"), ops.maximum.default: _binary(MaximumOp),
        ops.minimum.default: _binary(MinimumOp),
        ops.neg.default: _unary(NegOp), ops.exp.default: _unary(ExpOp), ops.relu.default: _unary(ReluOp),
        ops.gelu.default: _gelu,
        ops.linear.default: _linear, ops.matmul.default: _matmul, ops.mm.default: _matmul,
        ops.bmm.default: _matmul, ops.addmm.default: _addmm,
        ops.permute.default: _permute, ops.transpose.int: _transpose, ops.t.default: _t,
        ops._to_copy.default: _to_copy,
        ops.sum.dim_IntList: _reduction(ReduceSumOp), ops.mean.dim: _reduction(ReduceSumOp, mean=True),
        ops.sum.default: _reduction(ReduceSumOp), ops.mean.default: _reduction(ReduceSumOp, mean=True),
        ops.pow.Tensor_Scalar: _power, ops.mse_loss.default: _mse_loss,
        ops.amax.default: _reduction(ReduceMaxOp), ops.amin.default: _reduction(ReduceMinOp),
        ops.layer_norm.default: _layer_norm,
    })
    return table
