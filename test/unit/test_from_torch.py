"""`sbpc.from_torch`, `sbpc.parallelize` and `sbp-translate --import-torch` (SPEC §7) on the two example
models, examples/torch/gpt2.py and examples/torch/llama.py: the planned program, run on the simulated
mesh (and on torch.distributed), gives what eager `model(x)` gives; unsupported ops and bad command
lines are located errors.

The default run captures each model once (module-scoped fixtures) and runs it under one rule per mesh
it can afford; the full grid (both meshes, every rule, the torch backend) is `exhaustive`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sbpc
from sbpc.tools import sbp_translate

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "torch"
MESHES = {"2x2": [[0, 1], [2, 3]], "2x4": [[0, 1, 2, 3], [4, 5, 6, 7]]}
INPUT = {"gpt2": "idx", "llama": "tokens"}


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Models(dict):  # type: ignore[type-arg]
    """(example, layers) -> its module, example args and eager output, made on first use."""

    def __missing__(self, key: tuple[str, int]) -> tuple[Any, tuple[Any, ...], np.ndarray]:
        name, layers = key
        model, args = _load(name).make(layers=layers)
        with torch.no_grad():
            self[key] = (model, args, model(*args).numpy())
        return self[key]


@pytest.fixture(scope="module")
def models() -> Models:
    return Models()


def pipeline(rule: str) -> str:
    return f"infer-sbp{{rule={rule}}},materialize-boxing,lower-boxing,spmdize"


def program(models: Models, name: str, mesh: str, rule: str, layers: int = 2) -> sbpc.Program:
    """The example on `mesh`: data parallel input; weights free for rule=global, else replicated
    (rule=oneflow and cost need every argument's SBP)."""
    model, args, _ = models[name, layers]
    params = None if rule == "global" else {"*": "[B, B]"}
    return sbpc.from_torch(model, args, mesh=MESHES[mesh], device="cpu", sbp={INPUT[name]: "[S(0), B]"},
                           params=params)


def assert_eager(result: sbpc.RunResult, want: np.ndarray) -> None:
    """The run passed its own check (SPEC §4.3) and equals eager torch within f32 rounding of the scale."""
    assert result.ok, result.mismatches
    (got,) = result.outputs
    assert got is not None and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))


@pytest.mark.parametrize(("name", "rule"), [  # GPT-2 under global (~8 s) with every rule below
    pytest.param("gpt2", "global", marks=pytest.mark.exhaustive), ("llama", "oneflow")])
def test_simulator_equals_eager(models: Models, name: str, rule: str) -> None:
    """One layer of each on 2x2 (the default run's budget); the full grid is exhaustive."""
    prog = program(models, name, "2x2", rule, layers=1)
    assert_eager(sbpc.run(prog, pipeline=pipeline(rule)), models[name, 1][2])


@pytest.mark.exhaustive
@pytest.mark.parametrize("rule", ["oneflow", "cost", "global"])
@pytest.mark.parametrize("mesh", ["2x2", "2x4"])
@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_simulator_equals_eager_every_rule(models: Models, name: str, mesh: str, rule: str) -> None:
    prog = program(models, name, mesh, rule)
    assert_eager(sbpc.run(prog, pipeline=pipeline(rule)), models[name, 2][2])


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_torch_backend_equals_eager(models: Models, name: str) -> None:
    prog = program(models, name, "2x2", "global")
    assert_eager(sbpc.run(prog, backend="torch", pipeline=pipeline("global")), models[name, 2][2])


@pytest.mark.exhaustive
def test_parallelize_runs_the_module_values(models: Models) -> None:
    """parallelize: the plan on 4 gloo ranks with the module's own weights, outputs as torch tensors;
    a changed weight is what the next call uses."""
    model, args, want = models["gpt2", 1]
    step = sbpc.parallelize(model, args, mesh=MESHES["2x2"], rule="global", sbp={"idx": "[S(0), B]"})
    plan = step.plan()
    assert plan["idx"] == "[S(0), B]" and "wte_weight" in plan
    out = step(*args)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))
    with torch.no_grad():
        model.ln_f.bias.add_(1.0)
        want = model(*args).numpy()
    np.testing.assert_allclose(step(*args).numpy(), want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()))


