"""The ATen -> sbp mapping of `from_torch` for the ops of SPEC §7 (`sbpc.dialects.sbp_ops_nn`).

Softmax, the activations, RMSNorm, embedding, slicing (`slice`, `split`, `select`), `cat`, `where`,
a real `expand` (sbp.broadcast_to), training-mode dropout, cross-entropy (sbp.cross_entropy is the
per-element loss; the mean or sum is added here) and scaled dot-product attention (its decomposition,
with sbp.softmax). These handlers replace `from_torch_ops`' for the ops both map.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import IntegerType, UnitAttr
from xdsl.ir import Operation

from sbpc.dialects import dtypes
from sbpc.dialects.sbp_ops import AddOp, MatmulOp, ReduceSumOp
from sbpc.dialects.sbp_ops_nn import (
    BroadcastToOp,
    ConcatOp,
    CrossEntropyOp,
    DropoutOp,
    EmbeddingOp,
    RmsNormOp,
    SigmoidOp,
    SiluOp,
    SliceOp,
    SoftmaxOp,
    TanhOp,
    WhereOp,
)
from sbpc.translate.from_torch_builder import Builder, Const, Handler, Val
from sbpc.translate.from_torch_ops import (
    aten,
    axis,
    cast_to,
    like,
    ones_like_last,
    operands,
    reduce,
    times,
    transpose,
)

I1 = IntegerType(1)


def softmax(b: Builder, x: Val, dim: int) -> Val:
    """sbp.softmax of `x` along `dim`."""
    return b.emit(SoftmaxOp(b.use(x), axis(dim, len(x.shape)), b.tensor_type(x.shape, x.element_type)))


def _softmax(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    (x,) = operands(b, args[0])
    return softmax(b, x, args[1])


def _activation(cls: type[Operation]) -> Handler:
    def handle(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
        (x,) = operands(b, args[0])
        return b.emit(cls(b.use(x), b.result_type()))  # type: ignore[call-arg]

    return handle


def _rms_norm(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    """F.rms_norm over the last axis; torch's default epsilon (None) is the element type's machine epsilon."""
    import torch

    (x,) = operands(b, args[0])
    if len(list(args[1])) != 1:
        raise b.error(f"rms_norm over {len(list(args[1]))} trailing axes: sbp.rms_norm normalises the last axis only")
    weight = kwargs.get("weight", args[2] if len(args) > 2 else None)
    eps = kwargs.get("eps", args[3] if len(args) > 3 else None)
    if eps is None:
        eps = torch.finfo(b.node.meta["val"].dtype).eps
    gamma = b.tensor(weight) if weight is not None else ones_like_last(b, x, 1.0, f"{b.node.name}_weight")
    return b.emit(RmsNormOp(b.use(x), b.use(gamma), b.result_type(), float(eps)))


def _embedding(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    table, indices = b.tensor(args[0]), b.tensor(args[1])
    return b.emit(EmbeddingOp(b.use(table), b.use(indices), b.result_type()))


def slice_axis(b: Builder, x: Val, dim: int, start: int | None, end: int | None, step: int = 1) -> Val:
    """`x` sliced along `dim` (Python bounds: negative from the end, clamped), others whole."""
    d = axis(dim, len(x.shape))
    lo, hi, stride = slice(start, end, step).indices(x.shape[d])
    hi = max(lo, hi)
    if (lo, hi, stride) == (0, x.shape[d], 1):
        return x
    starts, stops, steps = [0] * len(x.shape), list(x.shape), [1] * len(x.shape)
    starts[d], stops[d], steps[d] = lo, hi, stride
    shape = list(x.shape)
    shape[d] = len(range(lo, hi, stride))
    return b.emit(SliceOp(b.use(x), starts, stops, steps, b.tensor_type(shape, x.element_type)))


def _slice(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    names = ("self", "dim", "start", "end", "step")
    opts = {**dict(zip(names, args, strict=False)), **kwargs}
    return slice_axis(b, b.tensor(opts["self"]), opts.get("dim", 0), opts.get("start"), opts.get("end"),
                      opts.get("step", 1))


def _split(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Val]:
    """`split(size)` / `split_with_sizes(sizes)` as one slice per piece."""
    x = b.tensor(args[0])
    dim = axis(kwargs.get("dim", args[2] if len(args) > 2 else 0), len(x.shape))
    sizes = args[1]
    if isinstance(sizes, int):
        sizes = [min(sizes, x.shape[dim] - i) for i in range(0, x.shape[dim], sizes)]
    out, at = [], 0
    for size in sizes:
        out.append(slice_axis(b, x, dim, at, at + size))
        at += size
    return out


def _select(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    x = b.tensor(args[0])
    dim, index = axis(args[1], len(x.shape)), args[2]
    index = index + x.shape[dim] if index < 0 else index
    piece = slice_axis(b, x, dim, index, index + 1)
    shape = tuple(b.node.meta["val"].shape)
    return Val(b.use(piece), shape) if piece.shape != shape else piece


def _cat(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    tensors = [t for t in operands(b, *args[0]) if math.prod(t.shape) > 0 or len(t.shape) > 1]
    dim = kwargs.get("dim", args[1] if len(args) > 1 else 0)
    result = b.result_type()
    return b.emit(ConcatOp([b.use(t) for t in tensors], axis(dim, result.rank), result))


def _where(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    cond = b.tensor(args[0])
    if cond.element_type != I1:
        cond = cast_to(b, cond, I1)
    x, y = operands(b, args[1], args[2])
    return b.emit(WhereOp(b.use(cond), b.use(x), b.use(y), b.result_type()))


def _expand(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    """A view when it only adds or keeps unit dims, else sbp.broadcast_to."""
    x = b.tensor(args[0])
    shape = tuple(b.node.meta["val"].shape)
    if math.prod(shape) == math.prod(x.shape):
        return Val(x.value, shape) if shape != x.shape else x
    return b.emit(BroadcastToOp(b.use(x), b.result_type()))


def _dropout(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    """The identity at inference (train=False); in training mode sbp.dropout (p kept for the cost model)."""
    x = b.tensor(args[0])
    p = float(kwargs.get("p", args[1] if len(args) > 1 else 0.5))
    train = kwargs.get("train", args[2] if len(args) > 2 else True)
    if not train or p == 0.0:
        return x
    return b.emit(DropoutOp(b.use(x), p, b.result_type()))


def _cross_entropy(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    """F.cross_entropy with integer class targets: sbp.cross_entropy per element, then the reduction
    (mean divides by the number of targets: a target equal to ignore_index scores 0 but is counted)."""
    names = ("self", "target", "weight", "reduction", "ignore_index", "label_smoothing")
    opts = {**dict(zip(names, args, strict=False)), **kwargs}
    if opts.get("weight") is not None:
        raise b.error("cross_entropy with class weights has no sbp mapping")
    if opts.get("label_smoothing", 0.0):
        raise b.error("cross_entropy with label_smoothing has no sbp mapping")
    logits, targets = b.tensor(opts["self"]), b.tensor(opts["target"])
    if targets.element_type == logits.element_type:
        raise b.error("cross_entropy with class-probability targets has no sbp mapping (give class indices)")
    if len(logits.shape) > 2:  # torch's class axis is 1: move it last
        rank = len(logits.shape)
        logits = transpose(b, logits, [0, *range(2, rank), 1])
    per = b.emit(CrossEntropyOp(b.use(logits), b.use(targets), b.tensor_type(targets.shape, logits.element_type)))
    reduction = opts.get("reduction", 1)
    if reduction == 0 or not per.shape:
        return per
    total = reduce(b, ReduceSumOp, per, None, False)
    if reduction == 2:
        return total
    return times(b, total, 1.0 / math.prod(per.shape))


def _sdpa(b: Builder, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Val:
    """Scaled dot-product attention as its decomposition: softmax(q k^T · scale + mask) v (a boolean
    mask selects the scores it keeps, -inf elsewhere; `is_causal` is the lower-triangular one)."""
    import torch

    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
    opts = {**dict(zip(names, args, strict=False)), **kwargs}
    q, k, v = operands(b, opts["query"], opts["key"], opts["value"])
    if opts.get("dropout_p", 0.0):
        raise b.error("scaled_dot_product_attention with dropout_p > 0 (call model.eval() for inference)")
    if opts.get("enable_gqa") and q.shape[-3] != k.shape[-3]:
        raise b.error("scaled_dot_product_attention with enable_gqa: repeat the key/value heads explicitly")
    scale = opts.get("scale") or 1.0 / math.sqrt(q.shape[-1])
    shape = (*q.shape[:-1], k.shape[-2])
    scores = times(b, b.emit(MatmulOp.create(operands=[b.use(q), b.use(k)], result_types=[like(b, shape, q)],
                                             properties={"transpose_b": UnitAttr()})), scale)
    mask = opts.get("attn_mask")
    if opts.get("is_causal"):
        mask = Const(torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril(), f"{b.node.name}_causal")
    if mask is not None:
        mask = b.tensor(mask)
        if mask.element_type == I1:
            row = dtypes.of_xdsl(q.element_type)
            low = Const(torch.tensor(float("-inf"), dtype=getattr(torch, row.numpy_name if row else "float32")),
                        f"{b.node.name}_neg_inf")
            scores = b.emit(WhereOp(b.use(mask), b.use(scores), b.use(b.tensor(low)), like(b, shape, q)))
        else:
            scores = b.emit(AddOp(b.use(scores), b.use(cast_to(b, mask, q.element_type)), like(b, shape, q)))
    probs = softmax(b, scores, -1)
    out = (*shape[:-1], v.shape[-1])
    return b.emit(MatmulOp.create(operands=[b.use(probs), b.use(v)], result_types=[like(b, out, q)]))


def handlers() -> dict[Any, Handler]:
    """ATen op overload -> handler, for the ops of §7."""
    a = aten()
    return {
        a.softmax.int: _softmax, a._softmax.default: _softmax,
        a.sigmoid.default: _activation(SigmoidOp), a.tanh.default: _activation(TanhOp),
        a.silu.default: _activation(SiluOp), a.rms_norm.default: _rms_norm, a.embedding.default: _embedding,
        a.slice.Tensor: _slice, a.split.Tensor: _split, a.split_with_sizes.default: _split, a.select.int: _select,
        a.cat.default: _cat, a.where.self: _where, a.expand.default: _expand, a.dropout.default: _dropout,
        a.cross_entropy_loss.default: _cross_entropy, a.scaled_dot_product_attention.default: _sdpa,
    }
