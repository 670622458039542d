"""What the neural-network ops of SPEC §7 (`dialects/sbp_ops_nn.py`) compute, numpy and torch side by
side, registered by op class like the ops of `runtime/op_impls.py` (whose conventions they share).

Numeric conventions: the result keeps the tensor's dtype; f16/bf16 compute in float32 and round back;

* `sigmoid` is `1 / (1 + exp(-x))`, `silu` `x · sigmoid(x)`, `tanh` libm's (torch: its own kernels);
* `softmax` subtracts the maximum of its axis before `exp` (a row of -inf gives NaN, as torch);
* `rms_norm` is `x / sqrt(mean(x², last axis) + eps) · gamma` (torch: `F.rms_norm`);
* `cross_entropy` is `max + log(Σ exp(x - max)) - x[target]` per row (torch: `logsumexp`), 0 where
  the target is outside [0, V);
* `embedding` gives the table row of each index, a zero row for an index outside [0, V); a rank of a
  vocab-split table (rows S(0)) holds the rows [lo, hi) of the global table and looks up only
  those (Megatron's masking), so the ranks' results sum to the lookup;
* `concat`, `slice`, `broadcast_to`, `where`, `dropout` (the identity) move elements exactly.

torch equals numpy bit for bit on the data-movement ops; the float ones are torch's own kernels
(`torch_rounds_differently`), compared within `--check`'s bounds (`runtime/error_bounds_nn.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from sbpc.dialects import sbp_ops_nn as nn
from sbpc.dialects.collectives import Coord
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import lookup_placement_named
from sbpc.dialects.sbp import SignatureAttr, SplitAttr
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sharding import local_slices
from sbpc.runtime.op_registry import OpImpl, impl
from sbpc.runtime.ops_numpy import same_dtype, wide

if TYPE_CHECKING:
    import torch


def vocab_range(op: nn.VocabParallelOp, coord: Coord | None, local_extent: int) -> tuple[int, int]:
    """(the first global vocabulary index operand 0's shard holds on rank `coord`, the global
    vocabulary size): (0, the local extent) for the global value (coord None) and for a shard not
    split on the vocabulary axis."""
    if coord is None:
        return 0, local_extent
    axis = op.vocab_axis()
    ty = op.global_operand(0)
    if ty is None:
        if _splits_vocab(op):
            raise OpError(op, f"{describe_op(op)}: a per-rank vocab-split {op.name} needs its operands' global "
                          f"types ({nn.GLOBAL_OPERANDS}, which spmdize records)")
        return 0, local_extent
    placement = lookup_placement_named(op, ty.placement_name)
    if placement is None or ty.nd_sbp is None:
        raise OpError(op, f"{describe_op(op)}: operand 0's global type {ty} has no placement or SBP")
    return local_slices(ty.get_shape(), ty.nd_sbp, placement.get_hierarchy(), coord)[axis][0], ty.get_shape()[axis]


def _splits_vocab(op: nn.VocabParallelOp) -> bool:
    """Whether operand 0 is split on its vocabulary axis (its global type's SBP, else the signature's)."""
    ty = op.global_operand(0)
    sig = op.attributes.get("sbp.signature")
    nd = ty.nd_sbp if ty is not None else sig.inputs.data[0] if isinstance(sig, SignatureAttr) else None
    axis = op.vocab_axis()
    return nd is not None and any(isinstance(e, SplitAttr) and e.dim == axis for e in nd)  # type: ignore[union-attr]


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------


def _sigmoid(w: np.ndarray) -> np.ndarray:
    one = w.dtype.type(1.0)
    return one / (one + np.exp(-w))


@impl(nn.SigmoidOp)
class Sigmoid(OpImpl):
    """`1 / (1 + exp(-x))`, f16/bf16 in float32."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        return same_dtype(_sigmoid(wide(x)), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        return T.in_f32(lambda w: w.sigmoid(), *operands)