def test_arguments_are_named_and_ordered(models: Models) -> None:
    """Example args, then named_parameters() (the tied lm_head once, as wte), then the constants."""
    model = models["gpt2", 1][0]
    prog = program(models, "gpt2", "2x2", "global", layers=1)
    fn = prog.module.body.block.last_op
    names = [a.name_hint for a in fn.body.block.args]
    params = [n.replace(".", "_") for n, _ in model.named_parameters()]
    assert names[0] == "idx" and names[1:1 + len(params)] == params
    assert "lm_head_weight" not in names
    # The positions and the one causal mask (equal in every block) are constants with their values.
    assert len(names) == 1 + len(params) + 2
    assert prog.defaults is not None and prog.defaults[-1].shape == (16, 16)
    assert np.isneginf(prog.defaults[-1][0, 1]) and prog.defaults[-1][1, 0] == 0
    text = str(prog)
    assert "sbp.embedding" in text and "sbp.softmax" in text and "sbp.placement @mesh \"cpu\" [[0, 1], [2, 3]]" in text


def test_given_sbp_and_bad_names(models: Models) -> None:
    """Given SBPs are in the argument types; names and SBPs are checked before the capture."""
    model, args, _ = models["llama", 1]
    prog = sbpc.from_torch(model, args, mesh=[0, 1], params={"output.weight": "[S(0)]"})
    assert "%output_weight: !sbp.tensor<1024x256xf32, @mesh, [S(0)]>" in str(prog)
    with pytest.raises(sbpc.Error, match=r"params= names 'nope'.*parameters and buffers"):
        sbpc.from_torch(model, args, mesh=[0, 1], params={"nope": "[B]"})
    with pytest.raises(sbpc.Error, match=r"SBP of 'tokens' is \[B, B\], which has 2 entries; the mesh has 1 axes"):
        sbpc.from_torch(model, args, mesh=[0, 1], sbp={"tokens": "[B, B]"})
    with pytest.raises(sbpc.Error, match="not rectangular"):
        sbpc.from_torch(model, args, mesh=[[0, 1], [2]])


class _Erf(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x: Any) -> Any:
        return torch.erf(self.fc(x))


def test_unsupported_op_names_op_and_line() -> None:
    with pytest.raises(sbpc.Error) as caught:
        sbpc.from_torch(_Erf(), (torch.randn(2, 8),), mesh=[0, 1])
    message = str(caught.value)
    assert "aten.erf" in message and "has no sbp mapping" in message
    assert f"{Path(__file__).name}:" in message and "return torch.erf(self.fc(x))" not in message
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1) if "torch.erf(self.fc" in text)
    assert f"{Path(__file__)}:{line}" in message


def test_function_and_scalars() -> None:
    """A plain function, scalar operands and a division by a constant."""
    def f(x: Any, y: Any) -> Any:
        return torch.relu(x * 2.0 - y / 4.0 + 1.0).sum(dim=-1, keepdim=True)

    x, y = torch.randn(4, 6), torch.randn(4, 6)
    prog = sbpc.from_torch(f, (x, y), mesh=[0, 1], sbp={"x": "[S(0)]", "y": "[S(0)]"})
    res = sbpc.run(prog)
    assert res.ok, res.mismatches
    np.testing.assert_allclose(res.outputs[0], f(x, y).numpy(), rtol=1e-6, atol=1e-6)


