"""`sbpc.from_torch(model, args, loss=fn, targets=(t,), optimizer={...})` (SPEC §8): the captured loss made
one training step by the `autodiff` pass. Each step run by sbpc (the simulator, or torch.distributed
ranks) equals the step eager torch takes on the module itself — `fn(model(*args), *targets)`,
`loss.backward()`, `torch.optim.AdamW` / `SGD` with the same hyper-parameters — in the loss and every
updated parameter (SPEC §4.3's float tolerance), for one step and for several in a row
(`sbpc.run(prog, steps=N)`, whose `parameters` are keyed by `named_parameters()` names).
"""

from __future__ import annotations

import copy
import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sbpc
from sbpc.runtime import engine, train_step

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
F = torch.nn.functional

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "torch"
GLOBAL = "infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize"
ADAMW = {"kind": "adamw", "lr": 1e-2, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0}
MESH = [[0, 1], [2, 3]]


class Mlp(torch.nn.Module):
    """LayerNorm, a GeLU MLP and a buffer (not a parameter: an input the step does not update)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.ln = torch.nn.LayerNorm(16)
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)
        self.register_buffer("scale", torch.full((8,), 0.5))

    def forward(self, x: Any) -> Any:
        return self.fc2(F.gelu(self.fc1(self.ln(x)), approximate="tanh")) * self.scale


def model_step(model: Any, args: Sequence[Any], loss: Callable[..., Any], targets: Sequence[Any],
               optimizer: dict[str, Any], spec: train_step.StepSpec, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Eager torch's step on the module itself from the parameters and optimizer state in a step's
    `inputs`: `loss(model(*args), *targets).backward()`, then torch.optim.AdamW / SGD (state `exp_avg`,
    `exp_avg_sq` and the step count before this one). Its results in the step program's order."""
    model = copy.deepcopy(model)
    owned = dict(model.named_parameters())
    params = [owned[name] for name in spec.names]
    with torch.no_grad():
        for p, index in zip(params, spec.params, strict=True):
            p.copy_(torch.from_numpy(np.array(inputs[index])))
    options = {k: v for k, v in optimizer.items() if k != "kind"}
    kind = torch.optim.AdamW if optimizer["kind"] == "adamw" else torch.optim.SGD
    opt = kind(params, foreach=False, **options)
    if optimizer["kind"] == "adamw":
        for k, p in enumerate(params):
            m, v = (torch.from_numpy(np.array(inputs[spec.state[2 * k + j]])) for j in (0, 1))
            opt.state[p] = {"step": torch.tensor(float(spec.step - 1)), "exp_avg": m, "exp_avg_sq": v}
    value = loss(model(*args), *targets)
    value.backward()
    opt.step()
    found = [value.detach().numpy(), *[p.detach().numpy() for p in params]]
    if optimizer["kind"] == "adamw":
        for p in params:
            found += [opt.state[p]["exp_avg"].numpy(), opt.state[p]["exp_avg_sq"].numpy()]
    return found


def assert_step_equals_eager(prog: sbpc.Program, result: sbpc.RunResult, eager: list[np.ndarray]) -> None:
    """Every result of one sbpc step (the loss, each updated parameter, each moment) equals eager
    torch's step from the same inputs within the tolerance `--check` compares a step with eager torch
    (SPEC §4.3): twice the error bound propagated through the step (which holds AdamW's conditioning:
    where a gradient cancels to rounding, `m/√v` is any sign) plus 16 roundings of the value's scale."""
    spec = train_step.step_spec(prog.module, "main")
    assert spec is not None
    arg_dists, _ = engine.function_signature(result.compiled, "main")
    expected = engine.bounded_reference(prog.module, "main", engine.bounded_inputs(result.inputs, arg_dists))
    lines, problems = train_step.compare_with_torch(result.outputs, expected, eager, spec.result_names())
    assert not problems, problems
    assert len(lines) == len(spec.result_names())


