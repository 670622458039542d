"""Each op family's 1-D signature list equals OneFlow's (reference/oneflow.md §5), in builder
order, with the all-B signature appended last (GetSbpSignaturesIf).

Signatures are written `"in0,in1->out"` with OneFlow's names (S(i), B, P, P(max), P(min)).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.ir import Operation
from xdsl.parser import Parser

from sbpc.dialects.context import register_dialects
from sbpc.dialects.sbp import BROADCAST, nd_sbp, split
from sbpc.dialects.sharding import fits_shape, local_shape
from sbpc.dialects.signatures import (
    SbpRule,
    Sig,
    deduplicate,
    reshape_keeps_order,
    reshape_nd_pairs,
    reshape_split_pairs,
)
from sbpc.passes.infer_sbp.candidates import axis_list, axis_lists, format_nd_sig, nd_candidates, nd_product
from sbpc.runtime.distribute import assemble, distribute

_CTX = Context()
register_dialects(_CTX)


def _ty(shape: tuple[int, ...], sbp: str = "B", elt: str = "f32") -> str:
    dims = "x".join(str(d) for d in shape)
    return f"!sbp.tensor<{dims + 'x' if dims else ''}{elt}, @p, [{sbp}]>"


def make_op(
    name: str, ins: list[tuple[int, ...]], out: tuple[int, ...], props: str = "", elt: str = "f32"
) -> Operation:
    """One `name` op (generic form) with operands of shapes `ins` and a result of shape `out`."""
    args = ", ".join(f"%a{i}: {_ty(s, elt=elt)}" for i, s in enumerate(ins))
    operands = ", ".join(f"%a{i}" for i in range(len(ins)))
    in_types = ", ".join(_ty(s, elt=elt) for s in ins)
    out_ty = _ty(out, elt=elt).replace(", [B]>", ">")
    text = (
        'sbp.placement @p "cpu" [0, 1]\n'
        f"func.func @f({args}) {{\n"
        f'  %r = "{name}"({operands}) {props} : ({in_types}) -> {out_ty}\n'
        "  func.return\n}\n"
    )
    module = Parser(_CTX, text).parse_module()
    module.verify()
    f = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return next(iter(f.body.block.ops))


def fmt(sig: Sig) -> str:
    return ",".join(e.short_str() for e in sig[0]) + "->" + ",".join(e.short_str() for e in sig[1])


def oneflow_list(op: Operation, n: int = 2) -> list[str]:
    """The op's OneFlow 1-D list on a mesh axis of size n, all-B appended."""
    rule = op.get_trait(SbpRule)
    assert rule is not None
    return [fmt(s) for s in axis_list(rule, op, n, complete=False)]


def complete_list(op: Operation, n: int = 2) -> list[str]:
    """rule=cost's list: OneFlow's plus partial max/min, all-B last."""
    rule = op.get_trait(SbpRule)
    assert rule is not None
    return [fmt(s) for s in axis_list(rule, op, n, complete=True)]


# ---------------------------------------------------------------------------
# Elementwise binary ops
# ---------------------------------------------------------------------------


def test_add_equal_shapes_is_add_n() -> None:
    # a + b with equal shapes runs add_n: S(i) on all inputs for every axis, then P.
    op = make_op("sbp.add", [(4, 6), (4, 6)], (4, 6))
    assert oneflow_list(op) == ["S(0),S(0)->S(0)", "S(1),S(1)->S(1)", "P,P->P", "B,B->B"]


def test_add_n_has_no_size_one_check() -> None:
    # add_n splits every axis, size-1 ones included (the shape filter removes them later).
    op = make_op("sbp.add", [(4, 1), (4, 1)], (4, 1))
    assert oneflow_list(op) == ["S(0),S(0)->S(0)", "S(1),S(1)->S(1)", "P,P->P", "B,B->B"]


