"""`dialects/collectives.py` is the one meaning of every collective (issue 11 point 1).

Exhaustively over every (collective, mesh_axes, src, dst) on the meshes [2], [3], [2,2], [2,3], [1,2]
and [2,1,2]: the op verifier accepts a step exactly when the semantics executes it as that
collective, and every step it executes preserves the global value (distribute, execute, assemble ==
original, on even and uneven shapes) while sending, rank by rank, the bytes `step_bytes_exact`
predicts and in total the bytes the planner's pricing (`make_step`) charges.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from sbpc.dialects.collective_ops import COLLECTIVE_OPS, CollectiveOp
from sbpc.dialects.collectives import (
    COLLECTIVES,
    InvalidStep,
    check_step,
    execute_step,
    step_bytes_exact,
    step_kind,
)
from sbpc.dialects.sbp import BROADCAST, ReduceKind, nd_sbp, partial, split
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.cost.comm import make_step
from sbpc.passes.cost.steps import axis_subsets
from sbpc.runtime.distribute import assemble, distribute
from sbpc.runtime.simulator import simulate
from sbpc.tools.sbp_opt import register_dialects

S0, S1, B, P, PMAX = split(0), split(1), BROADCAST, partial(), partial(ReduceKind.MAX)
ALPHABET = (S0, S1, B, P, PMAX)
MESHES = [(2,), (3,), (2, 2), (2, 3), (1, 2), (2, 1, 2)]
SHAPES = [(4, 6), (5, 7), (1, 3)]  # even, uneven, smaller than the mesh (empty shards)


def _op(kind: str, axes: tuple[int, ...]) -> CollectiveOp:
    """A collective op to ask for its verifier's verdict on many transitions."""
    ty = GlobalTensorType([4, 6], i64, "m", nd_sbp(B))  # only the transition is read
    return COLLECTIVE_OPS[kind].build(
        operands=[create_ssa_value(ty)], result_types=[ty],
        properties={"mesh_axes": DenseArrayBase.from_list(i64, axes)},
    )


def _verifier_accepts(op: CollectiveOp, src, dst, hierarchy) -> bool:
    try:
        op.verify_transition(nd_sbp(*src), nd_sbp(*dst), hierarchy)
    except VerifyException:
        return False
    return True


def _steps(hierarchy: tuple[int, ...]):
    states = list(itertools.product(ALPHABET, repeat=len(hierarchy)))
    for axes in axis_subsets(len(hierarchy)):
        for src, dst in itertools.product(states, states):
            yield axes, src, dst


