"""What the backward and optimizer ops of SPEC §8 (`dialects/sbp_ops_grad.py`) compute, on numpy arrays
and on torch tensors, registered by op class beside the forward ops' (`runtime/op_registry.py`).

Conventions as `runtime/op_impls.py`'s: f16/bf16 compute in float32 and round back; scalars (lr, betas,
eps) are Python floats applied as torch applies them, so that a step on the ranks lands within a few
roundings of torch.optim's own step. relu's gradient is 0 at x = 0 (torch's threshold_backward).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from sbpc.dialects import sbp_ops_grad as g
from sbpc.runtime import ops_grad_nn  # noqa: F401  (registers the gradients of the SPEC §7 ops)
from sbpc.runtime.op_registry import OpImpl, impl
from sbpc.runtime.ops_numpy import has_flag, int_property, result_shape, same_dtype, wide

if TYPE_CHECKING:
    import torch

GELU_C = math.sqrt(2.0 / math.pi)
GELU_K = 0.044715


def gelu_slope(w: np.ndarray) -> np.ndarray:
    """d gelu_tanh / dx at w (in w's dtype)."""
    t = w.dtype.type
    c, k = t(GELU_C), t(GELU_K)
    th = np.tanh(c * (w + k * w * w * w))
    return t(0.5) * (t(1.0) + th) + t(0.5) * w * (t(1.0) - th * th) * c * (t(1.0) + t(3.0) * k * w * w)


def layer_norm_parts(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(x̂, 1/σ) of layer_norm over the last axis (1/σ kept as a column)."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    rstd = x.dtype.type(1.0) / np.sqrt(var + x.dtype.type(eps))
    return centred * rstd, rstd


def adamw_factors(op: g.AdamwUpdateOp) -> tuple[float, float, float, float]:
    """(decay 1 - lr·wd, step size lr / (1 - β1^t), √(1 - β2^t), eps), as torch.optim.AdamW computes
    them in Python floats."""
    lr, b1, b2, eps, wd, step = op.hyper()
    return 1.0 - lr * wd, lr / (1.0 - b1**step), math.sqrt(1.0 - b2**step), eps


@impl(g.ReluGradOp)
class ReluGrad(OpImpl):
    """`dy` where `x > 0`, else 0."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        dy, x = operands
        return same_dtype(np.where(x > 0, dy, np.zeros((), dy.dtype)), dy.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        import torch

        dy, x = operands
        return torch.where(x > 0, dy, torch.zeros((), dtype=dy.dtype))


@impl(g.GeluGradOp)
class GeluGrad(OpImpl):
    """`dy · gelu'(x)` (tanh form); torch: aten.gelu_backward."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        dy, x = (wide(v) for v in operands)
        return same_dtype(dy * gelu_slope(x), operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        import torch

        from sbpc.runtime import ops_torch as T

        return T.in_f32(lambda dy, x: torch.ops.aten.gelu_backward(dy, x, approximate="tanh"), *operands)


def _layer_norm_grad_torch(dy: torch.Tensor, x: torch.Tensor, gamma: torch.Tensor | None, eps: float
                           ) -> torch.Tensor:
    """dx (gamma given) or dgamma (gamma None) by the formulas of the ops' docstrings, in torch."""
    mean = x.mean(dim=-1, keepdim=True)
    centred = x - mean
    rstd = ((centred * centred).mean(dim=-1, keepdim=True) + eps).rsqrt()
    xhat = centred * rstd
    if gamma is None:
        return (dy * xhat).reshape(-1, x.shape[-1]).sum(dim=0)
    gh = dy * gamma
    return rstd * (gh - gh.mean(dim=-1, keepdim=True) - xhat * (gh * xhat).mean(dim=-1, keepdim=True))


@impl(g.LayerNormGradOp)
class LayerNormGrad(OpImpl):
    """`(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)) / σ` with ĝ = dy·gamma, per row."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, g.LayerNormGradOp)
        dy, x, gamma = (wide(v) for v in operands)
        xhat, rstd = layer_norm_parts(x, op.get_epsilon())
        gh = dy * gamma
        dx = rstd * (gh - gh.mean(axis=-1, keepdims=True) - xhat * (gh * xhat).mean(axis=-1, keepdims=True))
        return same_dtype(dx, operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, g.LayerNormGradOp)
        eps = op.get_epsilon()
        return T.in_f32(lambda dy, x, gamma: _layer_norm_grad_torch(dy, x, gamma, eps), *operands)


@impl(g.LayerNormGradGammaOp)
class LayerNormGradGamma(OpImpl):
    """`Σ_rows dy · x̂`; accumulates over the rows."""

    accumulates = True
    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, g.LayerNormGradGammaOp)
        dy, x = (wide(v) for v in operands)
        xhat, _ = layer_norm_parts(x, op.get_epsilon())
        total = (dy * xhat).reshape(-1, x.shape[-1]).sum(axis=0)
        return same_dtype(total, operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, g.LayerNormGradGammaOp)
        eps = op.get_epsilon()
        return T.in_f32(lambda dy, x: _layer_norm_grad_torch(dy, x, None, eps), *operands)


def _expanded_shape(op: Operation, dy_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> tuple[int, ...]:
    """dy's shape with the reduced axes back as 1s (what broadcasts to the result)."""
    if has_flag(op, "keepdims"):
        return dy_shape
    axes = int_property(op, "axes")
    found, k = [], 0
    for i in range(len(out_shape)):
        if i in axes:
            found.append(1)
        else:
            found.append(dy_shape[k])
            k += 1
    return tuple(found)


@impl(g.ReduceSumGradOp)
class ReduceSumGrad(OpImpl):
    """dy broadcast back along the reduced axes to the result type's (local) shape."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (dy,) = operands
        out = result_shape(op)
        return np.broadcast_to(dy.reshape(_expanded_shape(op, dy.shape, out)), out).copy()

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        (dy,) = operands
        out = result_shape(op)
        return dy.reshape(_expanded_shape(op, tuple(dy.shape), out)).expand(out).clone()


@impl(g.ReduceExtremumGradOp)
class ReduceExtremumGrad(OpImpl):
    """`dy · (x == y) / count(x == y)` per reduced group (torch's amax/amin backward)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        dy, x, y = (wide(v) for v in operands)
        axes = int_property(op, "axes")
        keep = _expanded_shape(op, dy.shape, x.shape)
        mask = x == y.reshape(keep)
        count = mask.sum(axis=axes, keepdims=True).astype(x.dtype)
        with np.errstate(all="ignore"):
            spread = dy.reshape(keep) / np.maximum(count, x.dtype.type(1))
        return same_dtype(np.where(mask, spread, x.dtype.type(0)), operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        import torch

        from sbpc.runtime import ops_torch as T

        axes = int_property(op, "axes")

        def spread(dy: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            keep = _expanded_shape(op, tuple(dy.shape), tuple(x.shape))
            mask = x == y.reshape(keep)
            count = mask.sum(dim=axes, keepdim=True).to(x.dtype).clamp(min=1) if axes else mask.to(x.dtype)
            return torch.where(mask, dy.reshape(keep) / count, torch.zeros((), dtype=x.dtype))

        return T.in_f32(spread, *operands)


@impl(g.OnesLikeOp)
class OnesLike(OpImpl):
    """Ones of x's shape and dtype."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        return np.ones_like(operands[0])

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        import torch

        return torch.ones_like(operands[0])


@impl(g.SgdUpdateOp)
class SgdUpdate(OpImpl):
    """torch.optim.SGD: `d = g + wd·w` (when wd ≠ 0), then `w - lr·d`."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, g.SgdUpdateOp)
        w, grad = (wide(v) for v in operands)
        lr, wd = op.hyper()
        t = w.dtype.type
        d = grad + t(wd) * w if wd else grad
        return same_dtype(w + t(-lr) * d, operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, g.SgdUpdateOp)
        lr, wd = op.hyper()

        def step(w: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
            d = grad.add(w, alpha=wd) if wd else grad
            return w.add(d, alpha=-lr)

        return T.in_f32(step, *operands)


@impl(g.AdamMoment1Op)
class AdamMoment1(OpImpl):
    """torch's `lerp(m, g, w)` with `w = 1 - β` (< 0.5: `m + w·(g - m)`, else `g - (g - m)·(1 - w)`)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, g.AdamMoment1Op)
        m, grad = (wide(v) for v in operands)
        t = m.dtype.type
        weight = 1.0 - op.get_beta()
        if weight < 0.5:
            out = m + t(weight) * (grad - m)
        else:
            out = grad - (grad - m) * t(1.0 - weight)
        return same_dtype(out, operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, g.AdamMoment1Op)
        weight = 1.0 - op.get_beta()
        return T.in_f32(lambda m, grad: m.lerp(grad, weight), *operands)


@impl(g.AdamMoment2Op)
class AdamMoment2(OpImpl):
    """torch's `v.mul(β).addcmul(g, g, value=1 - β)`: `v·β + ((1-β)·g)·g`."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, g.AdamMoment2Op)
        v, grad = (wide(x) for x in operands)
        t = v.dtype.type
        beta = op.get_beta()
        return same_dtype(v * t(beta) + t(1.0 - beta) * grad * grad, operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, g.AdamMoment2Op)
        beta = op.get_beta()
        return T.in_f32(lambda v, grad: v.mul(beta).addcmul(grad, grad, value=1.0 - beta), *operands)


@impl(g.AdamwUpdateOp)
class AdamwUpdate(OpImpl):
    """torch.optim.AdamW's update from the new moments: `w·decay - step_size · m / (√v / √bc2 + eps)`."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, g.AdamwUpdateOp)
        w, m, v = (wide(x) for x in operands)
        decay, step_size, bc2_sqrt, eps = adamw_factors(op)
        t = w.dtype.type
        denom = np.sqrt(v) / t(bc2_sqrt) + t(eps)
        return same_dtype(w * t(decay) + t(-step_size) * m / denom, operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, g.AdamwUpdateOp)
        decay, step_size, bc2_sqrt, eps = adamw_factors(op)

        def update(w: torch.Tensor, m: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            denom = (v.sqrt() / bc2_sqrt).add(eps)
            return w.mul(decay).addcdiv(m, denom, value=-step_size)

        return T.in_f32(update, *operands)

