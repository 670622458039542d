"""PyTorch DTensor's default (greedy) redistribute planner, re-implemented on our ND-SBP states.

DTensor (`torch/distributed/tensor/_redistribute.py`, `generate_greedy_transform_infos`; see
reference/peers.md §1.1) plans a redistribution without a search:

1. A 1-D mesh is one direct transition.
2. If the source has any sharding (`num_shards > 1`), walk the mesh dims **inner -> outer**. For a
   dim whose target is `Shard(d)`, compare the mesh dims *before* it that shard tensor dim d in the
   current and in the target placements; if they differ the target Shard is misaligned with the
   nesting order, so this pass only replicates the dim (target := Replicate). Every other dim
   goes straight to its target.
3. Walk the mesh dims **outer -> inner** and apply whatever transition is still missing (typically
   Replicate -> Shard, a local chunk).

DTensor vocabulary -> ours: Shard(d) = S(d), Replicate = B, Partial(op) = P(op). Each DTensor
transform info (one mesh dim, current -> target) becomes a step of `passes.cost_model.make_step`,
priced by the same α-β model as our planners, so the comparison is between plans, not models.
Where DTensor's runtime or our step rules (`collectives.step_kind`) have no direct step, the
dim is replicated first (documented deviations, all "replicate first"):

* `S -> P`: DTensor raises "redistribute from Shard to Partial not supported yet"; its op
  strategies reach P only from R (`R -> P` is a local op). We do `S -> B -> P`.
* `P(x) -> P(y)` (different reduce ops): DTensor treats partial -> partial as a no-op, which is
  wrong for different ops; its Dijkstra planner prices it infinite. We do `P(x) -> B -> P(y)`.
* Any other step that `step_kind` rejects (a split changed on a mesh axis while a later axis still
  splits the same tensor axis): `X -> B -> target`. With one partial kind this never happens on
  the meshes we tried (2x2, 2x3, 2x4, 2x2x2): DTensor's misalignment rule already replicates
  those dims (test/unit/test_dtensor_greedy.py checks every pair).

DTensor forbids mixing partial reductions in one placement list (`assert_no_mixed_partial_types`:
max and sum do not commute, so their order would matter). Transitions between different partial
kinds (P(sum) in src, P(max) in dst) work when no intermediate state mixes them; when the greedy
order would create such a state in an invalid order, `NotImplementedError` is raised.

DTensor's `R -> P(sum)` divides by n on every rank; ours keeps the value on mesh index 0 and zeros
elsewhere. Both are local and free, so the plans cost the same.

`merge=True` adds DTensor's post-pass `_optimize_transform_infos`, which fuses consecutive
all-gathers (all-reduces, reduce-scatters) on different mesh dims into one collective over the
flattened dims. It applies only when the user created that flattened sub-mesh, so it is off by
default (the default greedy plan).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sbpc.dialects.collectives import step_kind
from sbpc.dialects.sbp import BROADCAST, BroadcastAttr, PartialAttr, SbpAttr, SplitAttr
from sbpc.passes.cost.comm import DEFAULT_MODEL, CommModel, NdSbp, Plan, Step, make_step

Move = tuple[int, SbpAttr, SbpAttr]
"""One DTensor transform info: (mesh dim, current placement, target placement)."""

MERGEABLE = ("all_gather", "all_reduce", "reduce_scatter")


def _num_shards(state: NdSbp, hierarchy: Sequence[int]) -> int:
    return math.prod(h for e, h in zip(state, hierarchy, strict=True) if isinstance(e, SplitAttr))


def _is_shard(entry: SbpAttr, dim: int) -> bool:
    return isinstance(entry, SplitAttr) and entry.dim == dim


def greedy_moves(src: NdSbp, dst: NdSbp, hierarchy: Sequence[int]) -> list[Move]:
    """DTensor's greedy transform infos, in DTensor's own placements (before our step rules)."""
    if len(hierarchy) == 1:
        return [(0, src[0], dst[0])] if src[0] != dst[0] else []
    moves: list[Move] = []
    current = list(src)
    target = list(dst)
    if _num_shards(src, hierarchy) > 1:
        for mesh_dim in reversed(range(len(current))):
            cur, tgt = current[mesh_dim], target[mesh_dim]
            if isinstance(tgt, SplitAttr):
                # Nested sharding: the mesh dims before this one that shard the same tensor dim must
                # be the same in the current and the target placements, else replicate for now.
                cur_nest = [i for i in range(mesh_dim) if _is_shard(current[i], tgt.dim)]
                tgt_nest = [i for i in range(mesh_dim) if _is_shard(target[i], tgt.dim)]
                if cur_nest != tgt_nest:
                    tgt = BROADCAST
            if cur != tgt:
                moves.append((mesh_dim, cur, tgt))
                current[mesh_dim] = tgt
    for mesh_dim, (cur, tgt) in enumerate(zip(current, target, strict=True)):
        if cur != tgt:
            moves.append((mesh_dim, cur, tgt))
            current[mesh_dim] = tgt
    return moves


def _set(state: NdSbp, axis: int, entry: SbpAttr) -> NdSbp:
    return tuple(entry if d == axis else e for d, e in enumerate(state))


def _needs_replicate_first(old: SbpAttr, new: SbpAttr) -> bool:
    """DTensor has no direct step: S -> P, and P(x) -> P(y) with x != y."""
    return isinstance(new, PartialAttr) and not isinstance(old, BroadcastAttr)


def greedy_transitions(src: NdSbp, dst: NdSbp, hierarchy: Sequence[int]) -> list[tuple[int, NdSbp, NdSbp]]:
    """The greedy moves as single-axis state transitions valid under `step_kind`:
    (mesh axis, state before, state after)."""
    out: list[tuple[int, NdSbp, NdSbp]] = []
    state = tuple(src)
    for axis, old, new in greedy_moves(src, dst, hierarchy):
        assert state[axis] == old, (src, dst, axis, old, state)
        direct = _set(state, axis, new)
        if not _needs_replicate_first(old, new) and step_kind(state, direct, (axis,), hierarchy) is not None:
            out.append((axis, state, direct))
            state = direct
            continue
        # Replicate first, then go to the target from B.
        middle = _set(state, axis, BROADCAST)
        if step_kind(state, middle, (axis,), hierarchy) is None \
                or step_kind(middle, direct, (axis,), hierarchy) is None:
            raise NotImplementedError(
                f"DTensor greedy: no valid replicate-first detour for {old} -> {new} on mesh axis {axis} "
                f"from {state} ({src} -> {dst})"
            )
        out += [(axis, state, middle), (axis, middle, direct)]
        state = direct
    assert state == tuple(dst), (src, dst, state)
    return out


def _merge(steps: list[Step], shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...],
           model: CommModel) -> list[Step]:
    """DTensor's `_optimize_transform_infos`: fuse consecutive same-kind collectives on different
    mesh axes into one over the flattened axes, when that is one valid step."""
    out: list[Step] = []
    for step in steps:
        if out and step.kind in MERGEABLE and out[-1].kind == step.kind \
                and not set(out[-1].mesh_axes) & set(step.mesh_axes):
            prev = out[-1]
            axes = tuple(sorted(prev.mesh_axes + step.mesh_axes))
            if step_kind(prev.src, step.dst, axes, hierarchy) == step.kind:
                out[-1] = make_step(step.kind, prev.src, step.dst, axes, shape, elt_bytes, hierarchy, model)
                continue
        out.append(step)
    return out


def dtensor_greedy_plan(
    src: NdSbp, dst: NdSbp, shape: tuple[int, ...], elt_bytes: int, hierarchy: tuple[int, ...],
    model: CommModel = DEFAULT_MODEL, merge: bool = False,
) -> Plan:
    """DTensor's default greedy redistribution of `src` to `dst` as a `Plan` of our steps."""
    steps: list[Step] = []
    for axis, before, after in greedy_transitions(tuple(src), tuple(dst), hierarchy):
        kind = step_kind(before, after, (axis,), hierarchy)
        assert kind is not None
        steps.append(make_step(kind, before, after, (axis,), shape, elt_bytes, hierarchy, model))
    if merge:
        steps = _merge(steps, shape, elt_bytes, hierarchy, model)
    return Plan(tuple(steps))
