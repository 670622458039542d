"""SBP rules of the neural-network ops (`dialects/sbp_ops_nn.py`, SPEC §7), as traits like those of
`dialects/signatures.py`: per mesh axis the 1-D signatures, the all-B one appended by the inference.

OneFlow's rules where OneFlow has the op (softmax: a split on any non-reduced axis; concat, slice,
expand, where: splits off the moved axes and partial sums through the linear ones), Megatron's for
the vocabulary-parallel lookups: an embedding table split on its rows gives partial sums (each rank
looks up the rows it holds, zero elsewhere), and a table split on its hidden axis gives a result
split on its last axis.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.traits import OpTrait

from sbpc.dialects.sbp import BROADCAST as _B
from sbpc.dialects.sbp import NdSbpAttr, SbpAttr, SplitAttr, nd_sbp, split
from sbpc.dialects.signatures import P_MAX, P_MIN, P_SUM, SbpRule, Sig, _in_shapes, _shape


def _int_prop(op: Operation, name: str) -> int:
    return int(op.properties[name].value.data)  # type: ignore[attr-defined]


def _extrema(n_operands: int) -> list[Sig]:
    """P(max) and P(min) through an op that only moves elements (rule=cost only)."""
    return [((p,) * n_operands, (p,)) for p in (P_MAX, P_MIN)]


@dataclass(frozen=True)
class SoftmaxRule(SbpRule):
    """softmax along `axis`: S(i) -> S(i) for every other axis; no partial (OneFlow's softmax)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank, axis = len(_shape(op.operands[0])), _int_prop(op, "axis")
        return [((split(i),), (split(i),)) for i in range(rank) if i != axis]

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[0]), _int_prop(op, "axis")


