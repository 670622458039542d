"""Shared boxing: the conversions a program pays for, one per (value, distinct target ND-SBP).

`materialize-boxing` inserts one `sbp.boxing` per (value, target) and shares it among every use
needing that target: every operand of an op with an SBP rule, and every `sbp.to_global` of the
value (a `to_global` becomes a boxing from the same cache). So a value's boxing time is Σ over the
DISTINCT targets its uses need of boxing(source → target), not Σ over its uses: three matmuls
reading one LayerNorm output in [S(0), B] pay one all-gather, not three. An `sbp.boxing` or
collective already in the program is its own op, never shared (materialize-boxing leaves it alone).

This module is that rule on IR, read by every cost of a plan: `priced_use` (which uses share a
value's boxings: the search's shared factors, `global_search/problem.py`), `conversions` (what one
op of an inferred program asks for) and `shared_boxings` (the whole program's, as the report's
totals and `plan_objective` price them). The search's model of the same charge over undecided
choices is `global_search/shared.py`; its IR-free form, for the solver, `solver.factor.CoverForm`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xdsl.ir import Operation, SSAValue

from sbpc.dialects.sbp import NdSbpAttr, SignatureAttr
from sbpc.dialects.sbp_ops import ToGlobalOp
from sbpc.dialects.signatures import SbpRule
from sbpc.dialects.tensor_type import GlobalTensorType


def priced_use(op: Operation) -> bool:
    """Whether a use of a value by `op` shares the value's boxings: an op with an SBP rule or a
    `to_global`."""
    return isinstance(op, ToGlobalOp) or op.get_trait(SbpRule) is not None


def conversions(op: Operation) -> Iterator[tuple[SSAValue, NdSbpAttr]]:
    """The (value, target ND-SBP) conversions `op` asks for in an inferred program: each operand of
    an op with an SBP rule whose SBP differs from its `sbp.signature` entry, and the source of a
    `to_global` that changes the SBP. Values without an SBP yet ask for nothing."""
    if isinstance(op, ToGlobalOp):
        src, dst = op.operands[0].type, op.results[0].type
        if isinstance(src, GlobalTensorType) and isinstance(dst, GlobalTensorType) \
                and src.nd_sbp is not None and dst.nd_sbp is not None and src.nd_sbp != dst.nd_sbp:
            yield op.operands[0], dst.nd_sbp
        return
    sig = op.attributes.get("sbp.signature")
    if not isinstance(sig, SignatureAttr) or op.get_trait(SbpRule) is None:
        return
    for value, need in zip(op.operands, sig.inputs.data, strict=True):
        ty = value.type
        if isinstance(ty, GlobalTensorType) and ty.nd_sbp is not None and isinstance(need, NdSbpAttr) \
                and ty.nd_sbp != need:
            yield value, need


def shared_boxings(ops: Iterable[Operation]) -> dict[SSAValue, dict[NdSbpAttr, None]]:
    """The boxings of the inferred program `ops`: per value (in the order of its first conversion),
    its distinct targets (in the order of their first use) — what materialize-boxing inserts."""
    made: dict[SSAValue, dict[NdSbpAttr, None]] = {}
    for op in ops:
        for value, target in conversions(op):
            made.setdefault(value, {})[target] = None
    return made
