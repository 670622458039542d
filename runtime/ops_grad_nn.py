"""What the gradients of the SPEC §7 ops (`dialects/sbp_ops_grad_nn.py`) compute, numpy and torch side by
side, registered by op class as `runtime/ops_grad.py`'s (imported there) and with its conventions (f16/bf16
in float32 and rounded back):

* rms_norm_grad / rms_norm_grad_gamma: the formulas of the ops' docstrings per row;
* embedding_grad: a scatter-add of dy's rows at the indices in index order (numpy `add.at`, torch
  `index_add_`), indices outside [0, V) skipped;
* cross_entropy_grad: `dloss · (exp(x - max) / sum - onehot)` on the vocabulary range [lo, hi) this shard
  holds (rank dependent, as `sbp.cross_entropy_from_stats`);
* slice_grad: dy written into zeros (exact); maximum_grad / minimum_grad: dy, dy/2 on ties, or 0 (exact).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from sbpc.dialects import sbp_ops_grad_nn as gn
from sbpc.dialects.collectives import Coord
from sbpc.runtime.op_registry import OpImpl, impl
from sbpc.runtime.ops_nn import vocab_range
from sbpc.runtime.ops_numpy import result_shape, same_dtype, wide

if TYPE_CHECKING:
    import torch


def rms_parts(x: np.ndarray, eps: float) -> np.ndarray:
    """1/√(mean(x²) + eps) per row of the last axis (a column), in x's dtype."""
    return x.dtype.type(1.0) / np.sqrt((x * x).mean(axis=-1, keepdims=True) + x.dtype.type(eps))


def _rms_grad_torch(dy: torch.Tensor, x: torch.Tensor, gamma: torch.Tensor | None, eps: float) -> torch.Tensor:
    """dx (gamma given) or dgamma (gamma None) of rms_norm, in torch."""
    r = ((x * x).mean(dim=-1, keepdim=True) + eps).rsqrt()
    if gamma is None:
        return (dy * x * r).reshape(-1, x.shape[-1]).sum(dim=0)
    gh = dy * gamma
    return r * (gh - x * (r * r) * (gh * x).mean(dim=-1, keepdim=True))


