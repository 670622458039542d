"""torch mechanics of the op impls (`runtime/op_impls.py`, where each op's meaning lives, numpy and torch
side by side): dtypes and numpy <-> torch conversion, scalars rounded as `ops_numpy.scalar_as` rounds them,
f16/bf16 computed in float32, and C integer division and remainder (guarded: a torch integer division by 0
raises and INT_MIN / -1 traps), fmod and casts. Element types map to torch's: f32, f16, torch.bfloat16,
int8/16/32/64, uint8, bool. Only the torch backend imports this module (torch is optional and slow to import).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from sbpc.runtime.ops_numpy import BF16, scalar_as

_TORCH_DTYPES: dict[np.dtype, torch.dtype] = {
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float16): torch.float16,
    BF16: torch.bfloat16,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.bool_): torch.bool,
}
_NUMPY_DTYPES: dict[torch.dtype, np.dtype] = {t: n for n, t in _TORCH_DTYPES.items()}
LOW_FLOATS = (torch.float16, torch.bfloat16)


def torch_dtype(dtype: np.dtype) -> torch.dtype:
    return _TORCH_DTYPES[np.dtype(dtype)]


def to_torch(arr: np.ndarray) -> torch.Tensor:
    """A torch tensor sharing (or copying) a numpy array; bf16 goes through its 16-bit pattern."""
    arr = np.asarray(arr)  # numpy scalars (0-d results) too
    arr = arr if arr.flags.c_contiguous else arr.copy()  # (np.ascontiguousarray makes 0-d arrays 1-d)
    if arr.dtype == BF16:
        return torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(arr)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """The numpy array of a CPU tensor (bf16 as ml_dtypes.bfloat16)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(BF16)
    return t.numpy()


def scalar(value: int | float, like: torch.Tensor) -> torch.Tensor:
    """The op's scalar rounded to the tensor's dtype exactly as `ops_numpy.scalar_as` does."""
    return to_torch(scalar_as(value, _NUMPY_DTYPES[like.dtype]).reshape(1)).reshape(())


def is_integer(t: torch.Tensor) -> bool:
    """Whether `t` holds integers (torch's dtypes here are floats or signed integers)."""
    return not t.dtype.is_floating_point


def in_f32(fn: Callable[..., torch.Tensor], *xs: torch.Tensor) -> torch.Tensor:
    """`fn` computed in float32 for f16/bf16 and cast back, as ops_numpy does."""
    dtype = xs[0].dtype
    if dtype in LOW_FLOATS:
        return fn(*(x.float() for x in xs)).to(dtype)
    return fn(*xs)


def int_div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C division: truncate toward zero; a divisor of 0 gives 0; INT_MIN / -1 wraps to INT_MIN."""
    a, b = torch.broadcast_tensors(a, b)
    zero, minus_one = b == 0, b == -1
    safe = torch.where(zero | minus_one, torch.ones((), dtype=b.dtype), b)
    q = torch.div(a, safe, rounding_mode="trunc")
    q = torch.where(minus_one, torch.neg(a), q)
    return torch.where(zero, torch.zeros((), dtype=a.dtype), q)


def int_fmod(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C remainder (sign of the dividend); a divisor of 0 (or -1, which traps in C) gives 0."""
    a, b = torch.broadcast_tensors(a, b)
    degenerate = (b == 0) | (b == -1)
    safe = torch.where(degenerate, torch.ones((), dtype=b.dtype), b)
    return torch.where(degenerate, torch.zeros((), dtype=a.dtype), torch.fmod(a, safe))


def fmod_tensors(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`ops_numpy.fmod_arrays` on tensors: C fmod, f16/bf16 in float32, the guarded integer remainder."""
    if is_integer(a):
        return int_fmod(a, b)
    return in_f32(torch.fmod, a, b.expand_as(a) if b.dim() == 0 else b)


def cast_tensor(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Element type conversion (float -> int truncates toward zero; bf16 goes through float32)."""
    if x.dtype == dtype:
        return x.clone()
    if torch.bfloat16 in (x.dtype, dtype):
        return x.float().to(dtype)
    return x.to(dtype)


def int_bounds(dtype: torch.dtype) -> tuple[int, int]:
    """The least and greatest value of an integer dtype."""
    info = torch.iinfo(dtype)
    return info.min, info.max


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """torch's own GeLU kernel, tanh form."""
    return torch.nn.functional.gelu(x, approximate="tanh")


def silu(x: torch.Tensor) -> torch.Tensor:
    """torch's own SiLU kernel."""
    return torch.nn.functional.silu(x)


def rms_norm_last(x: torch.Tensor, gamma: torch.Tensor, eps: float) -> torch.Tensor:
    """torch's own rms_norm over the last axis."""
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), gamma, eps)


def cross_entropy_rows(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per row `logsumexp(logits) - logits[target]`, 0 where the target is outside [0, V)."""
    t = targets.long()
    valid = (t >= 0) & (t < logits.shape[-1])
    if logits.shape[-1] == 0:
        return logits.new_zeros(t.shape)
    picked = logits.gather(-1, torch.where(valid, t, torch.zeros_like(t)).unsqueeze(-1)).squeeze(-1)
    return torch.where(valid, logits.logsumexp(-1) - picked, logits.new_zeros(()))


def cross_entropy_from_stats(logits: torch.Tensor, targets: torch.Tensor, row_max: torch.Tensor,
                             row_sum: torch.Tensor, lo: int, vocab: int) -> torch.Tensor:
    """`ops_nn.CrossEntropyFromStats` on tensors: the shard of logits holding [lo, lo + extent) of a
    vocabulary of `vocab` entries."""
    t = targets.long()
    local = t - lo
    held = (local >= 0) & (local < logits.shape[-1])
    zero = logits.new_zeros(())
    if logits.shape[-1]:
        picked = logits.gather(-1, torch.where(held, local, torch.zeros_like(local)).unsqueeze(-1)).squeeze(-1)
        picked = torch.where(held, picked, zero)
    else:
        picked = logits.new_zeros(t.shape)
    lse = (row_max + row_sum.log()).squeeze(-1)
    terms = lse - picked if lo == 0 else -picked
    return torch.where((t >= 0) & (t < vocab), terms, zero)


def layer_norm_last(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float) -> torch.Tensor:
    """torch's own layer_norm over the last axis."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, eps)
