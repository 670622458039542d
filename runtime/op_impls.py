"""What each compute op of SPEC §2.4 computes, on numpy arrays and on torch tensors, keyed by op class.

One `OpImpl` per op (or op family), registered for its op classes with `@impl(FmodOp)` or `register`
(`runtime/op_registry.py`; the ops of SPEC §7 are registered by `runtime/ops_nn.py`), as xDSL's
interpreter registers `@impl(arith.AddiOp)`: its `numpy` and `torch` methods sit side by side,
and the simulator, the global reference, the torch backend and the `--kernels` overrides find them by
`type(op)` (`impl_of`, `run_numpy`, `run_torch`). An op's FLOPs are its `dialects.flops.FlopModel`
trait and its MLIR form `translate.to_upstream_mlir.LOWERINGS[type(op)]`; `test_op_impls` checks that
every op with a FLOP model has all four. `operands` are the op's operand values (full arrays for the
reference, one rank's local shards otherwise); `op` is read only for its properties and its result
element type; a `rank_dependent` op (a vocab-parallel lookup) also gets the rank's mesh coordinate.
The mechanics shared by several ops are `runtime.ops_numpy` and `runtime.ops_torch`; the
torch side imports the latter when it first runs, since torch is optional and takes over a second to
import, which a numpy run should not pay.

Numeric conventions (the reference and the ranks share them, so distributed runs compare bit for bit
where no reduction order changes); the result keeps the tensor's dtype:

* integers wrap around on overflow (two's complement, as numpy and C in practice);
* integer `div` truncates toward zero like C; a divisor of 0 gives 0 (C leaves it undefined);
* `fmod` is C fmod, the exact remainder `self - trunc(self/other)*other` (no rounding anywhere, unlike
  the Ascend kernels' TBE formula, `lowering/ascendc/fmod_reference.py`): `np.fmod` for floats (the result takes
  the sign of self; other = 0 gives NaN, other = ±inf gives self); f16 and bf16 compute in float32 and
  cast back (exact: an fmod result is representable); integers use the C remainder with a divisor of 0
  giving 0 (numpy's choice, and what the Ascend int16 kernel documents);
* scalars of `fmod_scalar`, `add_scalar`, `mul_scalar` are first cast to the tensor's dtype (0.1 on
  f16 is 0.0999755859375, as aclnn `.Scalar().To("self")`), then applied;
* `matmul` and `reduce_sum` accumulate f16/bf16 in float32 then cast back; `exp` of f16/bf16 goes
  through float32, of integers through float64 clipped to the integer range (NaN -> 0);
* `gelu` (tanh form) and `layer_norm` (mean, biased variance over the last axis) compute f16/bf16
  in float32 and cast back;
* `reduce_max`/`reduce_min` over an empty extent give the reduction's identity (-inf/+inf, or the
  integer minimum/maximum), so a rank holding an empty split still yields a valid partial.

torch equals numpy bit for bit except where `torch_rounds_differently` says (its vectorised `exp`
differs in the last ulp on ~40 % of f32 inputs; `gelu` and `layer_norm` are torch's own kernels; float
`matmul` and `reduce_sum` sum in another order), and in the sign of a NaN (fmod by 0 is -NaN in numpy,
+NaN in torch); `--check` compares those within its per-dtype tolerance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from sbpc.dialects import sbp_ops as ops
from sbpc.dialects.collectives import Coord
from sbpc.runtime import (
    ops_grad,  # noqa: F401  (registers the backward and optimizer ops of SPEC §8)
    ops_nn,  # noqa: F401  (registers the ops of SPEC §7)
)
from sbpc.runtime.op_registry import IMPLS, OpImpl, Overrides, impl, impl_of, register
from sbpc.runtime.ops_numpy import (
    F32,
    LOW_FLOATS,
    batched_matmul,
    cast_array,
    fmod_arrays,
    has_flag,
    int_div,
    int_property,
    is_integer,
    result_dtype,
    result_shape,
    same_dtype,
    scalar_as,
    scalar_value,
    wide,
)

if TYPE_CHECKING:
    import torch

Shape = Sequence[int]

__all__ = ["IMPLS", "OpImpl", "Overrides", "impl", "impl_of", "register", "run_numpy", "run_torch"]


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------


class Elementwise(OpImpl):
    """`lhs OP rhs` with numpy broadcasting (or `x OP scalar`, the scalar cast to x's dtype first)."""

    def __init__(self, ufunc: np.ufunc, method: str, scalar: str | None = None):
        self.ufunc = ufunc
        self.method = method
        """The torch.Tensor method of the same name and meaning."""
        self.scalar = scalar
        """The property holding the scalar operand, None for a binary op."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        a = operands[0]
        b = operands[1] if self.scalar is None else scalar_as(scalar_value(op, self.scalar), a.dtype)
        return same_dtype(self.ufunc(a, b), a.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        a = operands[0]
        b = operands[1] if self.scalar is None else T.scalar(scalar_value(op, self.scalar), a)
        return getattr(a, self.method)(b).to(a.dtype)


for _op, _ufunc, _method in (
    (ops.AddOp, np.add, "add"), (ops.SubOp, np.subtract, "sub"), (ops.MulOp, np.multiply, "mul"),
    (ops.MaximumOp, np.maximum, "maximum"), (ops.MinimumOp, np.minimum, "minimum"),
):
    register(_op, Elementwise(_ufunc, _method))
register(ops.AddScalarOp, Elementwise(np.add, "add", "scalar"))
register(ops.MulScalarOp, Elementwise(np.multiply, "mul", "scalar"))


@impl(ops.DivOp)
class Div(OpImpl):
    """True division of floats; C division of integers (toward zero, a divisor of 0 gives 0)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        a, b = operands
        if is_integer(a.dtype):
            return int_div(*np.broadcast_arrays(a, b))
        return same_dtype(np.true_divide(a, b), a.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        a, b = operands
        return T.int_div(a, b) if T.is_integer(a) else a.true_divide(b).to(a.dtype)


@impl(ops.FmodOp)
class Fmod(OpImpl):
    """C fmod, other broadcast to self."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        a, b = operands
        return fmod_arrays(a, b)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        a, b = operands
        return T.fmod_tensors(a, b)


@impl(ops.FmodScalarOp)
class FmodScalar(OpImpl):
    """C fmod by the `other` property, cast to the tensor's dtype."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        return fmod_arrays(x, scalar_as(scalar_value(op, "other"), x.dtype))

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        (x,) = operands
        return T.fmod_tensors(x, T.scalar(scalar_value(op, "other"), x))


@impl(ops.ReluOp)
class Relu(OpImpl):
    """`max(x, 0)` (NaN propagates)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        return same_dtype(np.maximum(x, np.zeros((), x.dtype)), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        (x,) = operands
        return x.maximum(x.new_zeros(()))


@impl(ops.NegOp)
class Neg(OpImpl):
    """`-x` (integers wrap)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        return same_dtype(np.negative(x), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        (x,) = operands
        return x.neg()


@impl(ops.ExpOp)
class Exp(OpImpl):
    """`exp(x)`: f16/bf16 in float32; integers through float64 clipped to their range (NaN -> 0)."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        if is_integer(x.dtype):
            info = np.iinfo(x.dtype)
            wide_x = np.exp(x.astype(np.float64))
            return np.nan_to_num(np.clip(wide_x, info.min, info.max), nan=0).astype(x.dtype)
        if x.dtype in LOW_FLOATS:
            return np.exp(x.astype(F32)).astype(x.dtype)
        return same_dtype(np.exp(x), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        (x,) = operands
        if T.is_integer(x):
            low, high = T.int_bounds(x.dtype)
            return x.double().exp().clamp(low, high).nan_to_num(nan=0.0).to(x.dtype)
        return T.in_f32(lambda w: w.exp(), x)


GELU_C = float(np.sqrt(2.0 / np.pi))


@impl(ops.GeluOp)
class Gelu(OpImpl):
    """Tanh form `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`, f16/bf16 in float32."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        w = wide(x)
        c = w.dtype.type(GELU_C)
        half, one, k = (w.dtype.type(v) for v in (0.5, 1.0, 0.044715))
        return same_dtype(half * w * (one + np.tanh(c * (w + k * w * w * w))), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        (x,) = operands
        return T.in_f32(T.gelu_tanh, x)


@impl(ops.LayerNormOp)
class LayerNorm(OpImpl):
    """`(x - mean) / sqrt(var + epsilon) · gamma + beta` over the last axis (biased variance), f16/bf16 in
    float32."""

    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        assert isinstance(op, ops.LayerNormOp)
        x, gamma, beta = (wide(v) for v in operands)
        eps = x.dtype.type(op.get_epsilon())
        mean = x.mean(axis=-1, keepdims=True)
        centred = x - mean
        var = (centred * centred).mean(axis=-1, keepdims=True)
        return same_dtype(centred / np.sqrt(var + eps) * gamma + beta, operands[0].dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        assert isinstance(op, ops.LayerNormOp)
        eps = op.get_epsilon()
        return T.in_f32(lambda x, g, b: T.layer_norm_last(x, g, b, eps), *operands)


@impl(ops.CastOp)
class Cast(OpImpl):
    """To the result's element type (float -> int truncates toward zero; bf16 goes through float32)."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        return cast_array(x, result_dtype(op))

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        (x,) = operands
        return T.cast_tensor(x, T.torch_dtype(result_dtype(op)))


# ---------------------------------------------------------------------------
# Contractions, reductions, data movement
# ---------------------------------------------------------------------------


@impl(ops.MatmulOp)
class Matmul(OpImpl):
    """Batched `a @ b` (each transposed first if flagged); f16/bf16 accumulate in float32."""

    accumulates = True
    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        a, b = operands
        dtype = a.dtype
        if has_flag(op, "transpose_a"):
            a = np.swapaxes(a, -1, -2)
        if has_flag(op, "transpose_b"):
            b = np.swapaxes(b, -1, -2)
        if dtype in LOW_FLOATS:
            a, b = a.astype(F32), b.astype(F32)
        return same_dtype(batched_matmul(a, b), dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        a, b = operands
        if has_flag(op, "transpose_a"):
            a = a.transpose(-1, -2)
        if has_flag(op, "transpose_b"):
            b = b.transpose(-1, -2)
        if T.is_integer(a):  # torch has no integer GEMM on every build; int64 accumulation wraps like numpy's
            return a.long().matmul(b.long()).to(a.dtype)
        return T.in_f32(lambda x, y: x.matmul(y), a, b)


def _reduce_axes(op: Operation) -> tuple[tuple[int, ...], bool]:
    return int_property(op, "axes"), has_flag(op, "keepdims")


@impl(ops.ReduceSumOp)
class ReduceSum(OpImpl):
    """Sum over `axes`; f16/bf16 accumulate in float32."""

    accumulates = True
    torch_rounds_differently = True

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        axes, keepdims = _reduce_axes(op)
        if x.dtype in LOW_FLOATS:
            return np.sum(x.astype(F32), axis=axes, keepdims=keepdims).astype(x.dtype)
        return same_dtype(np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        (x,) = operands
        axes, keepdims = _reduce_axes(op)
        if not axes:  # numpy's axis=() reduces nothing; torch's dim=() reduces everything
            return x.clone()
        if x.dtype in T.LOW_FLOATS:
            return x.float().sum(dim=axes, keepdim=keepdims).to(x.dtype)
        return x.sum(dim=axes, keepdim=keepdims, dtype=x.dtype)


class Extremum(OpImpl):
    """Maximum (or minimum) over `axes`; an empty extent gives the identity (-inf/+inf, the integer bounds)."""

    def __init__(self, maximum: bool):
        self.maximum = maximum

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        axes, keepdims = _reduce_axes(op)
        if is_integer(x.dtype):
            info = np.iinfo(x.dtype)
            initial: int | float = int(info.min if self.maximum else info.max)
        else:
            initial = -np.inf if self.maximum else np.inf
        reduce = np.max if self.maximum else np.min
        return same_dtype(reduce(x, axis=axes, keepdims=keepdims, initial=initial), x.dtype)

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        from sbpc.runtime import ops_torch as T

        (x,) = operands
        axes, keepdims = _reduce_axes(op)
        if not axes:
            return x.clone()
        dims = sorted(a % x.dim() for a in axes)
        if any(x.shape[d] == 0 for d in dims):  # torch refuses empty extents; numpy gives the identity
            shape = [1 if d in dims else n for d, n in enumerate(x.shape) if keepdims or d not in dims]
            low, high = T.int_bounds(x.dtype) if T.is_integer(x) else (-float("inf"), float("inf"))
            return x.new_full(shape, low if self.maximum else high)
        return x.amax(dim=dims, keepdim=keepdims) if self.maximum else x.amin(dim=dims, keepdim=keepdims)


register(ops.ReduceMaxOp, Extremum(maximum=True))
register(ops.ReduceMinOp, Extremum(maximum=False))


@impl(ops.TransposeOp)
class Transpose(OpImpl):
    """Result dim i is operand dim `perm[i]`, stored contiguously."""

    def numpy(self, op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        (x,) = operands
        return np.ascontiguousarray(np.transpose(x, int_property(op, "perm")))

    def torch(self, op: Operation, operands: list[torch.Tensor]) -> torch.Tensor:
        (x,) = operands
        return x.permute(int_property(op, "perm")).contiguous()


@impl(ops.ReshapeOp)
class Reshape(OpImpl):
    """Row-major reshape to `shape`: a rank's local result shape (shards may differ), by default the
    result type's static shape."""

    def numpy(self, op: Operation, operands: list[np.ndarray], shape: Shape | None = None) -> np.ndarray:
        (x,) = operands
        return np.reshape(x, tuple(shape) if shape is not None else result_shape(op)).copy()

    def torch(self, op: Operation, operands: list[torch.Tensor], shape: Shape | None = None) -> torch.Tensor:
        (x,) = operands
        return x.reshape(tuple(shape) if shape is not None else result_shape(op)).clone()


# ---------------------------------------------------------------------------
# Running an op
# ---------------------------------------------------------------------------


def _impl(op: Operation) -> OpImpl:
    found = IMPLS.get(type(op))
    if found is None:
        raise KeyError(op.name)
    return found


def run_numpy(
    op: Operation, operands: list[np.ndarray], shape: Shape | None = None, overrides: Overrides | None = None,
    coord: Coord | None = None,
) -> np.ndarray:
    """Run the compute op `op` on arrays (`shape`: the local result shape of a reshape; `coord`: the
    rank whose shards `operands` are, None for global values), through its override if `overrides`
    has one."""
    implementation = _impl(op)
    if isinstance(implementation, Reshape):  # the one op that needs the rank's local result shape
        return implementation.numpy(op, operands, shape)
    if implementation.rank_dependent:
        with np.errstate(all="ignore"):
            return np.asarray(implementation.numpy(op, operands, coord))  # type: ignore[call-arg]
    kernel = overrides.get(type(op)) if overrides else None
    with np.errstate(all="ignore"):
        return np.asarray(kernel(op, operands) if kernel is not None else implementation.numpy(op, operands))


def run_torch(
    op: Operation, operands: list[torch.Tensor], shape: Shape | None = None, overrides: Overrides | None = None,
    coord: Coord | None = None,
) -> torch.Tensor:
    """Run the compute op `op` on tensors (`shape`, `coord` as for `run_numpy`); an override (a numpy
    kernel, e.g. fmod through the Ascend C kernel) runs on the tensors' numpy views."""
    implementation = _impl(op)
    if isinstance(implementation, Reshape):
        return implementation.torch(op, operands, shape)
    if implementation.rank_dependent:
        return implementation.torch(op, operands, coord)  # type: ignore[call-arg]
    kernel = overrides.get(type(op)) if overrides else None
    if kernel is None:
        return implementation.torch(op, operands)
    from sbpc.runtime import ops_torch as T

    with np.errstate(all="ignore"):
        return T.to_torch(np.asarray(kernel(op, [T.to_numpy(t) for t in operands])))