def test_broadcast_equal_rank_size_one_dims() -> None:
    # broadcast_sub, equal ranks: equal dims split both, x_i == 1 gives (B, S(i)), y_i == 1
    # gives (S(i), B), both 1 gives nothing.
    op = make_op("sbp.sub", [(4, 1, 6, 1), (4, 5, 1, 1)], (4, 5, 6, 1))
    assert oneflow_list(op) == [
        "S(0),S(0)->S(0)",
        "B,S(1)->S(1)",
        "S(2),B->S(2)",
        "P,P->P",
        "B,B->B",
    ]


def test_add_with_different_shapes_is_broadcast_add() -> None:
    op = make_op("sbp.add", [(4, 6), (1, 6)], (4, 6))
    assert oneflow_list(op) == ["S(0),B->S(0)", "S(1),S(1)->S(1)", "P,P->P", "B,B->B"]


def test_broadcast_unequal_rank_quirk() -> None:
    # x has the higher rank: its leading axes give (S(i), B); the aligned trailing axes give
    # (S(xi), S(yi)) from the last axis backwards, with no size-1 check and no (S, B) form.
    op = make_op("sbp.add", [(2, 4, 6), (4, 6)], (2, 4, 6))
    assert oneflow_list(op) == ["S(0),B->S(0)", "S(2),S(1)->S(2)", "S(1),S(0)->S(1)", "P,P->P", "B,B->B"]
    op = make_op("sbp.add", [(2, 4, 6), (1, 6)], (2, 4, 6))
    # y's dim 1 is broadcast, yet (S(1), S(0)) is listed and (S(1), B) is missing.
    assert oneflow_list(op) == ["S(0),B->S(0)", "S(2),S(1)->S(2)", "S(1),S(0)->S(1)", "P,P->P", "B,B->B"]


def test_broadcast_unequal_rank_lower_lhs() -> None:
    op = make_op("sbp.mul", [(6,), (3, 4, 6)], (3, 4, 6))
    assert oneflow_list(op) == [
        "B,S(0)->S(0)",
        "B,S(1)->S(1)",
        "S(0),S(2)->S(2)",
        "B,P->P",
        "P,B->P",
        "B,B->B",
    ]


def test_scalar_rank_zero_operand() -> None:
    op = make_op("sbp.div", [(4, 6), ()], (4, 6))
    assert oneflow_list(op) == ["S(0),B->S(0)", "S(1),B->S(1)", "P,B->P", "B,B->B"]


@pytest.mark.parametrize(
    ("name", "partials"),
    [
        ("sbp.sub", ["P,P->P"]),
        ("sbp.mul", ["B,P->P", "P,B->P"]),
        ("sbp.div", ["P,B->P"]),
        ("sbp.maximum", []),
        ("sbp.minimum", []),
        ("sbp.fmod", []),
    ],
)
def test_binary_partials(name: str, partials: list[str]) -> None:
    # Sub (P,P); Mul (B,P) then (P,B); Div (P,B) only; maximum/minimum/fmod none (not linear).
    op = make_op(name, [(4, 6), (4, 6)], (4, 6))
    assert oneflow_list(op) == ["S(0),S(0)->S(0)", "S(1),S(1)->S(1)", *partials, "B,B->B"]


def test_fmod_broadcast_other() -> None:
    op = make_op("sbp.fmod", [(4, 6), (6,)], (4, 6))
    assert oneflow_list(op) == ["S(0),B->S(0)", "S(1),S(0)->S(1)", "B,B->B"]


def test_extremum_lists_are_cost_only() -> None:
    op = make_op("sbp.maximum", [(4, 6), (4, 6)], (4, 6))
    assert complete_list(op) == ["S(0),S(0)->S(0)", "S(1),S(1)->S(1)", "P(max),P(max)->P(max)", "B,B->B"]
    op = make_op("sbp.minimum", [(4, 6), (4, 6)], (4, 6))
    assert complete_list(op) == ["S(0),S(0)->S(0)", "S(1),S(1)->S(1)", "P(min),P(min)->P(min)", "B,B->B"]
    op = make_op("sbp.add", [(4, 6), (4, 6)], (4, 6))
    assert complete_list(op) == oneflow_list(op)


