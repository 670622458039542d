"""numpy mechanics of the op impls (`runtime/op_impls.py`, where each op's meaning lives): element types
and their numpy dtypes, reading op properties, scalars cast to a tensor's dtype, and the C integer
division and remainder, fmod and casts that several ops share.

dtypes are `dialects.dtypes`'s (f32 -> float32, bf16 -> ml_dtypes.bfloat16, i16 -> int16, ...). A
numpy `Kernel` is `kernel(op, operands) -> np.ndarray`, the form of `OpImpl.numpy` and of the
`--kernels` overrides.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation

from sbpc.dialects import dtypes
from sbpc.dialects.tensor_type import GlobalTensorType

BF16 = dtypes.named("bf16").numpy_dtype()
F32 = dtypes.named("f32").numpy_dtype()
LOW_FLOATS = (dtypes.named("f16").numpy_dtype(), BF16)

Kernel = Callable[[Operation, list[np.ndarray]], np.ndarray]


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


def np_dtype(element_type: Attribute) -> np.dtype:
    """numpy dtype of an element type (f32, f16, bf16, i8, ui8, i1, i16, i32, i64)."""
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
    if dtype == np.bool_:
        return np.asarray(bool(value), dtype=dtype)  # nonzero is true, as a C++ cast to bool
    if is_integer(dtype):
        if isinstance(value, float):
            if not np.isfinite(value):
                return np.zeros((), dtype)
            value = int(value)  # truncation toward zero, as a C cast
        bits = dtype.itemsize * 8
        low = int(np.iinfo(dtype).min)  # 0 for unsigned types, -2^(bits-1) for signed ones
        wrapped = (value - low) % (1 << bits) + low
        return np.asarray(wrapped, dtype=dtype)
    return np.asarray(value, dtype=np.float64).astype(dtype)


# ---------------------------------------------------------------------------
# Arithmetic helpers
# ---------------------------------------------------------------------------


def same_dtype(out: np.ndarray | np.generic, dtype: np.dtype) -> np.ndarray:
    """`out` as an array of `dtype` (numpy promotes 0-d and mixed results; the ops keep their dtype)."""
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
    return same_dtype(np.fmod(a, b), dtype)


def wide(x: np.ndarray) -> np.ndarray:
    """f16/bf16 in float32 (as every low-float op computes), other dtypes as they are."""
    return x.astype(F32) if x.dtype in LOW_FLOATS else x


def cast_array(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Element type conversion (float -> int truncates toward zero; bf16 goes through float32)."""
    if x.dtype == dtype:
        return x.copy()
    if x.dtype == BF16 or dtype == BF16:
        return x.astype(F32).astype(dtype)
    return x.astype(dtype)


def batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.matmul; a stack of matrices times one matrix runs as one GEMM (numpy loops per matrix)."""
    if a.ndim > 2 and b.ndim == 2:
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(*a.shape[:-1], b.shape[-1])
    return np.matmul(a, b)
