"""`materialize-boxing`: insert `sbp.boxing` where a value's SBP differs from what its user needs.

After `infer-sbp` every op carries `sbp.signature`; an operand whose type's ND-SBP differs from
the signature's entry is routed through one `sbp.boxing` per (value, target SBP), placed right
after the value's definition so every consumer needing that SBP shares it. A `func.return` whose
operand type differs from the function's declared result type is boxed too (a training step's updated
parameters and state are first converted to their arguments' SBP, `autodiff.return_in_argument_layouts`), and each
`sbp.to_global` becomes a boxing (or disappears when it changes nothing). A cross-entropy whose
signature splits the vocabulary is first written out as Megatron's steps (`expand_vocab_parallel`).
Running the pass twice changes nothing the second time.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import NdSbpAttr, SignatureAttr
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import BoxingOp, ToGlobalOp
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.autodiff import return_in_argument_layouts
from sbpc.passes.expand_vocab_parallel import expand_vocab_parallel


class _Boxer:
    """Creates boxings, one per (value, target type)."""

    def __init__(self) -> None:
        self.made: dict[tuple[SSAValue, GlobalTensorType], SSAValue] = {}

    def boxed(self, value: SSAValue, target: GlobalTensorType, asker: Operation) -> SSAValue:
        """`value` boxed to `target`; a new box takes the location of `asker`, the op that needs it."""
        key = (value, target)
        if key in self.made:
            return self.made[key]
        box = BoxingOp.build(operands=[value], result_types=[target])
        box.location = asker.location
        owner = value.owner
        if isinstance(owner, Block):
            Rewriter.insert_op(box, InsertPoint.at_start(owner))
        else:
            Rewriter.insert_op(box, InsertPoint.after(owner))
        self.made[key] = box.results[0]
        return box.results[0]


def materialize_function(f: func.FuncOp) -> None:
    return_in_argument_layouts(f)  # a training step returns its parameters and state in their arguments' SBP
    expand_vocab_parallel(f)  # a vocab-split cross-entropy becomes ops whose operands get boxed below
    boxer = _Boxer()
    for op in list(f.body.walk()):
        if isinstance(op, BoxingOp | CollectiveOp):
            continue
        if isinstance(op, ToGlobalOp):
            _replace_to_global(op, boxer)
            continue
        if isinstance(op, func.ReturnOp):
            wanted = f.function_type.outputs.data
            for i, (v, want) in enumerate(zip(op.operands, wanted, strict=True)):
                if isinstance(v.type, GlobalTensorType) and isinstance(want, GlobalTensorType) and v.type != want:
                    op.operands[i] = boxer.boxed(v, want, op)
            continue
        sig = op.attributes.get("sbp.signature")
        if sig is None:
            if any(isinstance(v.type, GlobalTensorType) for v in op.operands):
                raise OpError(op, f"{describe_op(op)}: no sbp.signature; run infer-sbp before materialize-boxing")
            continue
        assert isinstance(sig, SignatureAttr)
        for i, (v, need) in enumerate(zip(op.operands, sig.inputs.data, strict=True)):
            ty = v.type
            if not isinstance(ty, GlobalTensorType) or not isinstance(need, NdSbpAttr) or ty.nd_sbp == need:
                continue
            op.operands[i] = boxer.boxed(v, ty.with_sbp(need, keep_layout=False), op)


def _replace_to_global(op: ToGlobalOp, boxer: _Boxer) -> None:
    src, dst = op.x, op.result
    assert isinstance(dst.type, GlobalTensorType)
    new_value = src if src.type == dst.type else boxer.boxed(src, dst.type, op)
    dst.replace_all_uses_with(new_value)
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class MaterializeBoxingPass(ModulePass):
    """Insert `sbp.boxing` ops for every SBP mismatch between producers and consumers."""

    name = "materialize-boxing"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                materialize_function(f)
