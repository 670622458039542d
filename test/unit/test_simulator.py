"""The mesh simulator: numpy op semantics, lock-step execution of lowered programs, sbp-run's checks."""

# ruff: noqa: E501  (the IR programs below keep one op per line)

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from sbpc.dialects.collectives import mesh_coords, step_bytes_exact, step_kind
from sbpc.dialects.context import register_dialects
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import BROADCAST, PartialAttr, ReduceKind, SbpAttr, SplitAttr, partial, split
from sbpc.runtime import ops_numpy
from sbpc.runtime.distribute import ReplicaMismatch, assemble, distribute
from sbpc.runtime.op_impls import run_numpy
from sbpc.runtime.simulator import (
    compare,
    function_signature,
    modelled_bytes,
    reference,
    reorders_float_sums,
    simulate,
    total_sent,
)
from sbpc.tools import sbp_run

BF16 = ml_dtypes.bfloat16


def parse(text: str) -> ModuleOp:
    ctx = Context()
    register_dialects(ctx)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def first_op(text: str, name: str) -> Operation:
    module = parse(text)
    return next(op for op in module.walk() if op.name == name)


def unary_op(name: str, ty: str, props: str = "", result: str | None = None) -> Operation:
    result = result or ty
    return first_op(
        f"""sbp.placement @p "cpu" [0, 1]
        func.func @f(%x: {ty}) {{
          %0 = "{name}"(%x) {props} : ({ty}) -> {result}
          func.return
        }}""",
        name,
    )


def binary_op(name: str, lhs: str, rhs: str, result: str, props: str = "") -> Operation:
    return first_op(
        f"""sbp.placement @p "cpu" [0, 1]
        func.func @f(%a: {lhs}, %b: {rhs}) {{
          %0 = "{name}"(%a, %b) {props} : ({lhs}, {rhs}) -> {result}
          func.return
        }}""",
        name,
    )


def t(shape: str, elt: str, sbp: str = "B") -> str:
    return f"!sbp.tensor<{shape}x{elt}, @p, [{sbp}]>" if shape else f"!sbp.tensor<{elt}, @p, [{sbp}]>"


# ---------------------------------------------------------------------------
# op_impls (numpy)
# ---------------------------------------------------------------------------


def test_fmod_float_takes_the_sign_of_self() -> None:
    op = binary_op("sbp.fmod", t("4", "f32"), t("4", "f32"), t("4", "f32"))
    a = np.array([7.5, -7.5, 7.5, -7.5], np.float32)
    b = np.array([2, 2, -2, -2], np.float32)
    out = run_numpy(op, [a, b])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1.5, -1.5, 1.5, -1.5])
    zero = run_numpy(op, [a, np.zeros(4, np.float32)])
    assert np.isnan(zero).all()


def test_fmod_integer_is_c_remainder_and_zero_divisor_gives_zero() -> None:
    op = binary_op("sbp.fmod", t("6", "i16"), t("6", "i16"), t("6", "i16"))
    a = np.array([7, -7, 7, -7, 5, -32768], np.int16)
    b = np.array([2, 2, -2, -2, 0, -1], np.int16)
    out = run_numpy(op, [a, b])
    assert out.dtype == np.int16
    np.testing.assert_array_equal(out, [1, -1, 1, -1, 0, 0])


def test_fmod_broadcasts_other_to_self() -> None:
    op = binary_op("sbp.fmod", t("2x3", "i32"), t("3", "i32"), t("2x3", "i32"))
    a = np.array([[10, -10, 9], [4, 5, -6]], np.int32)
    out = run_numpy(op, [a, np.array([3, 4, 0], np.int32)])
    np.testing.assert_array_equal(out, [[1, -2, 0], [1, 1, 0]])


def test_fmod_bf16_computes_in_float32() -> None:
    op = binary_op("sbp.fmod", t("3", "bf16"), t("3", "bf16"), t("3", "bf16"))
    a = np.array([5.5, -5.5, 100.0], BF16)
    b = np.array([2.0, 2.0, 3.0], BF16)
    out = run_numpy(op, [a, b])
    assert out.dtype == np.dtype(BF16)
    np.testing.assert_array_equal(out.astype(np.float32), [1.5, -1.5, 1.0])


