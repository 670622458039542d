"""sbpc's PyTorch entry points (SPEC §7): `from_torch` (an `nn.Module` as an sbp `Program`) and
`parallelize` (a callable running the plan of a module on torch.distributed ranks).

    prog = sbpc.from_torch(model, (x,), mesh=[[0, 1, 2, 3], [4, 5, 6, 7]], device="cpu", sbp={"x": "[S(0), B]"})
    res = sbpc.run(prog, backend="torch", pipeline="infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize")
    res.outputs                  # == model(x): the inputs default to the example args and the module's own values
    step = sbpc.parallelize(model, (x,), mesh=[[0, 1], [2, 3]], rule="global")
    step.plan()                  # {'x': '[S(0), B]', 'h_0_fc_weight': '[B, S(0)]', ...}
    y = step(x)                  # a torch tensor, computed on 4 gloo ranks (forked; under torchrun, this rank)

torch is an optional extra: it is imported when these are called.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.exceptions import DiagnosticException

from sbpc.api import Error, Program, _pipeline, _user_errors, compile, parse
from sbpc.dialects.context import sbp_context
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.runtime import engine
from sbpc.runtime.engine import Backend, LocalKernels, RunResult
from sbpc.translate.from_torch import Imported, TorchImportError, import_torch
from sbpc.translate.from_torch_builder import to_numpy
from sbpc.translate.from_torch_train import autodiff_pass, train_step

__all__ = ["Parallelized", "from_torch", "parallelize", "plan_pipeline"]

RULES = ("oneflow", "cost", "global")


def _imported(model: Any, args: Sequence[Any], mesh: Any, device: str, sbp: Mapping[str, str] | None,
              params: Mapping[str, str] | None, training: Training | None = None) -> tuple[Imported, Program]:
    try:
        if training is None:
            imported = import_torch(model, args, mesh, device, sbp, params)
        else:
            if training.optimizer is None:
                raise TorchImportError("error: a training step (loss=) needs optimizer= (e.g. {'kind': 'adamw', "
                                       "'lr': 1e-3})")
            autodiff_pass(training.optimizer, ())  # bad options fail before the capture's seconds
            imported = import_torch(model, args, mesh, device, sbp, params, training.loss, training.targets)
            trainable = {name: bool(p.requires_grad) for name, p in model.named_parameters()}
            train_step(imported, training.optimizer, trainable)
    except TorchImportError as error:
        raise Error(str(error)) from None
    except DiagnosticException as error:  # the autodiff pass on the captured loss (an op without a gradient rule)
        raise Error(f"<from_torch {type(model).__name__}>: {str(error).strip()}") from None
    except ImportError as error:
        raise Error(f"error: from_torch needs torch (pip install -e '.[dist]'): {error}") from None
    name = f"<from_torch {type(model).__name__}>"
    # Printed and parsed back: the program's errors then point into the text users see (`print(prog)`).
    text = io.StringIO()
    MLIRTarget().emit(sbp_context(), imported.module, text)
    program = parse(text.getvalue(), name)
    program.defaults = imported.defaults
    return imported, program


@dataclass(frozen=True)
class Training:
    """What makes `from_torch`'s program a training step: the loss, its targets, the optimizer."""

    loss: Any
    targets: Sequence[Any]
    optimizer: Mapping[str, Any] | None


def from_torch(model: Any, args: Sequence[Any], mesh: Any, device: str = "cpu", sbp: Mapping[str, str] | None = None,
               params: Mapping[str, str] | None = None, *, loss: Any = None, targets: Sequence[Any] = (),
               optimizer: Mapping[str, Any] | None = None) -> Program:
    """`model(*args)` captured with torch.export as an sbp program on the placement `mesh` (a nested list
    of ranks: its shape is the hierarchy) of `device`. Arguments: the example args, then every parameter
    and buffer (`named_parameters()`, `named_buffers()` order, named after them), then the tensors the
    forward builds from no input (masks, position ids); SBP free unless given in `sbp` (the forward's
    parameter names) or `params` (parameter names), e.g. `{"x": "[S(0), B]"}`. The program's default
    inputs (`sbpc.run` with no `inputs`) are their values. An unsupported ATen op is an `Error` naming
    the op and the model's source line.

    With `loss` (SPEC §8) the program is one training step: the loss `loss(model(*args), *targets)`
    (the targets are arguments `target0`, `target1`, … after the example args, keys for `sbp`),
    differentiated by the `autodiff` pass with respect to every parameter that requires a gradient, and
    one `optimizer` step (`{"kind": "adamw", "lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
    "weight_decay": 0.0}` as torch.optim.AdamW, or `{"kind": "sgd", "lr": …, "weight_decay": …}`). It
    returns the loss, the updated parameters and (adamw) each one's `exp_avg`, `exp_avg_sq`; the state
    arguments follow the others, zeros by default (torch's fresh state). `sbpc.run(prog, steps=N)` then
    gives `losses` and `parameters` keyed by `named_parameters()` names."""
    training = None if loss is None else Training(loss, tuple(targets), optimizer)
    if loss is None and (targets or optimizer is not None):
        raise Error("error: targets= and optimizer= make a training step, which needs loss= too")
    return _imported(model, args, mesh, device, sbp, params, training)[1]


