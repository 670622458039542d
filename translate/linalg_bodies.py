"""Scalar region bodies for `--emit-mlir` (translate/to_upstream_mlir.py): the `arith`/`math` ops of
each sbp elementwise op on one element, inside a `linalg.generic`, and the generic-op builder.

Element semantics follow SPEC §2.4: C fmod (in f32 for f16/bf16; integer `x fmod 0` = 0), numpy's
NaN-propagating maximum/minimum (`arith.maximumf`), casts by width and signedness.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)
import numpy as np
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    UnregisteredOp,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from sbpc.dialects import dtypes
from sbpc.dialects import sbp_ops as ops
from sbpc.dialects import sbp_ops_nn as nn
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import ReduceKind
from sbpc.dialects.tensor_type import GlobalTensorType

CMPI_EQ = 0
CMPI_NE = 1
CMPI_SLT = 2
CMPI_SGE = 5
CMPF_UNE = 13


def signless(ty: Attribute) -> Attribute:
    """MLIR's arith works on signless integers: ui8 is exported as i8 (its ops pick the unsigned forms)."""
    if isinstance(ty, IntegerType) and ty.signedness.data != Signedness.SIGNLESS:
        return IntegerType(ty.width.data)
    return ty


def is_unsigned(ty: Attribute) -> bool:
    return isinstance(ty, IntegerType) and ty.signedness.data == Signedness.UNSIGNED


def builtin_tensor(op: Operation, ty: Attribute) -> TensorType:
    """The builtin tensor type a value has in the export: the per-rank type without its layout
    encoding, or (`--emit-mlir=global`) the global shape; integers signless."""
    if isinstance(ty, GlobalTensorType):  # --emit-mlir=global: the global shape
        return TensorType(signless(ty.element_type), ty.get_shape())
    if not isinstance(ty, TensorType):
        raise OpError(op, f"{op.name}: {ty} is not a per-rank tensor: run spmdize before --emit-mlir")
    return plain_tensor(ty)


def plain_tensor(ty: TensorType) -> TensorType:
    """`ty` without its `#sbp.layout` encoding (kept as the `sbp.layout` text on arguments)."""
    return TensorType(signless(ty.element_type), ty.get_shape())


def dim_source(op: Operation, sources: dict[int, tuple[SSAValue, int]], k: int) -> tuple[SSAValue, int]:
    """The (operand, dim) an uneven result dim k takes its size from."""
    if k not in sources:
        raise OpError(op, f"{op.name}: the uneven result dim {k} is not the size of any operand dim")
    return sources[k]



def generic_op(name: str, operands: Sequence[SSAValue] = (), results: Sequence[Attribute] = (),
               props: dict[str, Attribute] | None = None, regions: Sequence[Region] = ()) -> Operation:
    """An op printed in generic form whatever xDSL knows of it (xDSL 0.74 lacks most `shard` ops)."""
    return UnregisteredOp.with_name(name).create(
        operands=list(operands), result_types=list(results), properties=props or {}, regions=list(regions)
    )


def is_float(ty: Attribute) -> bool:
    return not isinstance(ty, IntegerType)


def _width(ty: Attribute) -> int:
    if isinstance(ty, IntegerType):
        return ty.width.data
    return ty.bitwidth  # type: ignore[attr-defined]


def identity(kind: ReduceKind, ty: Attribute, unsigned: bool = False) -> Attribute:
    """The neutral element of `kind` in `ty` (the fill of a reduction or of a partial buffer); of the
    unsigned integers held in `ty` if `unsigned` (the maximum, all ones, written -1)."""
    if isinstance(ty, IntegerType):
        bits = ty.width.data
        value = {ReduceKind.SUM: 0, ReduceKind.MAX: -(1 << (bits - 1)), ReduceKind.MIN: (1 << (bits - 1)) - 1}[kind]
        if unsigned:
            value = {ReduceKind.SUM: 0, ReduceKind.MAX: 0, ReduceKind.MIN: -1}[kind]
        return IntegerAttr(value, ty)
    value_f = {ReduceKind.SUM: 0.0, ReduceKind.MAX: float("-inf"), ReduceKind.MIN: float("inf")}[kind]
    return FloatAttr(value_f, ty)  # type: ignore[arg-type]


