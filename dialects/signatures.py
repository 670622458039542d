"""Each op family's legal 1-D SBP signatures, as traits the ops carry (reference/oneflow.md §5).

A rule lists, for one mesh axis of size `n`, the signatures OneFlow's `GetSbp` builds, in its
builder order; the inference appends the all-B signature itself, as OneFlow does. Rules that
OneFlow lacks (partial max/min) are listed separately by `extremum_signatures` and used only by
`--infer-sbp="rule=cost"`. The inference never switches on op names: it asks the op's rule.
"""

from __future__ import annotations

import abc
import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation
from xdsl.traits import OpTrait

from sbpc.dialects.sbp import BROADCAST as _B
from sbpc.dialects.sbp import NdSbpAttr, PartialAttr, ReduceKind, SbpAttr, SplitAttr, nd_sbp, partial, split
from sbpc.dialects.sharding import fits_shape, flat_pattern, split_axes, split_slices
from sbpc.dialects.tensor_type import GlobalTensorType

Sig = tuple[tuple[SbpAttr, ...], tuple[SbpAttr, ...]]
"""One 1-D signature: an SBP per operand, an SBP per result."""

NdSig = tuple[tuple[NdSbpAttr, ...], tuple[NdSbpAttr, ...]]
"""One ND signature: an ND-SBP per operand, an ND-SBP per result."""

P_SUM = partial(ReduceKind.SUM)
P_MAX = partial(ReduceKind.MAX)
P_MIN = partial(ReduceKind.MIN)


def _shape(value: object) -> tuple[int, ...]:
    ty = value.type  # type: ignore[attr-defined]
    assert isinstance(ty, GlobalTensorType)
    return ty.get_shape()


def _in_shapes(op: Operation) -> list[tuple[int, ...]]:
    return [_shape(v) for v in op.operands]


class SbpRule(OpTrait, abc.ABC):
    """The SBP signature rule of an op family."""

    reads_axis_size: ClassVar[bool] = False
    """Whether the 1-D lists depend on the mesh axis size n (else one list serves every axis)."""

    @abc.abstractmethod
    def signatures(self, op: Operation, n: int) -> list[Sig]:
        """OneFlow's candidate list for a mesh axis of size n (without the appended all-B)."""

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        """Partial max/min signatures OneFlow lacks (used by rule=cost only)."""
        return []

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        """Everything `signatures` and `extremum_signatures` read of the op (its input shapes are
        `in_shapes`), so that ops of this rule with equal keys share their 1-D lists; None: the
        lists are not shared (the rule reads more than a key would cheaply hold)."""
        return None

    def nd_signatures(self, op: Operation, hierarchy: Sequence[int], product: list[NdSig]) -> list[NdSig]:
        """OneFlow's `EnumerateNdSbpSignatures` hook on an ND mesh: the candidate list given the
        direct product of the per-axis lists (most ops keep the product as it is)."""
        return product


def swap_with_last_filter(items: list[NdSig], keep) -> list[NdSig]:  # type: ignore[no-untyped-def]
    """OneFlow removes rejected candidates by swapping in the last one (order changes).

    Like OneFlow ("go down from the tail to the head"), the scan runs from the last index to
    the first, so the element swapped in has already been kept.
    """
    items = list(items)
    for i in range(len(items) - 1, -1, -1):
        if not keep(items[i]):
            items[i] = items[-1]
            items.pop()
    return items


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------


def broadcast_split_signatures(a: Sequence[int], b: Sequence[int]) -> list[Sig]:
    """OneFlow's broadcast-binary split rules (math_binary_broadcast_ops.cpp), quirks included."""
    sigs: list[Sig] = []
    if len(a) < len(b) or len(a) > len(b):
        short_is_a = len(a) < len(b)
        long_rank, short_rank = max(len(a), len(b)), min(len(a), len(b))
        lead = long_rank - short_rank
        for i in range(lead):
            sigs.append(((_B, split(i)) if short_is_a else (split(i), _B), (split(i),)))
        for i in reversed(range(short_rank)):
            # Quirk: aligned trailing axes are split on both sides with no size-1 check, and the
            # (B, S) form for a size-1 short dim is never generated. OneFlow emits them from the
            # last axis backwards (FOR_RANGE over `NumAxes() - 1 - i`); the order decides ties.
            pair = (split(i), split(lead + i)) if short_is_a else (split(lead + i), split(i))
            sigs.append((pair, (split(lead + i),)))
        return sigs
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == 1 and y == 1:
            continue
        if x == y:
            sigs.append(((split(i), split(i)), (split(i),)))
        elif x == 1:
            sigs.append(((_B, split(i)), (split(i),)))
        elif y == 1:
            sigs.append(((split(i), _B), (split(i),)))
    return sigs


