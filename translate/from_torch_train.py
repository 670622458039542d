"""`sbpc.from_torch(..., loss=fn, targets=(t,), optimizer={...})`: a captured model as one training step
(SPEC §8).

    imported = import_torch(model, (x,), mesh, loss=F.mse_loss, targets=(t,))   # loss(model(x), t), captured
    train_step(imported, {"kind": "adamw", "lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0})

The captured program returns the loss; `train_step` runs the `autodiff` pass on it with the optimizer's
hyper-parameters and, as the parameters, the arguments of the module's `named_parameters()` that
require a gradient (the example args, the targets, buffers and lifted constants are inputs). The step's
`sbp.train_step` names the parameters as `named_parameters()` does (`h.0.attn.q.weight`), so that
`sbpc.run(prog, steps=N).parameters` is keyed as torch keys them, and the optimizer state's default
values are torch's fresh state (zeros: `exp_avg`, `exp_avg_sq` before the first step).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, ArrayAttr, DictionaryAttr, StringAttr

from sbpc.dialects.context import sbp_context
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.autodiff import TRAIN_STEP, AutodiffPass
from sbpc.translate.from_torch import Imported
from sbpc.translate.from_torch_builder import TorchImportError

__all__ = ["OPTIMIZERS", "autodiff_pass", "train_step"]

OPTIMIZERS: dict[str, tuple[str, ...]] = {
    "sgd": ("kind", "lr", "weight_decay", "momentum"),
    "adamw": ("kind", "lr", "betas", "eps", "weight_decay"),
}
"""The optimizers a step can use (torch.optim.SGD without momentum, torch.optim.AdamW) and their keys."""


def _number(options: Mapping[str, Any], key: str, default: float) -> float:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise TorchImportError(f"error: optimizer {key!r} must be a non-negative number, got {value!r}")
    return float(value)


def autodiff_pass(optimizer: Mapping[str, Any], params: tuple[int, ...]) -> AutodiffPass:
    """The `autodiff` pass of `optimizer` (a dict as torch.optim's keyword arguments, with `kind`: `sgd` or
    `adamw`; torch's defaults for the keys left out) over the argument indices `params`."""
    if not isinstance(optimizer, Mapping):
        raise TorchImportError(f"error: optimizer must be a dict such as {{'kind': 'adamw', 'lr': 1e-3}}, "
                               f"got {type(optimizer).__name__}")
    kind = optimizer.get("kind")
    if kind not in OPTIMIZERS:
        raise TorchImportError(f"error: optimizer kind {kind!r} is not one of {', '.join(OPTIMIZERS)}")
    unknown = sorted(set(optimizer) - set(OPTIMIZERS[kind]))
    if unknown:
        raise TorchImportError(f"error: optimizer {kind} has no option {unknown[0]!r} "
                               f"(allowed: {', '.join(OPTIMIZERS[kind])})")
    lr = _number(optimizer, "lr", 1e-3)  # torch.optim's default for both
    if kind == "sgd":
        if _number(optimizer, "momentum", 0.0):
            raise TorchImportError("error: optimizer sgd: momentum is not supported (SGD steps have no state)")
        return AutodiffPass(loss=0, optimizer="sgd", lr=lr, weight_decay=_number(optimizer, "weight_decay", 0.0),
                            params=params)
    betas = optimizer.get("betas", (0.9, 0.999))
    if (not isinstance(betas, tuple | list) or len(betas) != 2
            or not all(isinstance(b, int | float) and not isinstance(b, bool) and 0 <= b < 1 for b in betas)):
        raise TorchImportError(f"error: optimizer adamw 'betas' must be two numbers in [0, 1), got {betas!r}")
    return AutodiffPass(loss=0, optimizer="adamw", lr=lr, beta1=float(betas[0]), beta2=float(betas[1]),
                        eps=_number(optimizer, "eps", 1e-8), weight_decay=_number(optimizer, "weight_decay", 0.01),
                        params=params)


def train_step(imported: Imported, optimizer: Mapping[str, Any], trainable: Mapping[str, bool]) -> Imported:
    """`imported` (a captured loss) made one training step under `optimizer`, in place; `trainable`:
    parameter name -> whether it requires a gradient. Returns `imported` with the state arguments'
    names and default values (zeros) appended."""
    fn = next(op for op in imported.module.ops if isinstance(op, func.FuncOp))
    first = imported.example_count + imported.target_count
    names = imported.parameter_names[:imported.parameter_count]
    indices = tuple(first + k for k, name in enumerate(names)
                    if trainable.get(name, False) and _is_float(fn.function_type.inputs.data[first + k]))
    if not indices:
        raise TorchImportError("error: the model has no parameter that requires a gradient: nothing to train")
    loss_type = fn.function_type.outputs.data[0] if fn.function_type.outputs.data else None
    if len(fn.function_type.outputs.data) != 1 or not _is_float(loss_type) or loss_type.element_count() != 1:
        got = ", ".join(t.describe() if isinstance(t, GlobalTensorType) else str(t)
                        for t in fn.function_type.outputs.data)
        raise TorchImportError(f"error: loss(model(*args), *targets) must return one float tensor of one "
                               f"element, got ({got})")
    before = len(fn.body.blocks[0].args)
    autodiff_pass(optimizer, indices).apply(sbp_context(), imported.module)
    marker = fn.attributes[TRAIN_STEP]
    assert isinstance(marker, DictionaryAttr)
    torch_names = ArrayAttr([StringAttr(names[i - first]) for i in indices])
    fn.attributes[TRAIN_STEP] = DictionaryAttr({**marker.data, "names": torch_names})
    state = fn.body.blocks[0].args[before:]  # adamw: m, v of each parameter, in the parameters' order
    for k, arg in enumerate(state):
        imported.names.append(arg.name_hint or f"arg{arg.index}")
        imported.defaults.append(np.zeros_like(imported.defaults[indices[k // 2]]))
    return imported


def _is_float(ty: Any) -> bool:
    return isinstance(ty, GlobalTensorType) and isinstance(ty.element_type, AnyFloat)
