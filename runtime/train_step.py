"""Training steps at run time (SPEC §8): the eager torch step `--check` compares a step program with, the
check inputs of its optimizer state, and running N steps in a row with parameters and state carried.

A step program is what the `autodiff` pass makes: its function carries `sbp.train_step` (the
optimizer, its hyper-parameters, the parameters' argument indices and names, the state arguments'),
takes the inputs, the parameters and the state, and returns the loss, the updated parameters and the
updated state. The eager reference runs the forward ops the loss depends on with torch autograd (each
op's torch semantics of `runtime/op_impls.py`, relu as `torch.relu` so that its gradient at 0 is
torch's), `loss.backward()`, then one `torch.optim.SGD` / `torch.optim.AdamW` step with the same
hyper-parameters and state (`exp_avg`, `exp_avg_sq`, the step count before this one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation, SSAValue

from sbpc.dialects import sbp_ops as ops
from sbpc.dialects import sbp_ops_grad as g
from sbpc.passes.autodiff import TRAIN_STEP
from sbpc.runtime.bounded import Bounded, unit
from sbpc.runtime.op_impls import impl_of, run_torch
from sbpc.runtime.simulator import SimulationError, find_function


@dataclass(frozen=True)
class StepSpec:
    """What `sbp.train_step` says of a step function."""

    optimizer: str
    params: tuple[int, ...]
    names: tuple[str, ...]
    state: tuple[int, ...]
    hyper: dict[str, float]

    @property
    def step(self) -> int:
        return int(self.hyper.get("step", 1))

    def result_names(self) -> list[str]:
        """`loss`, then each parameter's name, then `NAME.exp_avg`, `NAME.exp_avg_sq` (adamw)."""
        found = ["loss", *self.names]
        if self.optimizer == "adamw":
            for name in self.names:
                found += [f"{name}.exp_avg", f"{name}.exp_avg_sq"]
        return found


def step_spec(module: ModuleOp, entry: str) -> StepSpec | None:
    """The training step `@entry` of `module` describes, None if it is not one (or there is no `@entry`)."""
    try:
        fn = find_function(module, entry)
    except SimulationError:
        return None
    return spec_of(fn)


def spec_of(fn: func.FuncOp) -> StepSpec | None:
    """The training step `fn` is, None if it is not one."""
    marker = fn.attributes.get(TRAIN_STEP)
    if not isinstance(marker, DictionaryAttr):
        return None
    data = marker.data
    hyper: dict[str, float] = {}
    for key, attr in data.items():
        if isinstance(attr, FloatAttr):
            hyper[key] = float(attr.value.data)
        elif isinstance(attr, IntegerAttr):
            hyper[key] = int(attr.value.data)

    def ints(key: str) -> tuple[int, ...]:
        attr = data.get(key)
        return tuple(int(v) for v in attr.get_values()) if isinstance(attr, DenseArrayBase) else ()

    names = data.get("names")
    optimizer = data.get("optimizer")
    return StepSpec(optimizer.data if isinstance(optimizer, StringAttr) else "sgd", ints("params"),
                    tuple(n.data for n in names.data) if isinstance(names, ArrayAttr) else (), ints("state"), hyper)


def state_inputs(spec: StepSpec, values: list[np.ndarray]) -> list[np.ndarray]:
    """Check inputs of a step's AdamW state as a real run has it: zeros at step 1 (torch's fresh state),
    later a second moment of at least the first's square (`v = m² + |r|`), so that `m/√v` stays ≤ 1
    as it does in training, rather than a random state no run reaches."""
    out = list(values)
    for k in range(0, len(spec.state) - 1, 2):
        m_at, v_at = spec.state[k], spec.state[k + 1]
        m, v = out[m_at], out[v_at]
        if spec.step == 1:
            out[m_at], out[v_at] = np.zeros_like(m), np.zeros_like(v)
        else:
            out[v_at] = (m.astype(np.float64) ** 2 + np.abs(v.astype(np.float64))).astype(v.dtype)
    return out


# ---------------------------------------------------------------------------
# The eager torch step
# ---------------------------------------------------------------------------


def _loss_slice(fn: func.FuncOp) -> tuple[list[Operation], SSAValue]:
    """The ops the loss (result 0) depends on, in program order, and the loss value."""
    ret = fn.body.blocks[0].last_op
    assert isinstance(ret, func.ReturnOp)
    loss = ret.operands[0]
    needed: set[SSAValue] = {loss}
    kept: list[Operation] = []
    for op in reversed(list(fn.body.blocks[0].ops)):
        if any(r in needed for r in op.results):
            kept.append(op)
            needed.update(op.operands)
    return kept[::-1], loss


