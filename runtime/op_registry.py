"""The registry of op implementations: `OpImpl` (what one compute op computes, numpy and torch side by
side) and `IMPLS`, op class -> implementation, filled with `@impl(OpClass)` or `register` as xDSL's
interpreter registers `@impl(arith.AddiOp)`. The implementations are `runtime/op_impls.py` (SPEC §2.4)
and `runtime/ops_nn.py` (SPEC §7); running one is `op_impls.run_numpy` / `run_torch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np
from xdsl.ir import Operation

from sbpc.runtime.ops_numpy import Kernel

if TYPE_CHECKING:
    import torch

Overrides = dict[type[Operation], Kernel]
"""`--kernels` overrides: op class -> numpy kernel run in place of the op's `OpImpl.numpy`."""


class OpImpl:
    """What one compute op computes: `numpy` on arrays, `torch` on tensors, with the same result."""

    accumulates: ClassVar[bool] = False
    """Its float result depends on the order blocked or split accumulation adds in."""
    torch_rounds_differently: ClassVar[bool] = False
    """Its float torch result may differ from numpy's in the last bits."""
    rank_dependent: ClassVar[bool] = False
    """Its local result depends on the rank's mesh coordinate (a vocab-parallel lookup): `numpy` and
    `torch` take it as `coord` (None: the operands are the global values)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError


IMPLS: dict[type[Operation], OpImpl] = {}
"""op class -> its implementation."""

_Impl = TypeVar("_Impl", bound=OpImpl)


def register(op_type: type[Operation], implementation: OpImpl) -> None:
    if op_type in IMPLS:
        raise ValueError(f"{op_type.name} already has an implementation")
    IMPLS[op_type] = implementation


def impl(op_type: type[Operation]) -> Callable[[type[_Impl]], type[_Impl]]:
    """Class decorator: an instance of the class implements `op_type`."""

    def annotate(cls: type[_Impl]) -> type[_Impl]:
        register(op_type, cls())
        return cls

    return annotate


def impl_of(op: Operation) -> OpImpl | None:
    """The implementation of `op`'s class, None for an op that computes nothing (conversions, collectives)."""
    return IMPLS.get(type(op))
