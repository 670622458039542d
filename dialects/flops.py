"""How much arithmetic and memory traffic each compute op does, as traits the ops carry.

`infer-sbp{rule=global}` prices an op's local compute (SPEC §3.1) from the FLOPs and bytes of its
largest local shard; the op says how to count them, from its local operand and result shapes, so
the cost model never switches on op names. Counts are per element of the formula the op computes
(SPEC §2.4), one FLOP per add, multiply, compare or transcendental: a roofline estimate, not a
cycle count. An op without this trait (conversions, collectives) does no local compute.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from xdsl.ir import Operation
from xdsl.traits import OpTrait

Shape = tuple[int, ...]


class FlopModel(OpTrait):
    """FLOPs of one op on local shapes, and whether it reads and writes its tensors at all."""

    moves_bytes: bool = True
    """False for a view (a reshape of a contiguous shard moves nothing)."""

    def flops(self, op: Operation, ins: Sequence[Shape], outs: Sequence[Shape]) -> float:
        raise NotImplementedError


@dataclass(frozen=True)
class PerElement(FlopModel):
    """`per_element` FLOPs per element of the result (or of operand 0, for reductions)."""

    per_element: float = 1.0
    of: Literal["result", "operand"] = "result"
    moves_bytes: bool = True

    def flops(self, op: Operation, ins: Sequence[Shape], outs: Sequence[Shape]) -> float:
        shape = outs[0] if self.of == "result" else ins[0]
        return self.per_element * math.prod(shape)


@dataclass(frozen=True)
class MatmulFlops(FlopModel):
    """2·K FLOPs (a multiply and an add) per result element, K the contraction extent of operand a."""

    def flops(self, op: Operation, ins: Sequence[Shape], outs: Sequence[Shape]) -> float:
        a = ins[0]
        k = a[-2] if op.properties.get("transpose_a") is not None else a[-1]
        return 2.0 * k * math.prod(outs[0])
