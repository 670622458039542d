"""Per-rank sbp program -> upstream MLIR 22 with MPI collectives (`sbp-translate --emit-mlir=mpi`).

The per-rank export of `to_upstream_mlir` (the same compute ops), but every sbp collective is
lowered here to MLIR 22's `mpi` dialect (LLVM 22's `--convert-shard-to-mpi` lowers only
all_reduce): one module that a single binary runs on every rank, the rank from `mpi.comm_rank`,
placement rank r = MPI world rank r (row-major over the mesh). A collective over mesh axes A runs
on the communicator `mpi.comm_split` gives the ranks that differ only on A, in two phases:
1. make the value the group's whole region: a partial P(k) is `mpi.allreduce` with k; split
   shards go into a zero buffer of the region at their offsets and are combined by an
   `mpi.allreduce` with bitwise OR on the bits (exact: each element has one owner, the others
   contribute 0) - all_gather, and the gather of all_to_all; S -> P(k) puts the shard into a
   buffer of k's identity instead (no communication);
2. cut out the rank's part of the result (reduce_scatter, all_to_all, all_slice), and for
   B -> P(k) keep the value on the group's first rank, k's identity elsewhere (to_partial).
Offsets and uneven sizes differ per rank: they are constant tables indexed by the rank, the
local types dynamic where the program's are. f16/bf16 partials (no MPI type) are gathered and
summed in group order, as sbpc's simulator does; MPI buffers are 1-D (the lowering counts dim 0).

`to_upstream_mpi` adds the runnable entry `@mpi_main`: MPI init, the global inputs as
`dense_resource` constants (the tool passes `sbp-run --seed N`'s), each cut to its argument's
SBP by the same collective lowering, the call, each result made replicated the same way, and
rank 0 printing them with the runner's `printMemref*`. The file carries `LLVM_PIPELINE` as its
`mlir_reproducer`, so `mlir-opt-22 --run-reproducer` lowers it to LLVM; `strip_for_runner` then
drops the `dlti` attribute the MPI lowering reads and `mlir-runner-22` cannot parse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from io import StringIO

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FlatSymbolRefAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    UnrankedMemRefType,
    UnregisteredAttr,
    UnregisteredOp,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.printer import Printer

from sbpc.dialects import collective_ops as coll
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import PlacementOp
from sbpc.dialects.sbp import BroadcastAttr, NdSbpAttr, PartialAttr, ReduceKind, SplitAttr
from sbpc.dialects.sharding import local_slices
from sbpc.translate.linalg_bodies import CMPI_EQ, Body, generic_op, identity
from sbpc.translate.to_upstream_mlir import FuncEmitter, _step_sbps, builtin_tensor, to_upstream_mlir

_INDEX = IndexType()
_COMM = UnregisteredAttr.with_name_and_type("mpi.comm", True)("mpi.comm", True, False, "")
_MPICH = UnregisteredAttr.with_name_and_type("dlti.map", False)(
    "dlti.map", False, False, '"MPI:Implementation" = "MPICH"')
# MLIR 22's MPI_OpClassEnum values (printed as integers in generic form)
_MPI_OP = {ReduceKind.MAX: 1, ReduceKind.MIN: 2, ReduceKind.SUM: 3, "bor": 8}
_DYN = DYNAMIC_INDEX

ENTRY = "mpi_main"
"""The runnable entry `to_upstream_mpi` adds (`mlir-runner-22 -e mpi_main`)."""

LLVM_PIPELINE = (
    "builtin.module(one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},convert-linalg-to-loops,expand-strided-metadata,"
    "lower-affine,convert-scf-to-cf,convert-math-to-llvm,convert-to-llvm,reconcile-unrealized-casts)"
)
"""mlir-opt-22's lowering of the `--emit-mlir=mpi` module to the LLVM dialect (written into the file
as its `mlir_reproducer`: `mlir-opt-22 --run-reproducer FILE` runs it)."""

RUNNER_LIBRARIES = ("libmpich.so.12", "libmlir_c_runner_utils.so.22.1", "libmlir_runner_utils.so.22.1")
"""What `mlir-runner-22 --shared-libs=` needs (full paths): MPICH and the runner's print functions."""


