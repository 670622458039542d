"""`sbpc.from_torch`'s translation (SPEC §7): a `torch.nn.Module` captured with `torch.export` as an sbp program.

    imported = import_torch(model, (x,), mesh=[[0, 1, 2, 3], [4, 5, 6, 7]], device="cpu", sbp={"x": "[S(0), B]"})
    imported.module      # builtin.module { sbp.placement @mesh ...; func.func @main(...) }
    imported.defaults    # the example args, parameter, buffer and constant values, one per argument

Capture: `torch.export.export` (training IR, which keeps linear, matmul, layer_norm, rms_norm, softmax,
gelu, silu, embedding, cross-entropy, scaled dot-product attention whole). A graph holding an op with no
mapping is decomposed with `run_decompositions` (torch's default table minus the ops mapped whole,
`from_torch_ops.kept_ops`), so that everything else arrives as core ATen. Each ATen node becomes sbp ops
(`handlers`); nodes that depend on no input, parameter or buffer (arange, triu masks, lifted constants)
are evaluated here with torch and become arguments with known values. Reshapes are emitted lazily (a
chain of views is one `sbp.reshape`, and a view that undoes one is none), so that batched matmuls keep
their 4-D form.

Function arguments: the example args (the forward's parameter names), every parameter and buffer in
`named_parameters()` / `named_buffers()` order (tied parameters once), then the constants; their SBP
is free unless given in `sbp` / `params`. An ATen op with no mapping is a `TorchImportError` naming the
op and the Python source line it came from. torch is imported only inside the capture (an optional extra).
"""

from __future__ import annotations

import inspect
import operator
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import ParseError

from sbpc.dialects.placement import PlacementOp
from sbpc.dialects.sbp import NdSbpAttr, parse_sbp_text
from sbpc.translate import from_torch_nn, from_torch_ops
from sbpc.translate.from_torch_builder import (
    PLACEMENT,
    Builder,
    Const,
    Handler,
    TorchImportError,
    Val,
    element_of,
    to_numpy,
)

__all__ = ["Imported", "TorchImportError", "import_torch", "mesh_shape"]

# ---------------------------------------------------------------------------
# Capture and translation
# ---------------------------------------------------------------------------


@dataclass
class Imported:
    """The translated program and, per function argument, its name and default value."""

    module: ModuleOp
    names: list[str]
    defaults: list[np.ndarray]
    example_count: int
    """How many leading arguments are the example args (the rest: parameters, buffers, constants)."""
    parameter_names: list[str]
    """`named_parameters()` / `named_buffers()` names of the arguments after the example args (and the
    targets of a training step)."""
    parameter_count: int = 0
    """How many of `parameter_names` are parameters (the rest are buffers)."""
    target_count: int = 0
    """A training step's loss: how many arguments after the example args are its targets (`target0`, ...)."""


def mesh_shape(mesh: Any) -> tuple[list[int], list[int]]:
    """The hierarchy and the flat ranks of a nested rank list (`[[0, 1], [2, 3]]` -> [2, 2], [0, 1, 2, 3])."""
    if isinstance(mesh, int) or not isinstance(mesh, Sequence) or not mesh:
        raise TorchImportError(f"error: mesh must be a non-empty nested list of ranks, got {mesh!r}")
    if all(isinstance(r, int) and not isinstance(r, bool) for r in mesh):
        return [len(mesh)], list(mesh)
    subs = [mesh_shape(m) for m in mesh]
    if any(s[0] != subs[0][0] for s in subs):
        raise TorchImportError(f"error: mesh {mesh!r} is not rectangular")
    return [len(mesh), *subs[0][0]], [r for s in subs for r in s[1]]


def _forward_names(model: Any, count: int) -> list[str]:
    """The names of the forward's first `count` positional parameters (`x`, `idx`)."""
    try:
        params = list(inspect.signature(getattr(model, "wrapped", model.forward)).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:count]
    return names + [f"arg{i}" for i in range(len(names), count)]


def _sbp_of(text: str, key: str, mesh_rank: int) -> NdSbpAttr:
    try:
        sbp = parse_sbp_text(text)
    except (ParseError, Exception) as error:  # xDSL's parser raises ParseError (or ValueError on bad ints)
        raise TorchImportError(f"error: SBP of {key!r}: cannot parse {text!r}: {error}".splitlines()[0]) from None
    if len(sbp.sbps.data) != mesh_rank:
        raise TorchImportError(f"error: SBP of {key!r} is {text}, which has {len(sbp.sbps.data)} entries; the mesh "
                               f"has {mesh_rank} axes")
    return sbp


def _as_module(fn: Callable[..., Any]) -> Any:
    """A plain function as a module for torch.export (its parameter names kept for `sbp=`)."""
    import torch

    class Function(torch.nn.Module):
        def forward(self, *args: Any) -> Any:
            return fn(*args)

    module = Function()
    module.wrapped = fn  # what `_forward_names` reads the parameter names from
    return module


LOSS_PREFIX = "model."
"""Where `_with_loss` puts the model: the prefix of its tensors' names in the captured graph."""


