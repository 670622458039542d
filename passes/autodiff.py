"""`autodiff`: a forward program -> one training step (SPEC §8).

    sbp-opt mlp.mlir -p 'autodiff{loss=0 optimizer=adamw lr=0.001},infer-sbp{rule=global},...'

Options:

* `loss` — the index of the function result that is the loss (default 0): a float tensor of one
  element (0-d or `1x...x1`), else a located error;
* `optimizer` — `sgd` (default; torch.optim.SGD without momentum) or `adamw` (torch.optim.AdamW);
* `lr` (default 0.01), `weight-decay` (default 0), and for adamw `beta1` (0.9), `beta2` (0.999),
  `eps` (1e-8), `step` (1: the 1-based step count the bias correction uses);
* `params` — which arguments are parameters: a comma list of argument indices or names (`params=1,2`
  or `params=w1,b1`); default every floating-point argument but the first (the batch input);
* `micro-batches` — K ≥ 1 (default 1), gradient accumulation: the program is the step of one
  micro-batch, and an optimizer step accumulates K of them before its gradient reduction and update.
  The program computes what it says (one micro-batch's gradient, then the update: `--check` runs
  that); the planner's model (`global_search/problem.py`, `step_share`) charges the per-step part —
  the optimizer ops' compute, the boxing of values only they (and the step's results) read, such as a
  partial gradient's all-reduce or reduce-scatter, and the return's conversions — 1/K per micro-batch.

Each function becomes the step: it takes its arguments, then per parameter (adamw) the first and
second moments `m_i`, `v_i` (typed as their parameter: SBP-free when it is, so that
`infer-sbp{rule=global}` decides the optimizer state's SBP — sharding it over the data axis is ZeRO —
and with the parameter's SBP under rule=oneflow/cost); it returns the loss, every updated parameter,
then `m_i'`, `v_i'` (each in its argument's SBP through `sbp.to_global` where that is given whole, the
layout the next step takes it in). The backward ops follow the forward ops (which the loss needs; the others are
dropped), with SBP-free types: the rules give the gradient of a B weight used by S(0) activations as
P(sum), and a P(sum) gradient is boxed (all-reduce or reduce-scatter) where the update needs it.
The function carries `sbp.train_step`, what `sbp-run --check` and `--steps` read: the optimizer and
its hyper-parameters, the parameters' argument indices and names, the state arguments' indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from sbpc.dialects import sbp_ops as ops
from sbpc.dialects import sbp_ops_grad as g
from sbpc.dialects.errors import ArgumentError, OpError
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.autodiff_rules import GradBuilder, free_type, operand_grads

TRAIN_STEP = "sbp.train_step"
"""The function attribute marking a training step (its keys: `optimizer`, `params`, `names`, `state`,
`lr`, `weight_decay`, and for adamw `beta1`, `beta2`, `eps`, `step`; `micro_batches` where K > 1)."""

STEP_OPS = (g.SgdUpdateOp, g.AdamMoment1Op, g.AdamMoment2Op, g.AdamwUpdateOp)
"""The ops a step runs once per optimizer step (not once per micro-batch): the updates."""


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Differentiate the forward program into one SGD or AdamW training step (SPEC §8; module docstring)."""

    name = "autodiff"

    loss: int = 0
    optimizer: Literal["sgd", "adamw"] = "sgd"
    lr: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    step: int = 1
    params: tuple[int | str, ...] | None = field(
        default=None, metadata={"kind": "INDEX|NAME,... (default: every float argument but the first)"})
    micro_batches: int = 1

    def __post_init__(self) -> None:
        if not (0 <= self.beta1 < 1 and 0 <= self.beta2 < 1):
            raise ValueError(f"beta1={self.beta1:g}, beta2={self.beta2:g} must lie in [0, 1)")
        if self.step < 1:
            raise ValueError(f"step={self.step} must be >= 1")
        if self.micro_batches < 1:
            raise ValueError(f"micro-batches={self.micro_batches} must be >= 1")
        if self.lr < 0 or self.eps < 0 or self.weight_decay < 0:
            raise ValueError("lr, eps and weight-decay must be >= 0")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and fn.body.blocks and TRAIN_STEP not in fn.attributes:
                self.step_function(fn)

    # -- the step ---------------------------------------------------------------------------------

    def step_function(self, fn: func.FuncOp) -> None:
        block = fn.body.blocks[0]
        ret = block.last_op
        if not isinstance(ret, func.ReturnOp):
            raise OpError(fn, f"autodiff: @{fn.sym_name.data} does not end in func.return")
        loss = self._loss(fn, ret)
        params = self._params(fn)
        live = _depends_on_params(block.ops, {block.args[i] for i in params})
        builder = GradBuilder(ret)
        grads = self._backward(fn, ret, loss, live, builder)

        results: list[SSAValue] = [loss]
        state_args: list[int] = []
        state_results: list[SSAValue] = []
        for i in params:
            w = block.args[i]
            grad = grads.get(w)
            builder.origin = fn
            if self.optimizer == "sgd":
                results.append(w if grad is None else builder.like(g.SgdUpdateOp, [w, grad], None, self._props()))
                continue
            m = block.insert_arg(w.type, len(block.args))
            v = block.insert_arg(w.type, len(block.args))
            m.name_hint, v.name_hint = f"{_name(w, i)}_m", f"{_name(w, i)}_v"
            state_args += [len(block.args) - 2, len(block.args) - 1]
            if grad is None:  # torch.optim skips a parameter without a gradient
                results.append(w)
                state_results += [m, v]
                continue
            m_new = builder.like(g.AdamMoment1Op, [m, grad], None, {"beta": FloatAttr(self.beta1, f64)})
            v_new = builder.like(g.AdamMoment2Op, [v, grad], None, {"beta": FloatAttr(self.beta2, f64)})
            results.append(builder.like(g.AdamwUpdateOp, [w, m_new, v_new], None, self._props()))
            state_results += [m_new, v_new]
        results += state_results
        carried = [block.args[i] for i in params] + [block.args[i] for i in state_args]
        builder.origin = fn
        results[1:] = [_in_layout_of(builder, value, arg) for value, arg in zip(results[1:], carried, strict=True)]

        new_ret = func.ReturnOp(*results)
        new_ret.location = ret.location
        Rewriter.replace_op(ret, new_ret)
        _drop_dead(block.ops)
        fn.function_type = FunctionType.from_lists([a.type for a in block.args],
                                                   [_free(results[0].type), *(r.type for r in results[1:])])
        fn.attributes[TRAIN_STEP] = self._marker(fn, params, state_args)

    def _loss(self, fn: func.FuncOp, ret: func.ReturnOp) -> SSAValue:
        count = len(ret.operands)
        if not 0 <= self.loss < count:
            raise OpError(ret, f"autodiff: loss={self.loss}, but @{fn.sym_name.data} returns {count} "
                               f"result{'s' if count != 1 else ''}")
        value = ret.operands[self.loss]
        ty = value.type
        if not isinstance(ty, GlobalTensorType) or ty.element_count() != 1 or not isinstance(ty.element_type, AnyFloat):
            what = ty.describe() if isinstance(ty, GlobalTensorType) else str(ty)
            raise OpError(ret, f"autodiff: the loss (result {self.loss}) must be a float tensor of one element "
                               f"(0-d or 1x...x1), got {what}")
        return value

    def _params(self, fn: func.FuncOp) -> list[int]:
        args = fn.body.blocks[0].args
        if self.params is None:
            return [i for i, a in enumerate(args) if i > 0 and _is_float(a)]
        found: list[int] = []
        names = {a.name_hint: i for i, a in enumerate(args) if a.name_hint}
        listed = ",".join(str(p) for p in self.params)
        for item in self.params:
            index = item if isinstance(item, int) else names.get(item)
            if index is None or not 0 <= index < len(args):
                raise OpError(fn, f"autodiff: params={listed}: @{fn.sym_name.data} has no argument '{item}' "
                                  f"(it has {len(args)}: {', '.join(_name(a, i) for i, a in enumerate(args))})")
            if not _is_float(args[index]):
                raise ArgumentError(fn, index, f"autodiff: parameter {_name(args[index], index)} is not a float tensor")
            if index not in found:
                found.append(index)
        return sorted(found)

    def _backward(self, fn: func.FuncOp, ret: func.ReturnOp, loss: SSAValue, live: set[SSAValue],
                  builder: GradBuilder) -> dict[SSAValue, SSAValue]:
        """The gradient of the loss with respect to every value that depends on a parameter."""
        grads: dict[SSAValue, SSAValue] = {}
        if loss not in live:
            return grads
        builder.origin = ret
        grads[loss] = builder.like(g.OnesLikeOp, [loss])
        for op in reversed(list(fn.body.blocks[0].ops)):
            if op is ret or not op.results:
                continue
            dy = grads.get(op.results[0])
            if dy is None:
                continue
            need = [v in live and _is_float(v) for v in op.operands]
            for value, grad in zip(op.operands, operand_grads(builder, op, dy, need), strict=True):
                if grad is None:
                    continue
                builder.origin = op
                grads[value] = grad if value not in grads else builder.add(grads[value], grad)
        return grads

    def _props(self) -> dict[str, Attribute]:
        props: dict[str, Attribute] = {"lr": FloatAttr(self.lr, f64)}
        if self.weight_decay:
            props["weight_decay"] = FloatAttr(self.weight_decay, f64)
        if self.optimizer == "adamw":
            props["weight_decay"] = FloatAttr(self.weight_decay, f64)
            props.update(beta1=FloatAttr(self.beta1, f64), beta2=FloatAttr(self.beta2, f64),
                         eps=FloatAttr(self.eps, f64), step=IntegerAttr(self.step, i64))
        return props

    def _marker(self, fn: func.FuncOp, params: Sequence[int], state: Sequence[int]) -> DictionaryAttr:
        args = fn.body.blocks[0].args
        entries: dict[str, Attribute] = {
            "optimizer": StringAttr(self.optimizer),
            "params": DenseArrayBase.from_list(i64, list(params)),
            "names": ArrayAttr([StringAttr(_name(args[i], i)) for i in params]),
            "state": DenseArrayBase.from_list(i64, list(state)),
        }
        if self.micro_batches > 1:
            entries["micro_batches"] = IntegerAttr(self.micro_batches, i64)
        entries.update(self._props())
        return DictionaryAttr(entries)