def strip_for_runner(lowered: str) -> str:
    """The lowered module without its `dlti.map` attribute, which `mlir-runner-22` (no DLTI dialect)
    rejects; only the MPI lowering reads it."""
    return re.sub(r"(module) attributes \{dlti\.map = #dlti\.map<\"MPI:Implementation\" = \"\w+\">\}", r"\1",
                  lowered, count=1)


def _coords(hierarchy: Sequence[int]) -> list[tuple[int, ...]]:
    """Mesh coordinate of each flat rank (row-major, sbpc's rank order)."""
    found: list[tuple[int, ...]] = []
    for flat in range(math.prod(hierarchy)):
        coord: list[int] = []
        for n in reversed(hierarchy):
            coord.insert(0, flat % n)
            flat //= n
        found.append(tuple(coord))
    return found


def _linear(coord: Sequence[int], hierarchy: Sequence[int], axes: Sequence[int]) -> int:
    index = 0
    for a in axes:
        index = index * hierarchy[a] + coord[a]
    return index


class MpiEmitter(FuncEmitter):
    """`FuncEmitter` with the collectives as MPI communication over `mpi.comm_split` groups."""

    def __init__(self, block: Block, grids: dict[str, PlacementOp]):
        super().__init__(block, grids)
        self._comms: dict[tuple[str, tuple[int, ...]], SSAValue] = {}
        self.world = self.add(generic_op("mpi.comm_world", [], [_COMM])).results[0]
        rank = self.add(generic_op("mpi.comm_rank", [self.world], [i32])).results[0]
        self.rank = self.add(generic_op("arith.index_cast", [rank], [_INDEX])).results[0]

    # -- per-rank tables ---------------------------------------------------------------------------

    def per_rank(self, values: Sequence[int], ty: Attribute = _INDEX) -> SSAValue:
        """values[rank] on this rank: a constant when all agree, else a table read at the rank."""
        if len(set(values)) == 1:
            return self.add(generic_op("arith.constant", [], [ty], {"value": IntegerAttr(values[0], ty)})).results[0]
        table_ty = TensorType(ty, [len(values)])
        table = self.add(generic_op("arith.constant", [], [table_ty], {
            "value": DenseIntOrFPElementsAttr.from_list(table_ty, list(values))})).results[0]
        return self.add(generic_op("tensor.extract", [table, self.rank], [ty])).results[0]

    def mixed(self, columns: Sequence[Sequence[int]]) -> tuple[list[int], list[SSAValue]]:
        """Static values (dynamic where ranks differ) and the dynamic ones' per-rank values."""
        static: list[int] = []
        dynamic: list[SSAValue] = []
        for column in columns:
            if len(set(column)) == 1:
                static.append(column[0])
            else:
                static.append(_DYN)
                dynamic.append(self.per_rank(column))
        return static, dynamic

    @staticmethod
    def mixed_shape(columns: Sequence[Sequence[int]]) -> list[int]:
        """The type's dims of per-rank sizes: static where every rank agrees."""
        return [c[0] if len(set(c)) == 1 else _DYN for c in columns]

    def comm(self, placement: str, axes: Sequence[int]) -> SSAValue:
        """The communicator of the ranks that differ from this one only on mesh `axes` (its rank
        in it the row-major index over `axes`); made once per function."""
        key = (placement, tuple(axes))
        if key not in self._comms:
            hierarchy = self.grids[placement]
            others = [a for a in range(len(hierarchy)) if a not in axes]
            coords = _coords(hierarchy)
            color = self.per_rank([_linear(c, hierarchy, others) for c in coords], i32)
            rank = self.per_rank([_linear(c, hierarchy, axes) for c in coords], i32)
            self._comms[key] = self.add(generic_op("mpi.comm_split", [self.world, color, rank], [_COMM])).results[0]
        return self._comms[key]

    # -- tensor helpers ----------------------------------------------------------------------------

    def fill(self, elt: Attribute, sizes: Sequence[Sequence[int]], value: Attribute) -> SSAValue:
        """A tensor of per-rank shape `sizes` (one column per dim) holding `value`."""
        static, dynamic = self.mixed(sizes)
        ty = TensorType(elt, static)
        empty = self.add(generic_op("tensor.empty", dynamic, [ty])).results[0]
        rank = len(static)
        return self.linalg([], empty, [AffineMap.identity(rank)], [IteratorType.PARALLEL] * rank,
                           _fill_region(value, elt))

    def map(self, x: SSAValue, elt: Attribute, name: str) -> SSAValue:
        """Elementwise `name` (a cast: bitcast, extf, ...) of `x` to element type `elt`."""
        ty = x.type
        assert isinstance(ty, TensorType)
        shape = ty.get_shape()
        out = TensorType(elt, shape)
        body = Body([ty.element_type, elt])
        identity_map = AffineMap.identity(len(shape))
        return self.linalg([x], self.empty(out, lambda k: (x, k)), [identity_map] * 2,
                           [IteratorType.PARALLEL] * len(shape), body.region(body.op(name, [body.args[0]], elt)))

    def slice_props(self, offsets: Sequence[Sequence[int]], sizes: Sequence[Sequence[int]]
                    ) -> tuple[dict[str, Attribute], list[SSAValue], list[int]]:
        """The static_* properties and the dynamic operands of a per-rank extract/insert_slice."""
        static_offsets, dyn_offsets = self.mixed(offsets)
        static_sizes, dyn_sizes = self.mixed(sizes)
        props: dict[str, Attribute] = {
            "static_offsets": DenseArrayBase.from_list(i64, static_offsets),
            "static_sizes": DenseArrayBase.from_list(i64, static_sizes),
            "static_strides": DenseArrayBase.from_list(i64, [1] * len(offsets)),
        }
        return props, [*dyn_offsets, *dyn_sizes], [len(dyn_offsets), len(dyn_sizes)]

    def extract(self, x: SSAValue, offsets: Sequence[Sequence[int]], sizes: Sequence[Sequence[int]]) -> SSAValue:
        props, operands, counts = self.slice_props(offsets, sizes)
        ty = x.type
        assert isinstance(ty, TensorType)
        props["operandSegmentSizes"] = DenseArrayBase.from_list(i32, [1, *counts, 0])
        out = TensorType(ty.element_type, props["static_sizes"].get_values())  # type: ignore[union-attr]
        return self.add(generic_op("tensor.extract_slice", [x, *operands], [out], props)).results[0]

    def insert(self, x: SSAValue, into: SSAValue, offsets: Sequence[Sequence[int]],
               sizes: Sequence[Sequence[int]]) -> SSAValue:
        props, operands, counts = self.slice_props(offsets, sizes)
        props["operandSegmentSizes"] = DenseArrayBase.from_list(i32, [1, 1, *counts, 0])
        return self.add(generic_op("tensor.insert_slice", [x, into, *operands], [into.type], props)).results[0]

    def cast(self, x: SSAValue, ty: TensorType) -> SSAValue:
        return x if x.type == ty else self.add(generic_op("tensor.cast", [x], [ty])).results[0]

    def flat(self, x: SSAValue, ty: TensorType) -> SSAValue:
        """`x` collapsed to the 1-D `ty` (a 0-d tensor expanded to one element)."""
        rank = len(x.type.get_shape())  # type: ignore[attr-defined]
        if rank == 1:
            return x
        if rank == 0:
            return self.add(generic_op("tensor.expand_shape", [x], [ty], {
                "reassociation": ArrayAttr([]), "static_output_shape": DenseArrayBase.from_list(i64, [1])})).results[0]
        return self.add(generic_op("tensor.collapse_shape", [x], [ty], {
            "reassociation": ArrayAttr([ArrayAttr([IntegerAttr(k, i64) for k in range(rank)])])})).results[0]

    def unflat(self, x: SSAValue, dims: Sequence[SSAValue], ty: TensorType) -> SSAValue:
        """The 1-D `x` expanded back to `ty`, whose dynamic dims are those of `dims` (all its dims;
        empty when `ty` is static)."""
        shape = ty.get_shape()
        if len(shape) == 1:
            return x
        if not shape:
            return self.add(generic_op("tensor.collapse_shape", [x], [ty], {"reassociation": ArrayAttr([])})).results[0]
        sizes = [d for d, n in zip(dims, shape, strict=True) if n == _DYN] if dims else []
        return self.add(generic_op("tensor.expand_shape", [x, *sizes], [ty], {
            "reassociation": ArrayAttr([ArrayAttr([IntegerAttr(k, i64) for k in range(len(shape))])]),
            "static_output_shape": DenseArrayBase.from_list(i64, list(shape))})).results[0]

    # -- MPI ---------------------------------------------------------------------------------------

    def allreduce(self, anchor: Operation, x: SSAValue, op: ReduceKind | str, comm: SSAValue) -> SSAValue:
        """`mpi.allreduce` of tensor `x` over `comm`: `op` a reduction kind on the values, or "bor" on
        their bits. The buffers are flat copies: MLIR 22's MPI lowering counts only dim 0."""
        ty = x.type
        assert isinstance(ty, TensorType)
        elt = ty.element_type
        wire = _bits(anchor, elt) if op == "bor" else _reduce_type(anchor, elt)
        if wire != elt:
            to_wire, back = _WIRE_CASTS[_width(elt) == _width(wire)]
            x = self.map(x, wire, to_wire)
        shape = ty.get_shape()
        static = math.prod(shape) if _DYN not in shape else _DYN
        dims = [self.index(n) if n != _DYN else self.dim(x, k) for k, n in enumerate(shape)] if static == _DYN else []
        count = self.index(1)
        for d in dims:  # the element count, when dynamic
            count = self.add(generic_op("arith.muli", [count, d], [_INDEX])).results[0]
        flat = self.flat(x, TensorType(wire, [static]))
        buffer = MemRefType(wire, [static])
        send = self.add(generic_op("bufferization.to_buffer", [flat], [buffer], {"read_only": UnitAttr()}))
        recv = self.add(generic_op("memref.alloc", [count] if static == _DYN else [], [buffer], {
            "operandSegmentSizes": DenseArrayBase.from_list(i32, [1 if static == _DYN else 0, 0])}))
        self.add(generic_op("mpi.allreduce", [send.results[0], recv.results[0], comm], [], {
            "op": IntegerAttr(_MPI_OP[op], i32)}))
        got = self.add(generic_op("bufferization.to_tensor", [recv.results[0]], [TensorType(wire, [static])],
                                  {"restrict": UnitAttr(), "writable": UnitAttr()})).results[0]
        result = self.unflat(got, dims, TensorType(wire, shape))
        return self.map(result, elt, back) if wire != elt else result

    def reduce_partial(self, anchor: Operation, x: SSAValue, kind: ReduceKind, placement: str,
                       axes: Sequence[int]) -> SSAValue:
        """The P(kind) `x` reduced over the ranks differing on mesh `axes`. f16/bf16 (no MPI type):
        every piece gathered (bits OR-ed into a [group, ...] stack), then summed in the element
        type in group order, as sbpc's simulator does (`reduce_arrays`) - bitwise its result."""
        comm = self.comm(placement, axes)
        ty = x.type
        assert isinstance(ty, TensorType)
        if not isinstance(ty.element_type, Float16Type | BFloat16Type):
            return self.allreduce(anchor, x, kind, comm)
        hierarchy = self.grids[placement]
        group = math.prod(hierarchy[a] for a in axes)
        elt, shape = ty.element_type, list(ty.get_shape())
        stack_ty = TensorType(elt, [group, *shape])
        dims = [self.dim(x, k) for k, n in enumerate(shape) if n == _DYN]
        stack = self.add(generic_op("tensor.empty", dims, [stack_ty])).results[0]
        loops = len(shape) + 1
        stack = self.linalg([], stack, [AffineMap.identity(loops)], [IteratorType.PARALLEL] * loops,
                            _fill_region(identity(ReduceKind.SUM, elt), elt))
        key = self.per_rank([_linear(c, hierarchy, axes) for c in _coords(hierarchy)])
        props: dict[str, Attribute] = {  # rank-reducing: x is one [1, ...] slice of the stack
            "static_offsets": DenseArrayBase.from_list(i64, [_DYN] + [0] * len(shape)),
            "static_sizes": DenseArrayBase.from_list(i64, [1, *shape]),
            "static_strides": DenseArrayBase.from_list(i64, [1] * loops),
            "operandSegmentSizes": DenseArrayBase.from_list(i32, [1, 1, 1, len(dims), 0]),
        }
        stack = self.add(generic_op("tensor.insert_slice", [x, stack, key, *dims], [stack_ty], props)).results[0]
        pieces = self.allreduce(anchor, stack, "bor", comm)
        init = self.empty(ty, lambda k: (x, k))
        body = Body([elt, elt])
        init = self.linalg([], init, [AffineMap.identity(len(shape))], [IteratorType.PARALLEL] * len(shape),
                           _fill_region(identity(kind, elt), elt))
        name = {ReduceKind.SUM: "arith.addf", ReduceKind.MAX: "arith.maximumf", ReduceKind.MIN: "arith.minimumf"}
        piece, acc = body.args
        total = body.op(name[kind], [acc, piece], elt)
        to_out = AffineMap(loops, 0, tuple(AffineDimExpr(k) for k in range(1, loops)))
        return self.linalg([pieces], init, [AffineMap.identity(loops), to_out],
                           [IteratorType.REDUCTION] + [IteratorType.PARALLEL] * len(shape), body.region(total))

    def exchange(self, anchor: Operation, x: SSAValue, placement: str, axes: Sequence[int], src: NdSbpAttr,
                 dst: NdSbpAttr, shape: Sequence[int], out: TensorType) -> SSAValue:
        """`x` (this rank's part of the global `shape` under `src`) as its part under `dst`, which
        differs from `src` only on mesh `axes`: the two phases of the module docstring."""
        hierarchy = self.grids[placement]
        coords = _coords(hierarchy)
        partial = [a for a in axes if isinstance(src[a], PartialAttr)]
        split = [a for a in axes if isinstance(src[a], SplitAttr)]
        region = NdSbpAttr([BroadcastAttr() if a in axes else e for a, e in enumerate(src)])
        have = [local_slices(shape, src, hierarchy, c) for c in coords]
        whole = [local_slices(shape, region, hierarchy, c) for c in coords]
        elt = out.element_type
        if partial and split:
            raise OpError(anchor, f"{src.short_str()} -> {dst.short_str()}: partial and split mesh axes in one step")
        if partial:
            kinds = {src[a].reduce_kind for a in partial}  # type: ignore[union-attr]
            if len(kinds) != 1 or any(isinstance(dst[a], PartialAttr) for a in partial):
                raise OpError(anchor, f"{src.short_str()} -> {dst.short_str()} is not one reduction")
            x = self.reduce_partial(anchor, x, kinds.pop(), placement, partial)
        elif split:
            targets = {dst[a].reduce_kind if isinstance(dst[a], PartialAttr) else None for a in split}  # type: ignore[union-attr]
            if len(targets) != 1:
                raise OpError(anchor, f"{src.short_str()} -> {dst.short_str()}: mixed targets of split axes")
            kind = targets.pop()
            sizes = [[w[d][1] - w[d][0] for w in whole] for d in range(len(shape))]
            buffer = self.fill(elt, sizes, identity(kind or ReduceKind.SUM, elt))
            x = self.cast(x, TensorType(elt, self.mixed_shape([[h[d][1] - h[d][0] for h in have]
                                                               for d in range(len(shape))])))
            x = self.insert(x, buffer, [[h[d][0] - w[d][0] for h, w in zip(have, whole, strict=True)]
                                        for d in range(len(shape))],
                            [[h[d][1] - h[d][0] for h in have] for d in range(len(shape))])
            if kind is None:  # S -> B: the owners' bits, OR-ed (S -> P(k) stays local)
                x = self.allreduce(anchor, x, "bor", self.comm(placement, split))
        want = [local_slices(shape, dst, hierarchy, c) for c in coords]
        if want != whole:
            x = self.extract(x, [[v[d][0] - w[d][0] for v, w in zip(want, whole, strict=True)]
                                 for d in range(len(shape))],
                             [[v[d][1] - v[d][0] for v in want] for d in range(len(shape))])
        keep_axes = [a for a in axes if isinstance(src[a], BroadcastAttr) and isinstance(dst[a], PartialAttr)]
        if keep_axes:  # B -> P(k): the value on the group's first rank, k's identity elsewhere
            kinds = {dst[a].reduce_kind for a in keep_axes}  # type: ignore[union-attr]
            if len(kinds) != 1:
                raise OpError(anchor, f"{src.short_str()} -> {dst.short_str()}: two partial kinds in one step")
            keep = self.per_rank([int(all(c[a] == 0 for a in keep_axes)) for c in coords])
            flag = self.add(generic_op("arith.cmpi", [keep, self.index(1)], [i1],
                                       {"predicate": IntegerAttr(CMPI_EQ, i64)})).results[0]
            sizes = [[v[d][1] - v[d][0] for v in want] for d in range(len(shape))]
            zeros = self.fill(elt, sizes, identity(kinds.pop(), elt))
            x_ty = x.type
            assert isinstance(x_ty, TensorType)
            zeros = self.cast(zeros, x_ty)
            then_block, else_block = Block(), Block()
            then_block.add_op(generic_op("scf.yield", [x]))
            else_block.add_op(generic_op("scf.yield", [zeros]))
            x = self.add(generic_op("scf.if", [flag], [x_ty], {}, [Region(then_block), Region(else_block)])).results[0]
        return self.cast(x, out)

    def collective(self, op: coll.CollectiveOp, x: SSAValue) -> SSAValue:
        src, dst = _step_sbps(op)
        if op.global_shape is None:
            raise OpError(op, f"{op.name} has no global_shape: run spmdize before --emit-mlir=mpi")
        shape = [int(n) for n in op.global_shape.get_values()]
        placement = op.placement.root_reference.data  # type: ignore[union-attr]
        return self.exchange(op, x, placement, op.get_mesh_axes(), src, dst, shape,
                             builtin_tensor(op, op.results[0].type))