def test_cli_import_torch(capsys: pytest.CaptureFixture[str]) -> None:
    code = sbp_translate.main(["--import-torch", f"{EXAMPLES / 'llama.py'}:make", "--mesh", "2x2",
                               "--input-sbp", "tokens=[S(0), B]"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert 'sbp.placement @mesh "cpu" [[0, 1], [2, 3]]' in out
    assert "%tokens: !sbp.tensor<2x16xi64, @mesh, [S(0), B]>" in out and "sbp.rms_norm" in out
    assert sbpc.parse(out).module is not None


@pytest.mark.parametrize(("argv", "message"), [
    (["nope.py:make", "--mesh", "2x2"], "error: cannot read nope.py: no such file"),
    (["{llama}:nope", "--mesh", "2x2"], "llama.py: error: no function 'nope' (defined: Attention, Block, Llama, make"),
    (["{llama}", "--mesh", "2x2"], "expected FILE.py:FACTORY"),
    (["{llama}:make", "--mesh", "2by2"], "--mesh '2by2': expected positive sizes joined by 'x'"),
    (["{llama}:make"], "needs --mesh"),
    (["{llama}:make", "--mesh", "2", "--input-sbp", "tokens"], "expected NAME=SBP"),
    (["{llama}:make", "--mesh", "2", "--input-sbp", "idx=[B]"], "sbp= names 'idx'"),
])
def test_cli_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    argv = [a.format(llama=EXAMPLES / "llama.py") for a in argv]
    assert sbp_translate.main(["--import-torch", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


class _Heads(torch.nn.Module):
    """Embedding, where on a constant mask, tanh, sigmoid, eval dropout, cross-entropy (mean) and causal
    scaled dot-product attention: the mappings the two examples do not use."""

    def __init__(self) -> None:
        super().__init__()
        self.emb, self.head, self.drop = torch.nn.Embedding(32, 16), torch.nn.Linear(16, 32), torch.nn.Dropout(0.1)

    def forward(self, idx: Any, tgt: Any) -> Any:
        h = self.drop(self.emb(idx))
        h = torch.where(torch.arange(16) % 2 == 0, h, torch.tanh(h)) + torch.sigmoid(h)
        loss = torch.nn.functional.cross_entropy(self.head(h).view(-1, 32), tgt.view(-1))
        heads = h[:, None]
        return loss, torch.nn.functional.scaled_dot_product_attention(heads, heads, heads, is_causal=True)


def test_loss_attention_and_activations() -> None:
    torch.manual_seed(0)
    model = _Heads().eval()
    idx, tgt = torch.randint(0, 32, (4, 8)), torch.randint(0, 32, (4, 8))
    with torch.no_grad():
        want = [t.numpy() for t in model(idx, tgt)]
    prog = sbpc.from_torch(model, (idx, tgt), mesh=[0, 1], sbp={"idx": "[S(0)]", "tgt": "[S(0)]"}, params={"*": "[B]"})
    text = str(prog)
    for op in ("sbp.where", "sbp.tanh", "sbp.sigmoid", "sbp.cross_entropy", "sbp.softmax"):
        assert op in text
    res = sbpc.run(prog)
    assert res.ok, res.mismatches
    for got, expected in zip(res.outputs, want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_attention_masks() -> None:
    """A boolean attn_mask selects (where, a 0-d -inf constant), a float one adds (after a cast)."""
    def f(q: Any, m: Any) -> Any:
        sdpa = torch.nn.functional.scaled_dot_product_attention
        return sdpa(q, q, q, attn_mask=m), sdpa(q, q, q, attn_mask=m.float() * -1e4)

    torch.manual_seed(0)
    q, m = torch.randn(2, 4, 8, 16), torch.rand(8, 8) > 0.3
    m[:, 0] = True
    prog = sbpc.from_torch(f, (q, m), mesh=[0, 1], sbp={"q": "[S(0)]", "m": "[B]"}, params={"*": "[B]"})
    assert prog.defaults is not None and prog.defaults[-1].shape == ()  # the -inf, kept 0-d
    res = sbpc.run(prog)
    assert res.ok, res.mismatches
    for got, want in zip(res.outputs, f(q, m), strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)