@impl(gn.RmsNormGradOp)
class RmsNormGrad(OpImpl):
    """`r·(ĝ - x·r²·mean(ĝ·x))` with ĝ = dy·gamma, per row."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, gn.RmsNormGradOp)
        dy, x, gamma = (wide(v) for v in operands)
        r = rms_parts(x, op.get_epsilon())
        gh = dy * gamma
        return same_dtype(r * (gh - x * (r * r) * (gh * x).mean(axis=-1, keepdims=True)), operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, gn.RmsNormGradOp)
        eps = op.get_epsilon()
        return T.in_f32(lambda dy, x, gamma: _rms_grad_torch(dy, x, gamma, eps), *operands)


@impl(gn.RmsNormGradGammaOp)
class RmsNormGradGamma(OpImpl):
    """`Σ_rows dy · x · r`; accumulates over the rows."""

    accumulates = True
    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, gn.RmsNormGradGammaOp)
        dy, x = (wide(v) for v in operands)
        r = rms_parts(x, op.get_epsilon())
        return same_dtype((dy * x * r).reshape(-1, x.shape[-1]).sum(axis=0), operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, gn.RmsNormGradGammaOp)
        eps = op.get_epsilon()
        return T.in_f32(lambda dy, x: _rms_grad_torch(dy, x, None, eps), *operands)


@impl(gn.EmbeddingGradOp)
class EmbeddingGrad(OpImpl):
    """dy's rows added at their indices into zeros of the result's (local) shape."""

    accumulates = True
    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        dy, indices = operands
        w = wide(dy)
        out = np.zeros(result_shape(op), w.dtype)
        idx = indices.astype(np.int64).reshape(-1)
        rows = w.reshape(-1, w.shape[-1])
        held = (idx >= 0) & (idx < out.shape[0])
        np.add.at(out, idx[held], rows[held])
        return same_dtype(out, dy.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        shape = result_shape(op)
        dy, indices = operands
        idx = indices.long().reshape(-1)
        held = (idx >= 0) & (idx < shape[0])
        return T.in_f32(lambda d: d.new_zeros(shape).index_add_(0, idx[held], d.reshape(-1, d.shape[-1])[held]), dy)


def _softmax_minus_onehot(w: np.ndarray, t: np.ndarray, dloss: np.ndarray, m: np.ndarray, s: np.ndarray,
                          lo: int, vocab: int) -> np.ndarray:
    p = np.exp(w - m) / s
    local = t - lo
    held = (local >= 0) & (local < w.shape[-1])
    onehot = (np.arange(w.shape[-1]) == np.where(held, local, -1)[..., None]).astype(w.dtype)
    valid = (t >= 0) & (t < vocab)
    return np.where(valid[..., None], dloss[..., None] * (p - onehot), w.dtype.type(0))


@impl(gn.CrossEntropyGradOp)
class CrossEntropyGrad(OpImpl):
    """`dloss · (softmax - onehot)` on this shard's vocabulary range; 0 on rows of a target outside [0, V)."""

    torch_rounds_differently = True
    rank_dependent = True

    def numpy(self, op: Operation, operands: list[np.ndarray], coord: Coord | None = None) -> np.ndarray:
        assert isinstance(op, gn.CrossEntropyGradOp)
        logits, targets, dloss, row_max, row_sum = operands
        w = wide(logits)
        lo, vocab = vocab_range(op, coord, w.shape[-1])
        out = _softmax_minus_onehot(w, targets.astype(np.int64), wide(dloss), wide(row_max), wide(row_sum), lo, vocab)
        return same_dtype(out, logits.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor], coord: Coord | None = None) -> torch.Tensor:
        import torch

        from sbpc.runtime import ops_torch as T

        assert isinstance(op, gn.CrossEntropyGradOp)
        logits, targets, dloss, row_max, row_sum = operands
        lo, vocab = vocab_range(op, coord, logits.shape[-1])
        t = targets.long()

        def grad(w: torch.Tensor, d: torch.Tensor, m: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
            p = torch.exp(w - m) / s
            local = t - lo
            held = (local >= 0) & (local < w.shape[-1])
            onehot = (torch.arange(w.shape[-1]) == torch.where(held, local, -1).unsqueeze(-1)).to(w.dtype)
            valid = ((t >= 0) & (t < vocab)).unsqueeze(-1)
            return torch.where(valid, d.unsqueeze(-1) * (p - onehot), torch.zeros((), dtype=w.dtype))

        return T.in_f32(grad, logits, dloss, row_max, row_sum)


def _slices(op: gn.SliceGradOp, shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The local positions dy goes to: the whole local extent on an axis the slice kept whole."""
    out_global = op.result.type.get_shape()  # type: ignore[attr-defined]
    found = []
    for a, b, s, d, n in zip(*op.get_bounds(), out_global, shape, strict=True):
        found.append(slice(0, n, 1) if (a, b, s) == (0, d, 1) else slice(a, b, s))
    return tuple(found)


@impl(gn.SliceGradOp)
class SliceGrad(OpImpl):
    """dy at the slice's positions of zeros of the result's (local) shape."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, gn.SliceGradOp)
        (dy,) = operands
        shape = result_shape(op)
        out = np.zeros(shape, dy.dtype)
        out[_slices(op, shape)] = dy
        return out

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        assert isinstance(op, gn.SliceGradOp)
        (dy,) = operands
        shape = result_shape(op)
        out = dy.new_zeros(shape)
        out[_slices(op, shape)] = dy
        return out


def _extremum_grad_numpy(dy: np.ndarray, wins: np.ndarray, ties: np.ndarray) -> np.ndarray:
    half = dy * dy.dtype.type(0.5)
    return np.where(wins, dy, np.where(ties, half, np.zeros((), dy.dtype))).astype(dy.dtype)


@impl(gn.MaximumGradOp)
class MaximumGrad(OpImpl):
    """dy where x > other, dy/2 where x == other, else 0 (torch's maximum backward)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        dy, x, other = operands
        return _extremum_grad_numpy(dy, x > other, x == other)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        import torch

        dy, x, other = operands
        return torch.where(x > other, dy, torch.where(x == other, dy * 0.5, torch.zeros((), dtype=dy.dtype)))


@impl(gn.MinimumGradOp)
class MinimumGrad(OpImpl):
    """dy where x < other, dy/2 where x == other, else 0 (torch's minimum backward)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        dy, x, other = operands
        return _extremum_grad_numpy(dy, x < other, x == other)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        import torch

        dy, x, other = operands
        return torch.where(x < other, dy, torch.where(x == other, dy * 0.5, torch.zeros((), dtype=dy.dtype)))