def _with_loss(model: Any, loss: Callable[..., Any], count: int) -> Any:
    """`loss(model(*args[:count]), *args[count:])` as a module for torch.export, the model its child
    `model` (so that its parameters are the captured graph's, named `model.<name>`)."""
    import torch

    class WithLoss(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: Any) -> Any:
            return loss(self.model(*args[:count]), *args[count:])

    return WithLoss()


def capture(model: Any, args: Sequence[Any], known: Mapping[Any, Handler]) -> Any:
    """`torch.export` of `model(*args)`. The training IR keeps linear, matmul, layer_norm, softmax, ...
    whole; only when it holds an op `known` does not map is it decomposed to core ATen (torch's default
    table minus the ops mapped whole), which costs seconds on a GPT stack."""
    import torch

    try:
        exported = torch.export.export(model, tuple(args))
        if all(known.get(n.target) is not None for n in exported.graph.nodes
               if n.op == "call_function" and n.target is not operator.getitem):
            return exported
        table = torch.export.default_decompositions()
        for op in from_torch_ops.kept_ops():
            table.pop(op, None)
        return exported.run_decompositions(table)
    except Exception as error:  # torch's own export errors (graph breaks, data-dependent control flow)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise TorchImportError(f"error: torch.export could not capture the model: {type(error).__name__}: "
                               f"{first}") from None


def import_torch(model: Any, args: Sequence[Any], mesh: Any, device: str = "cpu",
                 sbp: Mapping[str, str] | None = None, params: Mapping[str, str] | None = None,
                 loss: Callable[..., Any] | None = None, targets: Sequence[Any] = ()) -> Imported:
    """Capture `model(*args)` and translate it on the placement `mesh` (nested rank list) of `device`;
    with `loss`, capture `loss(model(*args), *targets)` instead (the targets are the arguments after
    the example args, named `target0`, `target1`, ...; parameters keep their `named_parameters()` names)."""
    import torch

    if not isinstance(model, torch.nn.Module):
        if not callable(model):
            raise TorchImportError(f"error: model must be a torch.nn.Module or a function, got {type(model).__name__}")
        model = _as_module(model)
    if not isinstance(args, tuple | list) or not all(isinstance(a, torch.Tensor) for a in args):
        raise TorchImportError("error: args must be a tuple of example tensors")
    if not isinstance(targets, tuple | list) or not all(isinstance(t, torch.Tensor) for t in targets):
        raise TorchImportError("error: targets must be a tuple of tensors")
    if targets and loss is None:
        raise TorchImportError("error: targets are the loss's arguments: give loss= with them")
    hierarchy, ranks = mesh_shape(mesh)
    if not isinstance(device, str) or not device:
        raise TorchImportError(f"error: device must be a device type string such as 'cpu', got {device!r}")
    example_names = _forward_names(model, len(args)) + [f"target{i}" for i in range(len(targets))]
    owned = _owned_tensors(model)
    aliases = _aliases(model)
    given = _given_sbp(sbp or {}, params or {}, example_names, owned, len(hierarchy))  # before the capture's seconds
    root = model
    if loss is not None:
        root = _with_loss(model, loss, len(args))
        aliases = {f"{LOSS_PREFIX}{name}": first for name, first in aliases.items()}
    with warnings.catch_warnings():  # torch 2.13's own pytree deprecation warning, raised inside export
        warnings.filterwarnings("ignore", message=r".*treespec, LeafSpec", category=FutureWarning)
        exported = capture(root, (*args, *targets), handlers())

    block = Block()
    builder = Builder(block, len(hierarchy), constant_sbp=given.get("*"))
    env: dict[Any, Any] = {}
    example_iter = iter(zip(example_names, (*args, *targets), strict=True))
    placeholders = {spec.arg.name: spec for spec in exported.graph_signature.input_specs}
    lifted = dict(exported.constants)
    state = {**dict(exported.named_parameters()), **dict(exported.named_buffers())}
    by_target: dict[str, Val] = {}
    # Arguments in the contract's order: example args, then named_parameters(), then named_buffers().
    for name, arg in example_iter:
        builder.node = None
        ty = builder.tensor_type(tuple(arg.shape), element_of(arg.dtype), given.get(name))
        env[name] = builder.argument(name, ty, to_numpy(arg))
    for name, tensor in owned:
        ty = builder.tensor_type(tuple(tensor.shape), element_of(tensor.dtype), given.get(name, given.get("*")))
        by_target[name] = builder.argument(name, ty, to_numpy(tensor))
    user_inputs = iter(example_names)
    for node in exported.graph.nodes:
        builder.node = node
        if node.op == "placeholder":
            spec = placeholders[node.name]
            kind = spec.kind.name
            if kind == "USER_INPUT":
                env[node] = env[next(user_inputs)]
            elif kind in ("PARAMETER", "BUFFER"):
                target = aliases.get(spec.target, spec.target)
                env[node] = by_target[target] if target in by_target else Const(state[spec.target], node.name)
            elif kind in ("CONSTANT_TENSOR", "CUSTOM_OBJ"):
                env[node] = Const(lifted[spec.target], spec.target)
            else:
                raise builder.error(f"unsupported graph input kind {kind} ({node.name})")
        elif node.op == "call_function":
            env[node] = _translate_node(builder, node, env, handlers())
        elif node.op == "output":
            results = [builder.use(builder.tensor(_lookup(env, a))) for a in _flatten(node.args[0])]
            block.add_op(func.ReturnOp(*results))
    _remove_dead(block)
    fn = func.FuncOp("main", ([a.type for a in block.args], [r.type for r in block.last_op.operands]),
                     Region(block))
    module = ModuleOp([PlacementOp(PLACEMENT, device, hierarchy, ranks), fn])
    return Imported(module, builder.names, builder.defaults, len(args), [name for name, _ in owned],
                    len(list(model.named_parameters())), len(targets))


