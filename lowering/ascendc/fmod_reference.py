"""numpy emulation of the TBE fmod formula (docs/ascendc_design.md "Numerics"): the bit-exact target of the
Ascend C kernels run on the CPU shim.

For self/other of dtype T in {bfloat16, float16, float32, int16}, in float32 numpy arithmetic:

1. ``x = float32(self)``, ``y = float32(broadcast(other))``   (exact widening; Cast CAST_NONE)
2. ``q = x / y``                                               (IEEE fp32 division, Div)
3. ``q = trunc(q)``                                            (Cast<float,float> CAST_TRUNC)
4. ``r = x - q * y``                                           (Mul, then Sub: two roundings, no FMA)
5. ``out = T(r)``: float16 round-to-nearest-even (CAST_NONE = RINT), bfloat16 RNE (CAST_RINT, via
   ml_dtypes), int16 ``rint`` then saturation to [-32768, 32767] with NaN -> 0 (CAST_RINT; NaN -> 0 is
   the shim's documented choice).

Special values (all follow from IEEE fp32 arithmetic; they differ from C/numpy ``fmod`` where noted):

* ``other == 0``: ``x / 0`` is ±inf or NaN, ``trunc`` keeps it, ``inf * 0`` / ``x - inf`` give NaN, so the
  result is NaN for float types (numpy: NaN too) and 0 for int16 (NaN -> 0; numpy int16 fmod by 0 is 0).
* ``other == ±inf``: ``q = ±0``, ``0 * inf = NaN`` -> NaN (numpy/C return ``self``; the TBE kernel gives NaN).
* ``self == ±inf``: ``q = ±inf``, ``inf - inf`` -> NaN (numpy: NaN as well).
* NaN in either operand -> NaN (int16 inputs cannot be NaN).
* A result of zero is +0 when ``q * y`` equals ``x`` exactly (e.g. fmod(-4, 2) = +0.0, numpy gives -0.0);
  it keeps the sign of ``x`` only when ``q`` is ±0 (|x| < |y|: ``x - (±0) * y = x``).
* Accuracy: step 2 rounds, so when the exact quotient lies within half an ulp below an integer k the
  truncation gives k instead of k - 1 and the result is ``r - y`` (≈ 0 instead of ≈ ±y); step 4 rounds
  ``q * y``, an error up to ~|x|·2^-24. For |quotient| < 2^23 the result is within those bounds of the exact
  fmod; int16 is exact (|x|, |y| <= 2^15). The hardware's ~1 ulp Div can differ from this IEEE emulation near
  integer quotients (reference/ascendc.md §5, pitfall 7).

FmodScalar: the scalar is first rounded to self's dtype (aclnn ``.Scalar().To("self")``, numpy NEP 50 for
float types): correctly rounded (RNE, from the exact Python value) for float16/bfloat16/float32; for int16
an integral value must fit int16 (else OverflowError, like NEP 50), a non-integral float is truncated toward
zero (C++ static_cast, as aclScalar's ToInt16 does), a non-finite one is an error. `round_scalar_to_dtype`
returns that value as a Python float, which is what the host stores in the tiling field ``scalarOther``.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from sbpc.dialects import dtypes

__all__ = [
    "SUPPORTED_DTYPES",
    "cast_from_float32",
    "fmod_scalar_reference",
    "fmod_tensor_reference",
    "round_scalar_to_dtype",
]

SUPPORTED_DTYPES = tuple(t.numpy_dtype() for t in sorted(dtypes.FMOD_KERNEL_TYPES, key=lambda t: t.name))


def _float_format(dtype: np.dtype) -> tuple[int, int, float]:
    """(significand bits incl. the implicit one, minimum normal exponent, largest finite value)."""
    info = ml_dtypes.finfo(dtype)
    return info.nmant + 1, info.minexp, float(info.max)


def _check_dtype(dtype: np.dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"fmod kernels support bfloat16, float16, float32 and int16, not {dtype}")
    return dtype


def cast_from_float32(r: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The kernel's final Cast<T, float>: f16 RNE, bf16 RNE, int16 rint + saturation + NaN -> 0."""
    dtype = _check_dtype(dtype)
    r = np.asarray(r, dtype=np.float32)
    if dtype == np.float32:
        return r.copy()
    if dtype == np.int16:
        with np.errstate(invalid="ignore"):
            v = np.rint(r)
            v = np.where(np.isnan(v), np.float32(0), v)
            v = np.clip(v, -32768.0, 32767.0)
        return v.astype(np.int16)
    return r.astype(dtype)  # numpy float16 and ml_dtypes bfloat16 round to nearest even, NaN stays NaN