# ---------------------------------------------------------------------------
# Unary and scalar ops
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "props", "partial"),
    [
        ("sbp.add_scalar", "<{scalar = 1.0 : f32}>", False),
        ("sbp.fmod_scalar", "<{other = 3.0 : f32}>", False),
        ("sbp.mul_scalar", "<{scalar = 2.0 : f32}>", True),
        ("sbp.relu", "", False),
    ],
)
def test_scalar_and_unary(name: str, props: str, partial: bool) -> None:
    # scalar_add / scalar_fmod / relu: S(i) -> S(i) only; scalar_mul also P -> P.
    op = make_op(name, [(4, 6, 2)], (4, 6, 2), props)
    expected = ["S(0)->S(0)", "S(1)->S(1)", "S(2)->S(2)", *(["P->P"] if partial else []), "B->B"]
    assert oneflow_list(op) == expected


def test_unary_extremum_rules() -> None:
    relu = make_op("sbp.relu", [(4, 6)], (4, 6))
    assert complete_list(relu) == ["S(0)->S(0)", "S(1)->S(1)", "P(max)->P(max)", "P(min)->P(min)", "B->B"]
    neg = make_op("sbp.neg", [(4, 6)], (4, 6))
    assert complete_list(neg) == ["S(0)->S(0)", "S(1)->S(1)", "P->P", "P(max)->P(min)", "P(min)->P(max)", "B->B"]
    fmod = make_op("sbp.fmod_scalar", [(4, 6)], (4, 6), "<{other = 3.0 : f32}>")
    assert complete_list(fmod) == oneflow_list(fmod)


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------

_MATMUL_P = ["P,B->P", "B,P->P", "B,B->B"]


@pytest.mark.parametrize(
    ("props", "a", "b", "expected"),
    [
        ("", (4, 6), (6, 8), ["S(0),B->S(0)", "B,S(1)->S(1)", "S(1),S(0)->P"]),
        ("<{transpose_a}>", (6, 4), (6, 8), ["S(1),B->S(0)", "B,S(1)->S(1)", "S(0),S(0)->P"]),
        ("<{transpose_b}>", (4, 6), (8, 6), ["S(0),B->S(0)", "B,S(0)->S(1)", "S(1),S(1)->P"]),
        ("<{transpose_a, transpose_b}>", (6, 4), (8, 6), ["S(1),B->S(0)", "B,S(0)->S(1)", "S(0),S(1)->P"]),
    ],
    ids=["plain", "transpose_a", "transpose_b", "transpose_ab"],
)
def test_matmul_variants(props: str, a: tuple[int, ...], b: tuple[int, ...], expected: list[str]) -> None:
    op = make_op("sbp.matmul", [a, b], (4, 8), props)
    assert oneflow_list(op) == [*expected, *_MATMUL_P]


def test_batch_matmul() -> None:
    # batch_matmul: S(i) on all for each batch axis first, then the matrix list on r-2 / r-1.
    op = make_op("sbp.matmul", [(3, 2, 4, 6), (3, 2, 6, 8)], (3, 2, 4, 8))
    assert oneflow_list(op) == [
        "S(0),S(0)->S(0)",
        "S(1),S(1)->S(1)",
        "S(2),B->S(2)",
        "B,S(3)->S(3)",
        "S(3),S(2)->P",
        *_MATMUL_P,
    ]


def test_broadcast_matmul() -> None:
    # b without batch axes: the batch axis of a is split alone, b broadcast.
    op = make_op("sbp.matmul", [(3, 4, 6), (6, 8)], (3, 4, 8))
    assert oneflow_list(op) == ["S(0),B->S(0)", "S(1),B->S(1)", "B,S(1)->S(2)", "S(2),S(0)->P", *_MATMUL_P]


# ---------------------------------------------------------------------------
# Reductions, transpose, reshape
# ---------------------------------------------------------------------------


def test_reduce_sum_without_keepdims() -> None:
    # Per input axis in order: reduced S(i) -> P then P -> P; kept S(i) -> S(i - #reduced before).
    op = make_op("sbp.reduce_sum", [(4, 6, 8)], (4, 8), "<{axes = array<i64: 1>}>")
    assert oneflow_list(op) == ["S(0)->S(0)", "S(1)->P", "P->P", "S(2)->S(1)", "B->B"]