def _const_attr(value: float | int, ty: Attribute) -> Attribute:
    """`value` first cast to the tensor's element type, as the runtime does (0.1 on f16 is
    0.0999755859375; 1e6 on f16 is inf; integers wrap)."""
    element = dtypes.of_xdsl(ty)
    assert element is not None and element.numpy_name is not None
    with np.errstate(over="ignore"):  # overflowing to inf is the runtime's cast too
        cast = np.array(value if element.is_float else int(value)).astype(np.dtype(element.numpy_name)).item()
    if isinstance(ty, IntegerType):
        return IntegerAttr(int(cast), ty)
    return FloatAttr(float(cast), ty)  # type: ignore[arg-type]


class Body:
    """Builds a linalg region body: arith/math ops on scalars, ended by `linalg.yield`."""

    def __init__(self, arg_types: Sequence[Attribute]):
        self.block = Block(arg_types=list(arg_types))

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.block.args)

    def op(self, name: str, operands: Sequence[SSAValue], ty: Attribute,
           props: dict[str, Attribute] | None = None) -> SSAValue:
        op = generic_op(name, operands, [ty], props)
        self.block.add_op(op)
        return op.results[0]

    def const(self, attr: Attribute, ty: Attribute) -> SSAValue:
        return self.op("arith.constant", [], ty, {"value": attr})

    def region(self, value: SSAValue) -> Region:
        self.block.add_op(generic_op("linalg.yield", [value]))
        return Region(self.block)


ScalarFn = Callable[[Body, Sequence[SSAValue]], SSAValue]
"""Builds the body's result from its element arguments."""
ScalarBody = Callable[[Operation, Attribute], ScalarFn]
"""The scalar function of an elementwise op, given its result element type."""


def unsigned_operands(op: Operation) -> bool:
    """Whether the op computes on unsigned integers (ui8), which the export holds as signless i8."""
    return any(is_unsigned(getattr(v.type, "element_type", None)) for v in op.operands)  # type: ignore[arg-type]


def _binary(float_name: str, int_name: str, unsigned_name: str | None = None) -> ScalarBody:
    def body(op: Operation, out_elt: Attribute) -> ScalarFn:
        name = float_name if is_float(out_elt) else unsigned_name if unsigned_name and unsigned_operands(op) \
            else int_name
        return lambda b, a: b.op(name, a, out_elt)

    return body


def _div(op: Operation, out_elt: Attribute) -> ScalarFn:
    if is_float(out_elt):
        return lambda b, a: b.op("arith.divf", a, out_elt)
    name = "arith.divui" if unsigned_operands(op) else "arith.divsi"
    return lambda b, a: _guarded(b, name, a[0], a[1], out_elt)


def _fmod_scalar(op: Operation, out_elt: Attribute) -> ScalarFn:
    assert isinstance(op, ops.FmodScalarOp)
    other = op.other.value.data
    unsigned = unsigned_operands(op)
    return lambda b, a: _fmod(b, a[0], b.const(_const_attr(other, out_elt), out_elt), out_elt, unsigned)


def _with_scalar(float_name: str, int_name: str) -> ScalarBody:
    def body(op: Operation, out_elt: Attribute) -> ScalarFn:
        assert isinstance(op, ops.AddScalarOp | ops.MulScalarOp)
        name = float_name if is_float(out_elt) else int_name
        value = op.scalar.value.data
        return lambda b, a: b.op(name, [a[0], b.const(_const_attr(value, out_elt), out_elt)], out_elt)

    return body


def _relu(op: Operation, out_elt: Attribute) -> ScalarFn:
    name = "arith.maximumf" if is_float(out_elt) else "arith.maxsi"
    return lambda b, a: b.op(name, [a[0], b.const(_const_attr(0, out_elt), out_elt)], out_elt)


