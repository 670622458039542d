"""The `ascendc` dialect: kernel-level IR of the Ascend C fmod kernels.

`--lower-to-ascendc` produces it and `lowering/ascendc/printer.py` prints it as C++. Ops mirror the
Ascend C calls the kernel makes, on named local buffers (as the real API works on named
`LocalTensor`s): `x`, `y`, `z` are the VECIN/VECOUT queue tiles in the tensor's dtype T and `x32`,
`y32`, `q32` the fp32 temporaries (aliases of `x`, `y` when T is f32).

* `ascendc.kernel @fmod_tensor` — one per op kind: its region is the per-tile program (copy in,
  compute, copy out); the printer wraps it in the TILING_KEY_IS branches and tile loops.
* `ascendc.launch @fmod_tensor(%self, %other)` — replaces a local `sbp.fmod`: the call, with the
  concrete tiling of every rank's local shape (`tilings`, flat rank order).
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Dialect
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import NoTerminator, SymbolOpInterface

BUFFERS = ("x", "y", "z", "x32", "y32", "q32")
ROUND_MODES = ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD")


class _StageOp(IRDLOperation):
    """A step of the per-tile program; its operands are buffer names."""

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict"


@irdl_op_definition
class CopyInOp(_StageOp):
    """GM -> UB: `DataCopyPad(dst, srcGm[offset], DataCopyExtParams{...}, DataCopyPadExtParams<T>{...})`.

    `src` is the kernel argument (`self` or `other`); the printer derives the addressing of each
    tiling key (contiguous run, broadcast runs, strided element walk)."""

    name = "ascendc.copy_in"
    src = prop_def(StringAttr)
    dst = prop_def(StringAttr)


@irdl_op_definition
class CopyOutOp(_StageOp):
    """UB -> GM: `DataCopyPad(outGm[offset], src, DataCopyExtParams{...})` (exact bytes on tails)."""

    name = "ascendc.copy_out"
    src = prop_def(StringAttr)
    dst = prop_def(StringAttr)


@irdl_op_definition
class DuplicateOp(_StageOp):
    """`Duplicate(dst, scalar, count)`: broadcast the scalar divisor (keys 0 and 3)."""

    name = "ascendc.duplicate"
    dst = prop_def(StringAttr)
    scalar = prop_def(StringAttr)
    """Where the scalar comes from: `tiling` (FmodScalar's host-rounded scalar) or `other` (a 1-element tensor)."""


@irdl_op_definition
class CastOp(_StageOp):
    """`Cast(dst, src, RoundMode::mode, count)`; with `per_dtype` the mode depends on T and is
    skipped when T is f32 (`modes` maps f16/bf16/i16 to a mode)."""

    name = "ascendc.cast"
    dst = prop_def(StringAttr)
    src = prop_def(StringAttr)
    mode = opt_prop_def(StringAttr)
    modes = opt_prop_def(DictionaryAttr)


class _BinaryOp(_StageOp):
    dst = prop_def(StringAttr)
    src0 = prop_def(StringAttr)
    src1 = prop_def(StringAttr)


@irdl_op_definition
class DivOp(_BinaryOp):
    """`Div(dst, src0, src1, count)` (fp32)."""

    name = "ascendc.div"


@irdl_op_definition
class MulOp(_BinaryOp):
    """`Mul(dst, src0, src1, count)` (fp32)."""

    name = "ascendc.mul"


@irdl_op_definition
class SubOp(_BinaryOp):
    """`Sub(dst, src0, src1, count)` (fp32)."""

    name = "ascendc.sub"


@irdl_op_definition
class AddOp(_BinaryOp):
    """`Add(dst, src0, src1, count)` (fp32)."""

    name = "ascendc.add"


class _ScalarOp(_StageOp):
    dst = prop_def(StringAttr)
    src = prop_def(StringAttr)
    scalar = prop_def(FloatAttr)


@irdl_op_definition
class MaxsOp(_ScalarOp):
    """`Maxs(dst, src, scalar, count)`: TBE's floor(max(q, 0)) half of truncation."""

    name = "ascendc.maxs"


@irdl_op_definition
class MinsOp(_ScalarOp):
    """`Mins(dst, src, scalar, count)`: TBE's ceil(min(q, 0)) half of truncation."""

    name = "ascendc.mins"


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A kernel entry (`fmod_tensor` / `fmod_scalar`) and its per-tile program."""

    name = "ascendc.kernel"
    sym_name = prop_def(SymbolNameConstraint())
    op_type = prop_def(StringAttr)
    scalar = opt_prop_def(UnitAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), NoTerminator())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$sym_name attr-dict-with-keyword $body"


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run `kernel` on every rank's local operands with that rank's tiling (`tilings[rank]`)."""

    name = "ascendc.launch"
    kernel = prop_def(SymbolRefAttr)
    tilings = prop_def(ArrayAttr[DictionaryAttr])
    args = var_operand_def()
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$kernel `(` $args `)` attr-dict `:` functional-type($args, $result)"


ASCENDC = Dialect(
    "ascendc",
    [KernelOp, LaunchOp, CopyInOp, CopyOutOp, DuplicateOp, CastOp, DivOp, MulOp, SubOp, AddOp, MaxsOp, MinsOp],
    [],
)