def test_reduce_sum_with_keepdims() -> None:
    op = make_op("sbp.reduce_sum", [(4, 6, 8)], (4, 1, 8), "<{axes = array<i64: 1>, keepdims}>")
    assert oneflow_list(op) == ["S(0)->S(0)", "S(1)->P", "P->P", "S(2)->S(2)", "B->B"]


def test_reduce_sum_several_axes_repeats_p() -> None:
    # GeneratePartialSbp runs once per reduced axis, so P -> P is listed once per reduced axis.
    op = make_op("sbp.reduce_sum", [(4, 6, 8)], (6,), "<{axes = array<i64: 0, 2>}>")
    assert oneflow_list(op) == ["S(0)->P", "P->P", "S(1)->S(0)", "S(2)->P", "P->P", "B->B"]


def test_reduce_max_min_kept_axes_only() -> None:
    op = make_op("sbp.reduce_max", [(4, 6, 8)], (4, 8), "<{axes = array<i64: 1>}>")
    assert oneflow_list(op) == ["S(0)->S(0)", "S(2)->S(1)", "B->B"]
    assert complete_list(op) == ["S(0)->S(0)", "S(2)->S(1)", "S(1)->P(max)", "P(max)->P(max)", "B->B"]
    op = make_op("sbp.reduce_min", [(4, 6, 8)], (4, 1, 8), "<{axes = array<i64: 1>, keepdims}>")
    assert oneflow_list(op) == ["S(0)->S(0)", "S(2)->S(2)", "B->B"]
    assert complete_list(op) == ["S(0)->S(0)", "S(2)->S(2)", "S(1)->P(min)", "P(min)->P(min)", "B->B"]


def test_transpose() -> None:
    # S(perm[i]) -> S(i) for each output axis i, then P -> P.
    op = make_op("sbp.transpose", [(2, 4, 6)], (6, 2, 4), "<{perm = array<i64: 2, 0, 1>}>")
    assert oneflow_list(op) == ["S(2)->S(0)", "S(0)->S(1)", "S(1)->S(2)", "P->P", "B->B"]


@pytest.mark.parametrize(
    ("src", "dst", "n", "expected"),
    [
        # One group (4*6 = 24): the group start axes 0 -> 0 split if 4 == 24 or both % n == 0.
        ((4, 6), (24,), 2, ["S(0)->S(0)", "P->P", "B->B"]),
        ((4, 6), (24,), 3, ["P->P", "B->B"]),
        ((4, 6), (24,), 4, ["S(0)->S(0)", "P->P", "B->B"]),
        # Groups from the tail: (4) -> (4) equal, then (2, 3) -> (6): 2 % 2 == 6 % 2 == 0.
        ((2, 3, 4), (6, 4), 2, ["S(0)->S(0)", "S(2)->S(1)", "P->P", "B->B"]),
        ((2, 3, 4), (6, 4), 3, ["S(2)->S(1)", "P->P", "B->B"]),
        # Size-1 dims are squeezed first and do not count.
        ((4, 1, 6), (24,), 2, ["S(0)->S(0)", "P->P", "B->B"]),
        ((6, 4), (6, 1, 4), 2, ["S(0)->S(0)", "S(1)->S(2)", "P->P", "B->B"]),
        # Splitting and merging in one reshape: (4, 6) -> (2, 12): no equal cumulative product
        # before the head, one group (4, 6) -> (2, 12) starting at 0 -> 0.
        ((4, 6), (2, 12), 2, ["S(0)->S(0)", "P->P", "B->B"]),
        # A 0-d input only gets the all-B signature (OneFlow returns before P -> P).
        ((), (1, 1), 2, ["B->B"]),
    ],
)
def test_reshape_grouping(src: tuple[int, ...], dst: tuple[int, ...], n: int, expected: list[str]) -> None:
    op = make_op("sbp.reshape", [src], dst)
    assert oneflow_list(op, n) == expected


