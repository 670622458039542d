"""fmod means one thing per backend (issue 11, point 6; SPEC §2.4, §5).

* The IR's `sbp.fmod` / `sbp.fmod_scalar` (numpy kernels) is C fmod: the exact remainder, sign of self,
  f16/bf16 computed in f32 and rounded back, integer x fmod 0 = 0 — checked against Python's
  `math.fmod` (C fmod on doubles, exact for every value of these formats) where the TBE formula is far off.
* `sbp-run --kernels ascendc-cpu --check` checks the emitted kernels bit for bit against the TBE formula
  and prints their largest deviation from C fmod.
"""

from __future__ import annotations

import math
import re
import shutil

import ml_dtypes
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.ir import Operation
from xdsl.parser import Parser

from sbpc.dialects.context import register_dialects
from sbpc.lowering.ascendc.fmod_reference import fmod_tensor_reference
from sbpc.runtime import ops_numpy
from sbpc.runtime.ascendc_kernels import FmodDeviation
from sbpc.runtime.op_impls import run_numpy
from sbpc.tools.sbp_run import run_captured

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16]


def fmod_op(dtype: str, scalar: str | None = None) -> Operation:
    ty = f"!sbp.tensor<64x{dtype}, @p, [B]>"
    body = (f'%0 = "sbp.fmod_scalar"(%a) <{{other = {scalar}}}> : ({ty}) -> {ty}' if scalar is not None
            else f'%0 = "sbp.fmod"(%a, %b) : ({ty}, {ty}) -> {ty}')
    ctx = Context()
    register_dialects(ctx)
    module = Parser(ctx, f"""sbp.placement @p "cpu" [0, 1]
func.func @f(%a: {ty}, %b: {ty}) {{
  {body}
  func.return
}}""").parse_module()
    return next(op for op in module.walk() if op.name.startswith("sbp.fmod"))