@cache
def handlers() -> dict[Any, Handler]:
    """ATen op -> handler: the ops of §2.4 (`from_torch_ops`), then those of §7 (`from_torch_nn`)."""
    return {**from_torch_ops.handlers(), **from_torch_nn.handlers()}


def _remove_dead(block: Block) -> None:
    """Drop the ops whose results nothing uses (a transpose folded into a matmul flag, unused splits)."""
    for op in reversed(list(block.ops)):
        if op is not block.last_op and op.results and all(not r.uses for r in op.results):
            block.erase_op(op)


def _owned_tensors(model: Any) -> list[tuple[str, Any]]:
    """`named_parameters()` then `named_buffers()` (tied tensors once, under their first name)."""
    return [(n, p) for n, p in model.named_parameters()] + [(n, b) for n, b in model.named_buffers()]


def _aliases(model: Any) -> dict[str, str]:
    """Every name a tied parameter or buffer has (`lm_head.weight`) -> its first name (`wte.weight`)."""
    first: dict[int, str] = {}
    out: dict[str, str] = {}
    for name, t in [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]:
        out[name] = first.setdefault(id(t), name)
    return out


def _given_sbp(sbp: Mapping[str, str], params: Mapping[str, str], example_names: Sequence[str],
               owned: Sequence[tuple[str, Any]], mesh_rank: int) -> dict[str, NdSbpAttr]:
    """The SBPs the user gave, by argument name, each checked against the names that exist; `params`'
    key `*` is the SBP of every parameter, buffer and constant not named (e.g. `"[B, B]"` for rules
    that need every argument's SBP)."""
    given: dict[str, NdSbpAttr] = {}
    for what, table, known in (("sbp", sbp, list(example_names)), ("params", params, ["*", *(n for n, _ in owned)])):
        for key, text in table.items():
            if key not in known:
                raise TorchImportError(f"error: {what}= names {key!r}, which is not one of the "
                                       f"{'forward arguments' if what == 'sbp' else 'parameters and buffers'} "
                                       f"({', '.join(known[:12])}{', ...' if len(known) > 12 else ''})")
            given[key] = _sbp_of(text, key, mesh_rank)
    return given


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, tuple | list):
        return [y for item in x for y in _flatten(item)]
    return [x]


def _lookup(env: Mapping[Any, Any], x: Any) -> Any:
    """fx arguments with their nodes replaced by what they were translated to."""
    import torch.fx

    if isinstance(x, torch.fx.Node):
        return env[x]
    if isinstance(x, tuple | list):
        return type(x)(_lookup(env, y) for y in x)
    return x


def _is_constant(x: Any) -> bool:
    if isinstance(x, tuple | list):
        return all(_is_constant(y) for y in x)
    return not isinstance(x, Val)


def _unwrap(x: Any) -> Any:
    if isinstance(x, Const):
        return x.tensor
    if isinstance(x, tuple | list):
        return type(x)(_unwrap(y) for y in x)
    return x


def _translate_node(builder: Builder, node: Any, env: Mapping[Any, Any], handlers: Mapping[Any, Handler]) -> Any:
    """One call_function node: folded when it depends on no argument, else its handler's sbp ops."""
    args, kwargs = _lookup(env, node.args), _lookup(env, dict(node.kwargs))
    if node.target is operator.getitem:
        return args[0][args[1]]
    if _is_constant(list(args)) and _is_constant(list(kwargs.values())):
        value = node.target(*_unwrap(args), **_unwrap(kwargs))
        return Const(value, node.name) if hasattr(value, "shape") else value
    handler = handlers.get(node.target)
    if handler is None:
        packet = getattr(node.target, "overloadpacket", None)
        handler = handlers.get(packet) if packet is not None else None
    if handler is None:
        raise builder.error(f"ATen op {node.target} has no sbp mapping (sbpc supports: {supported(handlers)})")
    try:
        return handler(builder, args, kwargs)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:  # an argument form not handled
        raise builder.error(f"cannot translate {node.target} with arguments {node.args}: "
                            f"{type(error).__name__}: {error}") from None


def supported(handlers: Mapping[Any, Handler]) -> str:
    """The short names of the mapped ATen ops, for the unsupported-op error."""
    names = sorted({str(getattr(k, "_name", k)).removeprefix("aten::") for k in handlers})
    return ", ".join(names)