def test_fmod_scalar_rounds_the_scalar_to_the_tensor_dtype_first() -> None:
    op = unary_op("sbp.fmod_scalar", t("2", "f16"), "<{other = 0.1 : f32}>")
    x = np.array([1.0, -1.0], np.float16)
    out = run_numpy(op, [x])
    other = np.float32(np.float16(0.1))  # 0.0999755859375
    expected = np.fmod(x.astype(np.float32), other).astype(np.float16)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, expected)
    assert ops_numpy.scalar_as(0.1, np.dtype(np.float16)).item() == 0.0999755859375


def test_fmod_scalar_integer() -> None:
    op = unary_op("sbp.fmod_scalar", t("4", "i32"), "<{other = -3 : i32}>")
    out = run_numpy(op, [np.array([7, -7, 3, 0], np.int32)])
    np.testing.assert_array_equal(out, [1, -1, 0, 0])
    zero = unary_op("sbp.fmod_scalar", t("2", "i16"), "<{other = 0 : i16}>")
    np.testing.assert_array_equal(run_numpy(zero, [np.array([7, -7], np.int16)]), [0, 0])


def test_integer_div_truncates_toward_zero() -> None:
    op = binary_op("sbp.div", t("7", "i32"), t("7", "i32"), t("7", "i32"))
    a = np.array([7, -7, 7, -7, 6, 5, -(2**31)], np.int32)
    b = np.array([2, 2, -2, -2, 3, 0, -1], np.int32)
    out = run_numpy(op, [a, b])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [3, -3, -3, 3, 2, 0, -(2**31)])


def test_float_div_and_broadcasting_binary_ops() -> None:
    div = binary_op("sbp.div", t("2x2", "f32"), t("2", "f32"), t("2x2", "f32"))
    out = run_numpy(div, [np.array([[1, 2], [3, 4]], np.float32), np.array([2, 4], np.float32)])
    np.testing.assert_array_equal(out, [[0.5, 0.5], [1.5, 1.0]])
    for name, expected in (("sbp.add", [[3, 1]]), ("sbp.sub", [[-1, 3]]), ("sbp.mul", [[2, -2]]),
                           ("sbp.maximum", [[2, 2]]), ("sbp.minimum", [[1, -1]])):
        op = binary_op(name, t("1x2", "i16"), t("2", "i16"), t("1x2", "i16"))
        out = run_numpy(op, [np.array([[1, 2]], np.int16), np.array([2, -1], np.int16)])
        assert out.dtype == np.int16, name
        np.testing.assert_array_equal(out, expected, err_msg=name)


def test_integer_overflow_wraps() -> None:
    op = unary_op("sbp.add_scalar", t("2", "i16"), "<{scalar = 1 : i16}>")
    np.testing.assert_array_equal(run_numpy(op, [np.array([32767, 0], np.int16)]), [-32768, 1])


def test_scalar_ops_and_unary_ops() -> None:
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    add = unary_op("sbp.add_scalar", t("3", "f32"), "<{scalar = 2.5 : f32}>")
    mul = unary_op("sbp.mul_scalar", t("3", "f32"), "<{scalar = -2.0 : f32}>")
    np.testing.assert_array_equal(run_numpy(add, [x]), [1.0, 2.5, 4.5])
    np.testing.assert_array_equal(run_numpy(mul, [x]), [3.0, -0.0, -4.0])
    np.testing.assert_array_equal(run_numpy(unary_op("sbp.relu", t("3", "f32")), [x]), [0, 0, 2])
    np.testing.assert_array_equal(run_numpy(unary_op("sbp.neg", t("3", "f32")), [x]), [1.5, -0.0, -2])
    ex = run_numpy(unary_op("sbp.exp", t("3", "f32")), [x])
    assert ex.dtype == np.float32
    np.testing.assert_allclose(ex, np.exp(x.astype(np.float64)), rtol=1e-6)
    # an integer scalar on a float tensor and a float scalar on an integer tensor (truncated)
    add_int = unary_op("sbp.add_scalar", t("3", "f32"), "<{scalar = 2 : i32}>")
    np.testing.assert_array_equal(run_numpy(add_int, [x]), [0.5, 2.0, 4.0])
    mul_i = unary_op("sbp.mul_scalar", t("2", "i32"), "<{scalar = 2.9 : f32}>")
    np.testing.assert_array_equal(run_numpy(mul_i, [np.array([3, -4], np.int32)]), [6, -8])
    exp_i = run_numpy(unary_op("sbp.exp", t("3", "i32")), [np.array([0, 1, 100], np.int32)])
    np.testing.assert_array_equal(exp_i, [1, 2, 2**31 - 1])


