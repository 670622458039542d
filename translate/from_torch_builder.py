"""The builder `from_torch`'s ATen handlers emit through (SPEC §7): values, constants, types, locations.

`Val` is a tensor of the program being built (an SSA value, seen through a pending reshape), `Const` a
tensor known at capture time, `Builder` the function body with the operations the handlers share
(`create`, `use`, `tensor`, `argument`, `error`). `where` gives the user's source line of an fx node.
torch is imported only where a torch value is converted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.ir import Attribute, Block, Operation, SSAValue

from sbpc.dialects import dtypes
from sbpc.dialects.sbp import NdSbpAttr
from sbpc.dialects.sbp_ops import ReshapeOp
from sbpc.dialects.tensor_type import GlobalTensorType

PLACEMENT = "mesh"


class TorchImportError(Exception):
    """A model sbpc cannot translate, or bad options; the message names the op and the source line."""


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Val:
    """A tensor of the program: an SSA value seen with `shape` (a pending reshape when it differs from
    the value's own), and, for a transpose of the last two axes, the value it transposes (so that a
    matmul can take it with `transpose_b` instead)."""

    value: SSAValue
    shape: tuple[int, ...]
    transposed_from: Val | None = None

    @property
    def type(self) -> GlobalTensorType:
        ty = self.value.type
        assert isinstance(ty, GlobalTensorType)
        return ty

    @property
    def element_type(self) -> Attribute:
        return self.type.element_type


@dataclass(frozen=True)
class Const:
    """A tensor known at capture time (depends on no input): evaluated with torch, an argument when used."""

    tensor: Any
    name: str


# ---------------------------------------------------------------------------
# The builder the handlers emit through
# ---------------------------------------------------------------------------


@dataclass
class Builder:
    """The function body being built, and what each ATen handler needs: types, operands, emission."""

    block: Block
    mesh_rank: int
    names: list[str] = field(default_factory=list)
    defaults: list[np.ndarray] = field(default_factory=list)
    constant_sbp: NdSbpAttr | None = None
    """The SBP of the constant arguments (None: free)."""
    node: Any = None
    """The fx node being translated (for errors)."""
    _reshaped: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = field(default_factory=dict)
    _constants: dict[tuple[Any, ...], Val] = field(default_factory=dict)

    def tensor_type(self, shape: Sequence[int], element: Attribute, sbp: NdSbpAttr | None = None) -> GlobalTensorType:
        return GlobalTensorType(tuple(int(d) for d in shape), element, PLACEMENT, sbp)

    def result_type(self, like: Any = None) -> GlobalTensorType:
        """The type of the current node's result (or of `like`, a fake tensor) from torch's metadata."""
        val = self.node.meta["val"] if like is None else like
        return self.tensor_type(tuple(val.shape), element_of(val.dtype, self))

    def emit(self, op: Operation) -> Val:
        """Append `op` (one result) and give its result as a value."""
        self.block.add_op(op)
        (result,) = op.results
        ty = result.type
        assert isinstance(ty, GlobalTensorType)
        return Val(result, ty.get_shape())

    def create(self, cls: type[Operation], operands: Sequence[Val], result_type: GlobalTensorType | None = None,
               properties: Mapping[str, Attribute] | None = None) -> Val:
        """`cls` generic-built on materialised operands; the result type defaults to the node's."""
        op = cls.create(operands=[self.use(v) for v in operands],
                        result_types=[result_type if result_type is not None else self.result_type()],
                        properties=dict(properties or {}))
        return self.emit(op)

    def use(self, v: Val) -> SSAValue:
        """The SSA value of `v` in its shape (its pending reshape emitted once)."""
        if v.shape == v.type.get_shape():
            return v.value
        key = (v.value, v.shape)
        found = self._reshaped.get(key)
        if found is None:
            op = ReshapeOp.create(operands=[v.value], result_types=[self.tensor_type(v.shape, v.element_type)])
            self.block.add_op(op)
            found = self._reshaped[key] = op.results[0]
        return found

    def argument(self, name: str, ty: GlobalTensorType, value: np.ndarray) -> Val:
        """A new function argument (appended) with its default value."""
        arg = self.block.insert_arg(ty, len(self.block.args))
        arg.name_hint = ssa_name(name, self.names)
        self.names.append(arg.name_hint)
        self.defaults.append(value)
        return Val(arg, ty.get_shape())

    def tensor(self, x: Any) -> Val:
        """An fx argument that must be a tensor: a value, or a constant made an argument (once)."""
        if isinstance(x, Val):
            return x
        if isinstance(x, Const):
            value = to_numpy(x.tensor)
            key = (value.shape, value.dtype.str, value.tobytes())  # equal constants (each block's mask) once
            found = self._constants.get(key)
            if found is None:
                ty = self.tensor_type(value.shape, element_of(x.tensor.dtype, self), self.constant_sbp)
                found = self._constants[key] = self.argument(x.name, ty, value)
            return found
        raise self.error(f"expected a tensor operand, got {type(x).__name__} {x!r}")

    def error(self, message: str) -> TorchImportError:
        if self.node is None:
            return TorchImportError(f"error: {message}")
        return TorchImportError(f"{where(self.node)}: error: {message}")