def broadcast_pattern(a: Sequence[int], b: Sequence[int]) -> Hashable:
    """What `broadcast_split_signatures` (and add_n's `a == b`) read of two shapes: the ranks and,
    when they agree, per axis whether the extents are equal and which are 1."""
    if len(a) != len(b):
        return (len(a), len(b))
    return (len(a), len(b), tuple([(x == y, x == 1, y == 1) for x, y in zip(a, b, strict=True)]))


@dataclass(frozen=True)
class BinaryRule(SbpRule):
    """Broadcast binary ops. `partials` are OneFlow's P signatures of the op; `add_n` marks
    `sbp.add`, which OneFlow runs as add_n when the shapes agree; `extremum` is the partial
    kind the op preserves (maximum: max, minimum: min) under rule=cost."""

    partials: tuple[tuple[str, str], ...] = ()
    add_n: bool = False
    extremum: ReduceKind | None = None

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        a, b = _in_shapes(op)
        if self.add_n and a == b:
            sigs: list[Sig] = [((split(i), split(i)), (split(i),)) for i in range(len(a))]
        else:
            sigs = broadcast_split_signatures(a, b)
        for lhs, rhs in self.partials:
            sigs.append(((_PART[lhs], _PART[rhs]), (P_SUM,)))
        return sigs

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        if self.extremum is None:
            return []
        p = partial(self.extremum)
        return [((p, p), (p,))]

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        a, b = in_shapes
        return broadcast_pattern(a, b)


_PART = {"P": P_SUM, "B": _B}


@dataclass(frozen=True)
class UnaryRule(SbpRule):
    """Elementwise unary / scalar ops: S(i) -> S(i) for every axis, optionally P -> P.
    `monotone` = 1 keeps P(max)/P(min), -1 swaps them (rule=cost only)."""

    partial_sum: bool = False
    monotone: int = 0
    wraps_on_integers: bool = False
    """Integer arithmetic can wrap (neg of INT_MIN, adding a negative scalar to INT_MIN), so the partial
    max/min rules only hold for floating-point tensors."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[0]))
        sigs: list[Sig] = [((split(i),), (split(i),)) for i in range(rank)]
        if self.partial_sum:
            sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        if not self.wraps_on_integers:
            return len(in_shapes[0])
        return (len(in_shapes[0]), isinstance(op.operands[0].type.element_type, IntegerType))  # type: ignore[attr-defined]

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        if self.wraps_on_integers and isinstance(op.operands[0].type.element_type, IntegerType):  # type: ignore[attr-defined]
            return []
        if self.monotone == 1:
            return [((P_MAX,), (P_MAX,)), ((P_MIN,), (P_MIN,))]
        if self.monotone == -1:
            return [((P_MAX,), (P_MIN,)), ((P_MIN,), (P_MAX,))]
        return []


def cast_is_additive(src: object, dst: object) -> bool:
    """Whether a cast maps a sum of pieces to the sum of the cast pieces: float -> float (up to
    rounding) and integer -> integer no wider (wrapping is additive modulo 2^bits). Not float <->
    integer (truncation), not a widening of integers (a partial sum of wrapped pieces), not i1."""
    if isinstance(src, IntegerType) != isinstance(dst, IntegerType):
        return False
    if not isinstance(src, IntegerType):
        return True
    assert isinstance(dst, IntegerType)
    return 1 < dst.width.data <= src.width.data


@dataclass(frozen=True)
class CastRule(SbpRule):
    """cast: S(i) -> S(i) for every axis; P(sum) -> P(sum) where the cast is additive."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[0]))
        sigs: list[Sig] = [((split(i),), (split(i),)) for i in range(rank)]
        if self._additive(op):
            sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    @staticmethod
    def _additive(op: Operation) -> bool:
        return cast_is_additive(op.operands[0].type.element_type, op.results[0].type.element_type)  # type: ignore[attr-defined]

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[0]), self._additive(op)


