"""Recognise upstream compute ops as sbp ops (`sbp-translate --import-shard`, translate/from_upstream_shard.py).

Each `linalg` / `tensor` / `tosa` op sbpc has a counterpart for becomes a `Raised`: the sbp op class,
its data operands and its properties. A `linalg.generic` is recognised by its iterators, indexing
maps and body: the body is compared with the one `--emit-mlir` builds for each sbp elementwise op
(`linalg_bodies.scalar_body`), after removing f16/bf16 <-> f32 widening (`arith.extf`/`truncf`), so
the emitter and the importer cannot drift apart and a hand-written body in the element type itself
matches too. Reductions and matmuls are a reduction loop into a tensor filled with the identity.
What has no sbp form is an `OpError` at the upstream op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    UnitAttr,
    UnregisteredOp,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from sbpc.dialects import sbp_ops as ops
from sbpc.dialects import sbp_ops_nn as nn
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import ReduceKind
from sbpc.translate.linalg_bodies import Body, identity, scalar_body

# Scalar body as a tree: ("arg", i), ("const",), or (op name, *operand trees); constants in order.
Expr = tuple[object, ...]
_WIDENING = ("arith.extf", "arith.truncf")
SENTINEL = 7  # the scalar of a reference scalar-op body: no other constant of those bodies is 7

ELEMENTWISE: tuple[type[Operation], ...] = (
    ops.AddOp, ops.SubOp, ops.MulOp, ops.DivOp, ops.MaximumOp, ops.MinimumOp, ops.FmodOp,
    ops.FmodScalarOp, ops.AddScalarOp, ops.MulScalarOp, ops.ReluOp, ops.NegOp, ops.ExpOp, ops.GeluOp, ops.CastOp,
    nn.SigmoidOp, nn.TanhOp, nn.SiluOp,
)
_BINARY = (ops.AddOp, ops.SubOp, ops.MulOp, ops.DivOp, ops.MaximumOp, ops.MinimumOp, ops.FmodOp)
_SCALAR_PROP = {ops.FmodScalarOp: "other", ops.AddScalarOp: "scalar", ops.MulScalarOp: "scalar"}
_REDUCE_OPS = {ReduceKind.SUM: ops.ReduceSumOp, ReduceKind.MAX: ops.ReduceMaxOp, ReduceKind.MIN: ops.ReduceMinOp}
_COMBINE = {ReduceKind.SUM: ops.AddOp, ReduceKind.MAX: ops.MaximumOp, ReduceKind.MIN: ops.MinimumOp}
_REDUCE_KINDS = {"arith.addf": ReduceKind.SUM, "arith.addi": ReduceKind.SUM, "arith.maximumf": ReduceKind.MAX,
                 "arith.maxsi": ReduceKind.MAX, "arith.minimumf": ReduceKind.MIN, "arith.minsi": ReduceKind.MIN}
_NAMED_ELEMENTWISE = {"linalg.add": ops.AddOp, "linalg.sub": ops.SubOp, "linalg.mul": ops.MulOp,
                      "linalg.div": ops.DivOp, "linalg.max": ops.MaximumOp, "linalg.min": ops.MinimumOp,
                      "linalg.exp": ops.ExpOp, "linalg.negf": ops.NegOp}
# tosa op -> (sbp op, number of leading data operands; the rest are shifts / zero points / shapes)
_TOSA = {"tosa.add": (ops.AddOp, 2), "tosa.sub": (ops.SubOp, 2), "tosa.mul": (ops.MulOp, 2),
         "tosa.maximum": (ops.MaximumOp, 2), "tosa.minimum": (ops.MinimumOp, 2), "tosa.exp": (ops.ExpOp, 1),
         "tosa.negate": (ops.NegOp, 1), "tosa.sigmoid": (nn.SigmoidOp, 1), "tosa.tanh": (nn.TanhOp, 1),
         "tosa.cast": (ops.CastOp, 1), "tosa.matmul": (ops.MatmulOp, 2),
         "tosa.transpose": (ops.TransposeOp, 1), "tosa.reshape": (ops.ReshapeOp, 1),
         "tosa.reduce_sum": (ops.ReduceSumOp, 1), "tosa.reduce_max": (ops.ReduceMaxOp, 1),
         "tosa.reduce_min": (ops.ReduceMinOp, 1)}
_ABS = ("tosa.abs", "linalg.abs")  # |x| = maximum(neg(x), x): exact, integer wrap-around included
RESHAPES = ("tensor.reshape", "tensor.collapse_shape", "tensor.expand_shape")
# Ops that only build init tensors or constants; their values are never data of an sbp op.
AUXILIARY = ("tensor.empty", "linalg.fill", "arith.constant", "tosa.const", "tosa.const_shape", "shard.sharding",
             "tensor.from_elements", "tensor.dim")


@dataclass
class Raised:
    """An sbp op to build: class, data operands (upstream values), properties; `combine`: a binary
    sbp op applied to its result and a second upstream value (a reduction or matmul accumulating into
    data, `linalg.matmul outs(%arg)` = %arg + a·b; tosa.abs = maximum(neg(x), x)); `init`: the
    linalg op's outs, whose annotation is its result's sharding when the init is not data."""

    cls: type[Operation]
    operands: list[SSAValue]
    props: dict[str, Attribute] = field(default_factory=dict)
    combine: tuple[type[Operation], SSAValue] | None = None
    init: SSAValue | None = None


def through_shards(value: SSAValue) -> SSAValue:
    """`value` with the `shard.shard` annotations on it looked through: the value they annotate."""
    while isinstance(value.owner, Operation) and op_name(value.owner) == "shard.shard":
        value = value.owner.operands[0]
    return value


def tensor_type(op: Operation, value: SSAValue) -> TensorType:
    ty = value.type
    if not isinstance(ty, TensorType):
        raise OpError(op, f"{op_name(op)}: operand of type {ty} is not a ranked tensor")
    return ty


def expression(block: Block, value: SSAValue, constants: list[Attribute]) -> Expr:
    """`value` of a linalg body as a tree, widening removed, constants appended to `constants`."""
    if isinstance(value, BlockArgument) and value.block is block:
        return ("arg", value.index)
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_block() is not block:
        return ("outer",)
    name = op_name(owner)
    if name == "arith.constant":
        value = _prop(owner, "value")
        assert value is not None, owner
        constants.append(value)
        return ("const",)
    if name in _WIDENING:
        return expression(block, owner.operands[0], constants)
    return (name, *(expression(block, o, constants) for o in owner.operands))


def op_name(op: Operation) -> str:
    """The op's name, also for the unregistered ops the emitter builds (`linalg_bodies.generic_op`)."""
    return op.op_name.data if isinstance(op, UnregisteredOp) else op.name