def _neg(op: Operation, out_elt: Attribute) -> ScalarFn:
    if is_float(out_elt):
        return lambda b, a: b.op("arith.negf", a, out_elt)
    return lambda b, a: b.op("arith.subi", [b.const(_const_attr(0, out_elt), out_elt), a[0]], out_elt)


def _exp(op: Operation, out_elt: Attribute) -> ScalarFn:
    if not is_float(out_elt):
        raise OpError(op, f"{op.name} on {out_elt} has no math.exp form")
    return lambda b, a: in_f32(b, "math.exp", a, out_elt)


def _sigmoid(body: Body, w: SSAValue) -> SSAValue:
    """ops_nn's `one / (one + exp(-w))`."""
    ty = w.type
    one = body.const(FloatAttr(1.0, ty), ty)  # type: ignore[arg-type]
    exp = body.op("math.exp", [body.op("arith.negf", [w], ty)], ty)
    return body.op("arith.divf", [one, body.op("arith.addf", [one, exp], ty)], ty)


def _float_only(name: str, fn: Callable[[Body, SSAValue], SSAValue]) -> ScalarBody:
    """The scalar body `fn` on the element widened to f32 for f16/bf16, rounded back."""

    def body(op: Operation, out_elt: Attribute) -> ScalarFn:
        if not is_float(out_elt):
            raise OpError(op, f"{op.name} on {out_elt} has no {name} form")
        return lambda b, a: narrow(b, fn(b, widen(b, a[0])), out_elt)

    return body


SCALAR_BODIES: dict[type[Operation], ScalarBody] = {
    ops.AddOp: _binary("arith.addf", "arith.addi"),
    ops.SubOp: _binary("arith.subf", "arith.subi"),
    ops.MulOp: _binary("arith.mulf", "arith.muli"),
    ops.DivOp: _div,
    ops.MaximumOp: _binary("arith.maximumf", "arith.maxsi", "arith.maxui"),
    ops.MinimumOp: _binary("arith.minimumf", "arith.minsi", "arith.minui"),
    ops.FmodOp: lambda op, out_elt: lambda b, a: _fmod(b, a[0], a[1], out_elt, unsigned_operands(op)),
    ops.FmodScalarOp: _fmod_scalar,
    ops.AddScalarOp: _with_scalar("arith.addf", "arith.addi"),
    ops.MulScalarOp: _with_scalar("arith.mulf", "arith.muli"),
    ops.ReluOp: _relu,
    ops.NegOp: _neg,
    ops.ExpOp: _exp,
    ops.CastOp: lambda op, out_elt: lambda b, a: _cast(b, a[0], out_elt, unsigned_operands(op),
                                                       is_unsigned(op.results[0].type.element_type)),  # type: ignore[attr-defined]
    ops.GeluOp: lambda op, out_elt: lambda b, a: narrow(b, _gelu(b, widen(b, a[0])), out_elt),
    nn.SigmoidOp: _float_only("sigmoid", _sigmoid),
    nn.TanhOp: _float_only("math.tanh", lambda b, w: b.op("math.tanh", [w], w.type)),
    nn.SiluOp: _float_only("silu", lambda b, w: b.op("arith.mulf", [w, _sigmoid(b, w)], w.type)),
    nn.DropoutOp: lambda op, out_elt: lambda b, a: a[0],
}
"""Elementwise op class -> its scalar body: the arith/math ops on one element (SPEC §2.4's semantics)."""


def scalar_body(op: Operation, out_elt: Attribute) -> ScalarFn | None:
    """The scalar body of an elementwise op with result element type `out_elt`, or None if `op` is
    not elementwise."""
    make = SCALAR_BODIES.get(type(op))
    return None if make is None else make(op, out_elt)


GELU_C = float(np.sqrt(2.0 / np.pi))  # ops_numpy's constant, rounded to f32 as it is there


