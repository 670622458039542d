"""The `sbp` dialect object: every op and attribute of the dialect, registered together.

The ops live by family: `placement.py` (the mesh), `sbp_ops.py` (compute and conversion ops, on
the base `sbp_op_base.SbpOp`), `sbp_ops_nn.py` (the neural-network ops of SPEC §7),
`collective_ops.py` (the collectives `--lower-boxing` emits); the attributes in `sbp.py` and
`layout.py`, the type `!sbp.tensor` in `tensor_type.py`.
"""

from __future__ import annotations

from xdsl.ir import Dialect, Operation

from sbpc.dialects import collective_ops, sbp_ops, sbp_ops_grad, sbp_ops_grad_nn, sbp_ops_nn
from sbpc.dialects.layout import LayoutAttr
from sbpc.dialects.placement import PlacementOp
from sbpc.dialects.sbp import (
    BroadcastAttr,
    NdSbpAttr,
    NdSbpPatternAttr,
    PartialAttr,
    SignatureAttr,
    SplitAttr,
)
from sbpc.dialects.tensor_type import GlobalTensorType

SBP_OPS: list[type[Operation]] = [
    PlacementOp,
    sbp_ops.AddOp,
    sbp_ops.SubOp,
    sbp_ops.MulOp,
    sbp_ops.DivOp,
    sbp_ops.MaximumOp,
    sbp_ops.MinimumOp,
    sbp_ops.FmodOp,
    sbp_ops.FmodScalarOp,
    sbp_ops.AddScalarOp,
    sbp_ops.MulScalarOp,
    sbp_ops.ReluOp,
    sbp_ops.NegOp,
    sbp_ops.ExpOp,
    sbp_ops.GeluOp,
    sbp_ops.LayerNormOp,
    sbp_ops.CastOp,
    sbp_ops.MatmulOp,
    sbp_ops.ReduceSumOp,
    sbp_ops.ReduceMaxOp,
    sbp_ops.ReduceMinOp,
    sbp_ops.TransposeOp,
    sbp_ops.ReshapeOp,
    sbp_ops.ToGlobalOp,
    sbp_ops.BoxingOp,
    sbp_ops_nn.SigmoidOp,
    sbp_ops_nn.TanhOp,
    sbp_ops_nn.SiluOp,
    sbp_ops_nn.DropoutOp,
    sbp_ops_nn.SoftmaxOp,
    sbp_ops_nn.RmsNormOp,
    sbp_ops_nn.EmbeddingOp,
    sbp_ops_nn.CrossEntropyOp,
    sbp_ops_nn.CrossEntropyFromStatsOp,
    sbp_ops_nn.ConcatOp,
    sbp_ops_nn.SliceOp,
    sbp_ops_nn.WhereOp,
    sbp_ops_nn.BroadcastToOp,
    collective_ops.AllGatherOp,
    collective_ops.AllReduceOp,
    collective_ops.ReduceScatterOp,
    collective_ops.AllToAllOp,
    collective_ops.AllSliceOp,
    collective_ops.ToPartialOp,
    *sbp_ops_grad.GRAD_OPS,
    *sbp_ops_grad_nn.NN_GRAD_OPS,
]

SBP = Dialect(
    "sbp",
    SBP_OPS,
    [SplitAttr, BroadcastAttr, PartialAttr, NdSbpAttr, NdSbpPatternAttr, GlobalTensorType, SignatureAttr, LayoutAttr],
)