@pytest.mark.parametrize(
    ("name", "ins", "out", "props"),
    [
        ("sbp.add", [(6, 4), (6, 4)], (6, 4), ""),
        ("sbp.mul", [(6, 1, 4), (5, 1)], (6, 5, 4), ""),
        ("sbp.fmod", [(6, 4), (4,)], (6, 4), ""),
        ("sbp.fmod_scalar", [(6, 4)], (6, 4), "<{other = 2.5 : f32}>"),
        ("sbp.mul_scalar", [(6, 4)], (6, 4), "<{scalar = 2.0 : f32}>"),
        ("sbp.exp", [(6, 4)], (6, 4), ""),
        ("sbp.matmul", [(3, 6, 4), (4, 9)], (3, 6, 9), ""),
        ("sbp.matmul", [(4, 6), (9, 4)], (6, 9), "<{transpose_a, transpose_b}>"),
        ("sbp.reduce_max", [(6, 4, 2)], (4,), "<{axes = array<i64: 0, 2>}>"),
        ("sbp.transpose", [(2, 4, 6)], (6, 2, 4), "<{perm = array<i64: 2, 0, 1>}>"),
        ("sbp.reshape", [(6, 4)], (24,), ""),
    ],
)
def test_axis_size_independence_is_declared(name: str, ins: list, out: tuple, props: str) -> None:
    """A rule that does not declare `reads_axis_size` gives one list for every axis size, so
    `axis_lists` may compute it once per op; reshape's grouping rule does read it."""
    op = make_op(name, ins, out, props)
    rule = op.get_trait(SbpRule)
    assert rule is not None
    lists = {n: (complete_list(op, n), oneflow_list(op, n)) for n in (2, 3, 4, 6, 8)}
    if not rule.reads_axis_size:
        assert all(v == lists[2] for v in lists.values())
    assert [fmt(s) for s in axis_lists(rule, op, (2, 3), complete=True)[1]] == complete_list(op, 3)


def _list_key_cases() -> Iterator[tuple[str, list[tuple[int, ...]], tuple[int, ...], str, str]]:
    """Ops of every rule with a `list_key`, over shapes, properties and element types."""
    shapes = [(), (1,), (4,), (1, 4), (4, 1), (4, 4), (2, 4), (1, 1), (3, 1, 4), (3, 2, 4), (3, 4, 4)]
    for a, b in itertools.product(shapes, shapes):
        try:
            out = tuple(np.broadcast_shapes(a, b))
        except ValueError:
            continue
        for name in ("sbp.add", "sbp.mul", "sbp.maximum", "sbp.sub"):
            yield name, [a, b], out, "", "f32"
        if out == a:
            yield "sbp.fmod", [a, b], out, "", "f32"
    for shape in shapes:
        for name, props in (("sbp.relu", ""), ("sbp.exp", ""), ("sbp.add_scalar", "<{scalar = 2.0 : f32}>"),
                            ("sbp.mul_scalar", "<{scalar = -1.5 : f32}>")):
            yield name, [shape], shape, props, "f32"
        for elt in ("f32", "i16"):
            yield "sbp.neg", [shape], shape, "", elt
            scalar = "3 : i16" if elt == "i16" else "3.0 : f32"
            yield "sbp.add_scalar", [shape], shape, f"<{{scalar = {scalar}}}>", elt
    batches = [(), (3,), (1,), (2, 3), (2, 1)]
    for ba, bb in itertools.product(batches, batches):
        try:
            batch = tuple(np.broadcast_shapes(ba, bb))
        except ValueError:
            continue
        for ta, tb in itertools.product((False, True), repeat=2):
            a = (*ba, 4, 6) if ta else (*ba, 6, 4)
            b = (*bb, 5, 4) if tb else (*bb, 4, 5)
            flags = [f for f, on in (("transpose_a", ta), ("transpose_b", tb)) if on]
            yield "sbp.matmul", [a, b], (*batch, 6, 5), f"<{{{', '.join(flags)}}}>" if flags else "", "f32"
    for shape in [(4,), (4, 6), (2, 4, 6), (4, 4, 4)]:
        for k in range(1, len(shape) + 1):
            for axes in itertools.combinations(range(len(shape)), k):
                for keep in (False, True):
                    out = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep else tuple(
                        d for i, d in enumerate(shape) if i not in axes)
                    props = f"<{{axes = array<i64: {', '.join(map(str, axes))}>{', keepdims' if keep else ''}}}>"
                    for name in ("sbp.reduce_sum", "sbp.reduce_max"):
                        yield name, [shape], out, props, "f32"
        for perm in itertools.permutations(range(len(shape))):
            out = tuple(shape[p] for p in perm)
            yield "sbp.transpose", [shape], out, f"<{{perm = array<i64: {', '.join(map(str, perm))}>}}>", "f32"