def exact_fmod(a: np.ndarray, b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """C fmod element by element in double precision (exact), rounded to dtype (exact too)."""
    out = [math.fmod(x, y) if y != 0 and math.isfinite(x) else math.nan
           for x, y in zip(a.astype(np.float64).tolist(), b.astype(np.float64).tolist(), strict=True)]
    return np.array(out, np.float64).astype(dtype)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    nan = np.isnan(a.astype(np.float64))
    bits = np.uint16 if a.dtype.itemsize == 2 else np.uint32
    return bool(np.array_equal(nan, np.isnan(b.astype(np.float64)))
                and np.array_equal(a.view(bits)[~nan], b.view(bits)[~nan]))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_ir_fmod_is_the_exact_c_remainder(dtype: np.dtype) -> None:
    """Large quotients (up to 2^60), signs, zero and infinite divisors: the numpy kernel is C fmod bit for
    bit (sign of self, other = ±inf gives self), where the TBE formula differs."""
    rng = np.random.default_rng(0)
    with np.errstate(over="ignore"):  # f16 overflows to inf: C fmod of inf is NaN
        a = (rng.standard_normal(64) * np.exp2(rng.integers(0, 60, 64))).astype(np.float32).astype(dtype)
    b = rng.standard_normal(64).astype(np.float32).astype(dtype)
    a[:6] = np.array([-4.0, 5.0, -5.0, 7.5, 1.0, -0.0]).astype(dtype)
    b[:6] = np.array([2.0, np.inf, -np.inf, 0.0, -3.0, 2.0]).astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        got = run_numpy(fmod_op(ops_numpy.dtype_name(dtype)), [a, b])
        assert got.dtype == dtype
        assert same_bits(got, exact_fmod(a, b, dtype))
        assert np.signbit(got[0].astype(np.float32)) and got[1] == 5.0 and got[2] == -5.0 and np.isnan(got[3])
        tbe = fmod_tensor_reference(a, b)
    assert not same_bits(tbe, got)  # the two meanings really differ on these operands


@pytest.mark.parametrize("dtype", ["i16", "i32", "i64"])
def test_ir_fmod_of_integers_by_zero_is_zero(dtype: str) -> None:
    np_type = ops_numpy.np_dtype(ops_numpy.element_type_of(fmod_op(dtype).results[0].type))
    a = np.arange(-32, 32, dtype=np_type)
    b = np.resize(np.array([0, 3, -3, 7], np_type), 64)
    got = run_numpy(fmod_op(dtype), [a, b])
    expected = [0 if y == 0 else int(math.fmod(x, y)) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(run_numpy(fmod_op(dtype, f"0 : {dtype}"), [a]), np.zeros(64, np_type))


def test_deviation_counts_bits_and_reports_the_worst_element() -> None:
    op = fmod_op("f32")
    deviation = FmodDeviation()
    got = np.array([0.0, np.nan, 1.5, 0.25, np.nan], np.float32)  # +0 where C fmod gives -0; NaN for other=inf
    exact = np.array([-0.0, 5.0, 1.5, 0.2500001, np.nan], np.float32)
    deviation.record(op, got, exact)
    assert (deviation.elements, deviation.differing) == (5, 3)
    assert deviation.worst == math.inf
    line = deviation.line(lambda _: "prog.mlir:3:3")
    assert line == ("ascendc fmod vs C fmod: max abs deviation inf (at prog.mlir:3:3 sbp.fmod index [1]: ascendc nan, "
                    "C fmod 5.0), 3 of 5 elements differ")
    same = FmodDeviation()
    same.record(op, exact, exact)
    assert same.line(str) == "ascendc fmod vs C fmod: max abs deviation 0, 0 of 5 elements differ"


PROGRAM = """sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<6xf32, @p, [S(0)]>, %y: !sbp.tensor<6xf32, @p, [S(0)]>) -> !sbp.tensor<6xf32, @p> {
  %0 = sbp.fmod %x, %y : !sbp.tensor<6xf32, @p, [S(0)]>, !sbp.tensor<6xf32, @p, [S(0)]> -> !sbp.tensor<6xf32, @p>
  func.return %0 : !sbp.tensor<6xf32, @p>
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="the Ascend C CPU shim needs g++")
def test_sbp_run_with_ascendc_kernels_prints_the_deviation_from_c_fmod(tmp_path) -> None:
    program = tmp_path / "prog.mlir"
    program.write_text(PROGRAM)
    x = np.array([-4.0, 5.0, 7.0, 1e10, 0.5, 3.0], np.float32)
    y = np.array([2.0, np.inf, 2.0, 3.3, 0.25, -2.0], np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    out = tmp_path / "out"
    code, text = run_captured([str(program), "--check", "--kernels", "ascendc-cpu", "--save-outputs", str(out),
                               "--inputs", f"{tmp_path / 'x.npy'},{tmp_path / 'y.npy'}"])
    assert code == 0, text
    lines = text.splitlines()
    assert lines[-1].startswith("check: OK (result 0: ")  # C fmod to the TBE formula's rounding, either side of a jump
    assert lines[-2] == (f"ascendc fmod vs C fmod: max abs deviation inf (at {program}:3:3 sbp.fmod index [1]: "
                         "ascendc nan, C fmod 5.0), 3 of 6 elements differ")
    kernel = np.load(out / "result0.npy")
    assert same_bits(kernel, fmod_tensor_reference(x, y))
    c_fmod = np.fmod(x, y)
    differ = [i for i in range(6) if not same_bits(kernel[i : i + 1], c_fmod[i : i + 1])]
    assert differ == [0, 1, 3]  # +0 vs -0, NaN vs self, the rounded quotient of 1e10 / 3.3


@pytest.mark.skipif(shutil.which("g++") is None, reason="the Ascend C CPU shim needs g++")
def test_deviation_line_only_with_ascendc_kernels(tmp_path) -> None:
    program = tmp_path / "prog.mlir"
    program.write_text(PROGRAM)
    code, text = run_captured([str(program), "--check"])
    assert code == 0 and "C fmod" not in text, text
    code, text = run_captured([str(program), "--check", "--kernels", "ascendc-cpu", "--seed", "4"])
    assert code == 0, text
    assert re.search(r"^ascendc fmod vs C fmod: max abs deviation \S+( \(at .*\))?, \d+ of 6 elements differ$",
                     text, re.MULTILINE), text
