"""The pieces of rule=global's model: FLOP counts from the ops' traits, the roofline of
compute_model, argument domains, the `?` syntax, and the solvers on hand-made factor problems."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from xdsl.dialects.builtin import f16, f32, i32

from sbpc import api
from sbpc.dialects.flops import FlopModel
from sbpc.dialects.sbp import BROADCAST, nd_sbp, partial, split
from sbpc.dialects.sbp_ops import GeluOp, MatmulOp, ReshapeOp
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.cost.compute import DEVICES, device_figures, local_bytes, op_compute_s
from sbpc.passes.infer_sbp.global_search.problem import argument_domain
from sbpc.passes.solver.budget import lagrangian
from sbpc.passes.solver.factor import FactorProblem, MemoryRow, eliminate
from sbpc.passes.solver.mip import min_budget, solve_mip
from sbpc.passes.solver.solve import solve

S0, S1, B, P = split(0), split(1), BROADCAST, partial()


def test_matmul_flops_are_2mnk_of_the_largest_shard() -> None:
    model = MatmulOp.get_trait(FlopModel)
    assert model is not None
    a = GlobalTensorType([64, 32], f32, "m")
    b = GlobalTensorType([32, 16], f32, "m")
    out = GlobalTensorType([64, 16], f32, "m")
    op = MatmulOp.create(operands=[], result_types=[])
    assert model.flops(op, [(64, 32), (32, 16)], [(64, 16)]) == 2 * 64 * 16 * 32
    cpu = DEVICES["cpu"]
    # [S(0)] on 2 ranks: 32 rows each; FLOPs 2*32*16*32 against bytes (32*32 + 32*16 + 32*16) * 4.
    got = op_compute_s(op, model, [a, b], [out], ((nd_sbp(S0), nd_sbp(B)), (nd_sbp(S0),)), (2,), cpu)
    flops, moved = 2 * 32 * 16 * 32, (32 * 32 + 32 * 16 + 32 * 16) * 4
    assert got == max(flops / cpu.f32_flops, moved / cpu.hbm_bytes_per_s)
    # Partial operands are whole on every rank.
    whole = op_compute_s(op, model, [a, b], [out], ((nd_sbp(S1), nd_sbp(S0)), (nd_sbp(P),)), (2,), cpu)
    assert whole == max(2 * 64 * 16 * 16 / cpu.f32_flops, (64 * 16 + 16 * 16 + 64 * 16) * 4 / cpu.hbm_bytes_per_s)


def test_per_element_counts_and_views() -> None:
    gelu = GeluOp.get_trait(FlopModel)
    reshape = ReshapeOp.get_trait(FlopModel)
    assert gelu is not None and reshape is not None and not reshape.moves_bytes
    x = GlobalTensorType([8, 8], f16, "m")
    npu = DEVICES["npu"]
    assert op_compute_s(None, gelu, [x], [x], ((nd_sbp(B),), (nd_sbp(B),)), (4,), npu) == max(  # type: ignore[arg-type]
        9 * 64 / npu.f16_flops, 2 * 64 * 2 / npu.hbm_bytes_per_s)
    assert op_compute_s(None, reshape, [x], [x], ((nd_sbp(B),), (nd_sbp(B),)), (4,), npu) == 0.0  # type: ignore[arg-type]
    assert op_compute_s(None, None, [x], [x], ((nd_sbp(B),), (nd_sbp(B),)), (4,), npu) == 0.0  # type: ignore[arg-type]


def test_device_figures_and_local_bytes() -> None:
    assert device_figures("npu").peak(f16) == 313e12
    assert device_figures("cuda").peak(f32) == 19.5e12
    assert device_figures("cuda").peak(i32) == 19.5e12
    assert device_figures("tpu") == DEVICES["cpu"]
    assert local_bytes(GlobalTensorType([5, 4], f32, "m"), nd_sbp(S0, B), (2, 2)) == 3 * 4 * 4


def test_argument_domain() -> None:
    ty = GlobalTensorType([4, 1], f32, "m")
    assert argument_domain(ty, (2,)) == [nd_sbp(S0), nd_sbp(B)]  # S(1) does not fit 1 column
    text = ('sbp.placement @m "cpu" [[0, 1], [2, 3]]\n'
            "func.func @f(%x: !sbp.tensor<4x4xf32, @m, [?, S(1)]>) -> !sbp.tensor<4x4xf32, @m, [?, S(1)]> {\n"
            "  func.return %x : !sbp.tensor<4x4xf32, @m, [?, S(1)]>\n}\n")
    module = api.parse(text).module
    arg = next(iter(module.walk())).regions[0].blocks[0].ops.last.body.block.args[0]  # type: ignore[union-attr]
    assert arg.type.nd_sbp is None and arg.type.sbp_pattern.short_str() == "[?, S(1)]"
    assert argument_domain(arg.type, (2, 2)) == [nd_sbp(S0, S1), nd_sbp(S1, S1), nd_sbp(B, S1)]


def test_question_mark_entries_verify() -> None:
    base = ('sbp.placement @m "cpu" [[0, 1], [2, 3]]\n'
            "func.func @f(%x: !sbp.tensor<4xf32, @m, [{0}]>) -> !sbp.tensor<4xf32, @m> {{\n"
            "  %y = sbp.relu %x : !sbp.tensor<4xf32, @m, [{0}]> -> !sbp.tensor<4xf32, @m>\n"
            "  func.return %y : !sbp.tensor<4xf32, @m>\n}}\n")
    assert "[?, B]" in str(api.parse(base.format("?, B")))
    with pytest.raises(api.Error, match="split axis 1 out of range"):
        api.parse(base.format("?, S(1)"))
    with pytest.raises(api.Error, match="length 3"):
        api.parse(base.format("?, B, ?"))


def _random_problem(rng: np.random.Generator, n: int) -> FactorProblem:
    ks = rng.integers(1, 5, size=n)
    p = FactorProblem([rng.random(k) for k in ks])
    for _ in range(int(rng.integers(0, 2 * n))):
        u, v = (int(x) for x in rng.integers(0, n, size=2))
        p.add_pair(u, v, rng.random((ks[u], ks[v])))
    p.memory_terms = [(v, rng.random(ks[v]) * 10) for v in range(n)]
    p.memory = [MemoryRow(1.0, list(range(n))), MemoryRow(2.0, [0, n - 1])]
    return p


def test_solvers_agree_with_brute_force_under_budgets() -> None:
    rng = np.random.default_rng(3)
    for _ in range(25):
        p = _random_problem(rng, int(rng.integers(1, 6)))
        plans = [list(c) for c in itertools.product(*[range(len(u)) for u in p.unary])]
        best = min(p.value(c) for c in plans)
        assert abs(eliminate(p).objective - best) <= 1e-12  # type: ignore[union-attr]
        assert abs(solve_mip(p).objective - best) <= 1e-9  # type: ignore[union-attr]
        smallest = min(p.memory_peak(c) for c in plans)
        assert abs(min_budget(p) - smallest) <= 1e-6
        budget = smallest + rng.random() * 5
        fitting = min(p.value(c) for c in plans if p.memory_peak(c) <= budget)
        found = solve(p, budget)
        assert found is not None and p.memory_peak(found.choice) <= budget + 1e-9
        assert abs(found.objective - fitting) <= 1e-9 * max(1.0, fitting) and found.lower_bound <= fitting + 1e-12
        dual = lagrangian(p, budget)
        relaxed, bound = dual.plan, dual.bound
        assert bound <= fitting + 1e-12
        assert relaxed is None or p.memory_peak(relaxed.choice) <= budget
        assert solve(p, smallest - 1e-3) is None