def tied_results(fn: func.FuncOp) -> list[tuple[int, int]]:
    """(result index, argument index) of every updated parameter and optimizer state of a training step
    (`sbp.train_step`: result 1 + k updates the k-th of its `params` then `state`); [] for any other
    function. A step runs in steady state — the next step takes these results as its arguments — so
    the result leaves in its argument's SBP: `infer-sbp{rule=global}` prices that conversion as a use of
    the result by the argument's variable and writes the argument's type as the result type
    (`tie_result_types`), and `materialize-boxing` boxes the return to it."""
    marker = fn.attributes.get(TRAIN_STEP)
    if not isinstance(marker, DictionaryAttr):
        return []
    carried: list[int] = []
    for key in ("params", "state"):
        attr = marker.data.get(key)
        if isinstance(attr, DenseArrayBase):
            carried += [int(v) for v in attr.get_values()]
    outputs = len(fn.function_type.outputs.data)
    args = len(fn.function_type.inputs.data)
    return [(1 + k, a) for k, a in enumerate(carried) if 1 + k < outputs and 0 <= a < args]


def micro_batches(fn: func.FuncOp) -> int:
    """K of a training step accumulating K micro-batches per optimizer step (1 for any other function)."""
    marker = fn.attributes.get(TRAIN_STEP)
    found = marker.data.get("micro_batches") if isinstance(marker, DictionaryAttr) else None
    return max(1, int(found.value.data)) if isinstance(found, IntegerAttr) else 1


