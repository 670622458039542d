"""`lower-boxing`: expand every `sbp.boxing` into single-step collectives and local ops.

Planners (option `planner`):

* `optimal` (default): Dijkstra over ND-SBP states with the α-β model of `passes/cost/comm.py`
  (the one `infer-sbp` prices with). Steps may act on one mesh axis or on several merged axes,
  and the order of multiply-split axes is part of the state, so the plan is minimum-time under
  the model.
* `oneflow`: OneFlow's eager decomposition (reference/oneflow.md §4): dimension reduction to a
  1-D boxing when possible; otherwise the acyclic per-axis order, the cyclic detour through
  `(src[0], ..., src[0])` or all-B, and finally the generic staircase. Each 1-D boxing follows
  OneFlow's eager table (P->S(i>0) = reduce-scatter to S(0) then all-to-all; S(i>0)->B =
  all-to-all to S(0) then all-gather).

Every step is checked against `collectives.step_kind`, the same rule the verifiers and the simulator apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from sbpc.dialects.collective_ops import COLLECTIVE_OPS
from sbpc.dialects.collectives import axis_kind, step_kind
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import lookup_placement
from sbpc.dialects.sbp import BROADCAST, BroadcastAttr, PartialAttr, SbpAttr, SplitAttr, nd_sbp, split
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import BoxingOp
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.cost.comm import (
    DEFAULT_MODEL,
    CommModel,
    NdSbp,
    Plan,
    PlannerCache,
    make_step,
    placement_model,
    plan_transition,
)
from sbpc.passes.infer_sbp.candidates import element_bytes

Move = tuple[tuple[int, ...], SbpAttr]
"""Set the mesh axes to the entry."""

# ---------------------------------------------------------------------------
# OneFlow's eager planner
# ---------------------------------------------------------------------------


def _table_1d(old: SbpAttr, new: SbpAttr) -> list[SbpAttr]:
    """OneFlow's eager 1-D boxing as a sequence of intermediate entries ending in `new`."""
    if isinstance(old, PartialAttr) and isinstance(new, SplitAttr) and new.dim > 0:
        return [split(0), new]
    if isinstance(old, SplitAttr) and old.dim > 0 and isinstance(new, BroadcastAttr):
        return [split(0), new]
    return [new]


def _apply(state: NdSbp, axes: Sequence[int], entry: SbpAttr) -> NdSbp:
    return tuple(entry if d in axes else e for d, e in enumerate(state))


def _moves_valid(src: NdSbp, moves: Sequence[Move], hierarchy: Sequence[int]) -> bool:
    state = src
    for axes, entry in moves:
        nxt = _apply(state, axes, entry)
        if step_kind(state, nxt, axes, hierarchy) is None:
            return False
        state = nxt
    return True


def _one_d(src: NdSbp, axes: tuple[int, ...], new: SbpAttr, hierarchy: Sequence[int]) -> list[Move]:
    """A 1-D boxing on `axes` via OneFlow's table, or directly if the table's detour is invalid."""
    moves = [(axes, e) for e in _table_1d(src[axes[0]], new)]
    return moves if _moves_valid(src, moves, hierarchy) else [(axes, new)]


def _reduced_groups(src: NdSbp, dst: NdSbp, hierarchy: Sequence[int]) -> list[tuple[int, ...]]:
    """NdSbpDimReduce on both sides: adjacent mesh axes whose src and dst entries repeat merge; size-1
    axes are dropped (`_relabel` sets them)."""
    groups: list[list[int]] = []
    for d, h in enumerate(hierarchy):
        if h == 1:
            continue
        if groups and src[d] == src[groups[-1][-1]] and dst[d] == dst[groups[-1][-1]]:
            groups[-1].append(d)
        else:
            groups.append([d])
    return [tuple(g) for g in groups]


def _sequence(
    src: NdSbp, steps: Sequence[tuple[tuple[int, ...], SbpAttr]], hierarchy: Sequence[int]
) -> list[Move] | None:
    moves: list[Move] = []
    state = src
    for axes, entry in steps:
        if state[axes[0]] == entry:
            continue
        part = _one_d(state, axes, entry, hierarchy)
        if not _moves_valid(state, part, hierarchy):
            return None
        for a, e in part:
            state = _apply(state, a, e)
        moves += part
    return moves


def _acyclic(
    src: NdSbp, dst: NdSbp, groups: list[tuple[int, ...]], hierarchy: Sequence[int]
) -> list[Move] | None:
    """Per-group 1-D boxings in dependency order (a group splitting tensor axis a waits for the
    groups where src splits a); None on a cycle or an invalid step."""
    todo = [g for g in groups if src[g[0]] != dst[g[0]]]
    order: list[tuple[int, ...]] = []
    while todo:
        ready = [
            g
            for g in todo
            if not (
                isinstance(dst[g[0]], SplitAttr)
                and any(src[h[0]] == dst[g[0]] and h in todo and h != g for h in groups)
            )
        ]
        if not ready:
            return None
        order.append(ready[0])
        todo.remove(ready[0])
    return _sequence(src, [(g, dst[g[0]]) for g in order], hierarchy)


def oneflow_moves(src: NdSbp, dst: NdSbp, hierarchy: Sequence[int]) -> list[Move]:
    moves = _reduced_moves(src, dst, hierarchy)
    state = src
    for axes, entry in moves:
        state = _apply(state, axes, entry)
    return moves + _relabel(state, dst, hierarchy)