Handler = Callable[[Builder, Sequence[Any], Mapping[str, Any]], Any]


# ---------------------------------------------------------------------------
# Types, names and locations
# ---------------------------------------------------------------------------


def element_of(torch_dtype: Any, builder: Builder | None = None) -> Attribute:
    """The IR element type of a torch dtype (`torch.float32` -> f32, `torch.bool` -> i1)."""
    name = str(torch_dtype).removeprefix("torch.")
    row = dtypes.lookup(name)
    if row is None or not row.in_ir or row.xdsl is None:
        message = f"element type {name} has no sbp counterpart (allowed: {dtypes.names(dtypes.IR_TYPES)})"
        raise builder.error(message) if builder is not None else TorchImportError(f"error: {message}")
    return row.xdsl


def to_numpy(tensor: Any) -> np.ndarray:
    """A torch tensor's value as numpy (bfloat16 through float32 and ml_dtypes)."""
    import torch

    t = tensor.detach().cpu()
    if t.dtype == torch.bfloat16:
        return t.float().numpy().astype(dtypes.named("bf16").numpy_dtype())
    return t.numpy().copy()  # contiguous, its own memory, 0-d kept 0-d (ascontiguousarray makes it 1-d)


def ssa_name(name: str, taken: Sequence[str]) -> str:
    """`layers.0.attn.wq` -> `layers_0_attn_wq`, a valid SSA name hint, made unique against `taken`."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", name) or "arg"
    if base[0].isdigit():
        base = f"_{base}"
    out, n = base, 1
    while out in taken:
        out, n = f"{base}_{n}", n + 1
    return out


_TORCH_FRAME = re.compile(r"[/\\]site-packages[/\\]torch[/\\]|[/\\]torch[/\\](nn|_refs|_decomp|functional)")


def where(node: Any) -> str:
    """`FILE:LINE` of the user's source line an fx node came from (the innermost frame outside torch),
    and the module path it ran in (`h.0.attn (CausalSelfAttention)`) when export recorded it."""
    frames = re.findall(r'File "([^"]+)", line (\d+)', node.meta.get("stack_trace") or "")
    user = [f for f in frames if not _TORCH_FRAME.search(f[0]) and not f[0].endswith("from_torch.py")]
    pick = (user or frames or [None])[-1]
    location = f"{pick[0]}:{pick[1]}" if pick else "<model>"
    stack = node.meta.get("nn_module_stack") or {}
    if stack:
        path, kind = list(stack.values())[-1]
        location += f" (in {path or 'the model'}, {str(kind).rsplit('.', 1)[-1]})"
    return location