_WIRE_CASTS = {  # bits moved as an integer of the same width? -> the cast onto the wire type and back
    True: ("arith.bitcast", "arith.bitcast"),  # f16/bf16/f32/f64 as i16/i32/i64
    False: ("arith.extui", "arith.trunci"),  # i1 as i8
}


def _fill_region(value: Attribute, elt: Attribute) -> Region:
    body = Body([elt])
    return body.region(body.const(value, elt))


def _width(ty: Attribute) -> int:
    return ty.width.data if isinstance(ty, IntegerType) else ty.bitwidth  # type: ignore[attr-defined]


def _bits(anchor: Operation, elt: Attribute) -> Attribute:
    """The signless integer type MPI moves `elt`'s bits as (i1 widened to i8)."""
    if isinstance(elt, IntegerType) and elt.signedness.data != Signedness.SIGNLESS:
        raise OpError(anchor, f"{elt} has no MPI lowering in --emit-mlir=mpi (arith takes signless integers)")
    return IntegerType(max(8, _width(elt)))


def _reduce_type(anchor: Operation, elt: Attribute) -> Attribute:
    """`elt`, which MPI must reduce (f32, f64, signless integers of 8 bits or more)."""
    if isinstance(elt, Float32Type | Float64Type) or (
            isinstance(elt, IntegerType) and elt.signedness.data == Signedness.SIGNLESS and _width(elt) >= 8):
        return elt
    raise OpError(anchor, f"a partial {elt} has no MPI reduction in --emit-mlir=mpi")