def test_cast_truncates_and_converts_bf16() -> None:
    op = unary_op("sbp.cast", t("3", "f32"), result=t("3", "i32"))
    out = run_numpy(op, [np.array([2.7, -2.7, 0.5], np.float32)])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [2, -2, 0])
    to_bf16 = unary_op("sbp.cast", t("2", "i16"), result=t("2", "bf16"))
    out = run_numpy(to_bf16, [np.array([3, -257], np.int16)])
    assert out.dtype == np.dtype(BF16)
    np.testing.assert_array_equal(out.astype(np.float32), [3, -256])  # bf16 has 8 significant bits


def test_matmul_transposes_and_batch_broadcast() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 6, size=(2, 3, 4)).astype(np.int32)
    b = rng.integers(-5, 6, size=(5, 4)).astype(np.int32)
    op = binary_op("sbp.matmul", t("2x3x4", "i32"), t("5x4", "i32"), t("2x3x5", "i32"), "<{transpose_b}>")
    out = run_numpy(op, [a, b])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, a @ b.T)
    at = np.ascontiguousarray(np.swapaxes(a, -1, -2))  # 2x4x3
    op = binary_op("sbp.matmul", t("2x4x3", "i32"), t("4x5", "i32"), t("2x3x5", "i32"), "<{transpose_a}>")
    np.testing.assert_array_equal(run_numpy(op, [at, np.ascontiguousarray(b.T)]), a @ b.T)
    both = binary_op("sbp.matmul", t("4x3", "i32"), t("5x4", "i32"), t("3x5", "i32"), "<{transpose_a, transpose_b}>")
    np.testing.assert_array_equal(run_numpy(both, [at[0], b]), a[0] @ b.T)
    # batch broadcast: [2,1,3,4] x [3,4,2] -> [2,3,3,2]
    x = rng.integers(-3, 4, size=(2, 1, 3, 4)).astype(np.int64)
    y = rng.integers(-3, 4, size=(3, 4, 2)).astype(np.int64)
    op = binary_op("sbp.matmul", t("2x1x3x4", "i64"), t("3x4x2", "i64"), t("2x3x3x2", "i64"))
    np.testing.assert_array_equal(run_numpy(op, [x, y]), np.matmul(x, y))


def test_matmul_f16_accumulates_in_float32() -> None:
    a = np.full((1, 4096), 1.0, np.float16)
    b = np.full((4096, 1), 1.0, np.float16)
    op = binary_op("sbp.matmul", t("1x4096", "f16"), t("4096x1", "f16"), t("1x1", "f16"))
    out = run_numpy(op, [a, b])
    assert out.dtype == np.float16
    assert out.item() == 4096.0  # a float16 accumulator would stop at 2048


def test_reductions_axes_and_keepdims() -> None:
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    s = unary_op("sbp.reduce_sum", t("2x3x4", "i32"), "<{axes = array<i64: 0, 2>, keepdims}>", t("1x3x1", "i32"))
    out = run_numpy(s, [x])
    assert out.shape == (1, 3, 1) and out.dtype == np.int32
    np.testing.assert_array_equal(out, x.sum(axis=(0, 2), keepdims=True))
    m = unary_op("sbp.reduce_max", t("2x3x4", "i32"), "<{axes = array<i64: 1>}>", t("2x4", "i32"))
    np.testing.assert_array_equal(run_numpy(m, [x]), x.max(axis=1))
    n = unary_op("sbp.reduce_min", t("2x3x4", "i32"), "<{axes = array<i64: 2>}>", t("2x3", "i32"))
    np.testing.assert_array_equal(run_numpy(n, [x]), x.min(axis=2))
    # a rank holding an empty slice of the reduced axis yields the identity of the reduction
    f = unary_op("sbp.reduce_max", t("2x3", "f32"), "<{axes = array<i64: 1>}>", t("2", "f32"))
    np.testing.assert_array_equal(run_numpy(f, [np.zeros((2, 0), np.float32)]), [-np.inf, -np.inf])
    i = unary_op("sbp.reduce_min", t("2x3", "i16"), "<{axes = array<i64: 1>}>", t("2", "i16"))
    np.testing.assert_array_equal(run_numpy(i, [np.zeros((2, 0), np.int16)]), [32767, 32767])