def body_expression(block: Block) -> tuple[Expr, list[Attribute]]:
    constants: list[Attribute] = []
    last = block.last_op
    if last is None or op_name(last) != "linalg.yield" or len(last.operands) != 1:
        return ("none",), constants
    return expression(block, last.operands[0], constants), constants


def _number(attr: Attribute) -> float | int | None:
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, IntegerAttr):
        return int(attr.value.data)
    return None


class Raiser:
    """Recognises one module's compute ops; owns the table of reference bodies it builds (one per
    sbp op class and element types met, so bounded by the program's type variety)."""

    def __init__(self) -> None:
        self._bodies: dict[tuple[type[Operation], tuple[Attribute, ...]], tuple[Expr, list[Attribute]]] = {}

    def reference(self, cls: type[Operation], types: tuple[Attribute, ...]) -> tuple[Expr, list[Attribute]]:
        """The body `--emit-mlir` writes for `cls` with element types `types` (inputs..., output)."""
        key = (cls, types)
        if key not in self._bodies:
            out = types[-1]
            props: dict[str, Attribute] = {}
            if cls in _SCALAR_PROP:  # a sentinel, to find where the scalar sits among the constants
                props[_SCALAR_PROP[cls]] = IntegerAttr(SENTINEL, out) if isinstance(out, IntegerType) else FloatAttr(
                    float(SENTINEL), out)  # type: ignore[arg-type]
            body = Body(list(types))
            n_in = len(types) - 1
            typed = Block(arg_types=[TensorType(t, [1]) for t in types[:n_in]])  # bodies read operand/result types
            reference = cls.create(operands=list(typed.args), result_types=[TensorType(out, [1])], properties=props)
            try:
                scalar = scalar_body(reference, out)
            except OpError:  # no body for these types (exp of an integer)
                self._bodies[key] = (("none",), [])
                return self._bodies[key]
            assert scalar is not None
            block = body.region(scalar(body, body.args[:n_in])).blocks.first
            assert block is not None
            self._bodies[key] = body_expression(block)
        return self._bodies[key]

    # -- linalg.generic --------------------------------------------------------------------------

    def generic(self, op: Operation) -> Raised | None:
        """A linalg.generic as an sbp op; None for a fill (a generic with no input)."""
        ins, outs = _segments(op)
        if not ins:
            return None
        if len(outs) != 1:
            raise OpError(op, f"{op_name(op)} with {len(outs)} outputs has no sbp form")
        maps = [m.data for m in _prop(op, "indexing_maps").data]  # type: ignore[union-attr]
        iterators = [str(it.data) for it in _prop(op, "iterator_types").data]  # type: ignore[union-attr]
        block = op.regions[0].blocks.first
        assert block is not None
        expr, constants = body_expression(block)
        if "reduction" in iterators or _uses(expr, ("arg", len(ins))):  # reads its init: a reduction
            return self.reduction(op, ins, outs[0], maps, iterators, expr)
        if maps[-1] != AffineMap.identity(len(iterators)):
            raise OpError(op, f"{op_name(op)}: output indexing map {maps[-1]} is not the identity")
        if expr == ("arg", 0) and len(ins) == 1:  # a transpose, or a copy (its identity permutation)
            perm = _permutation(maps[0])
            same_type = tensor_type(op, ins[0]).element_type == tensor_type(op, outs[0]).element_type
            if perm is not None and perm != list(range(len(perm))):
                if not same_type:
                    raise OpError(op, f"{op_name(op)}: a transpose that also casts has no sbp form")
                return Raised(ops.TransposeOp, list(ins), {"perm": DenseArrayBase.from_list(i64, perm)}, init=outs[0])
        out_ty = tensor_type(op, outs[0])
        for value, m in zip(ins, maps, strict=False):
            ty = tensor_type(op, value)
            _check_broadcast(op, ty, ty.get_shape(), len(out_ty.get_shape()), m)
        types = (*(tensor_type(op, v).element_type for v in ins), out_ty.element_type)
        for cls in ELEMENTWISE:
            if (len(ins) == 2) != (cls in _BINARY):
                continue
            ref_expr, ref_constants = self.reference(cls, types)
            if ref_expr != expr:
                continue
            found = [_number(c) for c in constants]
            expected = [_number(c) for c in ref_constants]
            props: dict[str, Attribute] = {}
            if cls in _SCALAR_PROP:  # the scalar is every constant where the reference has the sentinel
                at = [i for i, v in enumerate(expected) if v == SENTINEL]
                if len(found) != len(expected) or len({found[i] for i in at}) != 1:
                    continue
                props[_SCALAR_PROP[cls]] = _scalar(found[at[0]], out_ty.element_type)
                for i in at:
                    found[i] = SENTINEL
            if found != expected:
                continue
            return Raised(cls, list(ins), props, init=outs[0])
        if expr == ("arg", 0) and types[0] == types[-1]:
            return Raised(ops.CastOp, list(ins), init=outs[0])  # a copy: the identity, as a cast to the same type
        raise OpError(op, f"{op_name(op)}: the body {_render(expr)} is not an sbp elementwise op")

    def reduction(self, op: Operation, ins: Sequence[SSAValue], out: SSAValue, maps: list[AffineMap],
                  iterators: list[str], expr: Expr) -> Raised:
        n = len(ins)
        loops = len(iterators)
        out_ty = tensor_type(op, out)
        rank = len(out_ty.get_shape())
        if maps[-1] != AffineMap(loops, 0, tuple(AffineDimExpr(i) for i in range(rank))) or any(
                it != "parallel" for it in iterators[:rank]) or any(it != "reduction" for it in iterators[rank:]):
            raise OpError(op, f"{op_name(op)}: a reduction whose output is not its leading parallel loops "
                          "has no sbp form")
        acc = ("arg", n)
        if n == 1 and len(expr) == 3 and expr[0] in _REDUCE_KINDS and set(expr[1:]) == {acc, ("arg", 0)}:
            kind = _REDUCE_KINDS[str(expr[0])]
            in_map = maps[0]
            axes: list[int] = []
            for i, e in enumerate(in_map.results):
                if not isinstance(e, AffineDimExpr):
                    raise OpError(op, f"{op_name(op)}: input indexing map {in_map} is not a projection")
                if e.position >= rank:
                    axes.append(i)
            in_rank = len(tensor_type(op, ins[0]).get_shape())
            props: dict[str, Attribute] = {"axes": DenseArrayBase.from_list(i64, axes)}
            if rank == in_rank and axes:
                props["keepdims"] = UnitAttr()
            return self.into(op, Raised(_REDUCE_OPS[kind], list(ins), props), out, kind)
        if n == 2 and loops == rank + 1 and _is_multiply_accumulate(expr, acc):
            return self.into(op, self.matmul(op, ins, maps, rank), out, ReduceKind.SUM)
        raise OpError(op, f"{op_name(op)}: the reduction body {_render(expr)} is not a sum, max, min or matmul")

    def matmul(self, op: Operation, ins: Sequence[SSAValue], maps: Sequence[AffineMap], rank: int) -> Raised:
        """Loops (batch..., m, n, k): a reads (m, k) or, transposed, (k, m); b (k, n) or (n, k)."""
        m, n, k = rank - 2, rank - 1, rank
        props: dict[str, Attribute] = {}
        for value, mp, (plain, flipped), flag in ((ins[0], maps[0], ((m, k), (k, m)), "transpose_a"),
                                                  (ins[1], maps[1], ((k, n), (n, k)), "transpose_b")):
            dims = [e.position if isinstance(e, AffineDimExpr) else None for e in mp.results]
            if len(dims) < 2 or tuple(dims[-2:]) not in (plain, flipped):
                raise OpError(op, f"{op_name(op)}: indexing map {mp} is not a matmul operand's")
            if tuple(dims[-2:]) == flipped:
                props[flag] = UnitAttr()
            ty = tensor_type(op, value)
            _check_broadcast(op, ty, ty.get_shape()[:-2], rank - 2, AffineMap(mp.num_dims, 0, mp.results[:-2]))
        return Raised(ops.MatmulOp, list(ins), props)

    def into(self, op: Operation, raised: Raised, init: SSAValue, kind: ReduceKind) -> Raised:
        """`raised`, a `kind` reduction or matmul of `op`, written into `init`: an init tensor (the
        identity of `kind` filled in, or `tensor.empty`, whose unspecified contents the identity is
        one choice of), or data the result accumulates into (`combine`)."""
        source = through_shards(init)
        owner = source.owner
        name = op_name(owner) if isinstance(owner, Operation) else ""
        if name == "tensor.empty":
            raised.init = init
            return raised
        value: Attribute | None = None
        if name == "linalg.fill":
            assert isinstance(owner, Operation)
            scalar = owner.operands[0].owner
            if isinstance(scalar, Operation) and op_name(scalar) == "arith.constant":
                value = _prop(scalar, "value")
        elif name == "linalg.generic" and not _segments(owner)[0]:  # type: ignore[arg-type]
            assert isinstance(owner, Operation)
            block = owner.regions[0].blocks.first
            constants: list[Attribute] = []
            if block is not None and body_expression(block)[0] == ("const",):
                constants = body_expression(block)[1]
            value = constants[0] if constants else None
        elif name in ("arith.constant", "tosa.const"):
            assert isinstance(owner, Operation)
            value = _splat(owner)
        else:  # data: the result is `init` combined with the op's
            raised.combine = (_COMBINE[kind], init)
            return raised
        elt = tensor_type(op, init).element_type
        if value is None or _number(value) != _number(identity(kind, elt)):
            raise OpError(op, f"{op_name(op)}: the init of a {kind.value} reduction must be a tensor filled with "
                          f"{_number(identity(kind, elt))} or data (sbp has no constant op for another constant)")
        raised.init = init
        return raised

    # -- named linalg, tensor and tosa ops -------------------------------------------------------

    def layer_norm(self, op: Operation) -> tuple[Raised, list[Operation]] | None:
        """`--emit-mlir`'s four-generic layer_norm (FuncEmitter.layer_norm), recognised from its last
        generic: (x, gamma, beta, epsilon) and the three generics it absorbs; None if not one."""
        ins, _ = _segments(op)
        block = op.regions[0].blocks.first if op.regions else None
        if op_name(op) != "linalg.generic" or len(ins) != 4 or block is None:
            return None
        expr, constants = body_expression(block)
        norm = ("arith.addf", ("arith.mulf", ("arith.divf", ("arg", 0), ("math.sqrt", ("arith.addf", (
            "arith.divf", ("arg", 1), ("const",)), ("const",)))), ("arg", 2)), ("arg", 3))
        centred, squares = (v.owner for v in ins[:2])
        if expr != norm or not all(isinstance(o, Operation) and o.name == "linalg.generic" for o in (centred, squares)):
            return None
        assert isinstance(centred, Operation) and isinstance(squares, Operation)
        c_ins, _ = _segments(centred)
        s_ins, _ = _segments(squares)
        if len(c_ins) != 2 or list(s_ins) != [ins[0]] or not isinstance(c_ins[1].owner, Operation):
            return None
        total = c_ins[1].owner
        t_ins, _ = _segments(total) if total.name == "linalg.generic" else ((), ())
        shapes = [(centred, ("arith.subf", ("arg", 0), ("arith.divf", ("arg", 1), ("const",)))),
                  (squares, ("arith.addf", ("arg", 1), ("arith.mulf", ("arg", 0), ("arg", 0)))),
                  (total, ("arith.addf", ("arg", 1), ("arg", 0)))]
        for part, want in shapes:
            part_block = part.regions[0].blocks.first
            if part_block is None or body_expression(part_block)[0] != want:
                return None
        if list(t_ins) != [c_ins[0]]:
            return None
        epsilon = _number(constants[1])
        assert epsilon is not None
        return (Raised(ops.LayerNormOp, [c_ins[0], ins[2], ins[3]], {"epsilon": FloatAttr(float(epsilon), f32)}),
                [total, centred, squares])

    def named(self, op: Operation) -> Raised | None:
        """A named op as an sbp op; None if `op` is not one the importer knows."""
        name = op_name(op)
        if name in ("linalg.matmul", "linalg.batch_matmul"):
            ins, outs = _segments(op)
            maps = [m.data for m in op.get_indexing_maps().data]  # type: ignore[attr-defined]
            return self.into(op, self.matmul(op, ins, maps, len(tensor_type(op, outs[0]).get_shape())), outs[0],
                             ReduceKind.SUM)
        if name == "linalg.reduce":
            return self.reduce(op)
        if name in _ABS:
            if len(op.operands) != 1 + (name == "linalg.abs"):
                raise OpError(op, f"{name} with {len(op.operands)} operands has no sbp form")
            x = op.operands[0]
            elt = tensor_type(op, x).element_type
            if isinstance(elt, IntegerType) and elt.signedness.data == Signedness.UNSIGNED:
                raise OpError(op, f"{name} of {elt}: |x| of an unsigned type is x, but maximum(neg(x), x), its sbp "
                              "form, wraps; use x")
            return Raised(ops.NegOp, [x], combine=(ops.MaximumOp, x), init=_segments(op)[1][0] if name == "linalg.abs"
                          else None)
        if name == "linalg.transpose":
            perm = [int(p) for p in _prop(op, "permutation").get_values()]  # type: ignore[union-attr]
            return Raised(ops.TransposeOp, [op.operands[0]], {"perm": DenseArrayBase.from_list(i64, perm)})
        if name in _NAMED_ELEMENTWISE:
            ins, outs = _segments(op)
            return Raised(_NAMED_ELEMENTWISE[name], list(ins), init=outs[0])
        if name in RESHAPES:
            return Raised(ops.ReshapeOp, [op.operands[0]])
        if name in _TOSA:
            return self.tosa(op)
        return None

    def reduce(self, op: Operation) -> Raised:
        """`linalg.reduce ins(%x) outs(%init) dimensions = [...]` with an add / max / min body."""
        ins, outs = _segments(op)
        block = op.regions[0].blocks.first if op.regions else None
        expr = body_expression(block)[0] if block is not None else ("none",)
        if len(ins) != 1 or len(outs) != 1 or len(expr) != 3 or expr[0] not in _REDUCE_KINDS or set(
                expr[1:]) != {("arg", 0), ("arg", 1)}:
            raise OpError(op, f"{op_name(op)}: only a sum, max or min of one tensor has an sbp form "
                          f"(body {_render(expr)})")
        dims = _prop(op, "dimensions")
        assert isinstance(dims, DenseArrayBase), op
        props: dict[str, Attribute] = {"axes": DenseArrayBase.from_list(i64, [int(d) for d in dims.get_values()])}
        kind = _REDUCE_KINDS[str(expr[0])]
        return self.into(op, Raised(_REDUCE_OPS[kind], list(ins), props), outs[0], kind)

    def tosa(self, op: Operation) -> Raised:
        cls, arity = _TOSA[op_name(op)]
        data = list(op.operands[:arity])
        props: dict[str, Attribute] = {}
        if cls is ops.TransposeOp:
            perms = _prop(op, "perms")
            if not isinstance(perms, DenseArrayBase):
                raise OpError(op, "tosa.transpose needs its perms as an array attribute")
            props["perm"] = DenseArrayBase.from_list(i64, [int(p) for p in perms.get_values()])
        elif cls in _REDUCE_OPS.values():
            axis = _prop(op, "axis")
            if not isinstance(axis, IntegerAttr):
                raise OpError(op, f"{op_name(op)} needs an integer axis attribute")
            props = {"axes": DenseArrayBase.from_list(i64, [axis.value.data]), "keepdims": UnitAttr()}
        elif cls is ops.MulOp and len(op.operands) > 2 and not _is_zero_constant(op.operands[2]):
            raise OpError(op, "tosa.mul with a non-zero shift has no sbp form")
        return Raised(cls, data, props)