@pytest.mark.parametrize(("hierarchy", "stride"), [
    *((h, 1) for h in MESHES if len(h) < 3), *((h, 7) for h in MESHES if len(h) == 3),
    *(pytest.param(h, 1, marks=pytest.mark.exhaustive) for h in MESHES if len(h) == 3),
], ids=str)
def test_verifier_accepts_exactly_what_the_semantics_executes(hierarchy: tuple[int, ...], stride: int) -> None:
    """Every transition on 1-D and 2-D meshes, every `stride`-th on 3-D ones (all under `-m exhaustive`)."""
    ops = {(kind, axes): _op(kind, axes) for kind in COLLECTIVES for axes in axis_subsets(len(hierarchy))}
    value = np.arange(20, dtype=np.int32).reshape(4, 5)
    accepted = rejected = 0
    for axes, src, dst in itertools.islice(_steps(hierarchy), 0, None, stride):
        kind = step_kind(src, dst, axes, hierarchy)
        for name in COLLECTIVES:
            verdict = _verifier_accepts(ops[name, axes], src, dst, hierarchy)
            assert verdict == (kind == name), (name, axes, src, dst, hierarchy)
        if kind is None:
            rejected += 1
            if rejected % 97 == 0:  # the simulator's executor refuses it too, under every name
                shards = distribute(value, src, hierarchy, np.random.default_rng(0))
                for name in COLLECTIVES:
                    with pytest.raises(InvalidStep):
                        execute_step(name, shards, src, dst, axes, value.shape, hierarchy)
        else:
            accepted += 1
    assert accepted > 0 and rejected > 0


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("hierarchy", MESHES, ids=str)
def test_every_step_preserves_the_value_and_sends_the_priced_bytes(
    hierarchy: tuple[int, ...], shape: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(5)
    value = rng.integers(-100, 100, size=shape).astype(np.int32)  # exact for sums and maxima
    kinds: set[str] = set()
    for axes, src, dst in _steps(hierarchy):
        kind = step_kind(src, dst, axes, hierarchy)
        if kind is None:
            continue
        shards = distribute(value, src, hierarchy, rng)
        out, sent = execute_step(kind, shards, src, dst, axes, shape, hierarchy)
        assert np.array_equal(assemble(out, dst, hierarchy), value), (kind, axes, src, dst)
        assert sent == step_bytes_exact(kind, src, dst, axes, shape, hierarchy, 4), (kind, axes, src, dst)
        assert sum(sent.values()) == make_step(kind, src, dst, axes, shape, 4, hierarchy).bytes_sent
        kinds.add(kind)
    assert kinds == set(COLLECTIVES)


def test_the_issue_example_is_a_verifier_error() -> None:
    """[S(0), S(0)] -> [B, S(0)] on mesh axis 0 of 2x2: the rows a group wants are split further on
    mesh axis 1, outside the group. The verifier used to accept it and sbp-run printed NaN."""
    src, dst, hierarchy = (S0, S0), (B, S0), (2, 2)
    found = check_step(src, dst, (0,), hierarchy)
    assert not isinstance(found, str)
    assert "mesh axis 1 splits it further" in found.reason
    assert not _verifier_accepts(_op("all_gather", (0,)), src, dst, hierarchy)
    # On a size-1 mesh axis nothing is split, so the same transition is a valid local relabel.
    assert step_kind(src, dst, (0,), (1, 2)) == "all_gather"
    assert step_bytes_exact("all_gather", src, dst, (0,), (4, 4), (1, 2), 4) == {(0, 0): 0, (0, 1): 0}


def test_verified_collectives_run_on_the_mesh_simulator() -> None:
    """Through the parser and the module verifier into the simulator: one program per collective
    on a mesh with a size-1 axis, each step accepted only if the semantics says so."""
    ctx = Context()
    register_dialects(ctx)
    hierarchy = (2, 1, 2)
    rng = np.random.default_rng(9)
    value = rng.integers(-9, 9, size=(5, 3)).astype(np.int32)
    valid = [(step_kind(src, dst, axes, hierarchy), axes, src, dst) for axes, src, dst in _steps(hierarchy)]
    ran = 0
    for kind, axes, src, dst in [v for v in valid if v[0] is not None][::10]:
        a = f"!sbp.tensor<5x3xi32, @m, [{', '.join(e.short_str() for e in src)}]>"
        r = f"!sbp.tensor<5x3xi32, @m, [{', '.join(e.short_str() for e in dst)}]>"
        axes_text = ", ".join(map(str, axes))
        text = (
            'sbp.placement @m "cpu" [[[0, 1]], [[2, 3]]]\n'
            f"func.func @main(%a: {a}) -> {r} {{\n"
            f"  %0 = sbp.{kind} %a {{mesh_axes = array<i64: {axes_text}>}} : {a} -> {r}\n"
            f"  func.return %0 : {r}\n}}\n"
        )
        module = Parser(ctx, text).parse_module()
        module.verify()
        (out,), log = simulate(module, "main", [distribute(value, src, hierarchy, rng)])
        assert np.array_equal(assemble(out, dst, hierarchy), value), (kind, axes, src, dst)
        assert log[0].sent == step_bytes_exact(kind, src, dst, axes, value.shape, hierarchy, 4)
        ran += 1
    assert ran > 100
