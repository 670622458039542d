"""sbp.layer_norm and sbp.gelu (SPEC §2.4): signatures, numpy semantics against the formulas in
float64, torch semantics against numpy."""

import math

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from sbpc.dialects.context import register_dialects
from sbpc.dialects.sbp import BROADCAST, split
from sbpc.dialects.sbp_ops import GeluOp, LayerNormOp
from sbpc.dialects.signatures import LayerNormRule, SbpRule
from sbpc.runtime import ops_numpy
from sbpc.runtime.op_impls import IMPLS

PROGRAM = """
sbp.placement @p "cpu" [0, 1]
func.func @main(%x: X, %g: G) {
  %0 = sbp.layer_norm %x, %g, %g EPS : X, G, G -> !sbp.tensor<3x5x7xDT, @p>
  %1 = sbp.gelu %x : X -> !sbp.tensor<3x5x7xDT, @p>
  func.return
}
""".replace("X", "!sbp.tensor<3x5x7xDT, @p, [B]>").replace("G", "!sbp.tensor<7xDT, @p, [B]>")


def _ops(dtype: str, eps: str = "") -> tuple[LayerNormOp, GeluOp]:
    ctx = Context()
    register_dialects(ctx)
    module = Parser(ctx, PROGRAM.replace("DT", dtype).replace("EPS", eps)).parse_module()
    module.verify()
    ln = next(op for op in module.walk() if isinstance(op, LayerNormOp))
    gelu = next(op for op in module.walk() if isinstance(op, GeluOp))
    return ln, gelu


def _gelu64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _layer_norm64(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # biased
    return (x - mean) / np.sqrt(var + eps) * gamma.astype(np.float64) + beta.astype(np.float64)


@pytest.mark.parametrize(("dtype", "rtol"), [("f32", 1e-5), ("f16", 2e-3), ("bf16", 1.6e-2)])
def test_numpy_semantics_match_the_formulas(dtype: str, rtol: float) -> None:
    rng = np.random.default_rng(0)
    np_dtype = ops_numpy.np_dtype(_ops(dtype)[0].x.type.element_type)  # type: ignore[attr-defined]
    x = (rng.standard_normal((3, 5, 7)) * 3 + 1).astype(np_dtype)
    gamma = rng.standard_normal(7).astype(np_dtype)
    for eps_text, eps in (("", 1e-5), ("{epsilon = 4.0 : f32}", 4.0)):
        ln, gelu = _ops(dtype, eps_text)
        assert ln.get_epsilon() == eps
        got = IMPLS[LayerNormOp].numpy(ln, [x, gamma, gamma])
        assert got.dtype == np_dtype and got.shape == x.shape
        want = _layer_norm64(x, gamma, gamma, eps)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol)
        # epsilon is read: the default and 4.0 give visibly different results on these rows.
        other = _layer_norm64(x, gamma, gamma, 4.0 if eps != 4.0 else 1e-5)
        assert np.abs(got.astype(np.float64) - other).max() > 10 * rtol
    got = IMPLS[GeluOp].numpy(gelu, [x])
    assert got.dtype == np_dtype
    np.testing.assert_allclose(got.astype(np.float64), _gelu64(x), rtol=rtol, atol=rtol)
    # tanh form, not the erf form: they differ by ~1e-4 around |x| = 2.
    erf_form = 0.5 * x.astype(np.float64) * (1 + np.vectorize(math.erf)(x.astype(np.float64) / math.sqrt(2)))
    if dtype == "f32":
        assert np.abs(got - erf_form).max() > 1e-4


def test_layer_norm_rows_are_independent() -> None:
    """Each row is normalised alone, so the split on a leading axis computes the same bits."""
    ln, _ = _ops("f32")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 7)).astype(np.float32)
    g = rng.standard_normal(7).astype(np.float32)
    whole = IMPLS[LayerNormOp].numpy(ln, [x, g, g])
    part = IMPLS[LayerNormOp].numpy(ln, [x[1:], g, g])
    assert whole[1:].tobytes() == part.tobytes()


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_torch_semantics_match_numpy(dtype: str) -> None:
    from sbpc.runtime import ops_torch  # imports torch, which the marker asks for

    ln, gelu = _ops(dtype)
    np_dtype = ops_numpy.np_dtype(ln.x.type.element_type)  # type: ignore[attr-defined]
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((3, 5, 7)) * 2).astype(np_dtype)
    g = rng.standard_normal(7).astype(np_dtype)
    tol = 1e-5 if dtype == "f32" else 1.6e-2
    for op, args in ((ln, [x, g, g]), (gelu, [x])):
        implementation = IMPLS[type(op)]
        want = implementation.numpy(op, args)
        got = ops_torch.to_numpy(implementation.torch(op, [ops_torch.to_torch(a) for a in args]))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
        assert implementation.torch_rounds_differently


def test_signatures_split_every_axis_but_the_last_and_no_partial() -> None:
    ln, gelu = _ops("f32")
    rule = ln.get_trait(SbpRule)
    assert isinstance(rule, LayerNormRule)
    assert rule.signatures(ln, 2) == [((split(0), BROADCAST, BROADCAST), (split(0),)),
                                      ((split(1), BROADCAST, BROADCAST), (split(1),))]
    assert rule.extremum_signatures(ln, 2) == []
    gelu_rule = gelu.get_trait(SbpRule)
    assert gelu_rule is not None
    assert gelu_rule.signatures(gelu, 2) == [((split(i),), (split(i),)) for i in range(3)]
    assert gelu_rule.extremum_signatures(gelu, 2) == []