def test_list_key_holds_everything_the_lists_read() -> None:
    """`infer-sbp` shares the 1-D lists of ops of one kind whose rule gives equal `list_key`s:
    such ops must have equal lists, OneFlow's and rule=cost's, on every axis size."""
    groups: dict[tuple[object, ...], list[tuple[str, object]]] = {}
    for name, ins, out, props, elt in _list_key_cases():
        op = make_op(name, ins, out, props, elt)
        rule = op.get_trait(SbpRule)
        assert rule is not None
        key = rule.list_key(op, tuple(tuple(v.type.get_shape()) for v in op.operands))  # type: ignore[attr-defined]
        assert key is not None, name
        lists = [(oneflow_list(op, n), complete_list(op, n)) for n in (2, 3, 4)]
        groups.setdefault((type(op), key), []).append((f"{name} {ins} {props} {elt}", lists))
    for members in groups.values():
        first_case, first_lists = members[0]
        for case, lists in members[1:]:
            assert lists == first_lists, f"{case} and {first_case} share a list_key"
    assert sum(len(m) > 1 for m in groups.values()) > 20  # the keys do share


def test_reshape_lists_are_not_shared() -> None:
    op = make_op("sbp.reshape", [(6, 4)], (24,))
    rule = op.get_trait(SbpRule)
    assert rule is not None and rule.list_key(op, ((6, 4),)) is None


def test_reshape_reads_the_axis_size() -> None:
    op = make_op("sbp.reshape", [(6, 4)], (24,))
    assert oneflow_list(op, 2) != oneflow_list(op, 4)


def test_reshape_split_pairs_direct() -> None:
    assert reshape_split_pairs((4, 6), (24,), 2) == [(0, 0)]
    assert reshape_split_pairs((2, 3, 4), (6, 4), 2) == [(0, 0), (2, 1)]
    assert reshape_split_pairs((2, 3, 4), (6, 4), 3) == [(2, 1)]
    assert reshape_split_pairs((8, 3), (2, 4, 3), 2) == [(0, 0), (1, 2)]
    assert reshape_split_pairs((1, 1), (1,), 2) == []


# ---------------------------------------------------------------------------
# reshape on ND meshes (ReshapeOp::EnumerateNdSbpSignatures)
# ---------------------------------------------------------------------------


def _nd_list(src: tuple[int, ...], dst: tuple[int, ...], hierarchy: tuple[int, ...], complete: bool = False) -> list:
    op = make_op("sbp.reshape", [src], dst)
    rule = op.get_trait(SbpRule)
    assert rule is not None
    return nd_candidates(rule, op, hierarchy, complete)


def test_reshape_nd_pairs_oneflow_examples() -> None:
    # OneFlow's source comment: (6,) -> (2, 3) on a (2, 3) mesh gives S(0) -> S(0) on mesh axis 0
    # and [S(0), S(0)] -> [S(0), S(1)] on both; plus B and P on every mesh axis.
    b, p = (-1, -1), (-2, -2)
    assert reshape_nd_pairs((6,), (2, 3), (2, 3)) == [
        (p, p), (p, b), (b, p), (b, b), ((0, 0), p), ((0, 0), b), ((0, 0), (0, 1)),
    ]
    # (4, 5, 2, 3) -> (2, 2, 5, 6): groups (2, 3) -> (6), (5) -> (5), (4) -> (2, 2); 5 is split by
    # no mesh axis of 2, the other groups combine across mesh axes.
    pairs = reshape_nd_pairs((4, 5, 2, 3), (2, 2, 5, 6), (2, 2))
    assert ((0, 0), (2, 3)) in pairs and ((2, 3), (0, 0)) in pairs and ((0, 0), (0, 1)) in pairs
    assert not any((1, 2) in sig for sig in pairs)
    assert pairs == sorted(set(pairs))