def _segments(op: Operation) -> tuple[Sequence[SSAValue], Sequence[SSAValue]]:
    """(ins, outs) of a linalg structured op, generic or named, registered or not."""
    try:
        if hasattr(op, "inputs") and hasattr(op, "outputs"):
            return tuple(op.inputs), tuple(op.outputs)  # type: ignore[attr-defined]
    except (KeyError, ValueError, IndexError) as error:  # a registered op in generic form without its segments
        raise OpError(op, f"{op_name(op)}: its operands cannot be split into ins and outs (operandSegmentSizes "
                      "missing or wrong)") from error
    sizes = _prop(op, "operandSegmentSizes")
    if isinstance(sizes, DenseArrayBase):
        n_in = int(sizes.get_values()[0])
        return tuple(op.operands[:n_in]), tuple(op.operands[n_in:])
    return tuple(op.operands[:-1]), tuple(op.operands[-1:])


def _prop(op: Operation, name: str) -> Attribute | None:
    found = op.properties.get(name)
    return found if found is not None else op.attributes.get(name)


def _permutation(m: AffineMap) -> list[int] | None:
    """The sbp `perm` of a transpose whose input map is `m`: output dim m[i] reads input dim i."""
    if m.num_symbols or len(m.results) != m.num_dims:
        return None
    positions = [e.position if isinstance(e, AffineDimExpr) else -1 for e in m.results]
    if sorted(positions) != list(range(m.num_dims)):
        return None
    perm = [0] * m.num_dims
    for i, p in enumerate(positions):
        perm[p] = i
    return perm