def _compute(x: np.ndarray, y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.divide(x, y, dtype=np.float32)
        q = np.trunc(q)
        q = np.multiply(q, y, dtype=np.float32)
        r = np.subtract(x, q, dtype=np.float32)
    return cast_from_float32(r, dtype)


def fmod_tensor_reference(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """FmodTensor: `other` (same dtype) broadcasts to self's shape; the result has self's shape and dtype."""
    self = np.asarray(self)
    other = np.asarray(other)
    dtype = _check_dtype(self.dtype)
    if other.dtype != dtype:
        raise TypeError(f"fmod: other has dtype {other.dtype}, self {dtype} (promote on the host first)")
    try:
        y_b = np.broadcast_to(other, self.shape)
    except ValueError as exc:
        raise ValueError(f"fmod: other of shape {other.shape} does not broadcast to self's {self.shape}") from exc
    x = self.astype(np.float32)
    y = y_b.astype(np.float32)
    return _compute(x, y, dtype)


def round_scalar_to_dtype(scalar: float | int | np.generic, dtype: np.dtype) -> float:
    """The FmodScalar scalar after `.Scalar().To("self")`, widened to a Python float (exact in float32)."""
    dtype = _check_dtype(dtype)
    if isinstance(scalar, np.generic):
        scalar = scalar.item()
    if isinstance(scalar, bool):
        scalar = int(scalar)
    if dtype == np.int16:
        if isinstance(scalar, float):
            if not math.isfinite(scalar):
                raise ValueError(f"fmod_scalar: non-finite scalar {scalar} for an int16 tensor")
            scalar = math.trunc(scalar)
        v = int(scalar)
        if not -32768 <= v <= 32767:
            raise OverflowError(f"fmod_scalar: Python integer {v} out of bounds for int16")
        return float(v)
    return _round_float(float(scalar), dtype)


def _round_float(v: float, dtype: np.dtype) -> float:
    """Round the exact double `v` to the float format `dtype`, ties to even, overflow to ±inf."""
    if not math.isfinite(v) or v == 0.0:
        return v
    p, emin, fmax = _float_format(dtype)
    _, e = math.frexp(v)  # v = m * 2**e, 0.5 <= |m| < 1  -> exponent of the leading bit is e - 1
    quantum_exp = max(e - 1, emin) - (p - 1)
    scaled = math.ldexp(v, -quantum_exp)  # exact (power-of-two scaling, no underflow for these formats)
    r = math.ldexp(float(round(scaled)), quantum_exp)  # round() on a float is ties-to-even
    if abs(r) > fmax:
        return math.copysign(math.inf, v)
    return r


def fmod_scalar_reference(self: np.ndarray, scalar: float | int | np.generic) -> np.ndarray:
    """FmodScalar: `scalar` rounded to self's dtype (see `round_scalar_to_dtype`), then the TBE formula."""
    self = np.asarray(self)
    dtype = _check_dtype(self.dtype)
    s = round_scalar_to_dtype(scalar, dtype)
    x = self.astype(np.float32)
    y = np.full(self.shape, s, dtype=np.float32)
    return _compute(x, y, dtype)