def test_reshape_nd_list_4_to_2x2_is_deduplicated_and_sorted() -> None:
    # The product's (S(0), S(0)) -> (S(0), S(0)) does not fit the (2, 2) output; the ND
    # enumeration's (S(0), S(0)) -> (S(0), S(1)) does. Sorted by OneFlow's measure.
    got = [format_nd_sig(c) for c in _nd_list((4,), (2, 2), (2, 2))]
    assert got == [
        "[B, B] -> [B, B]", "[B, P] -> [B, P]", "[B, S(0)] -> [B, S(0)]", "[P, B] -> [P, B]",
        "[P, P] -> [P, P]", "[P, S(0)] -> [P, S(0)]", "[S(0), B] -> [S(0), B]", "[S(0), P] -> [S(0), P]",
        "[S(0), S(0)] -> [S(0), S(1)]",
    ]


def test_reshape_nd_drops_shards_that_do_not_line_up() -> None:
    # (12,) -> (6, 2) as (S(0), S(0)) -> (S(0), S(0)) is in the product of the 1-D lists, but rank
    # (0, 0) would hold 3 input elements and 2 output rows (4 elements).
    op = make_op("sbp.reshape", [(12,)], (6, 2))
    rule = op.get_trait(SbpRule)
    assert rule is not None
    product = nd_product(axis_lists(rule, op, (2, 2), complete=False), 1, 1)
    s0 = nd_sbp(split(0), split(0))
    bad = ((s0,), (s0,))
    assert bad in product
    assert not reshape_keeps_order((12,), (6, 2), bad, (2, 2))
    assert bad not in _nd_list((12,), (6, 2), (2, 2))
    assert ((s0,), (nd_sbp(split(0), split(1)),)) not in _nd_list((12,), (6, 2), (2, 2))  # 6 % 2 != 0 after 12 / 2


def test_deduplicate_keeps_the_first_of_a_measure_and_sorts() -> None:
    b, s0, s1 = nd_sbp(BROADCAST, BROADCAST), nd_sbp(split(0), BROADCAST), nd_sbp(split(1), BROADCAST)
    sigs = [((s1,), (s1,)), ((b,), (b,)), ((s0,), (s0,)), ((b,), (b,))]
    assert deduplicate(sigs) == [((b,), (b,)), ((s0,), (s0,)), ((s1,), (s1,))]


@st.composite
def _reshape_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    hierarchy = tuple(draw(st.lists(st.integers(1, 3), min_size=2, max_size=3)))
    src = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 12]), min_size=1, max_size=3)))
    total = math.prod(src)
    dst: list[int] = []
    rest = total
    while rest > 1 and len(dst) < 3:
        divisors = [d for d in range(2, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors)) if len(dst) < 2 else rest
        dst.append(d)
        rest //= d
    if draw(st.booleans()):
        dst.insert(draw(st.integers(0, len(dst))), 1)
    return src, tuple(dst) or (1,), hierarchy


@settings(max_examples=150, deadline=None)
@given(_reshape_cases(), st.booleans())
def test_every_nd_reshape_signature_executes(case: tuple, complete: bool) -> None:
    # Distribute a global tensor by the input ND-SBP, reshape every rank's shard to its output
    # shard's shape, assemble by the output ND-SBP: the global reshape, for every candidate.
    src, dst, hierarchy = case
    value = np.arange(math.prod(src), dtype=np.int64).reshape(src)
    rng = np.random.default_rng(0)
    for (nd_in,), (nd_out,) in _nd_list(src, dst, hierarchy, complete):
        assert fits_shape(nd_out, dst, hierarchy)
        shards = distribute(value, tuple(nd_in), hierarchy, rng)
        out = {c: s.reshape(local_shape(dst, nd_out, hierarchy, c)) for c, s in shards.items()}
        np.testing.assert_array_equal(assemble(out, tuple(nd_out), hierarchy), value.reshape(dst))
