"""One rank's side of every `sbp` collective, as real torch.distributed collectives.

An executor of `dialects.collectives`, like the simulator: the group, its member order, what each
member holds and wants, the flat pieces of an all-reduce and the reduction itself
(`reduce_arrays`, in member order) are read from there; this module only moves the bytes.

* Process groups: every rank group of every mesh-axis set the program uses, created by every
  rank in one order. `dist.new_group` sorts the ranks it is given, so a member's group rank is its
  position among the sorted flat ranks; parts are laid out in that order and mapped back.
* `all_gather` with equal shards is `dist.all_gather`; uneven ones, and every `all_to_all`, are
  one `all_to_all_single` with split sizes (gloo has no uneven all_gather).
* Integer `all_reduce` / `reduce_scatter` (on dtypes gloo reduces; a reduce_scatter only when no
  part is empty) are native: integer reduction
  is exact in any order. Float ones exchange the parts (`all_to_all_single`) and reduce them
  locally in the simulator's member order, so results are bit-identical (a native float reduction
  sums in gloo's order); the all-reduce then all-gathers its reduced pieces.
* `all_slice` and `to_partial` are local (`collectives.local_step`).

Data moves as raw bytes (uint8 views), so bf16 needs nothing special. Bytes sent are counted as
this rank hands them to torch for other ranks (for the native reductions: the direct algorithm's
count, which is what the cost model prices).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.distributed as dist

from sbpc.dialects.collectives import (
    Coord,
    InvalidStep,
    RankView,
    check_step,
    groups,
    local_step,
    mesh_coords,
    put_block,
    rank_view,
    receive_buffer,
    reduce_arrays,
    take_block,
)
from sbpc.dialects.sbp import PartialAttr, ReduceKind
from sbpc.dialects.sharding import balanced_range
from sbpc.runtime.ops_torch import to_numpy, to_torch, torch_dtype
from sbpc.runtime.simulator import Step, sbp_text

_NATIVE_REDUCE_DTYPES = frozenset({np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.int64)})
"""Integer dtypes gloo reduces (it has no int16)."""
_REDUCE_OPS = {ReduceKind.SUM: dist.ReduceOp.SUM, ReduceKind.MAX: dist.ReduceOp.MAX,
               ReduceKind.MIN: dist.ReduceOp.MIN}


class ProcessGroups:
    """The torch process group of every rank group of the given mesh-axis sets, and its rank order.

    Every rank must construct this with the same arguments (torch creates groups collectively)."""

    def __init__(self, hierarchy: Sequence[int], axes_sets: Sequence[tuple[int, ...]]):
        self.hierarchy = tuple(hierarchy)
        self.flat = {c: i for i, c in enumerate(mesh_coords(self.hierarchy))}
        self._groups: dict[tuple[Coord, ...], dist.ProcessGroup] = {}
        seen: set[tuple[Coord, ...]] = set()
        for axes in axes_sets:
            for members in groups(self.hierarchy, axes):
                key = tuple(members)
                if len(key) == 1 or key in seen:
                    continue
                seen.add(key)
                self._groups[key] = dist.new_group(ranks=[self.flat[m] for m in key])

    def group(self, members: tuple[Coord, ...]) -> tuple[dist.ProcessGroup, list[int]]:
        """The group of `members` and, per group rank, the member index it is (new_group sorts ranks)."""
        order = sorted(range(len(members)), key=lambda i: self.flat[members[i]])
        return self._groups[members], order


def _bytes(arr: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)


def _block(raw: np.ndarray, dtype: np.dtype, box: Sequence[tuple[int, int]]) -> np.ndarray:
    return raw.view(dtype).reshape([hi - lo for lo, hi in box])


class RankCollectives:
    """Runs collectives for the rank at `coord`; counts the bytes it sends."""

    def __init__(self, groups_: ProcessGroups, coord: Coord, device: torch.device | None = None):
        self.groups = groups_
        self.coord = coord
        self.device = device if device is not None else torch.device("cpu")
        """Where the collectives' tensors live (the CPU for gloo, the rank's GPU/NPU for nccl/hccl)."""

    # -- transport -------------------------------------------------------------
    def exchange(self, view: RankView, sends: Sequence[np.ndarray], recv_sizes: Sequence[int],
                 traffic: bool) -> list[np.ndarray]:
        """One all_to_all_single: `sends[k]` (bytes) to member k, `recv_sizes[r]` bytes from member r.
        The own part stays local. `traffic`: whether anyone in the group sends anything."""
        n, me = len(view.members), view.index
        received = [np.empty(0, np.uint8) for _ in range(n)]
        received[me] = sends[me]
        if not traffic:
            return received
        group, order = self.groups.group(view.members)
        in_sizes = [0 if order[g] == me else sends[order[g]].size for g in range(n)]
        out_sizes = [0 if order[g] == me else recv_sizes[order[g]] for g in range(n)]
        parts = [sends[order[g]] for g in range(n) if order[g] != me]
        payload = torch.from_numpy(np.concatenate(parts) if parts else np.empty(0, np.uint8)).to(self.device)
        out = torch.empty(sum(out_sizes), dtype=torch.uint8, device=self.device)
        dist.all_to_all_single(out, payload, out_sizes, in_sizes, group=group)
        flat = out.cpu().numpy()
        offset = 0
        for g in range(n):
            if order[g] != me:
                received[order[g]] = flat[offset:offset + out_sizes[g]]
            offset += out_sizes[g]
        return received

    def gather_equal(self, view: RankView, mine: np.ndarray) -> list[np.ndarray]:
        """dist.all_gather of equal-sized byte buffers; the result in member order."""
        group, order = self.groups.group(view.members)
        outs = [torch.empty(mine.size, dtype=torch.uint8, device=self.device) for _ in view.members]
        dist.all_gather(outs, torch.from_numpy(np.ascontiguousarray(mine)).to(self.device), group=group)
        result: list[np.ndarray] = [np.empty(0, np.uint8)] * len(view.members)
        for g, t in enumerate(outs):
            result[order[g]] = t.cpu().numpy()
        return result

    # -- steps -----------------------------------------------------------------
    def run(self, spec: Step, shard: torch.Tensor) -> tuple[torch.Tensor, int]:
        """The rank's result of one step and the bytes it sent. Raises `InvalidStep` like `execute_step`."""
        found = check_step(spec.src, spec.dst, spec.mesh_axes, spec.hierarchy)
        if found != spec.kind:
            why = found.reason if not isinstance(found, str) else f"is an {found}"
            raise InvalidStep(f"{spec.kind} {sbp_text(spec.src)} -> {sbp_text(spec.dst)} on mesh_axes "
                              f"{list(spec.mesh_axes)}: {why}")
        view = rank_view(spec.src, spec.dst, spec.mesh_axes, spec.shape, spec.hierarchy, self.coord)
        local = to_numpy(shard)
        if spec.kind in ("all_slice", "to_partial"):
            return to_torch(local_step(spec.kind, local, spec.src, spec.dst, spec.mesh_axes, view)), 0
        if len(view.members) == 1:  # a size-1 group: the step only relabels the data
            out, sent = self._move(view, local) if spec.kind in ("all_gather", "all_to_all") else (local.copy(), 0)
            return to_torch(out), sent
        if spec.kind in ("all_gather", "all_to_all"):
            out, sent = self._move(view, local)
        elif spec.kind == "reduce_scatter":
            out, sent = self._reduce_scatter(view, local, spec.src[spec.mesh_axes[0]])
        else:
            out, sent = self._all_reduce(view, local, spec.src[spec.mesh_axes[0]])
        return to_torch(out), sent

    @staticmethod
    def _take(local: np.ndarray, have: Sequence[tuple[int, int]], box: Sequence[tuple[int, int]]) -> np.ndarray:
        """The block `box` of the shard, empty when the box is (its ranges may then be reversed, which
        slicing would read as negative indices)."""
        if any(hi <= lo for lo, hi in box):
            return np.empty([0] * len(box), local.dtype)
        return take_block(local, have, box)

    def _move(self, view: RankView, local: np.ndarray) -> tuple[np.ndarray, int]:
        """all_gather / all_to_all: every member gets the part of every shard it wants."""
        n, me = len(view.members), view.index
        have = view.have[me]
        buf = receive_buffer(view, local.dtype)
        item = local.dtype.itemsize
        everyone = [[view.volume(view.box(r, k)) for k in range(n)] for r in range(n)]
        whole = [view.volume(view.have[r]) for r in range(n)]
        if n > 1 and all(everyone[r][k] == whole[r] for r in range(n) for k in range(n) if k != r) \
                and len(set(whole)) == 1 and whole[0] > 0:
            parts = self.gather_equal(view, _bytes(local))
            boxes = [view.have[r] for r in range(n)]
            sent = local.nbytes * (n - 1)
        else:
            sends = [_bytes(self._take(local, have, view.box(me, k))) for k in range(n)]
            recv_sizes = [everyone[r][me] * item for r in range(n)]
            traffic = any(everyone[r][k] for r in range(n) for k in range(n) if k != r)
            parts = self.exchange(view, sends, recv_sizes, traffic)
            boxes = [view.box(r, me) for r in range(n)]
            sent = sum(s.size for k, s in enumerate(sends) if k != me)
        for r in range(n):
            box = view.box(r, me)  # within boxes[r]: a whole shard (all_gather) or exactly this
            if view.volume(box) == 0:
                continue
            block = _block(parts[r], local.dtype, boxes[r])
            put_block(buf, view.want[me], box, take_block(block, boxes[r], box))
        return buf, sent

    def _reduce_scatter(self, view: RankView, local: np.ndarray, entry: PartialAttr) -> tuple[np.ndarray, int]:
        n, me = len(view.members), view.index
        have = view.have[me]
        blocks = [np.ascontiguousarray(self._take(local, have, view.want[k])) for k in range(n)]
        sent = sum(b.nbytes for k, b in enumerate(blocks) if k != me)
        want_shape = [hi - lo for lo, hi in view.want[me]]
        # gloo's reduce_scatter aborts on an empty part: those go through the exchange
        if local.dtype in _NATIVE_REDUCE_DTYPES and all(view.volume(w) for w in view.want):
            group, order = self.groups.group(view.members)
            out = torch.empty(math.prod(want_shape), dtype=torch_dtype(local.dtype), device=self.device)
            dist.reduce_scatter(out, [to_torch(blocks[order[g]]).reshape(-1).to(self.device) for g in range(n)],
                                op=_REDUCE_OPS[entry.reduce_kind], group=group)
            return to_numpy(out.cpu()).reshape(want_shape), sent
        recv = [view.volume(view.want[me]) * local.dtype.itemsize] * n
        traffic = any(view.volume(view.want[k]) for k in range(n))
        parts = self.exchange(view, [_bytes(b) for b in blocks], recv, traffic)
        pieces = [parts[r].view(local.dtype).reshape(want_shape) for r in range(n)]
        return reduce_arrays(entry.reduce_kind, pieces), sent

    def _all_reduce(self, view: RankView, local: np.ndarray, entry: PartialAttr) -> tuple[np.ndarray, int]:
        """Reduce-scatter of the flat pieces, then all-gather of the reduced pieces (as the simulator)."""
        n, me = len(view.members), view.index
        flat = np.ascontiguousarray(local).reshape(-1)
        pieces = [balanced_range(flat.size, n, i) for i in range(n)]
        size = [hi - lo for lo, hi in pieces]
        sent = (sum(size) - size[me]) * local.dtype.itemsize + size[me] * (n - 1) * local.dtype.itemsize
        if local.dtype in _NATIVE_REDUCE_DTYPES:
            group, _ = self.groups.group(view.members)
            t = to_torch(flat.copy()).to(self.device)
            dist.all_reduce(t, op=_REDUCE_OPS[entry.reduce_kind], group=group)
            return to_numpy(t.cpu()).reshape(local.shape), sent
        item = local.dtype.itemsize
        sends = [_bytes(flat[lo:hi]) for lo, hi in pieces]
        parts = self.exchange(view, sends, [size[me] * item] * n, flat.size > 0)
        reduced = reduce_arrays(entry.reduce_kind, [parts[r].view(local.dtype) for r in range(n)])
        if len(set(size)) == 1:
            gathered = self.gather_equal(view, _bytes(reduced)) if flat.size else [_bytes(reduced)] * n
        else:
            gathered = self.exchange(view, [_bytes(reduced)] * n, [s * item for s in size], True)
        full = np.concatenate([g.view(local.dtype) for g in gathered])
        return full.reshape(local.shape), sent