def run_and_compare(prog: sbpc.Program, model: Any, args: Sequence[Any], loss: Callable[..., Any],
                    targets: Sequence[Any], optimizer: dict[str, Any], steps: int, **run: Any) -> sbpc.RunResult:
    """`sbpc.run(prog, steps=steps)`, and each of its steps (run again one at a time, state carried)
    against eager torch's step on `model` from the same parameters and state; the N-step run's losses
    and `parameters` (by `named_parameters()` name) are those of the steps one at a time."""
    spec = train_step.step_spec(prog.module, "main")
    assert spec is not None
    whole = sbpc.run(prog, pipeline=GLOBAL, steps=steps, check=False, **run)
    assert whole.ok, whole.mismatches
    current = list(prog.defaults or [])
    losses = []
    for k in range(steps):
        train_step.set_step_count(prog.module, "main", 1 + k)
        try:
            one = whole if steps == 1 else sbpc.run(prog, current, pipeline=GLOBAL, steps=1, check=False, **run)
            eager = model_step(model, args, loss, targets, optimizer, train_step.step_spec(prog.module, "main"),
                               current)
            assert_step_equals_eager(prog, one, eager)
        finally:
            train_step.set_step_count(prog.module, "main", 1)
        losses.append(float(np.asarray(one.outputs[0]).reshape(-1)[0]))
        current = train_step.carried(spec, current, one.outputs)  # type: ignore[arg-type]
    np.testing.assert_array_equal(whole.losses, losses)
    assert set(whole.parameters) == set(spec.names)
    for name, index in zip(spec.names, spec.params, strict=True):
        np.testing.assert_array_equal(whole.parameters[name], current[index])
    return whole


@pytest.mark.parametrize("optimizer", [ADAMW, pytest.param({"kind": "sgd", "lr": 0.25, "weight_decay": 0.0625},
                                                            marks=pytest.mark.exhaustive)])
def test_mlp_steps_equal_eager_torch(optimizer: dict[str, Any]) -> None:
    """Two steps under rule=global on the simulated 2x2 mesh, each equal to eager torch's; the buffer
    is an input, not a parameter; the state defaults to torch's fresh (zero) state."""
    model = Mlp()
    x, t = torch.randn(8, 16), torch.randn(8, 8)
    prog = sbpc.from_torch(model, (x,), mesh=MESH, sbp={"x": "[S(0), B]", "target0": "[S(0), B]"},
                           loss=F.mse_loss, targets=(t,), optimizer=optimizer)
    text = str(prog)
    assert "%target0: !sbp.tensor<8x8xf32, @mesh, [S(0), B]>" in text and "%scale" in text
    result = run_and_compare(prog, model, (x,), F.mse_loss, (t,), optimizer, 2)
    assert result.losses[1] < result.losses[0]
    assert set(result.parameters) == {name for name, _ in model.named_parameters()}  # not the buffer


@pytest.mark.exhaustive  # ~2 s
def test_frozen_parameters_are_inputs() -> None:
    """A parameter with requires_grad=False is not updated (torch.optim would skip it too)."""
    model = Mlp()
    model.ln.weight.requires_grad_(False)
    x, t = torch.randn(8, 16), torch.randn(8, 8)
    prog = sbpc.from_torch(model, (x,), mesh=[0, 1], loss=F.mse_loss, targets=(t,), optimizer=ADAMW)
    result = run_and_compare(prog, model, (x,), F.mse_loss, (t,), ADAMW, 1)
    assert "ln.weight" not in result.parameters and "ln.bias" in result.parameters