@dataclass(frozen=True)
class LayerNormRule(SbpRule):
    """layer_norm(x, gamma, beta) and rms_norm(x, gamma): S(i), B, B -> S(i) for every axis i but the
    last (each row is normalised over the last axis, so it must be whole on one rank); no partial
    (mean and variance of a partial sum are not the sums of the parts' mean and variance)."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        rank = len(_shape(op.operands[0]))
        params = (_B,) * (len(op.operands) - 1)  # gamma and beta (rms_norm: gamma only)
        return [((split(i), *params), (split(i),)) for i in range(rank - 1)]

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return len(in_shapes[0]), len(in_shapes)


# ---------------------------------------------------------------------------
# Matmul, reductions, data movement
# ---------------------------------------------------------------------------


def _batch_axes(
    sa: Sequence[int], sb: Sequence[int]
) -> list[tuple[int, int, int, int | None, int | None]]:
    """Matmul's output batch axes, aligned from the right: (output axis i, its axis in a and in
    b (negative: absent), the extents there (None: absent))."""
    out_rank = max(len(sa), len(sb))
    found = []
    for i in range(out_rank - 2):
        ia, ib = i - (out_rank - len(sa)), i - (out_rank - len(sb))
        found.append((i, ia, ib, sa[ia] if ia >= 0 else None, sb[ib] if ib >= 0 else None))
    return found


@dataclass(frozen=True)
class MatmulRule(SbpRule):
    """matmul / batch_matmul / broadcast_matmul (matmul_op.cpp): batch axes first, then
    (S(m),B)->S, (B,S(n))->S, (S(ka),S(kb))->P, (P,B)->P, (B,P)->P."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        sa, sb = _in_shapes(op)
        ta = op.properties.get("transpose_a") is not None
        tb = op.properties.get("transpose_b") is not None
        ra, rb = len(sa), len(sb)
        out_rank = max(ra, rb)
        sigs: list[Sig] = []
        for i, ia, ib, da, db in _batch_axes(sa, sb):
            if da is not None and db is not None and da == db and da != 1:
                sigs.append(((split(ia), split(ib)), (split(i),)))
            elif da is not None and da != 1 and (db is None or db == 1):
                sigs.append(((split(ia), _B), (split(i),)))
            elif db is not None and db != 1 and (da is None or da == 1):
                sigs.append(((_B, split(ib)), (split(i),)))
        m = ra - 1 if ta else ra - 2
        ka = ra - 2 if ta else ra - 1
        kb = rb - 1 if tb else rb - 2
        nn = rb - 2 if tb else rb - 1
        sigs.append(((split(m), _B), (split(out_rank - 2),)))
        sigs.append(((_B, split(nn)), (split(out_rank - 1),)))
        sigs.append(((split(ka), split(kb)), (P_SUM,)))
        sigs.append(((P_SUM, _B), (P_SUM,)))
        sigs.append(((_B, P_SUM), (P_SUM,)))
        return sigs

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        sa, sb = in_shapes
        batch = [(da is None, db is None, da == db, da == 1, db == 1) for _, _, _, da, db in _batch_axes(sa, sb)]
        flags = (op.properties.get("transpose_a") is not None, op.properties.get("transpose_b") is not None)
        return (len(sa), len(sb), flags, tuple(batch))