def test_reduce_sum_f16_keeps_dtype() -> None:
    op = unary_op("sbp.reduce_sum", t("4096", "f16"), "<{axes = array<i64: 0>}>", t("", "f16"))
    out = run_numpy(op, [np.ones(4096, np.float16)])
    assert out.shape == () and out.dtype == np.float16 and out.item() == 4096.0


def test_transpose_and_reshape() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    tr = unary_op("sbp.transpose", t("2x3x4", "f32"), "<{perm = array<i64: 2, 0, 1>}>", t("4x2x3", "f32"))
    np.testing.assert_array_equal(run_numpy(tr, [x]), np.transpose(x, (2, 0, 1)))
    rs = unary_op("sbp.reshape", t("2x3x4", "f32"), result=t("6x4", "f32"))
    np.testing.assert_array_equal(run_numpy(rs, [x]), x.reshape(6, 4))
    # per rank: the local result shape is given explicitly
    np.testing.assert_array_equal(run_numpy(rs, [x[:1]], shape=(3, 4)), x[:1].reshape(3, 4))


def test_zero_d_results_are_arrays() -> None:
    op = binary_op("sbp.add", t("", "f32"), t("", "f32"), t("", "f32"))
    out = run_numpy(op, [np.array(1.5, np.float32), np.array(2.0, np.float32)])
    assert isinstance(out, np.ndarray) and out.shape == () and out.item() == 3.5


# ---------------------------------------------------------------------------
# Lock-step simulation of lowered programs
# ---------------------------------------------------------------------------


def run_identity_program(text: str, value: np.ndarray, seed: int = 0):
    module = parse(text)
    args, results = function_signature(module, "main")
    rng = np.random.default_rng(seed)
    shards = distribute(value, args[0].sbp, args[0].hierarchy, rng)
    outputs, log = simulate(module, "main", [shards])
    got = assemble(outputs[0], results[0].sbp, results[0].hierarchy)
    return module, got, log


def check_bytes(log) -> None:
    for record in log:
        step = record.step
        expected = step_bytes_exact(step.kind, step.src, step.dst, step.mesh_axes, step.shape, step.hierarchy,
                                    step.dtype.itemsize)
        assert record.sent == expected, record.line()


ALL_GATHER = """
sbp.placement @p "cpu" [0, 1]
func.func @main(%x: !sbp.tensor<5x7xf32, @p, [S(0)]>) -> !sbp.tensor<5x7xf32, @p, [B]> {
  %0 = sbp.all_gather %x {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @p, [S(0)]> -> !sbp.tensor<5x7xf32, @p, [B]>
  func.return %0 : !sbp.tensor<5x7xf32, @p, [B]>
}
"""


def test_all_gather_1d() -> None:
    x = np.random.default_rng(1).standard_normal((5, 7)).astype(np.float32)
    module, got, log = run_identity_program(ALL_GATHER, x)
    np.testing.assert_array_equal(got, x)
    assert [r.step.kind for r in log] == ["all_gather"]
    # rank 0 holds 3 rows, rank 1 holds 2 rows; each sends its rows to the other
    assert log[0].per_rank() == [3 * 7 * 4, 2 * 7 * 4]
    assert log[0].line() == "all_gather mesh_axes=[0] S(0)->B f32[5,7]: bytes sent per rank [84, 56]"
    check_bytes(log)
    assert total_sent(log) == modelled_bytes(module, "main") == 140


A2A_MERGED = """
sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]> {
  %0 = sbp.all_to_all %x {mesh_axes = array<i64: 0, 1>} : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
  func.return %0 : !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
}
"""

# What lower-boxing plans for the same transition: a split can only change on the minor-most mesh axis
# splitting its tensor axis, so (S(0), S(1)) -> (S(1), S(0)) has no two-step all_to_all route.
A2A_PLANNED = """
sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%x: !sbp.tensor<5x7xf32, @q, [S(0), S(1)]>) -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]> {
  %0 = sbp.all_gather %x {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @q, [S(0), S(1)]> -> !sbp.tensor<5x7xf32, @q, [B, S(1)]>
  %1 = sbp.all_to_all %0 {mesh_axes = array<i64: 1>} : !sbp.tensor<5x7xf32, @q, [B, S(1)]> -> !sbp.tensor<5x7xf32, @q, [B, S(0)]>
  %2 = sbp.all_slice %1 {mesh_axes = array<i64: 0>} : !sbp.tensor<5x7xf32, @q, [B, S(0)]> -> !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
  func.return %2 : !sbp.tensor<5x7xf32, @q, [S(1), S(0)]>
}
"""


