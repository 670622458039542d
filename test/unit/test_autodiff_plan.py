"""Planning a training step (SPEC §8, issue 24 item 2): the step runs in steady state — its updated
parameters and optimizer state leave in their arguments' SBP (the next step takes them there), priced
by rule=global and boxed by materialize-boxing — and its memory counts each parameter and moment once
(the arguments donated). The GPT stack's AdamW step under a budget between ZeRO-1's and plain DP+TP's
shards the optimizer state over the data axis; without a budget it does not."""

from __future__ import annotations

import re

import pytest
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, i64
from xdsl.rewriter import Rewriter

import sbpc
from bench.gen_gpt import GptDims, gpt_stack
from sbpc.dialects.flops import FlopModel
from sbpc.dialects.sbp import BROADCAST, SplitAttr, nd_sbp
from sbpc.dialects.sbp_ops import BoxingOp, ReluOp, ToGlobalOp
from sbpc.dialects.sbp_ops_grad import OnesLikeOp, ReluGradOp
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.autodiff import STEP_OPS, TRAIN_STEP, micro_batches, return_in_argument_layouts, tied_results
from sbpc.passes.cost.compute import device_figures, local_bytes, op_compute_s
from sbpc.passes.infer_sbp.global_search.objective import live_ranges, plan_objective, return_conversions
from sbpc.passes.infer_sbp.global_search.problem import donated_arguments
from sbpc.passes.infer_sbp.global_search.search import infer_module_global
from sbpc.passes.materialize_boxing import materialize_function
from sbpc.runtime import train_step
from test.unit.test_autodiff import mlp, step


def _function(module: object) -> object:
    return next(op for op in module.walk() if op.name == "func.func")  # type: ignore[attr-defined]


def test_updated_values_leave_in_their_arguments_sbp() -> None:
    """rule=global with free weights: every tied result is declared in its argument's type, and the
    search's objective is the plan's (`plan_objective`, which prices the return's conversions)."""
    program = step(mlp(""), "optimizer=adamw lr=0.01")
    module = program.module.clone()
    (result,) = infer_module_global(module, None)
    fn = result.problem.function
    ties = tied_results(fn)
    assert [r for r, _ in ties] == list(range(1, 10))  # 3 parameters, then their m and v
    ins, outs = fn.function_type.inputs.data, fn.function_type.outputs.data
    assert all(outs[r] == ins[a] for r, a in ties)
    assert result.solution.objective == pytest.approx(plan_objective(module).total_s, rel=1e-12)


def test_return_conversion_is_priced_and_boxed() -> None:
    """A tied result whose argument is in another SBP than the value: `return_conversions` names it and
    `plan_objective` charges it; `return_in_argument_layouts` converts it with an `sbp.to_global` (the
    module verifies, the charge is the same) and materialize-boxing makes that a boxing."""
    program = step(mlp(""), "optimizer=sgd lr=0.5")
    module = program.module.clone()
    infer_module_global(module, None)
    module.verify()
    fn = _function(module)
    before = plan_objective(module).comm_s
    assert return_conversions(fn) == []  # type: ignore[arg-type]
    arg = fn.body.block.args[1]  # type: ignore[attr-defined]
    moved = BROADCAST if arg.type.nd_sbp != nd_sbp(BROADCAST, BROADCAST) else SplitAttr(0)
    Rewriter.replace_value_with_new_type(arg, arg.type.with_sbp(nd_sbp(moved, moved)))
    fn.update_function_type()  # type: ignore[attr-defined]
    (_, target), = return_conversions(fn)  # type: ignore[arg-type]
    assert target == nd_sbp(moved, moved)
    charged = plan_objective(module).comm_s
    assert charged > before
    return_in_argument_layouts(fn)  # type: ignore[arg-type]
    module.verify()
    want = fn.body.block.args[1].type  # type: ignore[attr-defined]
    ret = fn.body.block.last_op  # type: ignore[attr-defined]
    assert isinstance(ret.operands[1].owner, ToGlobalOp) and ret.operands[1].type == want
    assert return_conversions(fn) == [] and plan_objective(module).comm_s == pytest.approx(charged)  # type: ignore[arg-type]
    materialize_function(fn)  # type: ignore[arg-type]
    assert isinstance(ret.operands[1].owner, BoxingOp) and ret.operands[1].type == want