def test_the_eager_comparison_catches_another_step() -> None:
    """A step whose hyper-parameters differ from eager torch's (lr 1e-2 against 1.05e-2, or no weight
    decay against 0.01) is not within the tolerance: the comparison can fail."""
    model = Mlp()
    x, t = torch.randn(8, 16), torch.randn(8, 8)
    prog = sbpc.from_torch(model, (x,), mesh=[0, 1], loss=F.mse_loss, targets=(t,), optimizer=ADAMW)
    for other in ({**ADAMW, "lr": 1.05e-2}, {**ADAMW, "weight_decay": 0.01}):
        with pytest.raises(AssertionError, match="differs from eager torch's step"):
            run_and_compare(prog, model, (x,), F.mse_loss, (t,), other, 1)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"loss": F.mse_loss, "targets": ("t",), "optimizer": ADAMW}, "targets must be a tuple of tensors"),
    ({"loss": F.mse_loss, "targets": ("T",)}, "needs optimizer="),
    ({"targets": ("T",), "optimizer": ADAMW}, "needs loss= too"),
    ({"loss": F.mse_loss, "targets": ("T",), "optimizer": {"kind": "adam"}}, "kind 'adam' is not one of sgd, adamw"),
    ({"loss": F.mse_loss, "targets": ("T",), "optimizer": {"kind": "adamw", "momentum": 0.9}},
     "adamw has no option 'momentum'"),
    ({"loss": F.mse_loss, "targets": ("T",), "optimizer": {"kind": "sgd", "momentum": 0.9}},
     "momentum is not supported"),
    ({"loss": F.mse_loss, "targets": ("T",), "optimizer": {"kind": "adamw", "lr": -1}},
     "'lr' must be a non-negative number"),
    ({"loss": F.mse_loss, "targets": ("T",), "optimizer": {"kind": "adamw", "betas": (0.9, 1.0)}},
     "'betas' must be two numbers in"),
    ({"loss": lambda y, t: (y - t) * (y - t), "targets": ("T",), "optimizer": ADAMW},
     "must return one float tensor of one element, got \\(f32\\[8,8\\]"),
    ({"loss": F.mse_loss, "targets": ("T",), "optimizer": ADAMW, "sbp": {"target1": "[B]"}},
     "sbp= names 'target1', which is not one of the forward arguments \\(x, target0\\)"),
])
def test_bad_training_options_are_errors(kwargs: dict[str, Any], message: str) -> None:
    x, t = torch.randn(8, 16), torch.randn(8, 8)
    kwargs = dict(kwargs)
    if "targets" in kwargs:
        kwargs["targets"] = tuple(t if a == "T" else a for a in kwargs["targets"])
    with pytest.raises(sbpc.Error, match=message):
        sbpc.from_torch(Mlp(), (x,), mesh=[0, 1], **kwargs)


# ---------------------------------------------------------------------------
# GPT-2 (examples/torch/gpt2.py): next-token cross-entropy, AdamW, on torch ranks
# ---------------------------------------------------------------------------


def _gpt2() -> Any:
    spec = importlib.util.spec_from_file_location("example_gpt2", EXAMPLES / "gpt2.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def next_token_loss(logits: Any, targets: Any) -> Any:
    """Cross-entropy of each position's logits against the next token (the targets: idx shifted by one)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def gpt2_case(layers: int, **config: int) -> tuple[Any, tuple[Any, ...], tuple[Any, ...]]:
    """The example GPT-2 (optionally shrunk by `config`), a batch of token ids and its next tokens."""
    example = _gpt2()
    torch.manual_seed(0)
    model = example.GPT2(layers=layers, **config).train()
    vocab = config.get("vocab", 1024)
    tokens = torch.randint(0, vocab, (2, 9))
    return model, (tokens[:, :-1].contiguous(),), (tokens[:, 1:].contiguous(),)


def gpt2_steps(layers: int, steps: int, config: dict[str, int], mesh: Any) -> None:
    model, args, targets = gpt2_case(layers, **config)
    data = "[S(0), B]" if isinstance(mesh[0], list) else "[S(0)]"
    prog = sbpc.from_torch(model, args, mesh=mesh, sbp={"idx": data, "target0": data},
                           loss=next_token_loss, targets=targets, optimizer=ADAMW)
    run_and_compare(prog, model, args, next_token_loss, targets, ADAMW, steps, backend="torch", timeout=120)


TINY = {"vocab": 64, "context": 16, "width": 32, "heads": 2}


def test_gpt2_tiny_step_on_torch_ranks_equals_eager() -> None:
    """One AdamW step of a 1-layer GPT-2 (tied embedding, learned positions, causal attention) on 2
    gloo ranks equals eager torch's step: the loss and every updated parameter."""
    gpt2_steps(1, 1, TINY, [0, 1])


@pytest.mark.exhaustive
@pytest.mark.parametrize("steps", [1, 3])
def test_gpt2_example_steps_on_torch_ranks_equal_eager(steps: int) -> None:
    """The example's own 2-layer config (vocab 1024, width 256) on 2x2 torch ranks: 1 and 3 steps."""
    gpt2_steps(2, steps, {}, MESH)
