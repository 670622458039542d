"""The neural-network ops of the `sbp` dialect that a PyTorch model needs beyond SPEC §2.4 (SPEC §7).

Activations (`sbp.sigmoid`, `sbp.tanh`, `sbp.silu`), `sbp.softmax`, `sbp.rms_norm`, the lookups
(`sbp.embedding`, `sbp.cross_entropy`), the data movement of `torch.cat` / slicing / `expand`
(`sbp.concat`, `sbp.slice`, `sbp.broadcast_to`), `sbp.where` and `sbp.dropout` (the identity at
inference). Like the ops of `sbp_ops.py` each carries its SBP rule (`dialects/signatures_nn.py`) and
FLOP model (`dialects/flops.py`) as traits and checks its shapes and element types in
`verify_semantics`; the numerics are `runtime/ops_nn.py`'s.

Two ops compute a rank-dependent local result when their vocabulary axis is split (Megatron's
vocab-parallel embedding and cross-entropy): they are `VocabParallelOp`s, which `spmdize` lets keep
their operands' global types (`sbp.global_operands`), so that a rank knows the vocabulary range it
holds. Indices and targets outside `[0, V)` are defined, not errors, so that every distribution of
the op computes the same value: an embedding index there gives a zero row (no rank holds it), a
cross-entropy target there gives a loss of 0 (as torch's `ignore_index`).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from sbpc.dialects.flops import PerElement
from sbpc.dialects.sbp_op_base import SbpOp, TensorT, as_tensor_type
from sbpc.dialects.sbp_ops import UnaryOp, check_epsilon
from sbpc.dialects.sharding import broadcast_shapes
from sbpc.dialects.signatures import LayerNormRule, UnaryRule
from sbpc.dialects.signatures_nn import (
    BroadcastToRule,
    ConcatRule,
    CrossEntropyRule,
    CrossEntropyStatsRule,
    EmbeddingRule,
    SliceRule,
    SoftmaxRule,
    VocabParallelBoxings,
    WhereRule,
)
from sbpc.dialects.tensor_type import GlobalTensorType

GLOBAL_OPERANDS = "sbp.global_operands"
"""Attribute of a per-rank `VocabParallelOp`: the global `!sbp.tensor` type of each operand."""

INDEX_TYPES = (IntegerType(32), IntegerType(64))
"""Element types of embedding indices and cross-entropy targets (torch's int32 / int64)."""

I1 = IntegerType(1)


class VocabParallelOp(SbpOp, abc.ABC):
    """An op whose local result depends on the vocabulary range a rank holds when operand 0 is split
    on its `vocab_axis` (the embedding table's rows, the logits' last axis)."""

    def vocab_axis(self) -> int:
        raise NotImplementedError

    def global_operand(self, index: int) -> GlobalTensorType | None:
        """Operand `index`'s global type: its own before `spmdize`, the recorded one after (None:
        neither, a per-rank program written without them)."""
        ty = self.operands[index].type
        if isinstance(ty, GlobalTensorType):
            return ty
        recorded = self.attributes.get(GLOBAL_OPERANDS)
        if isinstance(recorded, ArrayAttr) and len(recorded.data) == len(self.operands):
            found = recorded.data[index]
            return found if isinstance(found, GlobalTensorType) else None
        return None


def _expect_index(op: SbpOp, what: str, t: GlobalTensorType) -> None:
    if t.element_type not in INDEX_TYPES:
        raise op.fail(f"{what} must be i32 or i64, got {t.element_type}")


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------


class FloatUnaryOp(UnaryOp, abc.ABC):
    """An elementwise activation on floating-point tensors."""

    def __init__(self, x: Operation | SSAValue, result_type: GlobalTensorType):
        super().__init__(operands=[x], result_types=[result_type])

    def verify_semantics(self) -> None:
        super().verify_semantics()
        self.expect_float(as_tensor_type(self.x.type))


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """`1 / (1 + exp(-x))`. Monotone increasing, so it keeps P(max)/P(min) (rule=cost)."""

    name = "sbp.sigmoid"
    traits = traits_def(Pure(), UnaryRule(monotone=1), PerElement(4.0))


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """`tanh(x)`. Monotone increasing."""

    name = "sbp.tanh"
    traits = traits_def(Pure(), UnaryRule(monotone=1), PerElement(1.0))


@irdl_op_definition
class SiluOp(FloatUnaryOp):
    """`x · sigmoid(x)` (SiLU, swish). Not monotone, not linear: splits only."""

    name = "sbp.silu"
    traits = traits_def(Pure(), UnaryRule(), PerElement(5.0))


@irdl_op_definition
class DropoutOp(SbpOp):
    """Dropout with probability `p` (f32, 0 ≤ p < 1): the identity at inference, so every SBP passes
    through (partials too: the identity is linear and monotone)."""

    name = "sbp.dropout"
    x = operand_def(TensorT)
    p = prop_def(FloatAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), UnaryRule(partial_sum=True, monotone=1), PerElement(0.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def __init__(self, x: Operation | SSAValue, p: float, result_type: GlobalTensorType):
        super().__init__(operands=[x], result_types=[result_type], properties={"p": FloatAttr(p, Float32Type())})

    def verify_semantics(self) -> None:
        if self.p.type != Float32Type():
            raise self.fail(f"p must be an f32 float attribute, got {self.p.type}")
        p = float(self.p.value.data)
        if not 0.0 <= p < 1.0:
            raise self.fail(f"dropout probability p must be in [0, 1), got {p:g}")
        t = as_tensor_type(self.x.type)
        self.expect_result(t.get_shape(), t.element_type)


# ---------------------------------------------------------------------------
# Normalisations
# ---------------------------------------------------------------------------


@irdl_op_definition
class SoftmaxOp(SbpOp):
    """`exp(x - max) / Σ exp(x - max)` along `axis` (0 ≤ axis < rank). OneFlow's rule: a split on
    any other axis passes through; no partial input (softmax of a sum is not a sum of softmaxes)."""

    name = "sbp.softmax"
    x = operand_def(TensorT)
    axis = prop_def(IntegerAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), SoftmaxRule(), PerElement(5.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def __init__(self, x: Operation | SSAValue, axis: int, result_type: GlobalTensorType):
        super().__init__(operands=[x], result_types=[result_type], properties={"axis": IntegerAttr(axis, i64)})

    def get_axis(self) -> int:
        return int(self.axis.value.data)

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        self.expect_float(t)
        if not 0 <= self.get_axis() < t.rank:
            raise self.fail(f"softmax axis {self.get_axis()} out of range for rank {t.rank}")
        self.expect_result(t.get_shape(), t.element_type)


RMS_NORM_EPSILON = 1e-6


@irdl_op_definition
class RmsNormOp(SbpOp):
    """`x / sqrt(mean(x², last axis) + epsilon) · gamma` (torch.nn.functional.rms_norm over the last
    axis); gamma is 1-D of the last axis's size; `epsilon` (f32) defaults to 1e-6. Rules as
    layer_norm's: rows whole on a rank, no partial."""

    name = "sbp.rms_norm"
    x = operand_def(TensorT)
    gamma = operand_def(TensorT)
    epsilon = opt_prop_def(FloatAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), LayerNormRule(), PerElement(5.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x `,` $gamma attr-dict `:` type($x) `,` type($gamma) `->` type($result)"

    def __init__(self, x: Operation | SSAValue, gamma: Operation | SSAValue, result_type: GlobalTensorType,
                 epsilon: float | None = None):
        props = {} if epsilon is None else {"epsilon": FloatAttr(epsilon, Float32Type())}
        super().__init__(operands=[x, gamma], result_types=[result_type], properties=props)

    def get_epsilon(self) -> float:
        return RMS_NORM_EPSILON if self.epsilon is None else float(self.epsilon.value.data)

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        self.expect_float(t)
        if t.rank < 1:
            raise self.fail("rms_norm needs a tensor of rank >= 1 (it normalises the last axis)")
        g = as_tensor_type(self.gamma.type)
        if g.get_shape() != (t.get_shape()[-1],):
            raise self.fail(f"gamma has shape {list(g.get_shape())}, expected [{t.get_shape()[-1]}] (the last "
                            "axis of x)")
        if g.element_type != t.element_type:
            raise self.fail(f"gamma element type {g.element_type} differs from x's {t.element_type}")
        check_epsilon(self, self.epsilon, self.get_epsilon())
        self.expect_result(t.get_shape(), t.element_type)


# ---------------------------------------------------------------------------
# Lookups
# ---------------------------------------------------------------------------


@irdl_op_definition
class EmbeddingOp(VocabParallelOp):
    """`table[indices]`: table [V, H], integer indices [...] -> [..., H]; an index outside [0, V)
    gives a zero row. Vocab-split table rows (S(0)) with B indices give P(sum): each rank looks up
    the rows it holds and zero elsewhere (Megatron's vocab-parallel embedding)."""

    name = "sbp.embedding"
    table = operand_def(TensorT)
    indices = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), EmbeddingRule(), PerElement(0.0))
    assembly_format = "$table `,` $indices attr-dict `:` type($table) `,` type($indices) `->` type($result)"

    def __init__(self, table: Operation | SSAValue, indices: Operation | SSAValue, result_type: GlobalTensorType):
        super().__init__(operands=[table, indices], result_types=[result_type])

    def vocab_axis(self) -> int:
        return 0

    def verify_semantics(self) -> None:
        table, indices = as_tensor_type(self.table.type), as_tensor_type(self.indices.type)
        if table.rank != 2:
            raise self.fail(f"the embedding table must be 2-D [vocabulary, hidden], got rank {table.rank}")
        _expect_index(self, "indices", indices)
        self.expect_result((*indices.get_shape(), table.get_shape()[1]), table.element_type)


@irdl_op_definition
class CrossEntropyOp(VocabParallelOp):
    """Per-element `logsumexp(logits) - logits[target]` over the last axis (reduction none): logits
    [..., V] float, integer targets [...] -> [...] of the logits' type; a target outside [0, V)
    gives 0. Vocab-split logits (S(last), targets B) give P(sum), Megatron's vocab-parallel
    cross-entropy (`signatures_nn.CrossEntropyRule`): `materialize-boxing` expands the op into the
    rows' statistics, their all-reduces and `sbp.cross_entropy_from_stats`."""

    name = "sbp.cross_entropy"
    logits = operand_def(TensorT)
    targets = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), CrossEntropyRule(), PerElement(5.0, "operand"), VocabParallelBoxings())
    assembly_format = "$logits `,` $targets attr-dict `:` type($logits) `,` type($targets) `->` type($result)"

    def __init__(self, logits: Operation | SSAValue, targets: Operation | SSAValue, result_type: GlobalTensorType):
        super().__init__(operands=[logits, targets], result_types=[result_type])

    def vocab_axis(self) -> int:
        return len(self.logits.type.get_shape()) - 1  # type: ignore[attr-defined]

    def verify_semantics(self) -> None:
        logits, targets = _logits_and_targets(self, self.logits, self.targets)
        self.expect_result(targets.get_shape(), logits.element_type)


