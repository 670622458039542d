"""Collective ops of the `sbp` dialect (SPEC §2.4): the single-step boxing `--lower-boxing` emits.

Each op names the `dialects.collectives` entry it performs (`KIND`); its verifier asks that module
whether the transition read from the types (or, per rank, from `src_sbp`/`dst_sbp`) is exactly that
step on the placement's mesh, so an op that verifies is an op the simulator and planners can run.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, SymbolRefAttr, i64
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, opt_prop_def, prop_def
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects.collectives import COLLECTIVES, Invalid, axis_kind, check_step
from sbpc.dialects.placement import lookup_placement, lookup_placement_named
from sbpc.dialects.sbp import NdSbpAttr
from sbpc.dialects.sbp_op_base import as_tensor_type
from sbpc.dialects.sbp_ops import ConversionOp


class CollectiveOp(ConversionOp, abc.ABC):
    """Changes the SBP on the mesh axes `mesh_axes` only; the transition is read from the types and
    must be the step `dialects.collectives` defines for this op's `KIND` on the placement's mesh."""

    irdl_options = (ParsePropInAttrDict(),)
    mesh_axes = prop_def(DenseArrayBase.constr(i64))
    # After `spmdize` the types are per-rank tensors, so the step is spelled out:
    placement = opt_prop_def(SymbolRefAttr)
    src_sbp = opt_prop_def(NdSbpAttr)
    dst_sbp = opt_prop_def(NdSbpAttr)
    global_shape = opt_prop_def(DenseArrayBase.constr(i64))
    KIND: ClassVar[str]
    """The `dialects.collectives.COLLECTIVES` entry this op performs."""

    def get_mesh_axes(self) -> tuple[int, ...]:
        return tuple(self.mesh_axes.get_values())  # type: ignore[return-value]

    def verify_semantics(self) -> None:
        super().verify_semantics()
        src_t, dst_t = as_tensor_type(self.x.type), as_tensor_type(self.result.type)
        src, dst = src_t.nd_sbp, dst_t.nd_sbp
        if src is None or dst is None:
            raise self.fail("collective operand and result types must carry an ND-SBP")
        placement = lookup_placement(self, src_t)
        assert placement is not None  # SbpOp.verify_ checked it
        self.verify_transition(src, dst, placement.get_hierarchy())

    def verify_local(self) -> None:
        if self.src_sbp is None or self.dst_sbp is None or self.placement is None or self.global_shape is None:
            raise VerifyException(
                f"{self.name} on per-rank tensors needs the properties placement, src_sbp, dst_sbp and global_shape"
            )
        if len(self.src_sbp) != len(self.dst_sbp):  # verify_transition indexes both per mesh axis
            raise VerifyException(
                f"{self.name}: src_sbp {self.src_sbp.short_str()} and dst_sbp {self.dst_sbp.short_str()} "
                "have different lengths"
            )
        placement = lookup_placement_named(self, self.placement.root_reference.data)
        if placement is None:
            raise VerifyException(f"{self.name}: unknown placement {self.placement}")
        hierarchy = placement.get_hierarchy()
        if len(hierarchy) != len(self.src_sbp):
            raise VerifyException(
                f"{self.name}: src_sbp {self.src_sbp.short_str()} has length {len(self.src_sbp)}, but placement "
                f"{self.placement} has hierarchy {list(hierarchy)} of rank {len(hierarchy)}"
            )
        self.verify_transition(self.src_sbp, self.dst_sbp, hierarchy)

    def verify_transition(self, src: NdSbpAttr, dst: NdSbpAttr, hierarchy: Sequence[int]) -> None:
        axes = self.get_mesh_axes()
        found = check_step(tuple(src), tuple(dst), axes, hierarchy)
        if found == self.KIND:
            return
        change = f"{src.short_str()} -> {dst.short_str()}"
        if isinstance(found, Invalid) and found.stage == "mesh_axes":
            raise self.fail(found.reason)
        if isinstance(found, Invalid) and found.stage == "unlisted":
            raise self.fail(f"{change} {found.reason}")
        # A listed axis that is not this op's transition is the likeliest mistake: name it first.
        for d in axes:
            if axis_kind(src[d], dst[d]) != self.KIND:
                raise self.fail(
                    f"{change} on mesh axis {d} is {src[d].short_str()} -> {dst[d].short_str()}, "
                    f"not the {COLLECTIVES[self.KIND].transition} of {self.name}"
                )
        assert isinstance(found, Invalid)
        raise self.fail(f"{change} on mesh axes {list(axes)} of the mesh {list(hierarchy)} {found.reason}")


@irdl_op_definition
class AllGatherOp(CollectiveOp):
    """S(i) -> B (all-gather)."""

    name = "sbp.all_gather"
    KIND: ClassVar[str] = "all_gather"


@irdl_op_definition
class AllReduceOp(CollectiveOp):
    """P(k) -> B (all-reduce with k)."""

    name = "sbp.all_reduce"
    KIND: ClassVar[str] = "all_reduce"


@irdl_op_definition
class ReduceScatterOp(CollectiveOp):
    """P(k) -> S(i) (reduce-scatter)."""

    name = "sbp.reduce_scatter"
    KIND: ClassVar[str] = "reduce_scatter"


@irdl_op_definition
class AllToAllOp(CollectiveOp):
    """S(i) -> S(j), i != j (all-to-all)."""

    name = "sbp.all_to_all"
    KIND: ClassVar[str] = "all_to_all"


@irdl_op_definition
class AllSliceOp(CollectiveOp):
    """B -> S(i): a local slice, no communication."""

    name = "sbp.all_slice"
    KIND: ClassVar[str] = "all_slice"


@irdl_op_definition
class ToPartialOp(CollectiveOp):
    """B -> P(k) or S(i) -> P(k): local (one rank keeps / zero fill; identity for max/min from B)."""

    name = "sbp.to_partial"
    KIND: ClassVar[str] = "to_partial"


COLLECTIVE_OPS: dict[str, type[CollectiveOp]] = {
    op.KIND: op for op in (AllGatherOp, AllReduceOp, ReduceScatterOp, AllToAllOp, AllSliceOp, ToPartialOp)
}
"""The op performing each `COLLECTIVES` kind."""