# -- the runnable entry -----------------------------------------------------------------------------

_PRINTERS = {"F32": f32, "F64": Float64Type(), "I32": i32, "I64": i64}


def _printer(elt: Attribute) -> tuple[str, str | None]:
    """The runner's `printMemref*` for `elt` and the cast to its element type (None: as it is)."""
    if isinstance(elt, Float16Type | BFloat16Type):
        return "F32", "arith.extf"
    if isinstance(elt, Float32Type):
        return "F32", None
    if isinstance(elt, Float64Type):
        return "F64", None
    width = _width(elt)
    if width == 64:
        return "I64", None
    return "I32", None if width == 32 else ("arith.extui" if width == 1 else "arith.extsi")


def _blob(value: np.ndarray) -> str:
    """A builtin `dense_resource` blob: the alignment (4 bytes, little endian), then the data."""
    data = np.ascontiguousarray(value)
    if data.dtype == np.bool_:
        data = data.astype(np.int8)
    return "0x" + int(max(data.dtype.itemsize, 1)).to_bytes(4, "little").hex() + data.tobytes().hex()


def _entry_function(module: ModuleOp) -> FuncOp:
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    named = [f for f in funcs if f.sym_name.data == "main"]
    if named or len(funcs) == 1:
        return (named or funcs)[0]
    raise OpError(funcs[0] if funcs else module, "--emit-mlir=mpi runs @main (or the only function): none found")