def eager_step(module: ModuleOp, entry: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """One step of `@entry` in eager torch (module docstring): its results, in the step's order."""
    import torch

    from sbpc.runtime import ops_torch as T

    fn = find_function(module, entry)
    spec = step_spec(module, entry)
    assert spec is not None
    args = fn.body.blocks[0].args
    tensors = [T.to_torch(np.array(x)) for x in inputs]
    params = [tensors[i].clone().requires_grad_(True) for i in spec.params]
    env: dict[SSAValue, torch.Tensor] = {a: t for a, t in zip(args, tensors, strict=True)}
    env.update({args[i]: p for i, p in zip(spec.params, params, strict=True)})
    ops_needed, loss_value = _loss_slice(fn)
    for op in ops_needed:
        operands = [env[v] for v in op.operands]
        if isinstance(op, ops.ConversionOp):
            env[op.results[0]] = operands[0]
        elif isinstance(op, ops.ReluOp):
            env[op.results[0]] = torch.relu(operands[0])
        elif impl_of(op) is not None:
            env[op.results[0]] = run_torch(op, operands)
        else:
            raise ValueError(f"{op.name} has no torch semantics for the eager step")
    loss = env[loss_value]
    loss.sum().backward()
    hyper = spec.hyper
    if spec.optimizer == "adamw":
        optimizer: torch.optim.Optimizer = torch.optim.AdamW(
            params, lr=hyper["lr"], betas=(hyper["beta1"], hyper["beta2"]), eps=hyper["eps"],
            weight_decay=hyper.get("weight_decay", 0.0), foreach=False)
        for k, p in enumerate(params):
            m, v = tensors[spec.state[2 * k]], tensors[spec.state[2 * k + 1]]
            optimizer.state[p] = {"step": torch.tensor(float(spec.step - 1)), "exp_avg": m.clone(),
                                  "exp_avg_sq": v.clone()}
    else:
        optimizer = torch.optim.SGD(params, lr=hyper["lr"], weight_decay=hyper.get("weight_decay", 0.0),
                                    foreach=False)
    with torch.no_grad():
        optimizer.step()
    found = [T.to_numpy(loss.detach()), *[T.to_numpy(p.detach()) for p in params]]
    if spec.optimizer == "adamw":
        for k, p in enumerate(params):
            state = optimizer.state[p]
            found += [T.to_numpy(state["exp_avg"]), T.to_numpy(state["exp_avg_sq"])]
    return found


TORCH_ULPS = 16.0
"""Roundings of its own scale an eager torch step may add to the bound every correct plan keeps."""


def compare_with_torch(outputs: Sequence[np.ndarray | None], expected: Sequence[Bounded], torch_step: Sequence[
        np.ndarray], names: Sequence[str]) -> tuple[list[str], list[str]]:
    """(tolerance lines, mismatch lines): each result against eager torch's, within twice the propagated
    bound (both are correct runs of the step) plus TORCH_ULPS roundings of the result's scale."""
    lines: list[str] = []
    problems: list[str] = []
    for i, (got, want, eager, name) in enumerate(zip(outputs, expected, torch_step, names, strict=True)):
        if got is None:
            continue
        got64, eager64 = got.astype(np.float64), eager.astype(np.float64).reshape(got.shape)
        scale = np.abs(eager64) + float(np.sqrt(np.mean(eager64 * eager64))) if eager64.size else 0.0
        with np.errstate(invalid="ignore"):
            tol = 2.0 * want.err + TORCH_ULPS * unit(want.dtype) * scale
            tol = np.where(np.isnan(tol), np.inf, tol)
            diff = np.abs(got64 - eager64)
            bad = ~((diff <= tol) | (got64 == eager64) | (np.isnan(got64) & np.isnan(eager64)))
        worst = float(np.nanmax(np.where(got64 == eager64, 0.0, diff), initial=0.0))
        lines.append(f"result {i} ({name}) vs eager torch: max |diff| {worst:.3g}")
        if bool(bad.any()):
            at = tuple(int(k) for k in np.argwhere(bad)[0])
            problems.append(f"result {i} ({name}) differs from eager torch's step at {list(at)}: "
                            f"{got64[at]!r} vs {eager64[at]!r} (tolerance {float(tol[at]):.3g})")
    return lines, problems


# ---------------------------------------------------------------------------
# Several steps
# ---------------------------------------------------------------------------


def set_step_count(module: ModuleOp, entry: str, step: int) -> None:
    """Make the AdamW updates of `@entry` (and its `sbp.train_step`) use the 1-based step count `step`."""
    fn = find_function(module, entry)
    for op in fn.walk():
        if isinstance(op, g.AdamwUpdateOp):
            op.properties["step"] = IntegerAttr(step, 64)
    marker = fn.attributes.get(TRAIN_STEP)
    if isinstance(marker, DictionaryAttr) and "step" in marker.data:
        fn.attributes[TRAIN_STEP] = DictionaryAttr({**marker.data, "step": IntegerAttr(step, 64)})


def carried(spec: StepSpec, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The next step's inputs: this step's, with the updated parameters and state in their places."""
    following = list(inputs)
    for k, index in enumerate(spec.params):
        following[index] = outputs[1 + k]
    for k, index in enumerate(spec.state):
        following[index] = outputs[1 + len(spec.params) + k]
    return following