def _check_broadcast(op: Operation, ty: TensorType, shape: Sequence[int], out_rank: int, m: AffineMap) -> None:
    """`m` reads dims `shape` of `ty` with numpy broadcasting: the trailing `len(shape)` of the first
    `out_rank` loops in order, a size-1 dim possibly as the constant 0."""
    lead = out_rank - len(shape)
    for j, e in enumerate(m.results):
        ok = (isinstance(e, AffineDimExpr) and e.position == lead + j) or (
            isinstance(e, AffineConstantExpr) and e.value == 0 and shape[j] == 1)
        if not ok or lead < 0 or len(m.results) != len(shape):
            raise OpError(op, f"{op_name(op)}: indexing map {m} of {ty} is not numpy broadcasting")


def _uses(expr: Expr, leaf: Expr) -> bool:
    return expr == leaf or any(isinstance(e, tuple) and _uses(e, leaf) for e in expr[1:])


def _is_multiply_accumulate(expr: Expr, acc: Expr) -> bool:
    if len(expr) != 3 or expr[0] not in ("arith.addf", "arith.addi"):
        return False
    rest = [e for e in expr[1:] if e != acc]
    if len(rest) != 1:
        return False
    mul = rest[0]
    return isinstance(mul, tuple) and len(mul) == 3 and mul[0] in ("arith.mulf", "arith.muli") and set(
        mul[1:]) == {("arg", 0), ("arg", 1)}