def _facts(func: FuncOp, attrs: ArrayAttr | None, i: int, what: str) -> tuple[NdSbpAttr, list[int]]:
    entry = attrs.data[i].data if attrs is not None else {}
    sbp, shape = entry.get("sbp.sbp"), entry.get("sbp.global_shape")
    if not isinstance(sbp, NdSbpAttr) or not isinstance(shape, DenseArrayBase):
        raise OpError(func, f"{what} {i} of @{func.sym_name.data} has no sbp.sbp/sbp.global_shape: run spmdize "
                      "before --emit-mlir=mpi")
    return sbp, [int(n) for n in shape.get_values()]


def _driver(func: FuncOp, placements: dict[str, PlacementOp], inputs: Sequence[np.ndarray],
            resources: dict[str, str]) -> list[Operation]:
    """`@mpi_main` (MPI init, inputs, the call, replicated results printed on rank 0, finalize) and
    the print functions it declares."""
    name = func.attributes.get("sbp.placement")
    placement = name.root_reference.data if isinstance(name, SymbolRefAttr) else None
    if placement not in placements:
        raise OpError(func, f"@{func.sym_name.data} has no sbp.placement: run spmdize before --emit-mlir=mpi")
    assert placement is not None
    arg_types = [builtin_tensor(func, t) for t in func.function_type.inputs.data]
    res_types = [builtin_tensor(func, t) for t in func.function_type.outputs.data]
    if len(inputs) != len(arg_types):
        raise OpError(func, f"@{func.sym_name.data} takes {len(arg_types)} arguments, {len(inputs)} inputs given")
    main = FuncOp(ENTRY, ([], []))
    block = main.body.block
    block.add_op(generic_op("mpi.init"))
    emit = MpiEmitter(block, placements)
    hierarchy = emit.grids[placement]
    ranks = math.prod(hierarchy)
    # MLIR 22 lowers no mpi.comm_size: the world's size is the sum of a 1 from every rank
    one = emit.fill(i32, [], IntegerAttr(1, i32))
    size = emit.add(generic_op("tensor.extract", [emit.allreduce(main, one, ReduceKind.SUM, emit.world)], [i32]))
    expected = emit.add(generic_op("arith.constant", [], [i32], {"value": IntegerAttr(ranks, i32)})).results[0]
    right = emit.add(generic_op("arith.cmpi", [size.results[0], expected], [i1],
                                {"predicate": IntegerAttr(CMPI_EQ, i64)}))
    emit.add(generic_op("cf.assert", [right.results[0]], [], {"msg": StringAttr(
        f"@{ENTRY}: the mesh {list(hierarchy)} has {ranks} ranks: run it with mpiexec -n {ranks}")}))
    axes = list(range(len(hierarchy)))
    replicated = NdSbpAttr([BroadcastAttr()] * len(hierarchy))
    args: list[SSAValue] = []
    for i, (value, ty) in enumerate(zip(inputs, arg_types, strict=True)):
        sbp, shape = _facts(func, func.arg_attrs, i, "argument")
        handle = f"sbp_input{i}"
        resources[handle] = _blob(value)
        stored = i8 if ty.element_type == i1 else ty.element_type
        whole = emit.add(generic_op("arith.constant", [], [TensorType(stored, shape)], {
            "value": DenseResourceAttr.from_params(handle, TensorType(stored, shape))})).results[0]
        if stored != ty.element_type:
            whole = emit.map(whole, ty.element_type, "arith.trunci")
        args.append(emit.exchange(func, whole, placement, axes, replicated, sbp, shape, ty))
    call = emit.add(generic_op("func.call", args, res_types, {"callee": FlatSymbolRefAttr(func.sym_name.data)}))
    outputs: list[SSAValue] = []
    for j, (value, ty) in enumerate(zip(call.results, res_types, strict=True)):
        sbp, shape = _facts(func, func.res_attrs, j, "result")
        steps = [[a for a in axes if isinstance(sbp[a], kind)] for kind in (PartialAttr, SplitAttr)]
        current: SSAValue = value
        for step in steps:  # the partial axes reduced first, then the split ones gathered
            if not step:
                continue
            after = NdSbpAttr([BroadcastAttr() if a in step else e for a, e in enumerate(sbp)])
            local = [local_slices(shape, after, hierarchy, c) for c in _coords(hierarchy)]
            static = MpiEmitter.mixed_shape([[s[d][1] - s[d][0] for s in local] for d in range(len(shape))])
            current = emit.exchange(func, current, placement, step, sbp, after, shape,
                                    TensorType(ty.element_type, static))
            sbp = after
        outputs.append(emit.cast(current, TensorType(ty.element_type, shape)))
    is_first = emit.add(generic_op("arith.cmpi", [emit.rank, emit.index(0)], [i1],
                                   {"predicate": IntegerAttr(CMPI_EQ, i64)})).results[0]
    printing = Block()
    emit.block = printing  # rank 0's region: the casts, buffers and print calls
    used: set[str] = set()
    for value in outputs:
        ty = value.type
        assert isinstance(ty, TensorType)
        kind, widen = _printer(ty.element_type)
        used.add(kind)
        printed = emit.map(value, _PRINTERS[kind], widen) if widen else value
        memref = emit.add(generic_op("bufferization.to_buffer", [printed], [
            MemRefType(_PRINTERS[kind], ty.get_shape())], {"read_only": UnitAttr()})).results[0]
        unranked = emit.add(generic_op("memref.cast", [memref], [_unranked(_PRINTERS[kind])])).results[0]
        emit.add(generic_op("func.call", [unranked], [], {"callee": FlatSymbolRefAttr(f"printMemref{kind}")}))
    emit.add(generic_op("scf.yield"))
    emit.block = block
    otherwise = Block([generic_op("scf.yield")])
    emit.add(generic_op("scf.if", [is_first], [], {}, [Region(printing), Region(otherwise)]))
    emit.add(generic_op("mpi.finalize"))
    emit.add(generic_op("func.return"))
    declared: list[Operation] = [FuncOp.external(f"printMemref{k}", [_unranked(_PRINTERS[k])], [])
                                 for k in sorted(used)]
    return [*declared, main]