def plan_pipeline(rule: str = "global", mem: int | str | None = None) -> str:
    """The compile pipeline of a plan under `rule` (and rule=global's per-device budget `mem`)."""
    if rule not in RULES:
        raise Error(f"error: unknown rule '{rule}' (allowed: {', '.join(RULES)})")
    if mem is not None and rule != "global":
        raise Error(f"error: mem is an option of rule=global only (got rule={rule})")
    options = f"rule={rule}" + (f" mem={mem}" if mem is not None else "")
    return f"infer-sbp{{{options}}},materialize-boxing,lower-boxing,spmdize"


@dataclass
class Parallelized:
    """A module's plan, callable: each call distributes the inputs and the module's current parameter
    and buffer values by their chosen SBPs, runs the per-rank program on torch.distributed and returns
    the outputs as torch tensors (one tensor, or a tuple for several)."""

    model: Any
    program: Program
    imported: Imported
    pipeline: str
    dist_backend: str = "gloo"
    timeout: float = 60.0
    last: RunResult | None = None
    """The latest call's run (collectives, bytes sent, the compiled per-rank program)."""

    def plan(self) -> dict[str, str]:
        """Argument name -> the SBP the plan gives it (`'[S(0), B]'`)."""
        inferred = compile(self.program, self.pipeline.split(",")[0])
        fn = engine.entry_function(inferred.module, "main", inferred._located())
        out = {}
        for name, ty in zip(self.imported.names, fn.function_type.inputs.data, strict=True):
            assert isinstance(ty, GlobalTensorType)
            out[name] = ty.nd_sbp.short_str() if ty.nd_sbp is not None else "?"
        return out

    def inputs(self, args: Sequence[Any]) -> list[np.ndarray]:
        """The global inputs of a call: `args`, the module's current parameters and buffers, the constants."""
        owned = dict(self.model.named_parameters()) | dict(self.model.named_buffers())
        state = [to_numpy(owned[name]) for name in self.imported.parameter_names]
        defaults = self.program.defaults or []
        constants = defaults[self.imported.example_count + len(state):]
        return [to_numpy(a) for a in args] + state + list(constants)

    def __call__(self, *args: Any) -> Any:
        """The outputs on this process (None on a torchrun rank other than 0, which gathers them)."""
        import torch

        if len(args) != self.imported.example_count:
            raise Error(f"error: the plan takes {self.imported.example_count} inputs, got {len(args)}")
        values = self.inputs(args)
        located = self.program._located()
        with _user_errors():
            fn = engine.entry_function(self.program.module, "main", located)
            engine.check_inputs(values, engine.argument_types(self.program.module, fn, located), "main")
            result = engine.run(self.program.ctx, self.program.module, located, values,
                                _pipeline(self.pipeline, self.program), np.random.default_rng(0), "main",
                                LocalKernels(), Backend("torch", self.dist_backend, self.timeout, join_torchrun=True))
        if result is None:
            return None
        self.last = result
        if result.mismatches:
            raise Error("error: " + "; ".join(result.mismatches))
        outs = tuple(torch.from_numpy(np.asarray(o)) for o in result.outputs)
        return outs[0] if len(outs) == 1 else outs


def parallelize(model: Any, args: Sequence[Any], mesh: Any, rule: str = "global", mem: int | str | None = None, *,
                device: str = "cpu", sbp: Mapping[str, str] | None = None, params: Mapping[str, str] | None = None,
                dist_backend: str = "gloo", timeout: float = 60.0) -> Parallelized:
    """`model` planned on `mesh` under `rule` (rule=global: every free weight's SBP chosen, within `mem`
    bytes per device when given): a callable running the plan on torch.distributed ranks (forked gloo
    processes, or under torchrun this rank) with the module's own parameter values."""
    pipeline = plan_pipeline(rule, mem)
    imported, program = _imported(model, args, mesh, device, sbp, params)
    return Parallelized(model, program, imported, pipeline, dist_backend, timeout)