def _logits_and_targets(op: SbpOp, logits_value: SSAValue, targets_value: SSAValue) -> tuple[
        GlobalTensorType, GlobalTensorType]:
    """A cross-entropy's float logits [..., V] of rank >= 1 and its integer targets [...]."""
    logits, targets = as_tensor_type(logits_value.type), as_tensor_type(targets_value.type)
    op.expect_float(logits)
    if logits.rank < 1:
        raise op.fail(f"{op.name.removeprefix('sbp.')} needs logits of rank >= 1 (classes on the last axis)")
    _expect_index(op, "targets", targets)
    if targets.get_shape() != logits.get_shape()[:-1]:
        raise op.fail(f"targets have shape {list(targets.get_shape())}, expected "
                      f"{list(logits.get_shape()[:-1])} (the logits without their class axis)")
    return logits, targets


@irdl_op_definition
class CrossEntropyFromStatsOp(VocabParallelOp):
    """`m + log(s) - logits[target]` per row, given each row's maximum `m` and `s = Σ exp(logits -
    m)` ([..., 1], whole on every rank): the last step of the vocab-parallel cross-entropy. A rank
    holding the vocabulary range [lo, hi) subtracts the target logit if it holds it and adds the row
    terms if lo = 0, so that the ranks' results (P(sum)) add up to the loss; 0 where the target is
    outside [0, V)."""

    name = "sbp.cross_entropy_from_stats"
    logits = operand_def(TensorT)
    targets = operand_def(TensorT)
    row_max = operand_def(TensorT)
    row_sum = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), CrossEntropyStatsRule(), PerElement(3.0))
    assembly_format = (
        "$logits `,` $targets `,` $row_max `,` $row_sum attr-dict `:` type($logits) `,` type($targets) `,` "
        "type($row_max) `,` type($row_sum) `->` type($result)"
    )

    def __init__(self, logits: SSAValue, targets: SSAValue, row_max: SSAValue, row_sum: SSAValue,
                 result_type: GlobalTensorType):
        super().__init__(operands=[logits, targets, row_max, row_sum], result_types=[result_type])

    def vocab_axis(self) -> int:
        return len(self.logits.type.get_shape()) - 1  # type: ignore[attr-defined]

    def verify_semantics(self) -> None:
        logits, targets = _logits_and_targets(self, self.logits, self.targets)
        rows = (*logits.get_shape()[:-1], 1)
        for what, value in (("row_max", self.row_max), ("row_sum", self.row_sum)):
            t = as_tensor_type(value.type)
            if t.get_shape() != rows or t.element_type != logits.element_type:
                raise self.fail(f"{what} is {t.describe()}, expected {list(rows)} of {logits.element_type}")
        self.expect_result(targets.get_shape(), logits.element_type)


