"""Lock-step SPMD execution of compiled sbp programs on a simulated device mesh, and the global reference.

A distributed value is a dict `mesh coordinate -> local numpy array` (`collectives.Shards`).
The program is run once, op by op (a plain walker over the entry function's body):

* compute ops run their numpy implementation (`runtime.op_impls`, found by op class) on every rank's
  local arrays; `sbp.reshape` reshapes each rank's shard to that rank's local result shape;
* collectives (`sbp.all_gather`, `all_reduce`, `reduce_scatter`, `all_to_all`, `all_slice`,
  `to_partial`) run `dialects.collectives.execute_step` on their op's `KIND`, the one definition of
  every SBP transition, which also counts the bytes each rank sends;
* `sbp.boxing` / `sbp.to_global` between equal SBPs are identities; a real one left in the
  program is an error (the pipeline must lower it first).

Two program forms run:

* the *global* form (after `lower-boxing`): values are `!sbp.tensor` types, so global shape, SBP
  and placement are read from the types;
* the *spmd* form (after `spmdize`): values are builtin `tensor<...>` (local shapes, `?` where ranks
  differ); collectives carry `placement`, `src_sbp`, `dst_sbp`, `global_shape` and `mesh_axes`
  properties, `sbp.reshape` carries `local_shapes` (one `array<i64>` per flat rank, row-major),
  the function carries `sbp.placement = @p` and its arguments/results `sbp.sbp` and
  `sbp.global_shape` argument/result attributes.

`reference` runs the original global program on full arrays, treating every distribution op as the
identity. Errors anchored at an op are raised as `dialects.errors.OpError` so that drivers print
them located; other problems raise `SimulationError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import SymbolTable

from sbpc.dialects import dtypes
from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.collectives import (
    Coord,
    InvalidStep,
    NdSbp,
    Shards,
    execute_step,
    mesh_coords,
    step_bytes_exact,
)
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import lookup_placement_named
from sbpc.dialects.sbp import NdSbpAttr, PartialAttr, ReduceKind, SignatureAttr, nd_sbp
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import BoxingOp, ConversionOp, ReshapeOp, ToGlobalOp
from sbpc.dialects.sharding import local_shape
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.runtime.op_impls import Overrides, impl_of, run_numpy
from sbpc.runtime.ops_numpy import dtype_name, element_type_of, is_integer, np_dtype

UNLOWERED: dict[type[Operation], str] = {
    BoxingOp: "run lower-boxing first",
    ToGlobalOp: "run materialize-boxing and lower-boxing first",
}
"""Conversions the simulator runs only between equal types, and what to do about the others."""


class SimulationError(Exception):
    """A problem that is not anchored at one op (missing entry function, bad inputs, ...)."""


# ---------------------------------------------------------------------------
# What is known about a distributed value
# ---------------------------------------------------------------------------


def sbp_text(sbp: NdSbp) -> str:
    """`S(0)` for a 1-D SBP, `[S(0), B]` otherwise."""
    if len(sbp) == 1:
        return sbp[0].short_str()
    return "[" + ", ".join(s.short_str() for s in sbp) + "]"


@dataclass(frozen=True)
class Dist:
    """A global tensor's shape, dtype, SBP and placement."""

    shape: tuple[int, ...]
    dtype: np.dtype
    sbp: NdSbp
    placement: str
    hierarchy: tuple[int, ...]

    def describe(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        return f"{dtype_name(self.dtype)}[{dims}][{', '.join(s.short_str() for s in self.sbp)}] @{self.placement}"

    def local_shape(self, coord: Coord) -> tuple[int, ...]:
        return local_shape(self.shape, nd_sbp(*self.sbp), self.hierarchy, coord)


def find_function(module: ModuleOp, entry: str) -> func.FuncOp:
    found = SymbolTable.lookup_symbol(module, entry)
    if isinstance(found, func.FuncOp):
        return found
    names = [f"@{op.sym_name.data}" for op in module.ops if isinstance(op, func.FuncOp)]
    listed = ", ".join(names) if names else "none"
    raise SimulationError(f"no function @{entry} in the module (functions: {listed})")


def entry_block(module: ModuleOp, entry: str, n_inputs: int) -> tuple[func.FuncOp, Block]:
    """The entry function and its body, checked to take `n_inputs` arguments (a global reference's start)."""
    fn = find_function(module, entry)
    block = fn.body.blocks.first
    if block is None:
        raise OpError(fn, f"@{entry} has no body")
    if n_inputs != len(block.args):
        raise SimulationError(f"@{entry} takes {len(block.args)} arguments, got {n_inputs} inputs")
    return fn, block


def placement_hierarchy(anchor: Operation, name: str) -> tuple[int, ...]:
    """Hierarchy of the `sbp.placement` named `name`, seen from `anchor`."""
    found = lookup_placement_named(anchor, name)
    if found is None:
        raise OpError(anchor, f"unknown placement @{name}")
    return found.get_hierarchy()


def _prop(op: Operation, name: str) -> Attribute | None:
    """A property, or an attribute of that name (the spmd form may carry either)."""
    found = op.properties.get(name)
    return found if found is not None else op.attributes.get(name)


def _symbol_name(attr: Attribute | None) -> str | None:
    return attr.root_reference.data if isinstance(attr, SymbolRefAttr) else None


def _dense(attr: Attribute | None) -> tuple[int, ...] | None:
    return tuple(int(v) for v in attr.get_values()) if isinstance(attr, DenseArrayBase) else None


def type_dist(anchor: Operation, ty: Attribute, what: str) -> Dist:
    """Distribution of an `!sbp.tensor` value (its SBP must be known)."""
    if not isinstance(ty, GlobalTensorType):
        raise OpError(anchor, f"{what} has type {ty}, not !sbp.tensor, and no sbp.sbp/sbp.global_shape attributes")
    sbp = ty.nd_sbp
    if sbp is None:
        raise OpError(anchor, f"{describe_op(anchor)}: {what} {ty.describe()} has no SBP (run infer-sbp first)")
    return Dist(ty.get_shape(), np_dtype(ty.element_type), tuple(sbp), ty.placement_name,
                placement_hierarchy(anchor, ty.placement_name))


def _io_attrs(attrs: ArrayAttr | None, index: int) -> dict[str, Attribute]:
    if attrs is None or index >= len(attrs.data):
        return {}
    entry = attrs.data[index]
    return dict(entry.data) if isinstance(entry, DictionaryAttr) else {}


def _spmd_dist(fn: func.FuncOp, ty: Attribute, attrs: dict[str, Attribute], what: str) -> Dist:
    sbp, shape = attrs.get("sbp.sbp"), _dense(attrs.get("sbp.global_shape"))
    placement = _symbol_name(fn.attributes.get("sbp.placement"))
    if not isinstance(sbp, NdSbpAttr) or shape is None or placement is None or not isinstance(ty, TensorType):
        raise OpError(
            fn, f"{what} of @{fn.sym_name.data} has type {ty}: expected !sbp.tensor, or a tensor with sbp.sbp and "
            "sbp.global_shape attributes in a function with sbp.placement"
        )
    return Dist(shape, np_dtype(ty.element_type), tuple(sbp), placement, placement_hierarchy(fn, placement))


def function_signature(module: ModuleOp, entry: str) -> tuple[list[Dist], list[Dist]]:
    """Distributions of the entry function's arguments and results (global or spmd form)."""
    fn = find_function(module, entry)
    args: list[Dist] = []
    for i, ty in enumerate(fn.function_type.inputs.data):
        what = f"argument {i}"
        if isinstance(ty, GlobalTensorType):
            args.append(type_dist(fn, ty, what))
        else:
            args.append(_spmd_dist(fn, ty, _io_attrs(fn.arg_attrs, i), what))
    results: list[Dist] = []
    for i, ty in enumerate(fn.function_type.outputs.data):
        what = f"result {i}"
        if isinstance(ty, GlobalTensorType):
            results.append(type_dist(fn, ty, what))
        else:
            results.append(_spmd_dist(fn, ty, _io_attrs(fn.res_attrs, i), what))
    return args, results


def _function_hierarchy(op: Operation) -> tuple[str, tuple[int, ...]] | None:
    """The `sbp.placement` of the spmd function holding `op`, if any."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    if parent is None:
        return None
    name = _symbol_name(parent.attributes.get("sbp.placement"))
    return (name, placement_hierarchy(parent, name)) if name is not None else None


# ---------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """A single-step collective of the compiled program, as `execute_step` needs it."""

    op: CollectiveOp
    kind: str
    src: NdSbp
    dst: NdSbp
    mesh_axes: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: np.dtype
    placement: str
    hierarchy: tuple[int, ...]

    def source(self) -> Dist:
        return Dist(self.shape, self.dtype, self.src, self.placement, self.hierarchy)

    def target(self) -> Dist:
        return Dist(self.shape, self.dtype, self.dst, self.placement, self.hierarchy)

    def modelled_bytes(self) -> dict[Coord, int]:
        return step_bytes_exact(
            self.kind, self.src, self.dst, self.mesh_axes, self.shape, self.hierarchy, self.dtype.itemsize
        )

    def describe(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        axes = ", ".join(str(a) for a in self.mesh_axes)
        return (f"{self.kind} mesh_axes=[{axes}] {sbp_text(self.src)}->{sbp_text(self.dst)} "
                f"{dtype_name(self.dtype)}[{dims}]")


def collective_step(op: CollectiveOp) -> Step:
    """Kind, SBPs, mesh axes, global shape and mesh of a collective op (global or spmd form)."""
    kind = op.KIND
    axes = _dense(_prop(op, "mesh_axes"))
    if axes is None:
        raise OpError(op, f"{op.name} has no mesh_axes property")
    src_ty, dst_ty = op.operands[0].type, op.results[0].type
    if isinstance(src_ty, GlobalTensorType) and isinstance(dst_ty, GlobalTensorType):
        src, dst = type_dist(op, src_ty, "operand"), type_dist(op, dst_ty, "result")
        return Step(op, kind, src.sbp, dst.sbp, axes, src.shape, src.dtype, src.placement, src.hierarchy)
    src_sbp, dst_sbp = _prop(op, "src_sbp"), _prop(op, "dst_sbp")
    shape = _dense(_prop(op, "global_shape"))
    placement = _symbol_name(_prop(op, "placement"))
    if not isinstance(src_sbp, NdSbpAttr) or not isinstance(dst_sbp, NdSbpAttr) or shape is None or placement is None:
        raise OpError(op, f"{op.name} on builtin tensors needs placement, src_sbp, dst_sbp and global_shape properties")
    return Step(op, kind, tuple(src_sbp), tuple(dst_sbp), axes, shape, np_dtype(element_type_of(dst_ty)),
                placement, placement_hierarchy(op, placement))


@dataclass
class CollectiveRecord:
    """One executed collective and the bytes each rank sent."""

    step: Step
    sent: dict[Coord, int] = field(default_factory=dict)

    def per_rank(self) -> list[int]:
        """Bytes sent, by flat rank index (row-major over the mesh)."""
        return [self.sent.get(c, 0) for c in mesh_coords(self.step.hierarchy)]

    def line(self) -> str:
        return f"{self.step.describe()}: bytes sent per rank {self.per_rank()}"


def collective_steps(module: ModuleOp, entry: str) -> list[Step]:
    """The collectives of the entry function, in program order."""
    fn = find_function(module, entry)
    return [collective_step(op) for op in fn.walk() if isinstance(op, CollectiveOp)]


def modelled_bytes(module: ModuleOp, entry: str) -> int:
    """Total bytes the cost model (`step_bytes_exact`) predicts for the program, summed over ranks."""
    return sum(sum(step.modelled_bytes().values()) for step in collective_steps(module, entry))


# ---------------------------------------------------------------------------
# Simulation
# ---------------------------------------------------------------------------


def _check_local_shapes(op: Operation, shards: Shards, dist: Dist, what: str) -> None:
    coords = mesh_coords(dist.hierarchy)
    if sorted(shards) != coords:
        raise OpError(op, f"{describe_op(op)}: {what} is held on mesh {sorted(shards)}, expected @{dist.placement} "
                          f"with hierarchy {list(dist.hierarchy)}")
    for coord in coords:
        expected = dist.local_shape(coord)
        got = shards[coord].shape
        if got != expected:
            raise OpError(
                op, f"{describe_op(op)}: {what} {dist.describe()} should have local shape {list(expected)} on "
                f"rank {list(coord)}, but it has {list(got)}"
            )


def _check_static_shapes(op: Operation, shards: Shards, ty: TensorType) -> None:
    static = tuple(ty.get_shape())
    for coord, arr in shards.items():
        if len(arr.shape) != len(static) or any(s >= 0 and s != d for s, d in zip(static, arr.shape, strict=True)):
            raise OpError(op, f"{describe_op(op)}: result type {ty} does not match the local shape {list(arr.shape)} "
                              f"computed on rank {list(coord)}")


def check_signature(op: Operation) -> None:
    """An op whose operand SBP differs from its inferred signature still needs boxing."""
    sig = op.attributes.get("sbp.signature")
    if not isinstance(sig, SignatureAttr):
        return
    for i, (value, wanted) in enumerate(zip(op.operands, sig.inputs.data, strict=False)):
        ty = value.type
        if isinstance(ty, GlobalTensorType) and isinstance(wanted, NdSbpAttr) and ty.nd_sbp is not None \
                and ty.nd_sbp != wanted:
            raise OpError(
                op, f"{describe_op(op)}: operand {i} is {ty.nd_sbp.short_str()} but the signature needs "
                f"{wanted.short_str()} (run materialize-boxing and lower-boxing first)"
            )


def reshape_local_shapes(op: Operation, coords: Sequence[Coord]) -> dict[Coord, tuple[int, ...]]:
    ty = op.results[0].type
    if isinstance(ty, GlobalTensorType):
        dist = type_dist(op, ty, "result")
        return {c: dist.local_shape(c) for c in coords}
    listed = _prop(op, "local_shapes")
    if isinstance(listed, ArrayAttr):
        found = _function_hierarchy(op)
        hierarchy = found[1] if found is not None else None
        order = mesh_coords(hierarchy) if hierarchy is not None else sorted(coords)
        shapes = [_dense(a) for a in listed.data]
        if len(shapes) != len(order) or any(s is None for s in shapes):
            raise OpError(op, f"sbp.reshape: local_shapes has {len(shapes)} entries for {len(order)} ranks")
        return {c: shapes[i] for i, c in enumerate(order)}  # type: ignore[misc]
    if isinstance(ty, TensorType) and all(d >= 0 for d in ty.get_shape()):
        return {c: tuple(ty.get_shape()) for c in coords}
    raise OpError(op, f"sbp.reshape to {ty} needs a local_shapes property (one local shape per rank)")


def _run_local(op: Operation, env: dict[SSAValue, Shards], kernels: Overrides | None) -> Shards:
    operands = [env[v] for v in op.operands]
    coords = sorted(operands[0]) if operands else []
    for i, shards in enumerate(operands[1:], 1):
        if sorted(shards) != coords:
            raise OpError(op, f"{describe_op(op)}: operand {i} is held on other ranks than operand 0")
    shapes = reshape_local_shapes(op, coords) if isinstance(op, ReshapeOp) else {}
    out: Shards = {}
    for coord in coords:
        try:
            out[coord] = run_numpy(op, [s[coord] for s in operands], shapes.get(coord), kernels, coord)
        except OpError:
            raise
        except Exception as error:
            raise OpError(
                op, f"{describe_op(op)}: local computation on rank {list(coord)} failed: {error}"
            ) from error
    return out


Tamper = Callable[[CollectiveOp, Shards, Shards], Shards]
"""A fault injected into a run: (collective, its operand shards, its result shards) -> the result used."""


def simulate(
    module: ModuleOp, entry: str, shards_per_input: Sequence[Shards], kernels: Overrides | None = None,
    tamper: Tamper | None = None,
) -> tuple[list[Shards], list[CollectiveRecord]]:
    """Run the compiled program in lock step on every rank: per-output shards and the collective byte log.

    `kernels` overrides ops' numpy implementations by op class (e.g. fmod through an Ascend C kernel);
    `tamper` replaces collectives' results (`runtime.fault_injection`, proving that `--check` fails wrong plans).
    """
    fn = find_function(module, entry)
    args, _ = function_signature(module, entry)
    block = fn.body.blocks.first
    if block is None:
        raise OpError(fn, f"@{entry} has no body")
    if len(shards_per_input) != len(args):
        raise SimulationError(f"@{entry} takes {len(args)} arguments, got {len(shards_per_input)} inputs")
    env: dict[SSAValue, Shards] = {}
    for i, (arg, dist, shards) in enumerate(zip(block.args, args, shards_per_input, strict=True)):
        _check_local_shapes(fn, shards, dist, f"argument {i}")
        env[arg] = shards
    log: list[CollectiveRecord] = []
    with np.errstate(all="ignore"):
        for op in block.ops:
            name = op.name
            if isinstance(op, func.ReturnOp):
                return [env[v] for v in op.operands], log
            if isinstance(op, CollectiveOp):
                step = collective_step(op)
                shards = env[op.operands[0]]
                _check_local_shapes(op, shards, step.source(), "operand")
                try:
                    out, sent = execute_step(
                        step.kind, shards, step.src, step.dst, step.mesh_axes, step.shape, step.hierarchy
                    )
                except InvalidStep as error:  # the verifier rejects these; an unverified module may not
                    raise OpError(op, f"{describe_op(op)}: {error}") from error
                log.append(CollectiveRecord(step, sent))
                env[op.results[0]] = out if tamper is None else tamper(op, shards, out)
                continue
            if (todo := UNLOWERED.get(type(op))) is not None:
                src_ty, dst_ty = op.operands[0].type, op.results[0].type
                if src_ty != dst_ty:
                    raise OpError(op, f"{describe_op(op)} -> {_describe_type(dst_ty)} is not lowered to "
                                      f"collectives: {todo}")
                env[op.results[0]] = env[op.operands[0]]
                continue
            if impl_of(op) is not None:
                check_signature(op)
                out = _run_local(op, env, kernels)
                ty = op.results[0].type
                if isinstance(ty, GlobalTensorType):
                    _check_local_shapes(op, out, type_dist(op, ty, "result"), "result")
                elif isinstance(ty, TensorType):
                    _check_static_shapes(op, out, ty)
                env[op.results[0]] = out
                continue
            raise OpError(op, f"{name} is not supported by the mesh simulator")
    raise OpError(fn, f"@{entry} has no func.return")


def _describe_type(ty: Attribute) -> str:
    return ty.describe() if isinstance(ty, GlobalTensorType) else str(ty)


# ---------------------------------------------------------------------------
# Global reference
# ---------------------------------------------------------------------------


def reference(
    module: ModuleOp, entry: str, inputs: Sequence[np.ndarray], kernels: Overrides | None = None,
    values: dict[SSAValue, np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Run the original global program on full arrays; distribution ops are identities. `values`, if
    given, receives every value of the program (the check's statistical floors read them)."""
    fn, block = entry_block(module, entry, len(inputs))
    env: dict[SSAValue, np.ndarray] = values if values is not None else {}
    env.update(zip(block.args, inputs, strict=True))
    with np.errstate(all="ignore"):
        for op in block.ops:
            name = op.name
            if isinstance(op, func.ReturnOp):
                return [env[v] for v in op.operands]
            if isinstance(op, ConversionOp):  # only changes how the value is distributed
                env[op.results[0]] = env[op.operands[0]]
                continue
            if isinstance(op, ReshapeOp) and not isinstance(op.results[0].type, GlobalTensorType):
                raise OpError(op, f"{name} on per-rank tensors has no global result shape: the reference needs the "
                                  "global program")
            if impl_of(op) is not None:
                try:
                    env[op.results[0]] = run_numpy(op, [env[v] for v in op.operands], None, kernels)
                except Exception as error:
                    raise OpError(op, f"{describe_op(op)}: reference computation failed: {error}") from error
                continue
            raise OpError(op, f"{name} is not supported by the reference interpreter")
    raise OpError(fn, f"@{entry} has no func.return")


# ---------------------------------------------------------------------------
# Comparing with the reference
# ---------------------------------------------------------------------------

# (rtol, atol) per dtype for programs that sum floats in another order than the reference; atol is
# scaled by max(1, max |reference|) so that long dot products are judged relative to their magnitude.
TOLERANCES: dict[str, tuple[float, float]] = {t.name: t.tolerance for t in dtypes.ELEMENT_TYPES if t.tolerance}


def _sums_floats(dtype: np.dtype, *sbps: NdSbp) -> bool:
    return not is_integer(dtype) and any(
        isinstance(e, PartialAttr) and e.reduce_kind == ReduceKind.SUM for sbp in sbps for e in sbp
    )


def _compute_sbps(op: Operation) -> list[tuple[np.dtype, NdSbp]]:
    """(dtype, SBP) of a compute op's operands and results: from their global types or, in the spmd
    form, from the op's `sbp.signature`."""
    sig = op.attributes.get("sbp.signature")
    wanted = (sig.inputs.data, sig.outputs.data) if isinstance(sig, SignatureAttr) else ((), ())
    found: list[tuple[np.dtype, NdSbp]] = []
    for values, sbps in zip((op.operands, op.results), wanted, strict=True):
        for i, value in enumerate(values):
            ty = value.type
            if isinstance(ty, GlobalTensorType) and ty.nd_sbp is not None:
                found.append((np_dtype(ty.element_type), tuple(ty.nd_sbp)))
            elif isinstance(ty, TensorType) and i < len(sbps) and isinstance(sbps[i], NdSbpAttr):
                found.append((np_dtype(ty.element_type), tuple(sbps[i])))  # type: ignore[arg-type]
    return found


def reorders_float_sums(module: ModuleOp, entry: str) -> bool:
    """Whether the compiled program may sum floats in another order than the global reference.

    True for float matmuls and reduce_sums (blocked or split accumulation) and for any compute op
    that reads or makes a float partial sum (each rank computes on its pieces, and the results are
    added in mesh order). Partial-sum inputs are split exactly (`runtime.distribute`), and
    collectives and `to_partial` only move, zero-fill and add such pieces, so a program that
    computes on no float partial sum is compared bitwise. A per-rank op whose SBPs are unknown (no
    `sbp.signature`) counts as computing on every float partial sum the program holds.
    """
    fn = find_function(module, entry)
    unknown = False
    for op in fn.walk():
        implementation = impl_of(op)
        if implementation is None:
            continue
        if implementation.accumulates:
            ty = op.results[0].type
            if isinstance(ty, GlobalTensorType | TensorType) and not is_integer(np_dtype(ty.element_type)):
                return True
        known = _compute_sbps(op)
        if any(_sums_floats(dtype, sbp) for dtype, sbp in known):
            return True
        unknown |= len(known) < len(op.operands) + len(op.results)
    return unknown and _holds_float_partial_sums(module, entry)


def _holds_float_partial_sums(module: ModuleOp, entry: str) -> bool:
    """Whether a function argument or result, or a collective, holds a float partial sum."""
    args, results = function_signature(module, entry)
    if any(_sums_floats(d.dtype, d.sbp) for d in (*args, *results)):
        return True
    steps = (collective_step(op) for op in find_function(module, entry).walk() if isinstance(op, CollectiveOp))
    return any(_sums_floats(step.dtype, step.src, step.dst) for step in steps)


def compare(got: np.ndarray, expected: np.ndarray, tolerant: bool) -> str | None:
    """None if `got` matches `expected`, else a report: count, max abs error, first differing index."""
    if got.shape != expected.shape:
        return f"shape {list(got.shape)} differs from the reference's {list(expected.shape)}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} differs from the reference's {expected.dtype}"
    name = dtype_name(expected.dtype)
    if is_integer(expected.dtype):
        equal = got == expected
        mode = "exact"
    else:
        g, e = got.astype(np.float64), expected.astype(np.float64)
        if tolerant and name in TOLERANCES:
            rtol, atol = TOLERANCES[name]
            finite = np.abs(e[np.isfinite(e)])
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            atol *= scale
            with np.errstate(all="ignore"):
                equal = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
            mode = f"rtol={rtol:g} atol={atol:.3g}"
        else:
            equal = (g == e) | (np.isnan(g) & np.isnan(e))
            mode = "exact"
    equal = np.asarray(equal)
    if bool(equal.all()):
        return None
    bad = np.argwhere(~equal)
    first = tuple(int(i) for i in bad[0])
    with np.errstate(all="ignore"):
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    finite = diff[np.isfinite(diff)]
    max_err = float(finite.max()) if finite.size else float("nan")
    got_v, exp_v = str(got[first]), str(expected[first])
    return (
        f"{len(bad)} of {expected.size} elements differ ({mode}); max abs error {max_err:.6g}; "
        f"first differing index {list(first)}: got {got_v}, expected {exp_v}"
    )


def total_sent(log: Sequence[CollectiveRecord]) -> int:
    return sum(sum(r.sent.values()) for r in log)
