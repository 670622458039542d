"""Views of the fmod kernels' operands, and the first two rules of their tiling (`lowering/ascendc/tiling.py`).

`TensorView` is one operand's strided view of its local storage; `coalesce` broadcasts `other` to
self's dims, drops size-1 dims and merges dims contiguous in every operand (rule 1: a view that is
contiguous in disguise then looks contiguous, and the general paths walk as few, as long runs as
possible); `select_tiling_key` picks tilingKey 0-4 from the coalesced problem (rule 2). Also the
SoC and element-type lookups and the host rounding of a scalar `other` (rule 7), which validate the
inputs before any tiling is computed.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.soc import SOCS, SocInfo

UB_RESERVED_BYTES = 2048
"""UB bytes every tiling keeps back (the tiling struct, alignment slack)."""

# --- small integer helpers -------------------------------------------------------------------------------


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def align_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


def align_down(a: int, b: int) -> int:
    return a // b * b


def _as_int(x: object, what: str) -> int:
    if isinstance(x, bool):
        raise ValueError(f"{what} must be an integer, got {x!r}")
    try:
        return operator.index(x)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{what} must be an integer, got {x!r}") from None


def row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of the compact row-major layout of `shape` (size-0/1 dims keep the product)."""
    strides, acc = [0] * len(shape), 1
    for d in reversed(range(len(shape))):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