def test_step_memory_counts_each_parameter_and_moment_once() -> None:
    """The donated arguments (parameters and moments) live to their last use, their updates from their
    definition: with every weight and moment replicated the peak is what the live ranges give — one copy
    of each, the gradients of the layer being updated and the activations kept for backward — not
    two copies of the parameters and state."""
    program = step(mlp("[B, B]"), "optimizer=adamw lr=0.01")
    module = sbpc.compile(program, "infer-sbp").module
    fn = _function(module)
    donated = donated_arguments(fn)  # type: ignore[arg-type]
    spec = train_step.spec_of(fn)  # type: ignore[arg-type]
    assert spec is not None and donated == set(spec.params) | set(spec.state)
    block = fn.body.block  # type: ignore[attr-defined]
    ops = list(block.ops)
    position = {op: t for t, op in enumerate(ops)}

    def size(value: object) -> int:
        ty = value.type  # type: ignore[attr-defined]
        return local_bytes(ty, ty.nd_sbp, (2, 2)) if isinstance(ty, GlobalTensorType) else 0

    def last(value: object) -> int:
        return max((position[u.operation] for u in value.uses), default=0)  # type: ignore[attr-defined]

    live = [sum(size(a) for i, a in enumerate(block.args) if i not in donated)] * len(ops)
    for i in donated:
        for t in range(last(block.args[i]) + 1):
            live[t] += size(block.args[i])
    for t, op in enumerate(ops):
        for r in op.results:
            for k in range(t, max(last(r), t) + 1):
                live[k] += size(r)
    assert plan_objective(module).memory_bytes == max(live)
    undonated = sum(size(a) for a in block.args) + max(
        sum(size(r) for op in ops[:t + 1] for r in op.results if last(r) >= t) for t in range(len(ops)))
    params_and_state = sum(size(block.args[i]) for i in donated)
    assert plan_objective(module).memory_bytes <= undonated - params_and_state // 3
    # The activations kept for backward live into it: relu's input until relu_grad reads it, after the seed.
    seed = next(t for t, op in enumerate(ops) if isinstance(op, OnesLikeOp))
    (relu,) = [op for op in ops if isinstance(op, ReluOp)]
    kept = relu.operands[0]
    assert isinstance(ops[last(kept)], ReluGradOp) and last(kept) > seed
    _, ranges = live_ranges(fn)  # type: ignore[arg-type]
    assert (kept, position[kept.owner], last(kept)) in ranges


# -- the GPT stack's AdamW step under memory ------------------------------------------------------


def gpt_step(layers: int, dims: GptDims = GptDims(), weights: str = "free") -> sbpc.Program:
    """The GPT stack (free weights by default, 2x4) with its output summed into a 0-d loss,
    differentiated into an AdamW step."""
    text = gpt_stack(layers, dims, weights)
    found = re.search(r"  %res = sbp.to_global (\S+) : (.*) -> (.*)\n", text)
    assert found is not None
    cur, cur_ty, x_ty = found.groups()
    scalar = "!sbp.tensor<f32, @mesh>"
    text = text.replace(found.group(0), f"  %res = sbp.reduce_sum {cur} {{axes = array<i64: 0, 1, 2>}} : "
                                        f"{cur_ty} -> {scalar}\n")
    text = text.replace(f"func.return %res : {x_ty}", f"func.return %res : {scalar}")
    text = text.replace(f") -> {x_ty} {{", f") -> {scalar} {{")
    return step(text, "optimizer=adamw lr=0.001")


def _state_split_over_data(fn: object) -> tuple[int, int]:
    """(local bytes of the optimizer state, how many moments are split over mesh axis 0)."""
    spec = train_step.spec_of(fn)  # type: ignore[arg-type]
    assert spec is not None
    ins = fn.function_type.inputs.data  # type: ignore[attr-defined]
    total = sum(local_bytes(ins[i], ins[i].nd_sbp, (2, 4)) for i in spec.state)
    split = sum(1 for i in spec.state if isinstance(next(iter(ins[i].nd_sbp)), SplitAttr))
    return total, split


def zero_budget_acceptance(program: sbpc.Program, limit: str = "", data_axis: bool = True) -> None:
    """Without `mem` no moment is split over the data axis (plain DP + TP); under a budget half-way
    between that plan's memory and the same plan with its moments halved over the data axis (ZeRO-1's),
    the plan fits and shards the optimizer state (over the data axis, unless not `data_axis`: where
    the plan is not proved optimal, which axis is the search's). `limit`: e.g. ` time-limit=300`,
    seconds per HiGHS run (the plan it returns still fits: it starts from one that does)."""
    free = sbpc.compile(program, f"infer-sbp{{rule=global{limit}}}").module
    state, split = _state_split_over_data(_function(free))
    assert split == 0
    plain = plan_objective(free).memory_bytes
    zero1 = plain - state // 2
    budget = (plain + zero1) // 2
    planned = sbpc.compile(program, f"infer-sbp{{rule=global mem={budget}{limit}}}").module
    planned.verify()
    assert plan_objective(planned).memory_bytes <= budget
    sharded, split = _state_split_over_data(_function(planned))
    assert sharded < state and (split > 0 or not data_axis)


