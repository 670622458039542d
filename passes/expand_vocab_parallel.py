"""Megatron's vocab-parallel cross-entropy, written out: the step of `materialize-boxing` that replaces
an `sbp.cross_entropy` whose inferred signature splits the logits' vocabulary axis (SPEC §7).

Each rank holds a vocabulary range of every row; the loss `m + log Σ exp(x - m) - x[t]` needs the
row's global maximum m and sum of exponentials, so the op becomes

    %m = sbp.reduce_max %logits {axes = [last], keepdims}  // local maximum: P(max) on the vocab axes
    %z = sbp.sub %logits, %m                                // m read as B: all-reduce(max)
    %e = sbp.exp %z
    %s = sbp.reduce_sum %e {axes = [last], keepdims}       // local sum: P(sum) on the vocab axes
    %l = sbp.cross_entropy_from_stats %logits, %targets, %m, %s   // m, s read as B: all-reduce(sum)

each op with its signature; `materialize-boxing` then boxes the statistics to B (two all-reduces of
one value per row, what the compute model prices for the signature, `signatures_nn.VocabParallelBoxings`)
and the result keeps the op's P(sum): each rank's target logit it holds, the row terms on the rank
with the first range (Megatron reduces the target logit the same way).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, UnitAttr, i64
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from sbpc.dialects.sbp import NdSbpAttr, SignatureAttr
from sbpc.dialects.sbp_ops import ExpOp, ReduceMaxOp, ReduceSumOp, SubOp
from sbpc.dialects.sbp_ops_nn import CrossEntropyFromStatsOp, CrossEntropyOp
from sbpc.dialects.signatures_nn import row_stats_sbps, vocab_split_axes
from sbpc.dialects.tensor_type import GlobalTensorType


def _signed(op: Operation, ins: list[NdSbpAttr], out: NdSbpAttr) -> Operation:
    op.attributes["sbp.signature"] = SignatureAttr(ins, [out])
    return op


def expand_cross_entropy(op: CrossEntropyOp) -> bool:
    """Replace `op` by its vocab-parallel steps if its signature splits the vocabulary; whether it did."""
    sig = op.attributes.get("sbp.signature")
    logits_ty, result_ty = op.logits.type, op.result.type
    if not isinstance(sig, SignatureAttr) or not isinstance(logits_ty, GlobalTensorType) \
            or not isinstance(result_ty, GlobalTensorType):
        return False
    logits, targets = sig.inputs.data[0], sig.inputs.data[1]
    shape = logits_ty.get_shape()
    axis = len(shape) - 1
    if not isinstance(logits, NdSbpAttr) or not isinstance(targets, NdSbpAttr) \
            or not vocab_split_axes(logits, axis):
        return False
    local_max, local_sum, reduced = row_stats_sbps(logits, axis)
    rows = (*shape[:-1], 1)

    def ty(dims: tuple[int, ...], nd: NdSbpAttr) -> GlobalTensorType:
        return GlobalTensorType(dims, logits_ty.element_type, logits_ty.placement, nd)

    def reduce(cls: type[ReduceMaxOp | ReduceSumOp], x: Operation, nd: NdSbpAttr) -> Operation:
        props = {"axes": DenseArrayBase.from_list(i64, [axis]), "keepdims": UnitAttr()}
        return cls.build(operands=[x], result_types=[ty(rows, nd)], properties=props)

    peak = _signed(reduce(ReduceMaxOp, op.logits, local_max), [logits], local_max)
    shifted = _signed(SubOp(op.logits, peak.results[0], ty(shape, logits)), [logits, reduced], logits)
    exps = _signed(ExpOp.build(operands=[shifted.results[0]], result_types=[ty(shape, logits)]), [logits], logits)
    sums = _signed(reduce(ReduceSumOp, exps.results[0], local_sum), [logits], local_sum)
    loss = CrossEntropyFromStatsOp(op.logits, op.targets, peak.results[0], sums.results[0], result_ty)
    _signed(loss, [logits, targets, reduced, reduced], sig.outputs.data[0])  # type: ignore[list-item, arg-type]
    for new in (peak, shifted, exps, sums, loss):
        new.location = op.location
        Rewriter.insert_op(new, InsertPoint.before(op))
    op.result.replace_all_uses_with(loss.results[0])
    Rewriter.erase_op(op)
    return True


def expand_vocab_parallel(f: func.FuncOp) -> None:
    """Expand every vocab-parallel cross-entropy of `f` (before its boxings are materialized)."""
    for op in list(f.body.walk()):
        if isinstance(op, CrossEntropyOp):
            expand_cross_entropy(op)