@dataclass(frozen=True)
class ReduceRule(SbpRule):
    """reduce_sum (kind=sum), per axis in order: kept S(i)->S(i'), reduced S(i)->P followed by
    P->P (0-d: P->P only); reduce_max/min: kept-axis splits only (rule=cost adds reduced
    S(i)->P(kind) and P(kind)->P(kind))."""

    kind: ReduceKind = ReduceKind.SUM

    def _axes(self, op: Operation) -> tuple[tuple[int, ...], bool, int]:
        axes = tuple(op.properties["axes"].get_values())  # type: ignore[attr-defined]
        return axes, op.properties.get("keepdims") is not None, len(_shape(op.operands[0]))

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        axes, keepdims, rank = self._axes(op)
        sigs: list[Sig] = []
        for i in range(rank):
            if i in axes:
                if self.kind == ReduceKind.SUM:
                    # GeneratePartialSbp<Sum>: S(i) -> P then P -> P, once per reduced axis
                    # (so P -> P repeats when several axes are reduced, as in OneFlow).
                    sigs.append(((split(i),), (P_SUM,)))
                    sigs.append(((P_SUM,), (P_SUM,)))
            else:
                out = i if keepdims else i - sum(1 for a in axes if a < i)
                sigs.append(((split(i),), (split(out),)))
        if rank == 0 and self.kind == ReduceKind.SUM:
            sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        if self.kind == ReduceKind.SUM:
            return []
        axes, _, _ = self._axes(op)
        p = partial(self.kind)
        return [*[((split(i),), (p,)) for i in sorted(axes)], ((p,), (p,))]

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return self._axes(op)


@dataclass(frozen=True)
class TransposeRule(SbpRule):
    """transpose: S(perm[i]) -> S(i) for each i; P -> P."""

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        perm = tuple(op.properties["perm"].get_values())  # type: ignore[attr-defined]
        sigs: list[Sig] = [((split(p),), (split(i),)) for i, p in enumerate(perm)]
        sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    def extremum_signatures(self, op: Operation, n: int) -> list[Sig]:
        return [((P_MAX,), (P_MAX,)), ((P_MIN,), (P_MIN,))]

    def list_key(self, op: Operation, in_shapes: tuple[tuple[int, ...], ...]) -> Hashable:
        return tuple(op.properties["perm"].get_values())  # type: ignore[attr-defined]


def reshape_split_pairs(src: Sequence[int], dst: Sequence[int], n: int) -> list[tuple[int, int]]:
    """OneFlow's reshape grouping (reshape_user_op_util.cpp): (in axis, out axis) pairs that may
    be split together on a mesh axis of size n.

    Size-1 dims are dropped; both shapes are walked from the tail into groups of equal element
    count. At each group's outermost axes a, b, S(a) -> S(b) is legal when src[a] == dst[b] or both
    are divisible by n. OneFlow iterates a hash map here; we emit pairs by ascending input axis.
    """
    ins = [(i, d) for i, d in enumerate(src) if d != 1]
    outs = [(i, d) for i, d in enumerate(dst) if d != 1]
    pairs: list[tuple[int, int]] = []
    i, j = len(ins) - 1, len(outs) - 1
    while i >= 0 and j >= 0:
        in_prod, out_prod = ins[i][1], outs[j][1]
        while in_prod != out_prod:
            if in_prod < out_prod:
                i -= 1
                if i < 0:
                    return sorted(pairs)
                in_prod *= ins[i][1]
            else:
                j -= 1
                if j < 0:
                    return sorted(pairs)
                out_prod *= outs[j][1]
        (a, da), (b, db) = ins[i], outs[j]
        if da == db or (da % n == 0 and db % n == 0):
            pairs.append((a, b))
        i, j = i - 1, j - 1
    return sorted(pairs)


# An ND reshape signature as OneFlow enumerates it: per mesh axis an (input, output) pair of
# split axes, or _B / _P on both sides.
_AxisPair = tuple[int, int]
_B_PAIR: _AxisPair = (-1, -1)
_P_PAIR: _AxisPair = (-2, -2)


def _mesh_subsets(rank: int) -> list[tuple[int, ...]]:
    """Non-empty ordered subsets of the mesh axes, in OneFlow's recursion order (skip, then keep)."""
    found: list[tuple[int, ...]] = []

    def walk(depth: int, kept: tuple[int, ...]) -> None:
        if depth == rank:
            if kept:
                found.append(kept)
            return
        walk(depth + 1, kept)
        walk(depth + 1, (*kept, depth))

    walk(0, ())
    return found