@impl(nn.TanhOp)
class Tanh(OpImpl):
    """`tanh(x)`, f16/bf16 in float32."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        return same_dtype(np.tanh(wide(x)), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        return T.in_f32(lambda w: w.tanh(), *operands)


@impl(nn.SiluOp)
class Silu(OpImpl):
    """`x · sigmoid(x)`, f16/bf16 in float32."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        w = wide(x)
        return same_dtype(w * _sigmoid(w), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        return T.in_f32(T.silu, *operands)


@impl(nn.DropoutOp)
class Dropout(OpImpl):
    """The identity (inference)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        return operands[0].copy()

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        return operands[0].clone()


# ---------------------------------------------------------------------------
# Normalisations
# ---------------------------------------------------------------------------


@impl(nn.SoftmaxOp)
class Softmax(OpImpl):
    """`exp(x - max) / Σ exp(x - max)` along `axis`, f16/bf16 in float32."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, nn.SoftmaxOp)
        (x,) = operands
        w = wide(x)
        axis = op.get_axis()
        e = np.exp(w - np.max(w, axis=axis, keepdims=True, initial=-np.inf))
        return same_dtype(e / np.sum(e, axis=axis, keepdims=True), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, nn.SoftmaxOp)
        axis = op.get_axis()
        return T.in_f32(lambda w: w.softmax(axis), *operands)


@impl(nn.RmsNormOp)
class RmsNorm(OpImpl):
    """`x / sqrt(mean(x², last axis) + eps) · gamma`, f16/bf16 in float32."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, nn.RmsNormOp)
        x, gamma = (wide(v) for v in operands)
        eps = x.dtype.type(op.get_epsilon())
        mean_square = (x * x).mean(axis=-1, keepdims=True)
        return same_dtype(x / np.sqrt(mean_square + eps) * gamma, operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, nn.RmsNormOp)
        eps = op.get_epsilon()
        return T.in_f32(lambda x, g: T.rms_norm_last(x, g, eps), *operands)


# ---------------------------------------------------------------------------
# Lookups
# ---------------------------------------------------------------------------


@impl(nn.EmbeddingOp)
class Embedding(OpImpl):
    """The rows of the table at the indices (zero outside the rows this shard holds)."""

    rank_dependent = True

    def numpy(self, op: Operation, operands: list[np.ndarray], coord: Coord | None = None) -> np.ndarray:
        assert isinstance(op, nn.EmbeddingOp)
        table, indices = operands
        local = indices.astype(np.int64) - vocab_range(op, coord, table.shape[0])[0]
        held = (local >= 0) & (local < table.shape[0])
        rows = table[np.where(held, local, 0)] if table.shape[0] else np.zeros((*local.shape, table.shape[1]),
                                                                                 table.dtype)
        return np.where(held[..., None], rows, np.zeros((), table.dtype)).astype(table.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor], coord: Coord | None = None) -> torch.Tensor:
        import torch

        assert isinstance(op, nn.EmbeddingOp)
        table, indices = operands
        local = indices.long() - vocab_range(op, coord, table.shape[0])[0]
        held = (local >= 0) & (local < table.shape[0])
        if table.shape[0] == 0:
            return table.new_zeros((*local.shape, table.shape[1]))
        rows = table[torch.where(held, local, torch.zeros_like(local))]
        return torch.where(held.unsqueeze(-1), rows, table.new_zeros(()))


def _whole_rows(op: nn.CrossEntropyOp, coord: Coord | None) -> None:
    """A shard of vocab-split logits cannot give its rows' loss alone (materialize-boxing expands such
    a cross-entropy into the vocab-parallel steps)."""
    if coord is not None and _splits_vocab(op):
        raise OpError(op, f"{describe_op(op)}: vocab-split logits need the vocab-parallel steps: run "
                      "materialize-boxing before running the program")


@impl(nn.CrossEntropyOp)
class CrossEntropy(OpImpl):
    """Per row `max + log(Σ exp(x - max)) - x[target]`, f16/bf16 in float32; 0 for a target outside [0, V)."""

    torch_rounds_differently = True
    rank_dependent = True  # only to refuse a vocab-split shard

    def numpy(self, op: Operation, operands: list[np.ndarray], coord: Coord | None = None) -> np.ndarray:
        assert isinstance(op, nn.CrossEntropyOp)
        _whole_rows(op, coord)
        logits, targets = operands
        w = wide(logits)
        t = targets.astype(np.int64)
        valid = (t >= 0) & (t < w.shape[-1])
        m = np.max(w, axis=-1, keepdims=True, initial=-np.inf)
        lse = (m + np.log(np.sum(np.exp(w - m), axis=-1, keepdims=True)))[..., 0]
        picked = np.take_along_axis(w, np.where(valid, t, 0)[..., None], axis=-1)[..., 0] if w.shape[-1] else lse
        return same_dtype(np.where(valid, lse - picked, w.dtype.type(0)), logits.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor], coord: Coord | None = None) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, nn.CrossEntropyOp)
        _whole_rows(op, coord)
        return T.in_f32(T.cross_entropy_rows, operands[0], operands[1])


@impl(nn.CrossEntropyFromStatsOp)
class CrossEntropyFromStats(OpImpl):
    """`m + log(s) - x[target]` per row (the row terms on the shard holding the first vocabulary index,
    the target logit where the shard holds it), f16/bf16 in float32; 0 for a target outside [0, V)."""

    torch_rounds_differently = True
    rank_dependent = True

    def numpy(self, op: Operation, operands: list[np.ndarray], coord: Coord | None = None) -> np.ndarray:
        assert isinstance(op, nn.CrossEntropyFromStatsOp)
        logits, targets, row_max, row_sum = operands
        w = wide(logits)
        lo, vocab = vocab_range(op, coord, w.shape[-1])
        t = targets.astype(np.int64)
        local = t - lo
        held = (local >= 0) & (local < w.shape[-1])
        picked = np.take_along_axis(w, np.where(held, local, 0)[..., None], axis=-1)[..., 0] if w.shape[-1] else \
            np.zeros(t.shape, w.dtype)
        picked = np.where(held, picked, w.dtype.type(0))
        lse = (wide(row_max) + np.log(wide(row_sum)))[..., 0]
        terms = lse - picked if lo == 0 else -picked
        return same_dtype(np.where((t >= 0) & (t < vocab), terms, w.dtype.type(0)), logits.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor], coord: Coord | None = None) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, nn.CrossEntropyFromStatsOp)
        lo, vocab = vocab_range(op, coord, operands[0].shape[-1])
        return T.in_f32(lambda w, t, m, s: T.cross_entropy_from_stats(w, t, m, s, lo, vocab), *operands)


# ---------------------------------------------------------------------------
# Data movement and selection
# ---------------------------------------------------------------------------


@impl(nn.ConcatOp)
class Concat(OpImpl):
    """The inputs one after the other along `axis`."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, nn.ConcatOp)
        return np.concatenate(operands, axis=op.get_axis())

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        import torch

        assert isinstance(op, nn.ConcatOp)
        return torch.cat(operands, dim=op.get_axis())