def _gelu(body: Body, w: SSAValue) -> SSAValue:
    """ops_numpy's `half * w * (one + tanh(c * (w + k * w * w * w)))`, in that evaluation order."""
    ty = w.type

    def const(value: float) -> SSAValue:
        return body.const(_const_attr(value, ty), ty)

    cube = const(0.044715)
    for _ in range(3):
        cube = body.op("arith.mulf", [cube, w], ty)
    inner = body.op("arith.mulf", [const(GELU_C), body.op("arith.addf", [w, cube], ty)], ty)
    one_plus = body.op("arith.addf", [const(1.0), body.op("math.tanh", [inner], ty)], ty)
    return body.op("arith.mulf", [body.op("arith.mulf", [const(0.5), w], ty), one_plus], ty)


def widen(body: Body, x: SSAValue) -> SSAValue:
    """f16/bf16 extended to f32 (ops_numpy's `_wide`), wider floats as they are."""
    return x if _width(x.type) >= 32 else body.op("arith.extf", [x], f32)


def narrow(body: Body, x: SSAValue, ty: Attribute) -> SSAValue:
    """The f32 `x` rounded back to `ty` (identity when `x` already has it)."""
    return x if x.type == ty else body.op("arith.truncf", [x], ty)


def in_f32(body: Body, name: str, args: Sequence[SSAValue], ty: Attribute) -> SSAValue:
    """`name` on f16/bf16 computed in f32 and rounded back (the runtime's convention); f32 as is."""
    if _width(ty) >= 32:
        return body.op(name, args, ty)
    return narrow(body, body.op(name, [widen(body, a) for a in args], f32), ty)


def _guarded(body: Body, name: str, x: SSAValue, y: SSAValue, ty: Attribute) -> SSAValue:
    """Integer `name` (divsi, remsi) with a divisor of 0 giving 0, not undefined behaviour."""
    zero = body.const(IntegerAttr(0, ty), ty)
    is_zero = body.op("arith.cmpi", [y, zero], i1, {"predicate": IntegerAttr(CMPI_EQ, i64)})
    safe = body.op("arith.select", [is_zero, body.const(IntegerAttr(1, ty), ty), y], ty)
    return body.op("arith.select", [is_zero, zero, body.op(name, [x, safe], ty)], ty)


def _fmod(body: Body, x: SSAValue, y: SSAValue, ty: Attribute, unsigned: bool = False) -> SSAValue:
    """C fmod: arith.remf (in f32 for f16/bf16, as SPEC §2.4 says); integer `x fmod 0` = 0."""
    if isinstance(ty, IntegerType):
        return _guarded(body, "arith.remui" if unsigned else "arith.remsi", x, y, ty)
    return in_f32(body, "arith.remf", [x, y], ty)


def _cast(body: Body, x: SSAValue, to: Attribute, src_unsigned: bool = False, to_unsigned: bool = False) -> SSAValue:
    """ops_numpy's casts: i1 is true where nonzero (NaN too) and 1 when widened; ui8 zero-extends."""
    src = x.type
    if src == to:
        return x
    if is_float(src) and is_float(to):
        if _width(src) == _width(to):  # f16 <-> bf16: through f32
            return body.op("arith.truncf", [body.op("arith.extf", [x], f32)], to)
        return body.op("arith.extf" if _width(to) > _width(src) else "arith.truncf", [x], to)
    if _width(to) == 1:
        if is_float(src):
            zero = body.const(FloatAttr(0.0, src), src)  # type: ignore[arg-type]
            return body.op("arith.cmpf", [x, zero], i1, {"predicate": IntegerAttr(CMPF_UNE, i64)})
        zero = body.const(IntegerAttr(0, src), src)
        return body.op("arith.cmpi", [x, zero], i1, {"predicate": IntegerAttr(CMPI_NE, i64)})
    unsigned = src_unsigned or _width(src) == 1
    if is_float(to):
        return body.op("arith.uitofp" if unsigned else "arith.sitofp", [x], to)
    if is_float(src):
        return body.op("arith.fptoui" if to_unsigned else "arith.fptosi", [x], to)
    if _width(to) > _width(src):
        return body.op("arith.extui" if unsigned else "arith.extsi", [x], to)
    return body.op("arith.trunci", [x], to)
