"""The neural-network ops of SPEC §7 (`dialects/sbp_ops_nn.py`): numpy semantics against float64
formulas, torch semantics against torch.nn.functional, every 1-D signature of every op's rule run on
the simulated mesh and checked against the global reference (what `sbp-run --check` does), and the
vocab-parallel embedding's per-rank lookups."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.ir import Operation
from xdsl.parser import Parser

import sbpc
from sbpc.dialects.context import register_dialects
from sbpc.dialects.sbp import SignatureAttr
from sbpc.dialects.sbp_op_base import SbpOp
from sbpc.dialects.signatures import SbpRule
from sbpc.runtime.op_impls import IMPLS, run_numpy, run_torch
from sbpc.runtime.ops_numpy import BF16
from sbpc.runtime.random_programs import random_program

# ---------------------------------------------------------------------------
# One op per case: its operands (name, type), its text, its result type
# ---------------------------------------------------------------------------

CASES: dict[str, tuple[list[tuple[str, str]], str, str]] = {
    "sigmoid": ([("x", "5x4xf32")], "sbp.sigmoid %x", "5x4xf32"),
    "tanh": ([("x", "5x4xf32")], "sbp.tanh %x", "5x4xf32"),
    "silu": ([("x", "5x4xbf16")], "sbp.silu %x", "5x4xbf16"),
    "dropout": ([("x", "5x4xi32")], "sbp.dropout %x {p = 1.000000e-01 : f32}", "5x4xi32"),
    "softmax": ([("x", "5x4x3xf32")], "sbp.softmax %x {axis = 1 : i64}", "5x4x3xf32"),
    "rms_norm": ([("x", "5x4x6xf32"), ("g", "6xf32")], "sbp.rms_norm %x, %g {epsilon = 1.000000e-05 : f32}",
                 "5x4x6xf32"),
    "embedding": ([("t", "10x4xf32"), ("i", "5x3xi64")], "sbp.embedding %t, %i", "5x3x4xf32"),
    "cross_entropy": ([("l", "5x3x7xf32"), ("y", "5x3xi32")], "sbp.cross_entropy %l, %y", "5x3xf32"),
    "concat": ([("a", "5x2x4xf32"), ("b", "5x3x4xf32")], "sbp.concat %a, %b {axis = 1 : i64}", "5x5x4xf32"),
    "slice": ([("x", "5x7x4xf32")], "sbp.slice %x {start = array<i64: 0, 1, 0>, stop = array<i64: 5, 7, 4>, "
              "step = array<i64: 1, 2, 1>}", "5x3x4xf32"),
    "where": ([("c", "5x1xi1"), ("x", "5x4xf32"), ("y", "4xf32")], "sbp.where %c, %x, %y", "5x4xf32"),
    "broadcast_to": ([("x", "4x1xi8")], "sbp.broadcast_to %x", "3x4x5xi8"),
}
MESH = '"cpu" [0, 1, 2]'


def _program(case: str, sbps: tuple[str, ...] | None = None, out: str | None = None) -> str:
    operands, text, result = CASES[case]
    sbps = sbps or ("B",) * len(operands)
    types = [f"!sbp.tensor<{t}, @p, [{s}]>" for (_, t), s in zip(operands, sbps, strict=True)]
    res = f"!sbp.tensor<{result}, @p{', [' + out + ']' if out else ''}>"
    args = ", ".join(f"%{n}: {t}" for (n, _), t in zip(operands, types, strict=True))
    return (f"sbp.placement @p {MESH}\nfunc.func @main({args}) -> {res} {{\n"
            f"  %0 = {text} : {', '.join(types)} -> {res}\n  func.return %0 : {res}\n}}\n")


def _op(text: str) -> Operation:
    ctx = Context()
    register_dialects(ctx)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return next(op for op in module.walk() if isinstance(op, SbpOp))


def _signatures(case: str) -> list[tuple[tuple[str, ...], str]]:
    op = _op(_program(case))
    rule = op.get_trait(SbpRule)
    assert rule is not None
    found = [(tuple(e.short_str() for e in ins), outs[0].short_str()) for ins, outs in rule.signatures(op, 3)]
    return [*found, (("B",) * len(op.operands), "B")]


SIGNATURES = [(case, ins, out) for case in CASES for ins, out in _signatures(case)]


@pytest.mark.parametrize(("case", "ins", "out"), SIGNATURES, ids=[f"{c}:{','.join(i)}->{o}" for c, i, o in SIGNATURES])
def test_every_signature_runs_and_checks(case: str, ins: tuple[str, ...], out: str) -> None:
    """The program with its inputs and result distributed as the signature says compiles to that
    signature, runs on a 3-rank mesh (uneven splits) and matches the global reference."""
    result = sbpc.run(sbpc.parse(_program(case, ins, out)))
    assert result.ok, result.mismatches
    vocab_parallel = case == "cross_entropy" and out == "P"  # written out as Megatron's steps
    name = "sbp.cross_entropy_from_stats" if vocab_parallel else f"sbp.{case}"
    chosen = next(op.attributes["sbp.signature"] for op in result.compiled.walk() if op.name == name)
    assert isinstance(chosen, SignatureAttr)
    assert tuple(s.short_str() for s in chosen.inputs.data[:len(ins)]) == tuple(f"[{s}]" for s in ins)
    assert chosen.outputs.data[0].short_str() == f"[{out}]"


def test_the_rules_have_the_documented_signatures() -> None:
    listed = {case: {(ins, out) for ins, out in _signatures(case)} for case in CASES}
    assert (("S(0)", "B"), "P") in listed["embedding"]  # vocab-parallel: rows split, partial sums
    assert (("S(1)", "B"), "S(2)") in listed["embedding"]  # hidden split
    assert (("B", "S(1)"), "S(1)") in listed["embedding"]
    assert {ins for ins, _ in listed["softmax"]} == {("S(0)",), ("S(2)",), ("B",)}  # never the softmax axis
    assert ("P",) not in {ins for ins, _ in listed["softmax"]}
    assert (("S(1)", "S(1)"), "S(1)") not in listed["concat"] and (("P", "P"), "P") in listed["concat"]
    assert {ins for ins, _ in listed["slice"]} == {("S(0)",), ("S(2)",), ("P",), ("B",)}
    assert (("B", "P", "P"), "P") in listed["where"] and (("S(0)", "S(0)", "B"), "S(0)") in listed["where"]
    assert (("S(0)",), "S(1)") in listed["broadcast_to"] and (("S(1)",), "S(2)") not in listed["broadcast_to"]
    assert ("P",) not in {ins for ins, _ in listed["rms_norm"]} and (("S(2)", "B"), "S(2)") not in listed["rms_norm"]
    assert {ins for ins, _ in listed["dropout"]} >= {("P",), ("S(1)",)}
    assert (("S(2)", "B"), "P") in listed["cross_entropy"]  # vocab-parallel


# ---------------------------------------------------------------------------
# numpy semantics against float64 formulas
# ---------------------------------------------------------------------------

RNG = np.random.default_rng(7)


def _numpy(case: str, *operands: np.ndarray) -> np.ndarray:
    return run_numpy(_op(_program(case)), list(operands))


def test_activations() -> None:
    x = np.linspace(-30, 30, 20, dtype=np.float32).reshape(5, 4)
    w = x.astype(np.float64)
    sig = 1 / (1 + np.exp(-w))
    np.testing.assert_allclose(_numpy("sigmoid", x), sig, rtol=2e-6, atol=1e-30)
    np.testing.assert_allclose(_numpy("tanh", x), np.tanh(w), rtol=2e-6)
    got = _numpy("silu", x.astype(BF16))
    np.testing.assert_allclose(got.astype(np.float64), w * sig, rtol=1e-2, atol=1e-2)
    assert got.dtype == BF16
    assert _numpy("sigmoid", np.zeros((5, 4), np.float32))[0, 0] == 0.5
    ints = RNG.integers(-9, 9, size=(5, 4)).astype(np.int32)
    np.testing.assert_array_equal(_numpy("dropout", ints), ints)


def test_softmax_and_rms_norm() -> None:
    x = RNG.normal(size=(5, 4, 3)).astype(np.float32)
    w = x.astype(np.float64)
    e = np.exp(w - w.max(axis=1, keepdims=True))
    np.testing.assert_allclose(_numpy("softmax", x), e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    big = np.full((5, 4, 3), 1000.0, np.float32)  # max subtracted first: no overflow
    np.testing.assert_allclose(_numpy("softmax", big), np.full((5, 4, 3), 0.25), rtol=1e-7)
    x = RNG.normal(size=(5, 4, 6)).astype(np.float32)
    g = RNG.normal(size=6).astype(np.float32)
    w = x.astype(np.float64)
    want = w / np.sqrt((w * w).mean(axis=-1, keepdims=True) + 1e-5) * g
    np.testing.assert_allclose(_numpy("rms_norm", x, g), want, rtol=1e-5, atol=1e-6)


def test_embedding_and_cross_entropy() -> None:
    table = RNG.normal(size=(10, 4)).astype(np.float32)
    idx = np.array([[0, 9, 3], [-1, 10, 2], [5, 5, 5], [7, 8, 1], [4, 6, 0]], np.int64)
    got = _numpy("embedding", table, idx)
    assert got.shape == (5, 3, 4)
    np.testing.assert_array_equal(got[0, 1], table[9])
    np.testing.assert_array_equal(got[1, 0], 0.0)  # outside [0, V): a zero row
    np.testing.assert_array_equal(got[1, 1], 0.0)
    np.testing.assert_array_equal(got[3], table[[7, 8, 1]])
    logits = RNG.normal(size=(5, 3, 7)).astype(np.float32)
    t = np.array([[0, 6, 3], [1, 2, 7], [-1, 4, 5], [0, 0, 0], [6, 5, 4]], np.int32)
    got = _numpy("cross_entropy", logits, t)
    w = logits.astype(np.float64)
    for i in range(5):
        for j in range(3):
            want = 0.0 if not 0 <= t[i, j] < 7 else math.log(np.exp(w[i, j]).sum()) - w[i, j, t[i, j]]
            assert got[i, j] == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_data_movement() -> None:
    a, b = RNG.normal(size=(5, 2, 4)).astype(np.float32), RNG.normal(size=(5, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(_numpy("concat", a, b), np.concatenate([a, b], axis=1))
    x = RNG.normal(size=(5, 7, 4)).astype(np.float32)
    np.testing.assert_array_equal(_numpy("slice", x), x[:, 1:7:2, :])
    c = np.array([[True], [False], [True], [False], [False]])
    x, y = RNG.normal(size=(5, 4)).astype(np.float32), RNG.normal(size=4).astype(np.float32)
    np.testing.assert_array_equal(_numpy("where", c, x, y), np.where(c, x, y))
    small = np.arange(4, dtype=np.int8).reshape(4, 1)
    got = _numpy("broadcast_to", small)
    assert got.dtype == np.int8 and got.flags.c_contiguous
    np.testing.assert_array_equal(got, np.broadcast_to(small, (3, 4, 5)))


def test_vocab_parallel_embedding_sums_to_the_lookup() -> None:
    """Each rank of a table split on its rows looks up the rows it holds, zero elsewhere: the
    ranks' results (P(sum)) add up to the lookup, per rank computed from the global type."""
    text = _program("embedding", ("S(0)", "B"), "P")
    op = _op(text)
    table = RNG.normal(size=(10, 4)).astype(np.float32)
    idx = RNG.integers(-2, 12, size=(5, 3)).astype(np.int64)
    pieces = [run_numpy(op, [table[lo:hi], idx], coord=(r,)) for r, (lo, hi) in enumerate([(0, 4), (4, 7), (7, 10)])]
    assert sum(int(np.count_nonzero(p.any(axis=-1))) for p in pieces) == int(np.count_nonzero((idx >= 0) & (idx < 10)))
    np.testing.assert_array_equal(sum(pieces), run_numpy(op, [table, idx]))


