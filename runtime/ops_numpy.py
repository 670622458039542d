"""numpy semantics of the compute ops of SPEC §2.4, shared by the global reference and every rank.

One kernel per op name, `kernel(operands, op) -> np.ndarray`: `operands` are the op's operand values
(full arrays for the reference, one rank's local shards in the simulator) and `op` is the xDSL
operation, read only for its properties and its result element type. The result keeps the tensor's
dtype, `dialects.dtypes`'s numpy dtype (f32 -> float32, bf16 -> ml_dtypes.bfloat16, i16 -> int16, ...).

Numeric conventions (identical for the reference and the ranks, so distributed runs can be compared
bit for bit where no reduction order changes):

* integers wrap around on overflow (two's complement, as numpy and C in practice);
* integer `div` truncates toward zero like C; a divisor of 0 gives 0 (C leaves it undefined);
* `fmod` is C fmod, the exact remainder `self - trunc(self/other)*other` (no rounding anywhere, unlike
  the Ascend kernels' TBE formula, `lowering/ascendc/fmod_reference.py`): `np.fmod` for floats (the result takes
  the sign of self; other = 0 gives NaN, other = ±inf gives self); f16 and bf16 compute in float32 and
  cast back (exact: an fmod result is representable); integers use the C remainder with a divisor of 0
  giving 0 (numpy's choice, and what the Ascend int16 kernel documents);
* scalars of `fmod_scalar`, `add_scalar`, `mul_scalar` are first cast to the tensor's dtype (0.1 on
  f16 is 0.0999755859375, as aclnn `.Scalar().To("self")`), then applied;
* `matmul` and `reduce_sum` accumulate f16/bf16 in float32 then cast back; `exp` of f16/bf16 goes
  through float32, of integers through float64 clipped to the integer range (NaN -> 0);
* `gelu` (tanh form) and `layer_norm` (mean, biased variance over the last axis) compute f16/bf16
  in float32 and cast back;
* `reduce_max`/`reduce_min` over an empty extent give the reduction's identity (-inf/+inf, or the
  integer minimum/maximum), so a rank holding an empty split still yields a valid partial.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation

from sbpc.dialects import dtypes
from sbpc.dialects.sbp import GlobalTensorType
from sbpc.dialects.sbp_ops import LayerNormOp, ReshapeOp

BF16 = dtypes.named("bf16").numpy_dtype()
F32 = dtypes.named("f32").numpy_dtype()
LOW_FLOATS = (dtypes.named("f16").numpy_dtype(), BF16)

Kernel = Callable[[list[np.ndarray], Operation], np.ndarray]


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


def np_dtype(element_type: Attribute) -> np.dtype:
    """numpy dtype of an element type (f32, f16, bf16, i16, i32, i64)."""
    t = dtypes.of_xdsl(element_type)
    if t is None or t.numpy_name is None:
        raise ValueError(f"unsupported element type {element_type}")
    return t.numpy_dtype()


def dtype_name(dtype: np.dtype) -> str:
    """`f32`, `f16`, `bf16`, `i16`, ... as written in the IR (numpy's name for a dtype the IR has not)."""
    t = dtypes.of_numpy(dtype)
    return t.name if t is not None else dtype.name


def is_integer(dtype: np.dtype) -> bool:
    return bool(np.issubdtype(dtype, np.integer))


def element_type_of(ty: Attribute) -> Attribute:
    """Element type of an `!sbp.tensor` or a builtin `tensor<...>`."""
    if isinstance(ty, GlobalTensorType | TensorType):
        return ty.element_type
    raise ValueError(f"expected a tensor type, got {ty}")


def result_dtype(op: Operation, index: int = 0) -> np.dtype:
    return np_dtype(element_type_of(op.results[index].type))


def result_shape(op: Operation) -> tuple[int, ...]:
    """Static shape of the op's result type (global for `!sbp.tensor`, local for `tensor<...>`)."""
    ty = op.results[0].type
    if isinstance(ty, GlobalTensorType):
        return ty.get_shape()
    if isinstance(ty, TensorType):
        shape = tuple(ty.get_shape())
        if any(d < 0 for d in shape):
            raise ValueError(f"{op.name}: result type {ty} has dynamic dimensions; give the shape explicitly")
        return shape
    raise ValueError(f"{op.name}: expected a tensor result, got {ty}")


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


def _attr(op: Operation, name: str) -> Attribute | None:
    found = op.properties.get(name)
    return found if found is not None else op.attributes.get(name)


def int_property(op: Operation, name: str) -> tuple[int, ...]:
    attr = _attr(op, name)
    if not isinstance(attr, DenseArrayBase):
        raise ValueError(f"{op.name}: missing integer-array property '{name}'")
    return tuple(int(v) for v in attr.get_values())


def has_flag(op: Operation, name: str) -> bool:
    return _attr(op, name) is not None


def scalar_value(op: Operation, name: str) -> int | float:
    attr = _attr(op, name)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, IntegerAttr):
        return int(attr.value.data)
    raise ValueError(f"{op.name}: missing scalar property '{name}'")


