"""ascendc/fmod_reference.py: the numpy emulation of the TBE fmod formula (docs/ascendc_design.md "Numerics")."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from sbpc.lowering.ascendc.fmod_reference import (
    cast_from_float32,
    fmod_scalar_reference,
    fmod_tensor_reference,
    round_scalar_to_dtype,
)

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
I16 = np.dtype(np.int16)
FLOATS = [BF16, F16, F32]
ALL = [*FLOATS, I16]


def f32(v: float) -> np.ndarray:
    return np.array([v], dtype=np.float32)


def one(a: np.ndarray) -> float:
    return float(np.asarray(a, dtype=np.float64).reshape(-1)[0])


# --- real values, exactly as fp32 arithmetic gives them -----------------------------------------------


def test_fmod_5_3_by_2_is_fp32_arithmetic():
    x = np.float32(5.3)
    expected = np.float32(x - np.float32(2.0) * np.float32(2.0))  # q = trunc(2.65) = 2
    got = fmod_tensor_reference(f32(5.3), f32(2.0))
    assert got.dtype == np.float32
    assert got[0] == expected
    assert abs(one(got) - 1.3) < 1e-6


@pytest.mark.parametrize(
    ("x", "y", "expected"),
    [(5.3, 2.0, 1.3), (-5.3, 2.0, -1.3), (5.3, -2.0, 1.3), (-5.3, -2.0, -1.3)],
)
def test_seed_sign_rules(x, y, expected):
    # seed 001: the result has the sign of self (truncated division), never of other
    got = one(fmod_tensor_reference(f32(x), f32(y)))
    assert got == pytest.approx(expected, abs=1e-6)
    assert math.copysign(1.0, got) == math.copysign(1.0, x)


@pytest.mark.parametrize("dtype", ALL)
def test_small_integers_all_dtypes(dtype):
    x = np.array([7, -7, 7, -7, 6, 1, 0], dtype=np.float32).astype(dtype)
    y = np.array([3, 3, -3, -3, 3, 5, 4], dtype=np.float32).astype(dtype)
    got = fmod_tensor_reference(x, y)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.astype(np.float64), [1, -1, 1, -1, 0, 1, 0])


def test_zero_result_is_positive_zero():
    # x - q*y with q*y == x exactly gives +0 (numpy.fmod gives -0.0 for fmod(-4, 2))
    got = fmod_tensor_reference(f32(-4.0), f32(2.0))
    assert got[0] == 0 and not np.signbit(got[0])
    # |x| < |y|: q = -0, x - (-0)*y = x keeps its sign
    got = fmod_tensor_reference(f32(-0.5), f32(2.0))
    assert got[0] == np.float32(-0.5)


# --- int16 ----------------------------------------------------------------------------------------------


def test_int16_min_by_minus_one_is_zero():
    got = fmod_tensor_reference(np.array([-32768], np.int16), np.array([-1], np.int16))
    assert got.dtype == np.int16 and got[0] == 0


def test_int16_divisor_zero_gives_zero():
    x = np.array([5, -5, 0, 32767, -32768], np.int16)
    got = fmod_tensor_reference(x, np.zeros(5, np.int16))
    np.testing.assert_array_equal(got, np.zeros(5, np.int16))


def test_int16_exact_against_numpy():
    rng = np.random.default_rng(16)
    x = rng.integers(-32768, 32768, size=20000).astype(np.int16)
    y = rng.integers(-32768, 32768, size=20000).astype(np.int16)
    y[:50] = -1
    y[50:100] = 1
    y[100:150] = -32768
    x[150:200] = -32768
    y[y == 0] = 7
    with np.errstate(all="ignore"):
        expected = np.fmod(x, y)
    np.testing.assert_array_equal(fmod_tensor_reference(x, y), expected)


def test_int16_cast_rint_saturates_and_nan_is_zero():
    r = np.array([np.nan, 1e9, -1e9, 32767.5, -32768.5, 2.5, 3.5, -2.5, np.inf, -np.inf], np.float32)
    got = cast_from_float32(r, I16)
    np.testing.assert_array_equal(got, [0, 32767, -32768, 32767, -32768, 2, 4, -2, 32767, -32768])


# --- special values -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_divisor_zero_is_nan(dtype):
    x = np.array([1.0, -1.0, 0.0, 3.5], np.float32).astype(dtype)
    got = fmod_tensor_reference(x, np.zeros(4, dtype))
    assert np.isnan(got.astype(np.float32)).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_other_inf_is_nan(dtype):
    # TBE semantics: 0 * inf = NaN (numpy/C would return self)
    x = np.array([1.0, -2.0, 0.0, 5.5], np.float32).astype(dtype)
    for inf in (np.inf, -np.inf):
        got = fmod_tensor_reference(x, np.full(4, inf, np.float32).astype(dtype))
        assert np.isnan(got.astype(np.float32)).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_self_inf_is_nan(dtype):
    x = np.array([np.inf, -np.inf], np.float32).astype(dtype)
    got = fmod_tensor_reference(x, np.array([2.0, -3.0], np.float32).astype(dtype))
    assert np.isnan(got.astype(np.float32)).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_propagates(dtype):
    nan = np.array([np.nan, 1.0], np.float32).astype(dtype)
    assert np.isnan(fmod_tensor_reference(nan, nan[::-1].copy()).astype(np.float32)).all()


# --- agreement with numpy.fmod where the quotient is small ----------------------------------------------


def _random(dtype: np.dtype, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-2, 4, n)).astype(np.float32).astype(dtype)
    y = (rng.standard_normal(n) * 10.0 ** rng.integers(-2, 3, n)).astype(np.float32).astype(dtype)
    y[y.astype(np.float32) == 0] = dtype.type(1.5)
    return x, y


@pytest.mark.parametrize("dtype", FLOATS)
def test_random_within_tolerance_of_numpy(dtype):
    rng = np.random.default_rng(2024)
    x, y = _random(dtype, 50000, rng)
    xf = x.astype(np.float64)
    yf = y.astype(np.float64)
    keep = np.abs(xf / yf) < 2.0**23
    x, y, xf, yf = x[keep], y[keep], xf[keep], yf[keep]
    got = fmod_tensor_reference(x, y).astype(np.float64)
    exact = np.fmod(xf, yf)  # exact in double for these inputs (fmod is exact)
    eps = float(np.finfo(np.float16).eps) if dtype == F16 else (2.0**-7 if dtype == BF16 else 2.0**-23)
    # fp32 rounding of q*y (~|x| 2^-24), then one rounding to T; a quotient that rounds up to an integer
    # shifts the result by one |y| (the modular equivalent near 0 instead of near ±y).
    tol = np.abs(xf) * 2.0**-22 + np.abs(exact) * eps + 1e-30
    diff = got - exact
    err = np.minimum(np.abs(diff), np.minimum(np.abs(diff - yf), np.abs(diff + yf)))
    bad = err > tol
    assert not bad.any(), list(zip(xf[bad][:5], yf[bad][:5], got[bad][:5], exact[bad][:5], strict=True))
    # and almost always the plain (non-modular) answer
    assert (np.abs(diff) <= tol).mean() > 0.999


def test_float32_bit_exact_formula():
    rng = np.random.default_rng(7)
    x, y = _random(F32, 10000, rng)
    q = np.trunc(x / y).astype(np.float32)
    expected = (x - (q * y).astype(np.float32)).astype(np.float32)
    np.testing.assert_array_equal(fmod_tensor_reference(x, y).view(np.uint32), expected.view(np.uint32))


@pytest.mark.parametrize("dtype", [BF16, F16])
def test_narrow_output_is_rne_of_fp32_result(dtype):
    rng = np.random.default_rng(3)
    x, y = _random(dtype, 10000, rng)
    r32 = fmod_tensor_reference(x.astype(np.float32), y.astype(np.float32))
    got = fmod_tensor_reference(x, y)
    np.testing.assert_array_equal(got.view(np.uint16), r32.astype(dtype).view(np.uint16))


# --- broadcasting and dtype rules -------------------------------------------------------------------------


def test_broadcast_other():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11
    y = np.array([[2.0], [3.0], [-5.0]], np.float32)
    got = fmod_tensor_reference(x, y)
    assert got.shape == x.shape
    np.testing.assert_array_equal(got, fmod_tensor_reference(x, np.broadcast_to(y, x.shape).copy()))
    np.testing.assert_array_equal(got, np.fmod(x, y) + 0.0)


def test_zero_d_and_empty():
    assert fmod_tensor_reference(np.float32(7.0), np.float32(4.0)).shape == ()
    assert fmod_tensor_reference(np.array(7.0, np.float32), np.array(4.0, np.float32)) == 3.0
    e = fmod_tensor_reference(np.zeros((0, 3), np.float16), np.ones(3, np.float16))
    assert e.shape == (0, 3) and e.dtype == np.float16


def test_bad_inputs():
    with pytest.raises(TypeError):
        fmod_tensor_reference(np.ones(3, np.float32), np.ones(3, np.float16))
    with pytest.raises(TypeError):
        fmod_tensor_reference(np.ones(3, np.float64), np.ones(3, np.float64))
    with pytest.raises(ValueError, match="broadcast"):
        fmod_tensor_reference(np.ones(3, np.float32), np.ones(4, np.float32))


# --- FmodScalar -------------------------------------------------------------------------------------------


def test_scalar_rounded_to_self_dtype_first():
    # 0.1 as float16 is 0.0999755859375 (NEP 50), and the kernel divides by that value
    assert round_scalar_to_dtype(0.1, F16) == 0.0999755859375
    x = np.array([1.0, 0.3, -0.25], np.float16)
    got = fmod_scalar_reference(x, 0.1)
    np.testing.assert_array_equal(got, fmod_tensor_reference(x, np.full(3, 0.1, np.float16)))
    assert got.dtype == np.float16


SCALARS = [1e-30, 3.0e38, -7.25, 65519.0, 65520.0, 65535.0, 1e-8, 6e-8, 1.0 + 2.0**-11, 0.1, -1e5]


@pytest.mark.parametrize("dtype", [F16, F32])
def test_scalar_rounding_matches_numpy_direct_cast(dtype):
    # numpy converts a double to float16 / float32 directly (one correct rounding)
    rng = np.random.default_rng(11)
    with np.errstate(over="ignore"):
        for v in [*(rng.standard_normal(300) * 10.0 ** rng.integers(-8, 6, 300)), *SCALARS]:
            assert round_scalar_to_dtype(float(v), dtype) == float(np.array(v, np.float64).astype(dtype))


def test_scalar_bf16_rounding_is_nearest_even():
    # every finite bf16 value, sorted: the rounded scalar must be the nearest one (ties: even mantissa)
    bits = np.arange(0, 0x10000, dtype=np.uint32).astype(np.uint16)
    with np.errstate(invalid="ignore"):
        vals = bits.view(BF16).astype(np.float64)
    finite = np.isfinite(vals)
    table, tbits = vals[finite], bits[finite]
    order = np.argsort(table, kind="stable")
    table, tbits = table[order], tbits[order]
    rng = np.random.default_rng(12)
    for v in [*(rng.standard_normal(300) * 10.0 ** rng.integers(-30, 30, 300)), *SCALARS]:
        got = round_scalar_to_dtype(float(v), BF16)
        i = int(np.searchsorted(table, v))
        lo, hi = table[max(i - 1, 0)], table[min(i, len(table) - 1)]
        if lo == v or hi == v:
            assert got == v
            continue
        dlo, dhi = v - lo, hi - v
        if dlo != dhi:
            assert got == (lo if dlo < dhi else hi)
        else:
            even = lo if tbits[max(i - 1, 0)] % 2 == 0 else hi
            assert got == even


def test_scalar_bf16_rounding_is_direct_from_double():
    # 1 + 2^-8 + 2^-40: a float32 detour rounds to the tie 1 + 2^-8 and then to 1.0; correctly rounded is 1 + 2^-7
    v = 1.0 + 2.0**-8 + 2.0**-40
    assert round_scalar_to_dtype(v, BF16) == 1.0 + 2.0**-7
    assert round_scalar_to_dtype(1.0 + 2.0**-8, BF16) == 1.0  # tie to even
    assert round_scalar_to_dtype(3.0e38, BF16) == float(np.float32(3.0e38).astype(BF16))
    assert math.isinf(round_scalar_to_dtype(3.4e38, BF16))  # beyond bf16 max + half ulp


def test_scalar_int16_rules():
    assert round_scalar_to_dtype(3, I16) == 3.0
    assert round_scalar_to_dtype(2.9, I16) == 2.0  # trunc toward zero
    assert round_scalar_to_dtype(-2.9, I16) == -2.0
    with pytest.raises(OverflowError):
        round_scalar_to_dtype(40000, I16)
    with pytest.raises(ValueError, match="non-finite"):
        round_scalar_to_dtype(float("nan"), I16)
    x = np.array([7, -7, 100], np.int16)
    np.testing.assert_array_equal(fmod_scalar_reference(x, 3), [1, -1, 1])
    np.testing.assert_array_equal(fmod_scalar_reference(x, 0), [0, 0, 0])


def test_scalar_specials():
    x = np.array([1.0, -1.0], np.float32)
    assert np.isnan(fmod_scalar_reference(x, 0.0)).all()
    assert np.isnan(fmod_scalar_reference(x, float("inf"))).all()
    np.testing.assert_array_equal(fmod_scalar_reference(np.array([5.5], np.float32), np.float32(2.0)), [1.5])
