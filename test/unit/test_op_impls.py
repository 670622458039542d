"""One home per op's meaning (issue 21): every compute op of the dialect — every op with a FLOP model
(`dialects.flops.FlopModel`) — has a numpy and a torch implementation in `runtime.op_impls`, keyed by
its class, and an upstream MLIR form in `translate.to_upstream_mlir.LOWERINGS`; nothing else has one."""

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.ir import Operation
from xdsl.parser import Parser

from sbpc.dialects.context import register_dialects
from sbpc.dialects.flops import FlopModel
from sbpc.dialects.sbp_dialect import SBP
from sbpc.dialects.sbp_ops import AddOp, FmodOp
from sbpc.runtime.op_impls import IMPLS, OpImpl, register, run_numpy
from sbpc.translate.linalg_bodies import SCALAR_BODIES
from sbpc.translate.to_upstream_mlir import LOWERINGS

COMPUTE_OPS = sorted((op for op in SBP.operations if op.get_trait(FlopModel) is not None), key=lambda op: op.name)


def test_the_dialect_has_compute_ops() -> None:
    assert len(COMPUTE_OPS) >= 20
    assert {AddOp, FmodOp} <= set(COMPUTE_OPS)


@pytest.mark.parametrize("op_type", COMPUTE_OPS, ids=lambda op: op.name)
def test_every_compute_op_has_numpy_torch_flops_and_export(op_type: type[Operation]) -> None:
    implementation = IMPLS.get(op_type)
    assert implementation is not None, f"{op_type.name} has no OpImpl"
    assert type(implementation).numpy is not OpImpl.numpy, f"{op_type.name} has no numpy implementation"
    assert type(implementation).torch is not OpImpl.torch, f"{op_type.name} has no torch implementation"
    assert isinstance(op_type.get_trait(FlopModel), FlopModel)
    assert op_type in LOWERINGS, f"{op_type.name} has no --emit-mlir lowering"


def test_only_compute_ops_are_implemented_or_lowered() -> None:
    """Conversions and collectives compute nothing locally: no FLOP model, no impl, no compute lowering."""
    assert set(IMPLS) == set(COMPUTE_OPS)
    assert set(LOWERINGS) == set(COMPUTE_OPS)
    assert set(SCALAR_BODIES) <= set(LOWERINGS)


def test_an_op_is_registered_once() -> None:
    with pytest.raises(ValueError, match=r"sbp\.add already has an implementation"):
        register(AddOp, IMPLS[AddOp])


def test_an_override_is_found_by_op_class() -> None:
    """`--kernels` overrides are keyed by class like the impls: the override runs, others keep theirs."""
    ctx = Context()
    register_dialects(ctx)
    t = "!sbp.tensor<3xf32, @p, [B]>"
    module = Parser(ctx, f'sbp.placement @p "cpu" [0]\nfunc.func @main(%a: {t}) {{\n'
                         f"  %0 = sbp.fmod %a, %a : {t}, {t} -> {t}\n  %1 = sbp.add %a, %a : {t}, {t} -> {t}\n"
                         "  func.return\n}\n").parse_module()
    fmod, add = (op for op in module.walk() if isinstance(op, FmodOp | AddOp))
    x = np.array([1.0, 2.0, 3.0], np.float32)
    overrides = {FmodOp: lambda op, operands: np.full(3, 7.0, np.float32)}
    np.testing.assert_array_equal(run_numpy(fmod, [x, x], None, overrides), [7.0, 7.0, 7.0])
    np.testing.assert_array_equal(run_numpy(add, [x, x], None, overrides), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(run_numpy(fmod, [x, x]), [0.0, 0.0, 0.0])