def _group_splits(
    ins: Sequence[tuple[int, int]], outs: Sequence[tuple[int, int]], hierarchy: Sequence[int]
) -> list[dict[int, _AxisPair]]:
    """The contiguous ND splits of one reshape group (`EnumerateNdSplitIn2OutAxis`).

    `ins` / `outs` hold (extent, axis) from the innermost axis to the outermost. For each ordered
    subset of mesh axes, the outermost extents on both sides are divided by one mesh axis after
    the other (moving inwards past extents reduced to 1); the subset counts when every one of its
    mesh axes divides both current extents.
    """
    found: list[dict[int, _AxisPair]] = []
    for axes in _mesh_subsets(len(hierarchy)):
        a, b = len(ins) - 1, len(outs) - 1
        da, db = ins[a][0], outs[b][0]
        pairs: dict[int, _AxisPair] = {}
        while a >= 0 and b >= 0 and len(pairs) < len(axes):
            if da == 1:
                a -= 1
                da = ins[a][0] if a >= 0 else 1
                continue
            if db == 1:
                b -= 1
                db = outs[b][0] if b >= 0 else 1
                continue
            mesh_axis = axes[len(pairs)]
            h = hierarchy[mesh_axis]
            if da % h or db % h:
                break
            da, db = da // h, db // h
            pairs[mesh_axis] = (ins[a][1], outs[b][1])
        if len(pairs) == len(axes):
            found.append(pairs)
    return found


def reshape_nd_pairs(src: Sequence[int], dst: Sequence[int], hierarchy: Sequence[int]) -> list[tuple[_AxisPair, ...]]:
    """OneFlow's ND reshape enumeration (`ReshapeUserOpUtil::EnumerateNdSbpIn2OutSignatures`).

    Both shapes are walked from the tail into groups of equal element count. A group of one
    equal extent on both sides may be split by any mesh axis dividing it; a wider group gets its
    contiguous multi-axis splits (`_group_splits`), e.g. (4,) -> (2, 2) on a 2x2 mesh gives
    mesh axis 0: S(0) -> S(0), mesh axis 1: S(0) -> S(1). Every mesh axis may also be B or P.
    The result: every way to cover all mesh axes with these pieces (disjoint mesh axes), one
    (in, out) pair per mesh axis, sorted as OneFlow's std::set sorts them.
    """
    pieces: list[dict[int, _AxisPair]] = []
    group_in: list[tuple[int, int]] = []
    group_out: list[tuple[int, int]] = []
    i, j = len(src) - 1, len(dst) - 1
    count_in, count_out = src[i], dst[j]
    while i >= 0 and j >= 0:
        if count_in < count_out:
            if src[i] != 1:
                group_in.append((src[i], i))
            i -= 1
            count_in *= src[i] if i >= 0 else 1
        elif count_in > count_out:
            if dst[j] != 1:
                group_out.append((dst[j], j))
            j -= 1
            count_out *= dst[j] if j >= 0 else 1
        else:
            if src[i] == dst[j]:
                pieces += [{m: (i, j)} for m, h in enumerate(hierarchy) if src[i] % h == 0]
            else:
                group_in.append((src[i], i))
                group_out.append((dst[j], j))
                pieces += _group_splits(group_in, group_out, hierarchy)
                group_in, group_out = [], []
            i, j = i - 1, j - 1
            count_in *= src[i] if i >= 0 else 1
            count_out *= dst[j] if j >= 0 else 1
    for m in range(len(hierarchy)):
        pieces += [{m: _B_PAIR}, {m: _P_PAIR}]

    covers: set[tuple[_AxisPair, ...]] = set()

    def combine(chosen: dict[int, _AxisPair]) -> None:
        if len(chosen) == len(hierarchy):
            covers.add(tuple(chosen[m] for m in range(len(hierarchy))))
            return
        for piece in pieces:
            if not chosen.keys() & piece.keys():
                combine({**chosen, **piece})

    combine({})
    return sorted(covers)


def _pair_entry(axis: int) -> SbpAttr:
    return _B if axis == _B_PAIR[0] else P_SUM if axis == _P_PAIR[0] else split(axis)


