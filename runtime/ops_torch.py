"""The compute ops of SPEC §2.4 on torch tensors, with `runtime.ops_numpy`'s semantics.

One kernel per op name, `kernel(operands, op) -> torch.Tensor`, as in `ops_numpy` (whose docstring
states the numeric conventions; the helpers for types, properties and scalars are read from there).
Element types map to torch's: f32, f16, torch.bfloat16, int8/16/32/64.

Bit for bit equal to numpy: elementwise arithmetic (IEEE, f16/bf16 rounded once from float32),
integer wrap-around and C division/remainder (guarded, since a torch integer division by 0 raises
and INT_MIN / -1 traps), fmod (C fmod), maximum/minimum/relu (NaN propagates), casts, max/min
reductions, transpose and reshape (a NaN may differ in sign: fmod by 0 is -NaN in numpy, +NaN in torch;
NaN is compared as NaN). Not bit for bit: `exp` of floats (torch's vectorised exp differs
from numpy's in the last ulp on ~40 % of f32 inputs), `gelu` and `layer_norm` (torch's own kernels,
another evaluation order) and float `matmul` / `reduce_sum` (another summation order). Those are
listed in `ROUNDS_DIFFERENTLY`; `--check` compares them within its per-dtype tolerance, as the
simulator does for summation order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from xdsl.ir import Operation

from sbpc.dialects.sbp_ops import LayerNormOp, ReshapeOp
from sbpc.runtime import ops_numpy
from sbpc.runtime.ops_numpy import BF16, has_flag, int_property, result_dtype, result_shape, scalar_as, scalar_value

TorchKernel = Callable[[list[torch.Tensor], Operation], torch.Tensor]

ROUNDS_DIFFERENTLY = frozenset({"sbp.exp", "sbp.gelu", "sbp.layer_norm", "sbp.matmul", "sbp.reduce_sum"})
"""Ops whose float results may differ from numpy's in the last bits."""

_TORCH_DTYPES: dict[np.dtype, torch.dtype] = {
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float16): torch.float16,
    BF16: torch.bfloat16,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
}
_NUMPY_DTYPES: dict[torch.dtype, np.dtype] = {t: n for n, t in _TORCH_DTYPES.items()}
_LOW = (torch.float16, torch.bfloat16)


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


def _scalar(value: int | float, like: torch.Tensor) -> torch.Tensor:
    """The op's scalar rounded to the tensor's dtype exactly as `ops_numpy.scalar_as` does."""
    return to_torch(scalar_as(value, _NUMPY_DTYPES[like.dtype]).reshape(1)).reshape(())


def _integer(t: torch.Tensor) -> bool:
    return not t.dtype.is_floating_point


def _in_f32(fn: Callable[..., torch.Tensor], *xs: torch.Tensor) -> torch.Tensor:
    """`fn` computed in float32 for f16/bf16 and cast back, as ops_numpy does."""
    dtype = xs[0].dtype
    if dtype in _LOW:
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
    if _integer(a):
        return int_fmod(a, b)
    return _in_f32(torch.fmod, a, b.expand_as(a) if b.dim() == 0 else b)