@pytest.mark.parametrize("program", [A2A_MERGED, A2A_PLANNED], ids=["merged", "planned"])
def test_2x2_mesh_split_swap(program: str) -> None:
    x = np.arange(35, dtype=np.float32).reshape(5, 7)
    module, got, log = run_identity_program(program, x)
    np.testing.assert_array_equal(got, x)
    check_bytes(log)
    assert total_sent(log) == modelled_bytes(module, "main")
    if program is A2A_PLANNED:
        assert [r.step.kind for r in log] == ["all_gather", "all_to_all", "all_slice"]
        assert log[2].per_rank() == [0, 0, 0, 0]


@pytest.mark.parametrize("kind", ["P", "P(max)", "P(min)"])
@pytest.mark.parametrize("elt", ["f32", "i32"])
def test_all_reduce(kind: str, elt: str) -> None:
    program = f"""
    sbp.placement @p "cpu" [0, 1, 2]
    func.func @main(%x: !sbp.tensor<4x5x{elt}, @p, [{kind}]>) -> !sbp.tensor<4x5x{elt}, @p, [B]> {{
      %0 = sbp.all_reduce %x {{mesh_axes = array<i64: 0>}} : !sbp.tensor<4x5x{elt}, @p, [{kind}]> -> !sbp.tensor<4x5x{elt}, @p, [B]>
      func.return %0 : !sbp.tensor<4x5x{elt}, @p, [B]>
    }}"""
    rng = np.random.default_rng(2)
    x = rng.integers(-50, 50, size=(4, 5)).astype(np.int32 if elt == "i32" else np.float32)
    module, got, log = run_identity_program(program, x)
    if elt == "f32" and kind == "P":
        np.testing.assert_allclose(got, x, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, x)
    check_bytes(log)
    assert total_sent(log) == modelled_bytes(module, "main") > 0


def test_reduce_scatter_and_to_partial_on_2d_mesh() -> None:
    program = """
    sbp.placement @q "cpu" [[0, 1], [2, 3]]
    func.func @main(%x: !sbp.tensor<6x5xi32, @q, [S(0), B]>) -> !sbp.tensor<6x5xi32, @q, [S(0), S(1)]> {
      %0 = sbp.to_partial %x {mesh_axes = array<i64: 1>} : !sbp.tensor<6x5xi32, @q, [S(0), B]> -> !sbp.tensor<6x5xi32, @q, [S(0), P]>
      %1 = sbp.reduce_scatter %0 {mesh_axes = array<i64: 1>} : !sbp.tensor<6x5xi32, @q, [S(0), P]> -> !sbp.tensor<6x5xi32, @q, [S(0), S(1)]>
      func.return %1 : !sbp.tensor<6x5xi32, @q, [S(0), S(1)]>
    }"""
    x = np.arange(30, dtype=np.int32).reshape(6, 5)
    _, got, log = run_identity_program(program, x)
    np.testing.assert_array_equal(got, x)
    assert [r.step.kind for r in log] == ["to_partial", "reduce_scatter"]
    assert log[0].per_rank() == [0, 0, 0, 0]
    check_bytes(log)


def test_compute_ops_run_on_local_shards_and_match_the_reference() -> None:
    program = """
    sbp.placement @p "cpu" [0, 1]
    func.func @main(%a: !sbp.tensor<4x6xf32, @p, [S(0)]>, %w: !sbp.tensor<6x3xf32, @p, [B]>) -> !sbp.tensor<2x2x3xf32, @p, [B]> {
      %0 = sbp.matmul %a, %w : !sbp.tensor<4x6xf32, @p, [S(0)]>, !sbp.tensor<6x3xf32, @p, [B]> -> !sbp.tensor<4x3xf32, @p, [S(0)]>
      %1 = sbp.reshape %0 : !sbp.tensor<4x3xf32, @p, [S(0)]> -> !sbp.tensor<2x2x3xf32, @p, [S(0)]>
      %2 = sbp.relu %1 : !sbp.tensor<2x2x3xf32, @p, [S(0)]> -> !sbp.tensor<2x2x3xf32, @p, [S(0)]>
      %3 = sbp.all_gather %2 {mesh_axes = array<i64: 0>} : !sbp.tensor<2x2x3xf32, @p, [S(0)]> -> !sbp.tensor<2x2x3xf32, @p, [B]>
      func.return %3 : !sbp.tensor<2x2x3xf32, @p, [B]>
    }"""
    module = parse(program)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    args, results = function_signature(module, "main")
    shards = [distribute(v, d.sbp, d.hierarchy, rng) for v, d in zip((a, w), args, strict=True)]
    outputs, _ = simulate(module, "main", shards)
    assert outputs[0][(0,)].shape == (2, 2, 3)
    got = assemble(outputs[0], results[0].sbp, results[0].hierarchy)
    (expected,) = reference(module, "main", [a, w])
    np.testing.assert_allclose(expected, np.maximum(a @ w, 0).reshape(2, 2, 3), rtol=1e-6)
    assert compare(got, expected, reorders_float_sums(module, "main")) is None