def test_every_op_has_a_bound_rule() -> None:
    from sbpc.runtime.error_bounds_nn import NN_BOUNDS

    ops = {type(_op(_program(case))) for case in CASES}
    assert ops <= set(NN_BOUNDS) and ops <= set(IMPLS)


# ---------------------------------------------------------------------------
# torch semantics against torch.nn.functional
# ---------------------------------------------------------------------------


@pytest.mark.torch
def test_torch_matches_torch_functional_and_numpy() -> None:
    torch = pytest.importorskip("torch")
    F = torch.nn.functional

    def both(case: str, *arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        op = _op(_program(case))
        got = run_torch(op, [torch.from_numpy(a) for a in arrays]).numpy()
        return got, run_numpy(op, list(arrays))

    x = RNG.normal(size=(5, 4)).astype(np.float32)
    for case, ref in (("sigmoid", torch.sigmoid), ("tanh", torch.tanh)):
        got, np_got = both(case, x)
        np.testing.assert_allclose(got, ref(torch.from_numpy(x)).numpy(), rtol=1e-6)
        np.testing.assert_allclose(got, np_got, rtol=1e-5, atol=1e-7)
    x3 = RNG.normal(size=(5, 4, 3)).astype(np.float32)
    got, np_got = both("softmax", x3)
    np.testing.assert_allclose(got, torch.softmax(torch.from_numpy(x3), 1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(got, np_got, rtol=1e-5)
    x6, g = RNG.normal(size=(5, 4, 6)).astype(np.float32), RNG.normal(size=6).astype(np.float32)
    got, np_got = both("rms_norm", x6, g)
    want = F.rms_norm(torch.from_numpy(x6), (6,), torch.from_numpy(g), 1e-5).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, np_got, rtol=1e-5, atol=1e-6)
    table, idx = RNG.normal(size=(10, 4)).astype(np.float32), RNG.integers(0, 10, size=(5, 3)).astype(np.int64)
    got, np_got = both("embedding", table, idx)
    np.testing.assert_array_equal(got, F.embedding(torch.from_numpy(idx), torch.from_numpy(table)).numpy())
    np.testing.assert_array_equal(got, np_got)
    logits, t = RNG.normal(size=(5, 3, 7)).astype(np.float32), RNG.integers(0, 7, size=(5, 3)).astype(np.int32)
    got, np_got = both("cross_entropy", logits, t)
    want = F.cross_entropy(torch.from_numpy(logits).reshape(15, 7), torch.from_numpy(t).long().reshape(15),
                           reduction="none").reshape(5, 3).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, np_got, rtol=1e-5, atol=1e-6)
    t[0, 0] = -100  # torch's ignore_index gives 0, as every target outside [0, V)
    got, _ = both("cross_entropy", logits, t)
    assert got[0, 0] == 0.0
    c = np.array([[True], [False], [True], [False], [False]])
    y = RNG.normal(size=4).astype(np.float32)
    got, np_got = both("where", c, x, y)
    np.testing.assert_array_equal(got, np_got)
    got, np_got = both("broadcast_to", np.arange(4, dtype=np.int8).reshape(4, 1))
    np.testing.assert_array_equal(got, np_got)


# ---------------------------------------------------------------------------
# The element types i1, i8, ui8, i32, i64
# ---------------------------------------------------------------------------

DTYPES = """sbp.placement @p "cpu" [0, 1, 2]
func.func @main(%x: !sbp.tensor<5x4xf32, @p, [S(0)]>, %a: !sbp.tensor<5x4xi8, @p, [S(1)]>,
    %u: !sbp.tensor<5x4xui8, @p, [B]>, %k: !sbp.tensor<5x4xi64, @p, [P]>) -> (!sbp.tensor<4x5xf32, @p>,
    !sbp.tensor<5x4xi8, @p>, !sbp.tensor<5x4xui8, @p>, !sbp.tensor<5xi64, @p>, !sbp.tensor<20xi1, @p>,
    !sbp.tensor<5x4xf32, @p>) {
  %0 = sbp.cast %x : !sbp.tensor<5x4xf32, @p, [S(0)]> -> !sbp.tensor<5x4xi1, @p>
  %1 = sbp.cast %0 : !sbp.tensor<5x4xi1, @p> -> !sbp.tensor<5x4xf32, @p>
  %2 = sbp.transpose %1 {perm = array<i64: 1, 0>} : !sbp.tensor<5x4xf32, @p> -> !sbp.tensor<4x5xf32, @p>
  %3 = sbp.add %a, %a : !sbp.tensor<5x4xi8, @p, [S(1)]>, !sbp.tensor<5x4xi8, @p, [S(1)]> -> !sbp.tensor<5x4xi8, @p>
  %4 = sbp.maximum %u, %u : !sbp.tensor<5x4xui8, @p, [B]>, !sbp.tensor<5x4xui8, @p, [B]> -> !sbp.tensor<5x4xui8, @p>
  %5 = sbp.add_scalar %4, 200 : i64 : !sbp.tensor<5x4xui8, @p> -> !sbp.tensor<5x4xui8, @p>
  %6 = sbp.reduce_sum %k {axes = array<i64: 1>} : !sbp.tensor<5x4xi64, @p, [P]> -> !sbp.tensor<5xi64, @p>
  %7 = sbp.reshape %0 : !sbp.tensor<5x4xi1, @p> -> !sbp.tensor<20xi1, @p>
  %8 = sbp.cast %u : !sbp.tensor<5x4xui8, @p, [B]> -> !sbp.tensor<5x4xf32, @p>
  func.return %2, %3, %5, %6, %7, %8 : !sbp.tensor<4x5xf32, @p>, !sbp.tensor<5x4xi8, @p>, !sbp.tensor<5x4xui8, @p>,
      !sbp.tensor<5xi64, @p>, !sbp.tensor<20xi1, @p>, !sbp.tensor<5x4xf32, @p>
}
"""


@pytest.mark.parametrize("backend", ["simulator", pytest.param("torch", marks=pytest.mark.torch)])
def test_new_element_types_run_and_check_exactly(backend: str) -> None:
    """i1 (casts both ways, reshaped and gathered), i8 (split, wrapping adds), ui8 (above 127, a
    wrapping scalar), i64 partial sums: every result compared exactly with the reference."""
    x = np.array([[0.0, 0.5, -2.0, 0.0]] * 5, np.float32)
    a = np.full((5, 4), 100, np.int8)
    u = np.array([[0, 127, 128, 255]] * 5, np.uint8)
    k = np.arange(20, dtype=np.int64).reshape(5, 4)
    result = sbpc.run(sbpc.parse(DTYPES), [x, a, u, k], backend=backend)  # type: ignore[arg-type]
    assert result.ok and result.tolerances == [f"result {i}: exact" for i in range(6)]
    outs = result.outputs
    np.testing.assert_array_equal(outs[0], (x != 0).astype(np.float32).T)
    np.testing.assert_array_equal(outs[1], np.full((5, 4), -56, np.int8))  # 200 wraps in i8
    np.testing.assert_array_equal(outs[2], (u + np.uint8(200)).astype(np.uint8))
    np.testing.assert_array_equal(outs[3], k.sum(axis=1))
    assert outs[4].dtype == np.bool_ and outs[4].tolist() == (x != 0).reshape(20).tolist()
    np.testing.assert_array_equal(outs[5], u.astype(np.float32))


# ---------------------------------------------------------------------------
# Random programs with the ops of SPEC §7
# ---------------------------------------------------------------------------

PIPELINES = ("infer-sbp{rule=cost},materialize-boxing,lower-boxing,spmdize",
             "infer-sbp,materialize-boxing,lower-boxing{planner=oneflow},spmdize")


def _check_random(seeds: range) -> None:
    for seed in seeds:
        text = random_program(seed, nn=True)
        for pipeline in PIPELINES:
            result = sbpc.run(sbpc.parse(text), pipeline=pipeline)
            assert result.ok, (seed, pipeline, text, result.mismatches)
            assert result.bytes_sent == result.modelled_bytes, (seed, pipeline)


def test_random_nn_programs_run_correctly() -> None:
    """Random programs, half their ops of SPEC §7, on meshes up to 3-D with random input SBPs (partial
    sums and maxima among them), under both rules and both planners, match the global reference."""
    _check_random(range(6))


@pytest.mark.exhaustive
def test_300_random_nn_programs_run_correctly() -> None:
    _check_random(range(6, 306))


VOCAB_PARALLEL = """sbp.placement @p "cpu" [[0, 1], [2, 3]]
func.func @main(%t: !sbp.tensor<11x6xf32, @p, [S(0), S(1)]>, %i: !sbp.tensor<5x3xi64, @p, [B, B]>,
    %l: !sbp.tensor<5x3x7xbf16, @p, [S(0), S(2)]>, %y: !sbp.tensor<5x3xi32, @p, [S(0), B]>)
    -> (!sbp.tensor<5x3x6xf32, @p, [P, S(2)]>, !sbp.tensor<5x3xbf16, @p, [S(0), P]>) {
  %0 = sbp.embedding %t, %i : !sbp.tensor<11x6xf32, @p, [S(0), S(1)]>, !sbp.tensor<5x3xi64, @p, [B, B]>
      -> !sbp.tensor<5x3x6xf32, @p, [P, S(2)]>
  %1 = sbp.cross_entropy %l, %y : !sbp.tensor<5x3x7xbf16, @p, [S(0), S(2)]>, !sbp.tensor<5x3xi32, @p, [S(0), B]>
      -> !sbp.tensor<5x3xbf16, @p, [S(0), P]>
  func.return %0, %1 : !sbp.tensor<5x3x6xf32, @p, [P, S(2)]>, !sbp.tensor<5x3xbf16, @p, [S(0), P]>
}
"""


@pytest.mark.parametrize("backend", ["simulator", pytest.param("torch", marks=pytest.mark.torch)])
def test_vocab_parallel_on_a_2d_mesh(backend: str) -> None:
    """A table split on its rows over mesh axis 0 and its hidden axis over axis 1 gives [P, S(2)];
    bf16 logits split on the batch over axis 0 and the vocabulary over axis 1 give [S(0), P] through
    the two row all-reduces on mesh axis 1 only; both match the reference, per rank on torch too."""
    result = sbpc.run(sbpc.parse(VOCAB_PARALLEL), backend=backend)  # type: ignore[arg-type]
    assert result.ok, result.mismatches
    reduced = [line for line in result.collectives if line.startswith("all_reduce")]
    assert len(reduced) == 2 and all("mesh_axes=[1]" in line and "[5,3,1]" in line for line in reduced)


@pytest.mark.parametrize(("src", "dst", "partial"), [("f32", "i32", False), ("f32", "i1", False), ("i32", "i1", False),
                                                     ("i8", "i32", False), ("i32", "f32", False), ("i32", "i8", True),
                                                     ("f32", "bf16", True)])
def test_a_partial_sum_stays_partial_only_through_an_additive_cast(src: str, dst: str, partial: bool) -> None:
    """trunc(a + b) is not trunc(a) + trunc(b), nor is a widening of wrapped integer pieces their
    sum: such a cast reduces its partial input first, and the run checks."""
    x, y = f"!sbp.tensor<6x{src}, @p, [P]>", f"!sbp.tensor<6x{dst}, @p>"
    text = (f'sbp.placement @p "cpu" [0, 1]\nfunc.func @main(%x: {x}) -> {y} {{\n  %0 = sbp.cast %x : {x} -> {y}\n'
            f"  func.return %0 : {y}\n}}\n")
    op = _op(text)
    rule = op.get_trait(SbpRule)
    assert rule is not None
    assert any(ins[0].short_str() == "P" for ins, _ in rule.signatures(op, 2)) == partial
    assert sbpc.run(sbpc.parse(text)).ok