def scalar_as(value: int | float, dtype: np.dtype) -> np.ndarray:
    """The scalar rounded (or truncated, or wrapped) to `dtype`, as a 0-d array."""
    if is_integer(dtype):
        if isinstance(value, float):
            if not np.isfinite(value):
                return np.zeros((), dtype)
            value = int(value)  # truncation toward zero, as a C cast
        bits = dtype.itemsize * 8
        wrapped = (value + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
        return np.asarray(wrapped, dtype=dtype)
    return np.asarray(value, dtype=np.float64).astype(dtype)


# ---------------------------------------------------------------------------
# Arithmetic helpers
# ---------------------------------------------------------------------------


def _same_dtype(out: np.ndarray | np.generic, dtype: np.dtype) -> np.ndarray:
    return np.asarray(out).astype(dtype, copy=False)


def int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C division of integers: truncate toward zero; a divisor of 0 gives 0; overflow wraps."""
    dtype = a.dtype
    zero = b == 0
    safe = np.where(zero, np.ones((), dtype), b).astype(dtype)
    q = np.floor_divide(a, safe)
    rem = a - q * safe
    q = q + ((rem != 0) & ((a < 0) != (safe < 0))).astype(dtype)
    return np.where(zero, np.zeros((), dtype), q).astype(dtype)


def int_fmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C remainder of integers (sign of the dividend); a divisor of 0 gives 0."""
    dtype = a.dtype
    zero = b == 0
    safe = np.where(zero, np.ones((), dtype), b).astype(dtype)
    return np.where(zero, np.zeros((), dtype), np.fmod(a, safe)).astype(dtype)


def fmod_arrays(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """FmodTensor semantics on arrays of the same dtype (b broadcast to a)."""
    dtype = a.dtype
    if is_integer(dtype):
        return int_fmod(a, b)
    if dtype in LOW_FLOATS:
        return np.fmod(a.astype(F32), b.astype(F32)).astype(dtype)
    return _same_dtype(np.fmod(a, b), dtype)


def _binary(ufunc: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Kernel:
    def kernel(operands: list[np.ndarray], op: Operation) -> np.ndarray:
        a, b = operands
        return _same_dtype(ufunc(a, b), a.dtype)

    return kernel


def _div(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    a, b = operands
    if is_integer(a.dtype):
        return int_div(*np.broadcast_arrays(a, b))
    return _same_dtype(np.true_divide(a, b), a.dtype)


def _fmod(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    a, b = operands
    return fmod_arrays(a, b)


def _fmod_scalar(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    return fmod_arrays(x, scalar_as(scalar_value(op, "other"), x.dtype))


def _add_scalar(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    return _same_dtype(x + scalar_as(scalar_value(op, "scalar"), x.dtype), x.dtype)


def _mul_scalar(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    return _same_dtype(x * scalar_as(scalar_value(op, "scalar"), x.dtype), x.dtype)


def _relu(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    return _same_dtype(np.maximum(x, np.zeros((), x.dtype)), x.dtype)


def _neg(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    return _same_dtype(np.negative(x), x.dtype)


def _exp(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    if is_integer(x.dtype):
        info = np.iinfo(x.dtype)
        wide = np.exp(x.astype(np.float64))
        return np.nan_to_num(np.clip(wide, info.min, info.max), nan=0).astype(x.dtype)
    if x.dtype in LOW_FLOATS:
        return np.exp(x.astype(F32)).astype(x.dtype)
    return _same_dtype(np.exp(x), x.dtype)


def _wide(x: np.ndarray) -> np.ndarray:
    """f16/bf16 in float32 (as every other low-float kernel computes), other floats as they are."""
    return x.astype(F32) if x.dtype in LOW_FLOATS else x


_GELU_C = float(np.sqrt(2.0 / np.pi))


def _gelu(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    w = _wide(x)
    c = w.dtype.type(_GELU_C)
    half, one, k = (w.dtype.type(v) for v in (0.5, 1.0, 0.044715))
    return _same_dtype(half * w * (one + np.tanh(c * (w + k * w * w * w))), x.dtype)


def _layer_norm(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    x, gamma, beta = (_wide(v) for v in operands)
    assert isinstance(op, LayerNormOp)
    eps = x.dtype.type(op.get_epsilon())
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return _same_dtype(centred / np.sqrt(var + eps) * gamma + beta, operands[0].dtype)


def cast_array(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Element type conversion (float -> int truncates toward zero; bf16 goes through float32)."""
    if x.dtype == dtype:
        return x.copy()
    if x.dtype == BF16 or dtype == BF16:
        return x.astype(F32).astype(dtype)
    return x.astype(dtype)


def _cast(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    return cast_array(x, result_dtype(op))


def _matmul(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    a, b = operands
    dtype = a.dtype
    if has_flag(op, "transpose_a"):
        a = np.swapaxes(a, -1, -2)
    if has_flag(op, "transpose_b"):
        b = np.swapaxes(b, -1, -2)
    if dtype in LOW_FLOATS:
        a, b = a.astype(F32), b.astype(F32)
    return _same_dtype(_batched_matmul(a, b), dtype)


def _batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.matmul; a stack of matrices times one matrix runs as one GEMM (numpy loops per matrix)."""
    if a.ndim > 2 and b.ndim == 2:
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(*a.shape[:-1], b.shape[-1])
    return np.matmul(a, b)


def _reduce_axes(op: Operation) -> tuple[tuple[int, ...], bool]:
    return int_property(op, "axes"), has_flag(op, "keepdims")


def _reduce_sum(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    axes, keepdims = _reduce_axes(op)
    if x.dtype in LOW_FLOATS:
        return np.sum(x.astype(F32), axis=axes, keepdims=keepdims).astype(x.dtype)
    return _same_dtype(np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype), x.dtype)


def _extremum(maximum: bool) -> Kernel:
    def kernel(operands: list[np.ndarray], op: Operation) -> np.ndarray:
        (x,) = operands
        axes, keepdims = _reduce_axes(op)
        if is_integer(x.dtype):
            info = np.iinfo(x.dtype)
            initial: int | float = int(info.min if maximum else info.max)
        else:
            initial = -np.inf if maximum else np.inf
        reduce = np.max if maximum else np.min
        return _same_dtype(reduce(x, axis=axes, keepdims=keepdims, initial=initial), x.dtype)

    return kernel


def _transpose(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    return np.ascontiguousarray(np.transpose(x, int_property(op, "perm")))


def reshape(operands: list[np.ndarray], op: Operation, shape: Sequence[int] | None = None) -> np.ndarray:
    """Row-major reshape to `shape` (default: the result type's static shape)."""
    (x,) = operands
    target = tuple(shape) if shape is not None else result_shape(op)
    return np.reshape(x, target).copy()


def _identity(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    (x,) = operands
    return x


KERNELS: dict[str, Kernel] = {
    "sbp.add": _binary(np.add),
    "sbp.sub": _binary(np.subtract),
    "sbp.mul": _binary(np.multiply),
    "sbp.div": _div,
    "sbp.maximum": _binary(np.maximum),
    "sbp.minimum": _binary(np.minimum),
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
    op: Operation, operands: list[np.ndarray], shape: Sequence[int] | None = None,
    kernels: dict[str, Kernel] | None = None,
) -> np.ndarray:
    """Run the compute op `op` on `operands` (`shape`: the local result shape of a reshape)."""
    name = op.name
    if isinstance(op, ReshapeOp):  # the one kernel that needs the rank's local result shape
        return reshape(operands, op, shape)
    kernel = (kernels or KERNELS).get(name) or KERNELS.get(name)
    if kernel is None:
        raise KeyError(name)
    with np.errstate(all="ignore"):
        return np.asarray(kernel(operands, op))