def test_unlowered_boxing_is_an_error() -> None:
    program = """
    sbp.placement @p "cpu" [0, 1]
    func.func @main(%x: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p, [B]> {
      %0 = sbp.boxing %x : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p, [B]>
      func.return %0 : !sbp.tensor<4xf32, @p, [B]>
    }"""
    module = parse(program)
    shards = {(0,): np.zeros(2, np.float32), (1,): np.zeros(2, np.float32)}
    with pytest.raises(OpError, match="run lower-boxing first"):
        simulate(module, "main", [shards])


def test_wrong_local_shapes_are_located_errors() -> None:
    program = """
    sbp.placement @p "cpu" [0, 1]
    func.func @main(%x: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p, [B]> {
      %0 = sbp.neg %x : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p, [B]>
      func.return %0 : !sbp.tensor<4xf32, @p, [B]>
    }"""
    module = parse(program)
    shards = {(0,): np.zeros(2, np.float32), (1,): np.zeros(2, np.float32)}
    with pytest.raises(OpError, match=r"should have local shape \[4\] on rank \[0\], but it has \[2\]") as info:
        simulate(module, "main", [shards])
    assert info.value.op.name == "sbp.neg"


def test_spmd_form_runs_like_the_global_form() -> None:
    from sbpc.passes.registry import get_all_passes

    available = get_all_passes()
    if "spmdize" not in available:
        pytest.skip("spmdize is not registered")
    program = """
    sbp.placement @q "cpu" [[0, 1], [2, 3]]
    func.func @main(%a: !sbp.tensor<5x6xi32, @q, [S(0), B]>, %b: !sbp.tensor<5x6xi32, @q, [B, S(1)]>) -> !sbp.tensor<3x10xi32, @q> {
      %0 = sbp.add %a, %b : !sbp.tensor<5x6xi32, @q, [S(0), B]>, !sbp.tensor<5x6xi32, @q, [B, S(1)]> -> !sbp.tensor<5x6xi32, @q>
      %1 = sbp.reshape %0 : !sbp.tensor<5x6xi32, @q> -> !sbp.tensor<3x10xi32, @q>
      func.return %1 : !sbp.tensor<3x10xi32, @q>
    }"""
    original = parse(program)
    rng = np.random.default_rng(4)
    inputs = [rng.integers(-9, 10, size=(5, 6)).astype(np.int32) for _ in range(2)]
    (expected,) = reference(original, "main", inputs)
    ctx = Context()
    register_dialects(ctx)
    got = {}
    for spec in ("infer-sbp,materialize-boxing,lower-boxing", "infer-sbp,materialize-boxing,lower-boxing,spmdize"):
        module = original.clone()
        PassPipeline.parse_spec(available, spec).apply(ctx, module)
        args, results = function_signature(module, "main")
        shards = [distribute(v, d.sbp, d.hierarchy, np.random.default_rng(5)) for v, d in zip(inputs, args,
                                                                                               strict=True)]
        outputs, log = simulate(module, "main", shards)
        got[spec] = assemble(outputs[0], results[0].sbp, results[0].hierarchy)
        check_bytes(log)
        assert total_sent(log) == modelled_bytes(module, "main")
    for value in got.values():
        np.testing.assert_array_equal(value, expected)