def _binary(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> TorchKernel:
    def kernel(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
        a, b = operands
        return fn(a, b).to(a.dtype)

    return kernel


def _div(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    a, b = operands
    return int_div(a, b) if _integer(a) else torch.true_divide(a, b).to(a.dtype)


def _fmod(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    return fmod_tensors(*operands)


def _fmod_scalar(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    return fmod_tensors(x, _scalar(scalar_value(op, "other"), x))


def _add_scalar(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    return (x + _scalar(scalar_value(op, "scalar"), x)).to(x.dtype)


def _mul_scalar(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    return (x * _scalar(scalar_value(op, "scalar"), x)).to(x.dtype)


def _relu(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    return torch.maximum(x, torch.zeros((), dtype=x.dtype))


def _neg(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    return torch.neg(x)


def _exp(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    if _integer(x):
        info = torch.iinfo(x.dtype)
        wide = torch.exp(x.double()).clamp(info.min, info.max)
        return torch.nan_to_num(wide, nan=0.0).to(x.dtype)
    return _in_f32(torch.exp, x)


def _gelu(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    return _in_f32(lambda w: torch.nn.functional.gelu(w, approximate="tanh"), x)


def _layer_norm(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    assert isinstance(op, LayerNormOp)
    eps = op.get_epsilon()
    return _in_f32(lambda x, g, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), g, b, eps), *operands)


def cast_tensor(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Element type conversion (float -> int truncates toward zero; bf16 goes through float32)."""
    if x.dtype == dtype:
        return x.clone()
    if torch.bfloat16 in (x.dtype, dtype):
        return x.float().to(dtype)
    return x.to(dtype)


def _cast(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    return cast_tensor(x, torch_dtype(result_dtype(op)))


def _matmul(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    a, b = operands
    if has_flag(op, "transpose_a"):
        a = a.transpose(-1, -2)
    if has_flag(op, "transpose_b"):
        b = b.transpose(-1, -2)
    if _integer(a):  # torch has no integer GEMM on every build; int64 accumulation wraps like numpy's
        return torch.matmul(a.long(), b.long()).to(a.dtype)
    return _in_f32(torch.matmul, a, b)


def _reduce_sum(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    axes, keepdims = int_property(op, "axes"), has_flag(op, "keepdims")
    if not axes:  # numpy's axis=() reduces nothing; torch's dim=() reduces everything
        return x.clone()
    if x.dtype in _LOW:
        return torch.sum(x.float(), dim=axes, keepdim=keepdims).to(x.dtype)
    return torch.sum(x, dim=axes, keepdim=keepdims, dtype=x.dtype)


def _extremum(maximum: bool) -> TorchKernel:
    def kernel(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
        (x,) = operands
        axes, keepdims = int_property(op, "axes"), has_flag(op, "keepdims")
        if not axes:
            return x.clone()
        dims = sorted(a % x.dim() for a in axes)
        if any(x.shape[d] == 0 for d in dims):  # torch refuses empty extents; numpy gives the identity
            shape = [1 if d in dims else n for d, n in enumerate(x.shape) if keepdims or d not in dims]
            fill = (torch.iinfo(x.dtype).min if maximum else torch.iinfo(x.dtype).max) if _integer(x) \
                else (-float("inf") if maximum else float("inf"))
            return torch.full(shape, fill, dtype=x.dtype)
        return (torch.amax if maximum else torch.amin)(x, dim=dims, keepdim=keepdims)

    return kernel


def _transpose(operands: list[torch.Tensor], op: Operation) -> torch.Tensor:
    (x,) = operands
    return x.permute(int_property(op, "perm")).contiguous()


def reshape(operands: list[torch.Tensor], op: Operation, shape: Sequence[int] | None = None) -> torch.Tensor:
    (x,) = operands
    target = tuple(shape) if shape is not None else result_shape(op)
    return x.reshape(target).clone()


KERNELS: dict[str, TorchKernel] = {
    "sbp.add": _binary(torch.add),
    "sbp.sub": _binary(torch.sub),
    "sbp.mul": _binary(torch.mul),
    "sbp.div": _div,
    "sbp.maximum": _binary(torch.maximum),
    "sbp.minimum": _binary(torch.minimum),
    "sbp.fmod": _fmod,
    "sbp.fmod_scalar": _fmod_scalar,
    "sbp.add_scalar": _add_scalar,
    "sbp.mul_scalar": _mul_scalar,
    "sbp.relu": _relu,
    "sbp.neg": _neg,
    "sbp.exp": _exp,
    "sbp.gelu": _gelu,
    "sbp.layer_norm": _layer_norm,
    "sbp.cast": _cast,
    "sbp.matmul": _matmul,
    "sbp.reduce_sum": _reduce_sum,
    "sbp.reduce_max": _extremum(True),
    "sbp.reduce_min": _extremum(False),
    "sbp.transpose": _transpose,
    "sbp.reshape": reshape,
}


def apply(
    op: Operation, operands: list[torch.Tensor], shape: Sequence[int] | None = None,
    numpy_kernels: dict[str, ops_numpy.Kernel] | None = None,
) -> torch.Tensor:
    """Run the compute op `op` on torch `operands` (`shape`: the local result shape of a reshape).

    `numpy_kernels` overrides an op with a numpy kernel (e.g. fmod through the Ascend C kernel),
    run on the tensors' numpy views."""
    if isinstance(op, ReshapeOp):
        return reshape(operands, op, shape)
    if numpy_kernels and op.name in numpy_kernels:
        with np.errstate(all="ignore"):
            return to_torch(np.asarray(numpy_kernels[op.name]([to_numpy(t) for t in operands], op)))
    kernel = KERNELS.get(op.name)
    if kernel is None:
        raise KeyError(op.name)
    return kernel(operands, op)