def return_in_argument_layouts(fn: func.FuncOp) -> None:
    """Convert every tied result (`tied_results`) whose SBP differs from its argument's (which has one) to
    it with an `sbp.to_global` before the return, and update the function type: the step then returns
    its parameters and state in the layout the next step takes them in (`materialize-boxing` makes the
    `to_global`s boxings). The search priced these conversions as the ties."""
    ties = tied_results(fn)
    ret = fn.body.blocks[0].last_op if fn.body.blocks else None
    if not ties or not isinstance(ret, func.ReturnOp):
        return
    args = fn.body.blocks[0].args
    for r, a in ties:
        value, want = ret.operands[r], args[a].type
        if isinstance(want, GlobalTensorType) and want.nd_sbp is not None and isinstance(value.type, GlobalTensorType) \
                and value.type.nd_sbp is not None and value.type != want:
            convert = ops.ToGlobalOp.build(operands=[value], result_types=[want])
            convert.location = ret.location
            Rewriter.insert_op(convert, InsertPoint.before(ret))
            ret.operands[r] = convert.results[0]
    fn.update_function_type()


def _name(value: SSAValue, index: int) -> str:
    return value.name_hint or f"arg{index}"


def _is_float(value: SSAValue) -> bool:
    ty = value.type
    return isinstance(ty, GlobalTensorType) and isinstance(ty.element_type, AnyFloat)


def _depends_on_params(body: Sequence[Operation] | object, roots: set[SSAValue]) -> set[SSAValue]:
    """The values computed from a parameter (those that need a gradient)."""
    live = set(roots)
    for op in body:  # type: ignore[attr-defined]
        if any(v in live for v in op.operands):
            live.update(op.results)
    return live


def _drop_dead(body: object) -> None:
    """Erase the forward ops whose results nothing uses any more (the other results of the forward)."""
    for op in reversed(list(body)):  # type: ignore[call-overload]
        if op.results and not isinstance(op, func.ReturnOp) and all(not r.uses for r in op.results):
            Rewriter.erase_op(op)


def _free(ty: Attribute) -> Attribute:
    """The loss's declared type: SBP-free, so that the inference fills it in (SPEC §2.5)."""
    return free_type(ty) if isinstance(ty, GlobalTensorType) else ty


def _in_layout_of(builder: GradBuilder, value: SSAValue, arg: SSAValue) -> SSAValue:
    """An updated parameter (or state) returned in its argument's SBP where that is given whole (the next
    step takes it in that layout), through `sbp.to_global` (SPEC §2.5); SBP-free where the search decides."""
    ty = arg.type
    if value is arg or not isinstance(ty, GlobalTensorType) or ty.nd_sbp is None:
        return value
    return builder.emit(ops.ToGlobalOp, [value], ty)