# ---------------------------------------------------------------------------
# distribute / assemble
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [ReduceKind.MAX, ReduceKind.MIN, ReduceKind.SUM])
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float16])
def test_partial_inputs_round_trip(kind: ReduceKind, dtype: type) -> None:
    rng = np.random.default_rng(6)
    x = rng.integers(-100, 100, size=(3, 4)).astype(dtype)
    for hierarchy, state in (((3,), (partial(kind),)), ((2, 2), (partial(kind), split(1))),
                             ((2, 3), (BROADCAST, partial(kind)))):
        shards = distribute(x, state, hierarchy, rng)
        assert sorted(shards) == mesh_coords(hierarchy)
        if kind != ReduceKind.SUM:
            # the pieces are not all the value itself
            assert any(not np.array_equal(s, x[:, : s.shape[1]]) for s in shards.values())
        back = assemble(shards, state, hierarchy)
        if kind == ReduceKind.SUM and dtype != np.int16:  # float pieces add up with rounding
            np.testing.assert_allclose(back.astype(np.float32), x.astype(np.float32), atol=0.5)
        else:
            np.testing.assert_array_equal(back, x)


def test_replica_mismatch_is_detected() -> None:
    shards = {(0,): np.zeros(3, np.float32), (1,): np.ones(3, np.float32)}
    with pytest.raises(ReplicaMismatch):
        assemble(shards, (BROADCAST,), (2,))


# ---------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------


def test_compare_exact_and_tolerant() -> None:
    x = np.array([1.0, np.nan, 3.0], np.float32)
    assert compare(x.copy(), x, tolerant=False) is None
    y = x.copy()
    y[2] = np.nextafter(np.float32(3.0), np.float32(4.0))
    report = compare(y, x, tolerant=False)
    assert report is not None and "first differing index [2]" in report and "(exact)" in report
    assert compare(y, x, tolerant=True) is None
    z = x.copy()
    z[0] = 1.5
    report = compare(z, x, tolerant=True)
    assert report is not None and "max abs error 0.5" in report and "first differing index [0]" in report
    assert "shape" in (compare(x[:2], x, False) or "")
    ints = np.array([[1, 2], [3, 4]], np.int32)
    bad = ints.copy()
    bad[1, 0] = 5
    assert compare(bad, ints, tolerant=True) == (
        "1 of 4 elements differ (exact); max abs error 2; first differing index [1, 0]: got 5, expected 3"
    )


# ---------------------------------------------------------------------------
# sbp-run
# ---------------------------------------------------------------------------


def write(tmp_path, text: str, name: str = "prog.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_sbp_run_reports_bytes_and_checks(tmp_path, capsys) -> None:
    path = write(tmp_path, ALL_GATHER)
    out_dir = tmp_path / "out"
    assert sbp_run.main([path, "--pipeline", "", "--check", "--save-outputs", str(out_dir), "--seed", "7"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "all_gather mesh_axes=[0] S(0)->B f32[5,7]: bytes sent per rank [84, 56]",
        "total bytes sent: 140 (all ranks); cost model: 140",
        "check: OK (result 0: exact)",
    ]
    saved = np.load(out_dir / "result0.npy")
    expected = np.ldexp(np.random.default_rng(7).integers(-4, 5, size=(5, 7)), -1).astype(np.float32)  # SPEC §4.3
    np.testing.assert_array_equal(saved, expected)


def test_sbp_run_inputs_files(tmp_path, capsys) -> None:
    path = write(tmp_path, ALL_GATHER)
    x = np.arange(35, dtype=np.float32).reshape(5, 7)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "bad.npy", x.astype(np.float64))
    assert sbp_run.main([path, "--pipeline", "", "--inputs", str(tmp_path / "x.npy"), "--check",
                         "--save-outputs", str(tmp_path / "o")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "result0.npy"), x)
    capsys.readouterr()
    assert sbp_run.main([path, "--pipeline", "", "--inputs", str(tmp_path / "bad.npy")]) == 1
    err = capsys.readouterr().err
    assert "prog.mlir:3:17: error: input 0" in err and "dtype float64" in err and "Traceback" not in err


def test_sbp_run_replica_mismatch_is_a_check_failure(tmp_path, capsys) -> None:
    path = write(tmp_path, """
    sbp.placement @p "cpu" [0, 1]
    func.func @main(%a: !sbp.tensor<4x3xf32, @p, [P]>) -> !sbp.tensor<4x3xf32, @p, [B]> {
      %0 = sbp.neg %a : !sbp.tensor<4x3xf32, @p, [P]> -> !sbp.tensor<4x3xf32, @p, [B]>
      func.return %0 : !sbp.tensor<4x3xf32, @p, [B]>
    }""")
    assert sbp_run.main([path, "--pipeline", "", "--check"]) == 1
    out = capsys.readouterr().out
    assert "check: FAILED: result 0 (f32[4,3][B] @p): broadcast replicas differ on mesh axis 0" in out


def test_sbp_run_wrong_partial_program_fails_the_check(tmp_path, capsys) -> None:
    path = write(tmp_path, """
    sbp.placement @p "cpu" [0, 1]
    func.func @main(%a: !sbp.tensor<4x3xi32, @p, [P]>, %b: !sbp.tensor<4x3xi32, @p, [P]>) -> !sbp.tensor<4x3xi32, @p, [P]> {
      %0 = sbp.mul %a, %b : !sbp.tensor<4x3xi32, @p, [P]>, !sbp.tensor<4x3xi32, @p, [P]> -> !sbp.tensor<4x3xi32, @p, [P]>
      func.return %0 : !sbp.tensor<4x3xi32, @p, [P]>
    }""")
    assert sbp_run.main([path, "--pipeline", "", "--check"]) == 1
    out = capsys.readouterr().out
    assert "check: FAILED: result 0 (i32[4,3][P] @p):" in out and "(exact)" in out and "first differing index" in out


# ---------------------------------------------------------------------------
# Every valid single step, through the simulator
# ---------------------------------------------------------------------------

MESHES = ((2,), (3,), (2, 2), (2, 3))


def entries(rank: int) -> list[SbpAttr]:
    return [BROADCAST, partial(ReduceKind.SUM), partial(ReduceKind.MAX), *(split(i) for i in range(rank))]


def sbp_source(state: tuple[SbpAttr, ...]) -> str:
    return "[" + ", ".join(e.short_str() for e in state) + "]"


@st.composite
def single_steps(draw):
    hierarchy = draw(st.sampled_from(MESHES))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=2)))
    options = entries(len(shape))
    candidates = []
    for src in itertools.product(options, repeat=len(hierarchy)):
        for dst in itertools.product(options, repeat=len(hierarchy)):
            for n in range(1, len(hierarchy) + 1):
                for axes in itertools.combinations(range(len(hierarchy)), n):
                    kind = step_kind(src, dst, axes, hierarchy)
                    if kind is not None:
                        candidates.append((src, dst, axes, kind))
    src, dst, axes, kind = draw(st.sampled_from(candidates))
    elt = draw(st.sampled_from(["i32", "f32"]))
    return hierarchy, shape, src, dst, axes, kind, elt


