"""SBP rules of the backward and optimizer ops (`dialects/sbp_ops_grad.py`), as traits beside the op,
in the form of `dialects/signatures.py`'s forward rules: per mesh axis of size n, the legal 1-D
signatures (the inference appends the all-B signature itself).

Gradients that are forward ops (matmul's, a broadcast's reduce_sum, mul, reshape, transpose) use the
forward rules, which is where the partial sum of a replicated weight's gradient comes from: `dW =
matmul(x, dy, transpose_a)` with x and dy split on the batch axis contracts over that split and so is
`(S(0), S(0)) -> P(sum)`; a bias's `reduce_sum(dy, [0])` is `S(0) -> P(sum)`. The rules below are the
ops' own: each says which splits keep every element's inputs on one rank and where the op is linear
in an operand (so that a partial sum passes through).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.ir import Operation

from sbpc.dialects.sbp import BROADCAST as _B
from sbpc.dialects.sbp import split
from sbpc.dialects.signatures import P_SUM, SbpRule, Sig
from sbpc.dialects.tensor_type import GlobalTensorType


def _shape(value: object) -> tuple[int, ...]:
    ty = value.type  # type: ignore[attr-defined]
    assert isinstance(ty, GlobalTensorType)
    return ty.get_shape()


@dataclass(frozen=True)
class ElementwiseGradRule(SbpRule):
    """An elementwise op on operands of one shape: S(i) on all of them -> S(i) for every axis i.
    `linear_in` lists the operands the op is linear in jointly (the others fixed): with those P(sum)
    and the rest B the result is P(sum) (relu_grad, gelu_grad: dy; sgd_update: w and g together)."""

    linear_in: tuple[int, ...] = ()

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[0]))
        count = len(op.operands)
        sigs: list[Sig] = [(tuple(split(i) for _ in range(count)), (split(i),)) for i in range(rank)]
        if self.linear_in:
            sigs.append((tuple(P_SUM if k in self.linear_in else _B for k in range(count)), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return (len(in_shapes[0]), len(in_shapes))


@dataclass(frozen=True)
class LayerNormGradRule(SbpRule):
    """layer_norm's input gradient (dy, x, gamma) and its gamma gradient (dy, x): rows whole on one
    rank, so S(i) on dy and x (gamma B) for every axis but the last; the input gradient keeps the
    split, the gamma gradient (a sum over the rows) becomes P(sum). Both are linear in dy: (P, B, B)
    -> P."""

    reduces_rows: bool = False

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[0]))
        rest = (_B,) * (len(op.operands) - 2)
        out = (P_SUM,) if self.reduces_rows else None
        sigs: list[Sig] = [((split(i), split(i), *rest), out or (split(i),)) for i in range(rank - 1)]
        sigs.append(((P_SUM, _B, *rest), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[0])


@dataclass(frozen=True)
class ExpandRule(SbpRule):
    """reduce_sum_grad: dy (the reduced shape) broadcast back along the reduced `axes`. A kept axis
    keeps its split; a B dy may come out split on a reduced axis (each rank writes its slice); P -> P."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        axes = tuple(op.properties["axes"].get_values())  # type: ignore[attr-defined]
        keepdims = op.properties.get("keepdims") is not None
        rank = len(_shape(op.results[0]))
        sigs: list[Sig] = []
        for j in range(rank):
            if j in axes:
                sigs.append(((_B,), (split(j),)))
            else:
                i = j if keepdims else j - sum(1 for a in axes if a < j)
                sigs.append(((split(i),), (split(j),)))
        sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        axes = tuple(op.properties["axes"].get_values())  # type: ignore[attr-defined]
        return (axes, op.properties.get("keepdims") is not None, len(_shape(op.results[0])))


@dataclass(frozen=True)
class OnesLikeRule(SbpRule):
    """ones_like(x): the result does not read x's values, so it may take x's split, or be any split or
    B whatever x is: S(i) -> S(i), B -> S(i), P(sum) -> B (the seed of a partial loss is replicated)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[0]))
        sigs: list[Sig] = [((split(i),), (split(i),)) for i in range(rank)]
        sigs += [((_B,), (split(i),)) for i in range(rank)]
        sigs.append(((P_SUM,), (_B,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[0])


@dataclass(frozen=True)
class ExtremumGradRule(SbpRule):
    """reduce_extremum_grad(dy, y: the reduced shape; x): every group of x reduced into one y element
    must be whole on one rank (the count of ties is global), so only kept axes split, dy, x and y
    alike; linear in dy: (P, B, B) -> P."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        axes = tuple(op.properties["axes"].get_values())  # type: ignore[attr-defined]
        keepdims = op.properties.get("keepdims") is not None
        rank = len(_shape(op.operands[1]))
        sigs: list[Sig] = []
        for j in range(rank):
            if j not in axes:
                i = j if keepdims else j - sum(1 for a in axes if a < j)
                sigs.append(((split(i), split(j), split(i)), (split(j),)))
        sigs.append(((P_SUM, _B, _B), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        axes = tuple(op.properties["axes"].get_values())  # type: ignore[attr-defined]
        return (axes, op.properties.get("keepdims") is not None, len(in_shapes[1]))


@dataclass(frozen=True)
class EmbeddingGradRule(SbpRule):
    """embedding_grad(dy [..., H], indices [...]) -> [V, H]: dy and the indices split alike on a batch
    axis give P(sum) (each rank scatters its rows: a batch-split lookup's table gradient, reduced where
    the update needs it); dy split on the hidden axis with B indices gives S(1); linear in dy: (P, B) ->
    P. A vocab-split table's gradient S(0) is the free slice of the all-B result (each rank of a
    replicated dy computes the rows; Megatron's vocab-parallel backward without communication)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[1]))
        sigs: list[Sig] = [((split(i), split(i)), (P_SUM,)) for i in range(rank)]
        sigs.append(((split(rank), _B), (split(1),)))
        sigs.append(((P_SUM, _B), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[1])


@dataclass(frozen=True)
class CrossEntropyGradRule(SbpRule):
    """cross_entropy_grad(logits, targets, dloss, row_max, row_sum): every operand split alike on a
    batch axis -> S(i); vocab-split logits (S(last)) with the rest B -> S(last) (each rank its range of
    the softmax, the one-hot where it holds the target); linear in dloss: (B, B, P, B, B) -> P."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rows = len(_shape(op.operands[1]))
        sigs: list[Sig] = [((split(i),) * 5, (split(i),)) for i in range(rows)]
        sigs.append(((split(rows), _B, _B, _B, _B), (split(rows),)))
        sigs.append(((_B, _B, P_SUM, _B, _B), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[1])


@dataclass(frozen=True)
class SliceGradRule(SbpRule):
    """slice_grad: S(i) -> S(i) on every axis the slice kept whole (0:extent:1); P(sum) -> P(sum)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        dy, out = _shape(op.operands[0]), _shape(op.results[0])
        bounds = zip(*(op.properties[k].get_values() for k in ("start", "stop", "step")), out, strict=True)  # type: ignore[attr-defined]
        whole = [i for i, (a, b, s, d) in enumerate(bounds) if a == 0 and b == d and s == 1 and dy[i] == d]
        sigs: list[Sig] = [((split(i),), (split(i),)) for i in whole]
        sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        bounds = tuple(tuple(op.properties[k].get_values()) for k in ("start", "stop", "step"))  # type: ignore[attr-defined]
        return (bounds, _shape(op.results[0]))