def _measure(nd: NdSbpAttr) -> int:
    """OneFlow's `MesureNdSbp`: base-11 digits B=1, P=2, S(a)=3+a, mesh axis 0 most significant."""
    value = 0
    for entry in nd:
        kind = type(entry)  # exact types: isinstance on an attribute class goes through ABCMeta
        digit = 3 + entry.dim if kind is SplitAttr else 2 if kind is PartialAttr else 1
        value = value * 11 + digit
    return value


def deduplicate(sigs: Sequence[NdSig]) -> list[NdSig]:
    """OneFlow's `DeduplicateNdSbpSignatureList`: keep the first signature of each measure (base 97
    over operands then results; distinct signatures may collide, as in OneFlow) and sort by it."""
    by_measure: dict[int, NdSig] = {}
    for sig in sigs:
        value = 0
        for nd in (*sig[0], *sig[1]):
            value = value * 97 + _measure(nd)
        by_measure.setdefault(value, sig)
    return [by_measure[v] for v in sorted(by_measure)]


def reshape_keeps_order(
    src: Sequence[int], dst: Sequence[int], sig: NdSig, hierarchy: Sequence[int]
) -> bool:
    """Whether every rank's input shard, reshaped to its output shard's shape, is that output
    shard: both must cover the same row-major flat indices (then both list them in order).

    A signature splitting on one mesh axis only is a 1-D rule's (equal extents, or both divisible
    by the mesh-axis size) or a divisible ND group split, and always holds: only nested or
    combined splits are checked rank by rank."""
    (nd_in,), (nd_out,) = sig
    if sum([type(e) is SplitAttr for e in nd_in]) <= 1:
        return True
    splits_in, splits_out = split_axes(nd_in), split_axes(nd_out)
    return all(
        flat_pattern(src, split_slices(src, splits_in, hierarchy, c))
        == flat_pattern(dst, split_slices(dst, splits_out, hierarchy, c))
        for c in itertools.product(*(range(h) for h in hierarchy))
    )


@dataclass(frozen=True)
class ReshapeRule(SbpRule):
    """reshape: split pairs from the grouping rule; P -> P. On an ND mesh, OneFlow's multi-axis
    splits are added (`reshape_nd_pairs`)."""

    reads_axis_size = True  # the grouping rule merges dims divisible by n

    def signatures(self, op: Operation, n: int) -> list[Sig]:
        src, dst = _shape(op.operands[0]), _shape(op.results[0])
        if not src or 0 in src:
            return []  # OneFlow: a 0-d or empty input only gets the all-B signature (no P -> P)
        sigs: list[Sig] = [((split(a),), (split(b),)) for a, b in reshape_split_pairs(src, dst, n)]
        sigs.append(((P_SUM,), (P_SUM,)))
        return sigs

    def nd_signatures(self, op: Operation, hierarchy: Sequence[int], product: list[NdSig]) -> list[NdSig]:
        """`ReshapeOp::EnumerateNdSbpSignatures`: append the ND enumeration to the product, drop
        signatures whose output does not fit its shape (swap-with-last), deduplicate. Then, unlike
        OneFlow, drop signatures under which a rank's local reshape would not produce its output
        shard: the product of 1-D lists holds some (e.g. (12,) -> (6, 2) as (S(0), S(0)) on 2x2,
        whose shards hold 3 and 4 elements); OneFlow fails at physical shape inference there."""
        src, dst = _shape(op.operands[0]), _shape(op.results[0])
        sigs = list(product)
        if src and dst and 0 not in src:
            for pairs in reshape_nd_pairs(src, dst, hierarchy):
                ins = nd_sbp(*(_pair_entry(a) for a, _ in pairs))
                outs = nd_sbp(*(_pair_entry(b) for _, b in pairs))
                sigs.append(((ins,), (outs,)))
        sigs = swap_with_last_filter(sigs, lambda s: fits_shape(s[1][0], dst, hierarchy))
        return [s for s in deduplicate(sigs) if reshape_keeps_order(src, dst, s, hierarchy)]