def mesh_text(hierarchy: tuple[int, ...]) -> str:
    ranks = list(range(math.prod(hierarchy)))
    if len(hierarchy) == 1:
        return str(ranks)
    rows = [ranks[i : i + hierarchy[1]] for i in range(0, len(ranks), hierarchy[1])]
    return "[" + ", ".join(str(r) for r in rows) + "]"


@settings(max_examples=60, deadline=None)
@given(single_steps(), st.integers(0, 2**16))
def test_every_single_step_preserves_the_value(case, seed: int) -> None:
    hierarchy, shape, src, dst, axes, kind, elt = case
    dims = "x".join(str(d) for d in shape)
    ty_src = f"!sbp.tensor<{dims}x{elt}, @m, {sbp_source(src)}>"
    ty_dst = f"!sbp.tensor<{dims}x{elt}, @m, {sbp_source(dst)}>"
    axes_text = ", ".join(str(a) for a in axes)
    program = f"""
    sbp.placement @m "cpu" {mesh_text(hierarchy)}
    func.func @main(%x: {ty_src}) -> {ty_dst} {{
      %0 = "sbp.{kind}"(%x) <{{mesh_axes = array<i64: {axes_text}>}}> : ({ty_src}) -> {ty_dst}
      func.return %0 : {ty_dst}
    }}"""
    rng = np.random.default_rng(seed)
    x = rng.integers(-20, 20, size=shape).astype(np.int32 if elt == "i32" else np.float32)
    module, got, log = run_identity_program(program, x, seed)
    sums = any(isinstance(e, PartialAttr) and e.reduce_kind == ReduceKind.SUM for e in (*src, *dst))
    if elt == "f32" and sums:
        np.testing.assert_allclose(got, x, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(got, x)
    check_bytes(log)
    assert total_sent(log) == modelled_bytes(module, "main")
    if not any(isinstance(e, SplitAttr) for e in dst) and not any(isinstance(e, PartialAttr) for e in dst):
        for shard in simulate(module, "main", [distribute(x, src, hierarchy, rng)])[0][0].values():
            assert shard.shape == shape  # fully replicated result