@dataclass(frozen=True)
class EmbeddingRule(SbpRule):
    """embedding(table [V, H], indices): (B, S(i)) -> S(i) per index axis; (S(1), B) -> S(last)
    (hidden split); (S(0), B) -> P(sum) (vocab split, Megatron); (P(sum), B) -> P(sum) (a lookup
    is linear in the table)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[1]))
        sigs: list[Sig] = [((_B, split(i)), (split(i),)) for i in range(rank)]
        sigs.append(((split(1), _B), (split(rank),)))
        sigs.append(((split(0), _B), (P_SUM,)))
        sigs.append(((P_SUM, _B), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[1])


@dataclass(frozen=True)
class CrossEntropyRule(SbpRule):
    """cross_entropy(logits [..., V], targets [...]): (S(i), S(i)) -> S(i) for every batch axis i;
    (S(last), B) -> P(sum), Megatron's vocab-parallel cross-entropy: the rows' maximum and sum of
    exponentials are all-reduced over the vocabulary ranks (`VocabParallelBoxings`, which prices
    them), then each rank subtracts the target logit it holds (`materialize-boxing` expands the op
    into those steps, `passes/expand_vocab_parallel.py`)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[1]))
        sigs: list[Sig] = [((split(i), split(i)), (split(i),)) for i in range(rank)]
        sigs.append(((split(rank), _B), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[1])


@dataclass(frozen=True)
class CrossEntropyStatsRule(SbpRule):
    """cross_entropy_from_stats(logits, targets, row max, row Σexp): batch splits of all four;
    (S(last), B, B, B) -> P(sum) (each rank's target logit, the row terms on the first rank)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[1]))
        sigs: list[Sig] = [((split(i),) * 4, (split(i),)) for i in range(rank)]
        sigs.append(((split(rank), _B, _B, _B), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[1])


def vocab_split_axes(logits: NdSbpAttr, vocab_axis: int) -> list[int]:
    """The mesh axes that split the logits' vocabulary axis."""
    return [m for m, e in enumerate(logits) if isinstance(e, SplitAttr) and e.dim == vocab_axis]


def row_stats_sbps(logits: NdSbpAttr, vocab_axis: int) -> tuple[NdSbpAttr, NdSbpAttr, NdSbpAttr]:
    """The ND-SBPs of a vocab-parallel cross-entropy's row statistics ([..., 1], kept dims): the
    local maximum P(max) and local sum P(sum) on the vocabulary axes, and both after their
    all-reduce (B there); other axes as the logits'."""
    local_max = nd_sbp(*(P_MAX if isinstance(e, SplitAttr) and e.dim == vocab_axis else e for e in logits))
    local_sum = nd_sbp(*(P_SUM if isinstance(e, SplitAttr) and e.dim == vocab_axis else e for e in logits))
    reduced = nd_sbp(*(_B if isinstance(e, SplitAttr) and e.dim == vocab_axis else e for e in logits))
    return local_max, local_sum, reduced


@dataclass(frozen=True)
class VocabParallelBoxings(OpTrait):
    """The all-reduces a signature of the op performs inside it (vocab-parallel cross-entropy: the
    rows' maximum and sum of exponentials), as (shape, source, target) transitions the compute model
    prices (`passes/cost/compute.py`)."""

    def boxings(self, op: Operation, sig: Sequence[Sequence[NdSbpAttr]]) -> list[
            tuple[tuple[int, ...], NdSbpAttr, NdSbpAttr]]:
        logits = sig[0][0]
        shape = _shape(op.operands[0])
        axis = len(shape) - 1
        if not vocab_split_axes(logits, axis):
            return []
        local_max, local_sum, reduced = row_stats_sbps(logits, axis)
        rows = (*shape[:-1], 1)
        return [(rows, local_max, reduced), (rows, local_sum, reduced)]


@dataclass(frozen=True)
class ConcatRule(SbpRule):
    """concat along `axis`: all inputs S(i) -> S(i) for every other axis (their extents agree
    there); all P(sum) -> P(sum)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        k, rank, axis = len(op.operands), len(_shape(op.operands[0])), _int_prop(op, "axis")
        sigs: list[Sig] = [((split(i),) * k, (split(i),)) for i in range(rank) if i != axis]
        sigs.append(((P_SUM,) * k, (P_SUM,)))
        return sigs

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        return _extrema(len(op.operands))

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes), len(in_shapes[0]), _int_prop(op, "axis")


def unsliced_axes(op: Operation) -> list[int]:
    """The axes a slice keeps whole (0:extent:1)."""
    shape = _shape(op.operands[0])
    bounds = zip(*(op.properties[k].get_values() for k in ("start", "stop", "step")), shape, strict=True)  # type: ignore[attr-defined]
    return [i for i, (a, b, s, d) in enumerate(bounds) if a == 0 and b == d and s == 1]


@dataclass(frozen=True)
class SliceRule(SbpRule):
    """slice: S(i) -> S(i) on every unsliced axis; P(sum) -> P(sum)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        sigs: list[Sig] = [((split(i),), (split(i),)) for i in unsliced_axes(op)]
        sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        return _extrema(1)

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return tuple(unsliced_axes(op))


def broadcast_entries(shapes: Sequence[Sequence[int]], out: Sequence[int], k: int) -> tuple[SbpAttr, ...] | None:
    """Per operand, the entry that splits output axis k of a numpy broadcast: S(j) where the operand
    has the axis at full extent, B where it broadcasts along it; None if output axis k has extent 1."""
    if out[k] == 1:
        return None
    entries: list[SbpAttr] = []
    for shape in shapes:
        j = k - (len(out) - len(shape))
        entries.append(split(j) if j >= 0 and shape[j] == out[k] else _B)
    return tuple(entries)


@dataclass(frozen=True)
class WhereRule(SbpRule):
    """where(cond, x, y) with broadcasting: every output axis split, each operand split there or B
    (broadcast along it); (B, P(sum), P(sum)) -> P(sum), since select is linear in (x, y)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        shapes = _in_shapes(op)
        out = _shape(op.results[0])
        sigs: list[Sig] = []
        for k in range(len(out)):
            entries = broadcast_entries(shapes, out, k)
            if entries is not None:
                sigs.append((entries, (split(k),)))
        sigs.append(((_B, P_SUM, P_SUM), (P_SUM,)))
        return sigs

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        return [((_B, p, p), (p,)) for p in (P_MAX, P_MIN)]

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return in_shapes


@dataclass(frozen=True)
class BroadcastToRule(SbpRule):
    """broadcast_to: S(j) -> S(j + lead) on every axis the input has at full extent; P(sum) -> P(sum)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        src, out = _shape(op.operands[0]), _shape(op.results[0])
        lead = len(out) - len(src)
        sigs: list[Sig] = [((split(j),), (split(j + lead),)) for j, d in enumerate(src)
                           if d == out[j + lead] and d != 1]
        sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        return _extrema(1)

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return in_shapes[0], _shape(op.results[0])