def _slices(op: Operation) -> tuple[slice, ...]:
    """`start:stop:step` per axis; on a shard of an unsliced split axis, 0:extent:1 keeps it whole."""
    assert isinstance(op, nn.SliceOp)
    return tuple(slice(a, b, s) for a, b, s in zip(*op.get_bounds(), strict=True))


@impl(nn.SliceOp)
class Slice(OpImpl):
    """`x[start:stop:step]`, stored contiguously."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        return np.ascontiguousarray(operands[0][_slices(op)])

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        return operands[0][_slices(op)].contiguous()


@impl(nn.WhereOp)
class Where(OpImpl):
    """`cond ? x : y` with broadcasting."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        cond, x, y = operands
        return np.where(cond.astype(bool), x, y).astype(x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        import torch

        cond, x, y = operands
        return torch.where(cond.bool(), x, y).to(x.dtype)


def broadcast_local_shape(op: Operation, x_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape a shard of `x` broadcasts to: an axis `x` has at full extent keeps the shard's
    extent (it may be split), the others take the result's (broadcast axes are never split)."""
    src = tuple(op.operands[0].type.get_shape())  # type: ignore[attr-defined]
    out = tuple(op.results[0].type.get_shape())  # type: ignore[attr-defined]  (static where x broadcasts)
    lead = len(out) - len(src)
    return tuple(x_shape[k - lead] if k >= lead and src[k - lead] == out[k] else out[k] for k in range(len(out)))


@impl(nn.BroadcastToOp)
class BroadcastTo(OpImpl):
    """`x` broadcast to the result's shape, stored contiguously."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        return np.broadcast_to(x, broadcast_local_shape(op, x.shape)).copy()

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        (x,) = operands
        return x.expand(broadcast_local_shape(op, tuple(x.shape))).contiguous()