def _scalar(value: float | int | None, elt: Attribute) -> Attribute:
    """An sbp scalar property: f32 for float tensors (the runtime casts it to the tensor's type)."""
    assert value is not None
    if isinstance(elt, IntegerType):
        return IntegerAttr(int(value), elt)
    return FloatAttr(float(value), f32)


def _splat(constant: Operation) -> Attribute | None:
    """The one value of a splat tensor constant (`arith.constant dense<0.0>`), else None."""
    attr = _prop(constant, "values") if _prop(constant, "values") is not None else _prop(constant, "value")
    values = getattr(attr, "get_values", lambda: None)()
    if not values or len(set(values)) != 1:
        return None
    elt = getattr(getattr(attr, "type", None), "element_type", None)
    if isinstance(elt, IntegerType):
        return IntegerAttr(int(values[0]), elt)
    return FloatAttr(float(values[0]), f32)


def _is_zero_constant(value: SSAValue) -> bool:
    owner = value.owner
    if not isinstance(owner, Operation) or op_name(owner) not in ("tosa.const", "arith.constant"):
        return False
    attr = _prop(owner, "values") if _prop(owner, "values") is not None else _prop(owner, "value")
    values = getattr(attr, "get_values", lambda: None)()
    return values is not None and all(v == 0 for v in values)


def _render(expr: Expr) -> str:
    if expr and expr[0] == "arg":
        return f"%arg{expr[1]}"
    if expr == ("const",):
        return "constant"
    return f"{expr[0]}({', '.join(_render(e) for e in expr[1:] if isinstance(e, tuple))})"