def _reduced_moves(src: NdSbp, dst: NdSbp, hierarchy: Sequence[int]) -> list[Move]:
    """OneFlow's boxing on the mesh axes of size > 1 (whose steps do not depend on the others)."""
    groups = _reduced_groups(src, dst, hierarchy)
    if not groups:
        return []
    if len(groups) == 1:
        found = _sequence(src, [(groups[0], dst[groups[0][0]])], hierarchy)
        if found is not None:
            return found
    found = _acyclic(src, dst, groups, hierarchy)
    if found is not None:
        return found
    for middle in ((src[0],) * len(src), (BROADCAST,) * len(src)):
        first = _acyclic(src, middle, _reduced_groups(src, middle, hierarchy), hierarchy)
        second = _acyclic(middle, dst, _reduced_groups(middle, dst, hierarchy), hierarchy)
        if first is not None and second is not None:
            return first + second
    return _staircase(src, dst)


def _relabel(state: NdSbp, dst: NdSbp, hierarchy: Sequence[int]) -> list[Move]:
    """The size-1 mesh axes, which OneFlow's dimension reduction drops: their entries describe no
    data movement, so each is set in one local step (through B for P(x) -> P(y), which no single
    collective does)."""
    moves: list[Move] = []
    for d, h in enumerate(hierarchy):
        if h == 1 and state[d] != dst[d]:
            if axis_kind(state[d], dst[d]) is None:
                moves.append(((d,), BROADCAST))
            moves.append(((d,), dst[d]))
    return moves


def _staircase(src: NdSbp, dst: NdSbp) -> list[Move]:
    """Generic symmetric ND boxing: from the last axis down to the first differing one turn
    every non-B into B, then from the first differing axis up turn B into dst."""
    first = min(d for d in range(len(src)) if src[d] != dst[d])
    moves: list[Move] = []
    state = src
    for d in reversed(range(first, len(src))):
        if not isinstance(state[d], BroadcastAttr):
            moves.append(((d,), BROADCAST))
            state = _apply(state, (d,), BROADCAST)
    for d in range(first, len(src)):
        if dst[d] != state[d]:
            moves.append(((d,), dst[d]))
            state = _apply(state, (d,), dst[d])
    return moves


def oneflow_plan(
    src: NdSbp, dst: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...],
    model: CommModel = DEFAULT_MODEL,
) -> Plan:
    steps = []
    state = src
    for axes, entry in oneflow_moves(src, dst, hierarchy):
        nxt = _apply(state, axes, entry)
        kind = step_kind(state, nxt, axes, hierarchy)
        assert kind is not None, f"invalid OneFlow step {state} -> {nxt} on {axes}"
        steps.append(make_step(kind, state, nxt, tuple(axes), shape, elt_bytes, hierarchy, model))
        state = nxt
    return Plan(tuple(steps))


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


def plan_for(box: BoxingOp, planner: str, cache: PlannerCache) -> Plan:
    src_t, dst_t = box.x.type, box.result.type
    assert isinstance(src_t, GlobalTensorType) and isinstance(dst_t, GlobalTensorType)
    src, dst = src_t.nd_sbp, dst_t.nd_sbp
    if src is None or dst is None:
        raise OpError(box, f"{describe_op(box)}: boxing types must carry ND-SBPs")
    if src_t.placement_name != dst_t.placement_name:
        raise OpError(box, f"{describe_op(box)}: boxing between placements is not supported yet")
    placement = lookup_placement(box, src_t)
    assert placement is not None
    hierarchy = placement.get_hierarchy()
    args = (tuple(src), tuple(dst), src_t.get_shape(), element_bytes(src_t), hierarchy, placement_model(placement))
    return oneflow_plan(*args) if planner == "oneflow" else plan_transition(*args, cache=cache)


def lower_box(box: BoxingOp, planner: str, cache: PlannerCache) -> None:
    plan = plan_for(box, planner, cache)
    value = box.x
    src_t = value.type
    assert isinstance(src_t, GlobalTensorType)
    for index, step in enumerate(plan.steps):
        last = index + 1 == len(plan.steps)
        op = COLLECTIVE_OPS[step.kind].build(
            operands=[value],
            result_types=[box.result.type if last else src_t.with_sbp(nd_sbp(*step.dst), keep_layout=False)],
            properties={"mesh_axes": DenseArrayBase.from_list(i64, step.mesh_axes)},
        )
        op.location = box.location  # errors about a step point where the boxing was asked for
        Rewriter.insert_op(op, InsertPoint.before(box))
        value = op.results[0]
    box.result.replace_all_uses_with(value)
    Rewriter.erase_op(box)


@dataclass(frozen=True)
class LowerBoxingPass(ModulePass):
    """Rewrite each `sbp.boxing` into single-step collectives.

    Options: `planner=optimal` (default, minimum modelled time) or `planner=oneflow`.
    """

    name = "lower-boxing"
    planner: Literal["optimal", "oneflow"] = "optimal"

    def __post_init__(self) -> None:
        # The pass instance owns the planner's cache (not a field: fields are command-line options).
        object.__setattr__(self, "_cache", PlannerCache())

    @property
    def cache(self) -> PlannerCache:
        return self._cache  # type: ignore[attr-defined]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.planner not in ("optimal", "oneflow"):
            raise OpError(op, f"lower-boxing: unknown planner '{self.planner}' (expected optimal or oneflow)")
        for box in [o for o in op.walk() if isinstance(o, BoxingOp)]:
            lower_box(box, self.planner, self.cache)