MLP_BLOCK = """
sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]
func.func @main(%x: {X}, %g: {G}, %b: {G}, %w1: {W1}, %w2: {W2}) -> !sbp.tensor<f32, @mesh> {{
  %n = sbp.layer_norm %x, %g, %b : {X}, {G}, {G} -> {A}
  %h = sbp.matmul %n, %w1 : {A}, {W1} -> {F}
  %a = sbp.gelu %h : {F} -> {F}
  %y = sbp.matmul %a, %w2 : {F}, {W2} -> {A}
  %r = sbp.add %x, %y : {X}, {A} -> {A}
  %l = sbp.reduce_sum %r {{axes = array<i64: 0, 1, 2>}} : {A} -> !sbp.tensor<f32, @mesh>
  func.return %l : !sbp.tensor<f32, @mesh>
}}
""".format(X="!sbp.tensor<8x32x256xf32, @mesh, [S(0), B]>", A="!sbp.tensor<8x32x256xf32, @mesh>",
           F="!sbp.tensor<8x32x1024xf32, @mesh>", G="!sbp.tensor<256xf32, @mesh>",
           W1="!sbp.tensor<256x1024xf32, @mesh>", W2="!sbp.tensor<1024x256xf32, @mesh>")
"""One GPT block's MLP half (the GPT stack's sizes, 2x4, free weights): LayerNorm, GeLU MLP, residual."""


@pytest.mark.exhaustive  # ~10 s: the budgeted search alone takes 7-10 s
def test_gpt_mlp_block_shards_optimizer_state_under_memory() -> None:
    zero_budget_acceptance(step(MLP_BLOCK, "optimizer=adamw lr=0.001"))


@pytest.mark.exhaustive  # minutes: HiGHS on a 4-layer step, each run limited to 300 s
def test_gpt_stack_4_layers_shards_optimizer_state_under_memory() -> None:
    """Not proved within the limits: since session 15 the plan (358.0 µs, 23.7 MB) shards the
    moments over the model axis (8.3 of 12.6 MB a device), 4.8 % cheaper than the data-axis split
    found before (376.1 µs)."""
    zero_budget_acceptance(gpt_step(4), " time-limit=300", data_axis=False)


@pytest.mark.exhaustive  # ~1 min
def test_gpt_stack_1_layer_shards_optimizer_state_under_memory() -> None:
    zero_budget_acceptance(gpt_step(1))


def _with_micro_batches(module: object, k: int) -> object:
    """`module` (its function a step) with `micro_batches = k` in its `sbp.train_step`."""
    fn = _function(module)
    marker = fn.attributes[TRAIN_STEP]  # type: ignore[attr-defined]
    fn.attributes[TRAIN_STEP] = DictionaryAttr({**marker.data, "micro_batches": IntegerAttr(k, i64)})  # type: ignore[attr-defined]
    return module


def test_micro_batches_divide_the_gradient_reduction_per_step() -> None:
    """Data parallel (replicated weights, batch-split x): every collective of the step is a gradient's
    reduction before the update, so with K micro-batches the modelled communication per micro-batch is
    1/K of one step's, the updates' compute 1/K and the rest unchanged; rule=global's objective under K
    is the plan's."""
    program = step(mlp("[B, B]"), "optimizer=adamw lr=0.01 micro-batches=4")
    fn = _function(program.module)
    assert micro_batches(fn) == 4  # type: ignore[arg-type]
    inferred = sbpc.compile(program, "infer-sbp").module
    four = plan_objective(inferred)
    one = plan_objective(_with_micro_batches(inferred.clone(), 1))  # type: ignore[attr-defined]
    assert one.comm_s > 0 and four.comm_s == pytest.approx(one.comm_s / 4, rel=1e-12)
    updates = sum(op_compute_s(op, op.get_trait(FlopModel), [v.type for v in op.operands],  # type: ignore[arg-type]
                               [r.type for r in op.results], (list(op.attributes["sbp.signature"].inputs.data),
                                                              list(op.attributes["sbp.signature"].outputs.data)),
                               (2, 2), device_figures("cpu"))
                  for op in inferred.walk() if isinstance(op, STEP_OPS))
    assert updates > 0 and four.compute_s == pytest.approx(one.compute_s - 0.75 * updates, rel=1e-9)
    free = step(mlp(""), "optimizer=adamw lr=0.01 micro-batches=8").module.clone()
    (result,) = infer_module_global(free, None)
    assert result.solution.objective == pytest.approx(plan_objective(free).total_s, rel=1e-12)