# ---------------------------------------------------------------------------
# Data movement and selection
# ---------------------------------------------------------------------------


@irdl_op_definition
class ConcatOp(SbpOp):
    """`torch.cat(inputs, axis)`: inputs of one rank and element type, equal but on `axis`."""

    name = "sbp.concat"
    inputs = var_operand_def(TensorT)
    axis = prop_def(IntegerAttr)
    result = result_def(TensorT)
    traits = traits_def(Pure(), ConcatRule(), PerElement(0.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` type($inputs) `->` type($result)"

    def __init__(self, inputs: Sequence[Operation | SSAValue], axis: int, result_type: GlobalTensorType):
        super().__init__(operands=[list(inputs)], result_types=[result_type],
                         properties={"axis": IntegerAttr(axis, i64)})

    def get_axis(self) -> int:
        return int(self.axis.value.data)

    def verify_semantics(self) -> None:
        if not self.inputs:
            raise self.fail("concat needs at least one input")
        types = [as_tensor_type(v.type) for v in self.inputs]
        first = types[0]
        axis = self.get_axis()
        if not 0 <= axis < first.rank:
            raise self.fail(f"concat axis {axis} out of range for rank {first.rank}")
        for i, t in enumerate(types[1:], 1):
            if t.element_type != first.element_type:
                raise self.fail(f"input {i} element type {t.element_type} differs from input 0's {first.element_type}")
            if t.rank != first.rank or any(
                    a != b for k, (a, b) in enumerate(zip(t.get_shape(), first.get_shape(), strict=True)) if k != axis):
                raise self.fail(f"input {i} has shape {list(t.get_shape())}, which differs from input 0's "
                                f"{list(first.get_shape())} on an axis other than {axis}")
        shape = list(first.get_shape())
        shape[axis] = sum(t.get_shape()[axis] for t in types)
        self.expect_result(shape, first.element_type)


def _slice_extent(start: int, stop: int, step: int) -> int:
    return max(0, -(-(stop - start) // step))


@irdl_op_definition
class SliceOp(SbpOp):
    """`x[start:stop:step]` per axis (one entry per axis, 0 ≤ start ≤ stop ≤ extent, step ≥ 1). A
    split on an unsliced axis (0:extent:1) passes through; P passes through (slicing is linear)."""

    name = "sbp.slice"
    x = operand_def(TensorT)
    start = prop_def(DenseArrayBase.constr(i64))
    stop = prop_def(DenseArrayBase.constr(i64))
    step = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorT)
    traits = traits_def(Pure(), SliceRule(), PerElement(0.0))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def __init__(self, x: Operation | SSAValue, start: Sequence[int], stop: Sequence[int], step: Sequence[int],
                 result_type: GlobalTensorType):
        props: dict[str, Attribute] = {k: DenseArrayBase.from_list(i64, list(v))
                                       for k, v in (("start", start), ("stop", stop), ("step", step))}
        super().__init__(operands=[x], result_types=[result_type], properties=props)

    def get_bounds(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        return tuple(self.start.get_values()), tuple(self.stop.get_values()), tuple(self.step.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        t = as_tensor_type(self.x.type)
        start, stop, step = self.get_bounds()
        shape = t.get_shape()
        for what, values in (("start", start), ("stop", stop), ("step", step)):
            if len(values) != t.rank:
                raise self.fail(f"{what} has {len(values)} entries for a tensor of rank {t.rank}")
        out = []
        for axis, (a, b, s, n) in enumerate(zip(start, stop, step, shape, strict=True)):
            if s < 1:
                raise self.fail(f"step {s} on axis {axis} is not >= 1")
            if not 0 <= a <= b <= n:
                raise self.fail(f"slice {a}:{b} on axis {axis} is not within 0 <= start <= stop <= {n}")
            out.append(_slice_extent(a, b, s))
        self.expect_result(out, t.element_type)


@irdl_op_definition
class WhereOp(SbpOp):
    """`cond ? x : y` elementwise with numpy broadcasting of the three; cond is i1, x and y share
    their element type. Splits as a broadcast ternary op; (B, P, P) -> P (select is linear in x, y
    together)."""

    name = "sbp.where"
    cond = operand_def(TensorT)
    x = operand_def(TensorT)
    y = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), WhereRule(), PerElement(1.0))
    assembly_format = (
        "$cond `,` $x `,` $y attr-dict `:` type($cond) `,` type($x) `,` type($y) `->` type($result)"
    )

    def __init__(self, cond: Operation | SSAValue, x: Operation | SSAValue, y: Operation | SSAValue,
                 result_type: GlobalTensorType):
        super().__init__(operands=[cond, x, y], result_types=[result_type])

    def verify_semantics(self) -> None:
        c, a, b = (as_tensor_type(v.type) for v in (self.cond, self.x, self.y))
        if c.element_type != I1:
            raise self.fail(f"cond must be an i1 tensor, got {c.element_type}")
        if a.element_type != b.element_type:
            raise self.fail(f"x and y element types {a.element_type} and {b.element_type} differ")
        shape = broadcast_shapes(a.get_shape(), b.get_shape())
        shape = None if shape is None else broadcast_shapes(c.get_shape(), shape)
        if shape is None:
            raise self.fail(f"shapes {list(c.get_shape())}, {list(a.get_shape())} and {list(b.get_shape())} are "
                            "not broadcast-compatible")
        self.expect_result(shape, a.element_type)


@irdl_op_definition
class BroadcastToOp(SbpOp):
    """`x` broadcast (numpy rules) to the result type's shape (torch `expand`)."""

    name = "sbp.broadcast_to"
    x = operand_def(TensorT)
    result = result_def(TensorT)
    traits = traits_def(Pure(), BroadcastToRule(), PerElement(0.0))
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def __init__(self, x: Operation | SSAValue, result_type: GlobalTensorType):
        super().__init__(operands=[x], result_types=[result_type])

    def verify_semantics(self) -> None:
        t, r = as_tensor_type(self.x.type), as_tensor_type(self.result.type)
        if broadcast_shapes(t.get_shape(), r.get_shape()) != r.get_shape():
            raise self.fail(f"{list(t.get_shape())} does not broadcast to the result shape {list(r.get_shape())}")
        self.expect_result(r.get_shape(), t.element_type)