# --- views and SoCs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorView:
    """A strided view of a tensor's local storage: element strides and a storage offset (elements)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    def __post_init__(self) -> None:
        shape = tuple(_as_int(s, "shape entry") for s in self.shape)
        strides = tuple(_as_int(s, "stride") for s in self.strides)
        offset = _as_int(self.offset, "offset")
        if len(shape) != len(strides):
            raise ValueError(f"view has {len(shape)} dims but {len(strides)} strides")
        if any(s < 0 for s in shape):
            raise ValueError(f"shape entries must be non-negative, got {shape}")
        if any(s < 0 for s in strides):
            raise ValueError(f"strides must be non-negative, got {strides}")
        if offset < 0:
            raise ValueError(f"offset must be non-negative, got {offset}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "offset", offset)

    @staticmethod
    def row_major(shape: Sequence[int], offset: int = 0) -> TensorView:
        shape = tuple(_as_int(s, "shape entry") for s in shape)
        return TensorView(shape, row_major_strides(shape), offset)

    @staticmethod
    def from_layout(shape: Sequence[int], layout: Any | None = None) -> TensorView:
        """View of a tensor of `shape` stored per a `dialects.layout.Layout` (duck-typed: no xDSL import).

        Row-major when `layout` is None; else every top-level mode must be a plain (extent, stride)
        pair whose extent equals the shape entry (`Layout.strides_for_flat_modes()`).
        """
        if layout is None:
            return TensorView.row_major(shape)
        pairs = layout.strides_for_flat_modes()
        if pairs is None:
            raise ValueError(f"layout {layout} has hierarchical modes; fmod needs one stride per dim")
        if len(shape) == 0 and tuple(pairs) == ((1, 1),):
            pairs = ()  # a 0-d tensor written as the layout 1:1
        if tuple(e for e, _ in pairs) != tuple(shape):
            raise ValueError(f"layout {layout} does not match the shape {tuple(shape)}")
        return TensorView(tuple(shape), tuple(d for _, d in pairs), layout.offset)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def is_contiguous(self) -> bool:
        """Compact row-major (size-1 dims may have any stride); the offset does not matter."""
        expect = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if n != 1 and s != expect:
                return False
            expect *= n
        return True


def get_soc(soc: str | SocInfo) -> SocInfo:
    if isinstance(soc, SocInfo):
        if soc.aiv_cores < 1 or soc.ub_bytes <= UB_RESERVED_BYTES:
            raise ValueError(f"soc {soc.name}: needs >= 1 AIV core and more than {UB_RESERVED_BYTES} UB bytes")
        return soc
    try:
        return SOCS[soc.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown soc {soc!r}; known: {', '.join(SOCS)}") from None


def kernel_dtype(dtype: object) -> dtypes.ElementType:
    """The element type spelled `dtype` (`f16`, `half`, `float16`, a numpy dtype) if the fmod kernels
    support it, else ValueError."""
    t = dtypes.find(dtype)
    if t is None or not t.fmod_kernel:
        raise ValueError(f"unsupported fmod dtype {dtype!r}; expected one of {dtypes.names(dtypes.FMOD_KERNEL_TYPES)}")
    return t


# --- scalar rounding (NEP 50) ----------------------------------------------------------------------------


def round_scalar(value: int | float, dtype: str) -> float:
    """The scalar as self's dtype stores it, widened to a Python float (what `scalarOther` holds).

    One home for the rule: `lowering.fmod_reference.round_scalar_to_dtype` (correct RNE from the exact
    Python value for the float types; int16: truncation toward zero, must fit). Errors become ValueError.
    """
    # Imported here, not at the top: the reference needs ml_dtypes, whose import costs far more than
    # the start of every sbp-opt run that never rounds a scalar (the pass registry loads this module).
    from sbpc.lowering.ascendc.fmod_reference import round_scalar_to_dtype

    t = kernel_dtype(dtype)
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"fmod scalar must be an int or a float, got {value!r}")
    try:
        r = round_scalar_to_dtype(value, t.numpy_dtype())
    except (OverflowError, ValueError) as error:
        what = t.name if t.is_float else t.numpy_name
        raise ValueError(f"scalar {value!r} is not representable as {what}: {error}") from None
    if r == 0.0 and t.is_float:
        r = math.copysign(0.0, float(value))  # an underflow to zero keeps the sign, as numpy's casts do
    return r


# --- coalescing ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Coalesced:
    """The fmod problem after broadcasting and coalescing: one stride tuple per operand."""

    shape: tuple[int, ...]
    self_strides: tuple[int, ...]
    other_strides: tuple[int, ...] | None  # None: scalar other
    out_strides: tuple[int, ...]

    @property
    def dim_num(self) -> int:
        return len(self.shape)


def broadcast_other(self_shape: Sequence[int], other: TensorView) -> tuple[int, ...]:
    """other's strides on self's dims (stride 0 where other is broadcast); ValueError if impossible."""
    ns, no = len(self_shape), len(other.shape)
    if no > ns:
        raise ValueError(f"other of shape {other.shape} has more dims than self {tuple(self_shape)}")
    strides = [0] * ns
    for k in range(no):
        d = ns - no + k
        if other.shape[k] == self_shape[d]:
            strides[d] = other.strides[k] if self_shape[d] != 1 else 0
        elif other.shape[k] != 1:
            raise ValueError(f"other of shape {other.shape} is not broadcastable to self {tuple(self_shape)}")
    return tuple(strides)


def coalesce(self: TensorView, other: TensorView | None, out: TensorView) -> Coalesced:
    """Broadcast `other` (None = scalar) to self, drop size-1 dims, merge dims contiguous in every operand.

    N = 0 gives shape (0,) with zero strides (nothing to move).
    """
    if out.shape != self.shape:
        raise ValueError(f"out shape {out.shape} must equal self shape {self.shape}")
    ops: list[tuple[int, ...]] = [self.strides, out.strides]
    if other is not None:
        ops.insert(1, broadcast_other(self.shape, other))
    if 0 in self.shape:
        zero = (0,)
        return Coalesced((0,), zero, zero if other is not None else None, zero)
    shape: list[int] = []
    strides: list[list[int]] = [[] for _ in ops]
    for d, n in enumerate(self.shape):
        if n == 1:
            continue
        if shape and all(st[-1] == op[d] * n for st, op in zip(strides, ops, strict=True)):
            shape[-1] *= n
            for st, op in zip(strides, ops, strict=True):
                st[-1] = op[d]
            continue
        shape.append(n)
        for st, op in zip(strides, ops, strict=True):
            st.append(op[d])
    tup = [tuple(s) for s in strides]
    if other is None:
        return Coalesced(tuple(shape), tup[0], None, tup[1])
    return Coalesced(tuple(shape), tup[0], tup[1], tup[2])


def _row_major_over(shape: Sequence[int], strides: Sequence[int]) -> bool:
    return tuple(strides) == row_major_strides(shape)


def _broadcast_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Stride-0 dims aside, the strides are row-major over the remaining dims."""
    expect = 1
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if s == 0:
            continue
        if s != expect:
            return False
        expect *= n
    return True


def select_tiling_key(c: Coalesced) -> int:
    """tilingKey 0-4 of a coalesced problem (docs/ascendc_design.md, Tiling step 2)."""
    flat = c.dim_num == 0 or (c.dim_num == 1 and c.self_strides[0] == 1 and c.out_strides[0] == 1)
    if c.other_strides is None or (c.dim_num > 0 and all(s == 0 for s in c.other_strides)):
        return 0 if flat else 3  # a scalar, or a 1-element `other` broadcast everywhere (read once)
    if flat and (c.dim_num == 0 or c.other_strides[0] == 1):
        return 1
    if (
        _row_major_over(c.shape, c.self_strides)
        and _row_major_over(c.shape, c.out_strides)
        and _broadcast_contiguous(c.shape, c.other_strides)
    ):
        return 2
    return 4