def _unranked(elt: Attribute) -> Attribute:
    return UnrankedMemRefType.from_type(elt)


def to_upstream_mpi(module: ModuleOp, inputs: Sequence[np.ndarray]) -> str:
    """The per-rank `module` (spmdize's output) as the text of one upstream MLIR 22 module with MPI
    collectives and the entry `@mpi_main` running it on the global `inputs` (one per argument of
    @main): generic form, the inputs as `dense_resource` blobs, `LLVM_PIPELINE` as its reproducer."""
    placements = {op.sym_name.data: op for op in module.ops if isinstance(op, PlacementOp)}
    sizes = {math.prod(p.get_hierarchy()) for p in placements.values()}
    if len(sizes) > 1:
        raise OpError(next(iter(placements.values())), "--emit-mlir=mpi runs one mesh: the placements have "
                      f"{sorted(sizes)} ranks (MPI rank r is rank r of every placement)")
    func = _entry_function(module)
    upstream = to_upstream_mlir(module, MpiEmitter)
    for op in list(upstream.ops):
        if isinstance(op, UnregisteredOp) and op.op_name.data == "shard.grid":  # unused; mlir-runner rejects it
            upstream.body.block.erase_op(op)
    resources: dict[str, str] = {}
    for op in _driver(func, placements, inputs, resources):
        upstream.body.block.add_op(op)
    upstream.attributes["dlti.map"] = _MPICH
    text = StringIO()
    Printer(stream=text, print_generic_format=True).print_op(upstream)
    blobs = ",\n".join(f'      {name}: "{blob}"' for name, blob in resources.items())
    dialect = f"  dialect_resources: {{\n    builtin: {{\n{blobs}\n    }}\n  }},\n" if blobs else ""
    return (text.getvalue() + "\n\n{-#\n" + dialect + "  external_resources: {\n    mlir_reproducer: {\n"
            f'      pipeline: "{LLVM_PIPELINE}",\n      disable_threading: false,\n      verify_each: true\n'
            "    }\n  }\n#-}\n")
