"""`sbp-run --backend torch` (issue 12): the compiled per-rank program on forked torch.distributed
ranks (gloo) gives the simulator's results and the cost model's bytes; faults end the run located,
with no process left behind; torchrun runs it as one rank per process."""

import itertools
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context

pytest.importorskip("torch", reason="the torch backend needs PyTorch (pip install -e '.[dist]')")

from sbpc.dialects.context import register_dialects
from sbpc.dialects.sbp import BROADCAST, ReduceKind, partial, split
from sbpc.runtime import ops_numpy, ops_torch
from sbpc.runtime.random_programs import random_program
from sbpc.runtime.simulator import sbp_text
from sbpc.runtime.torch_backend import FAULT_ENV
from sbpc.runtime.torch_conformance import check_cases, compile_case
from sbpc.tools.sbp_run import pipeline_for, run_captured

ROOT = Path(__file__).resolve().parents[2]
S0, S1, B, P, PMAX = split(0), split(1), BROADCAST, partial(), partial(ReduceKind.MAX)


@pytest.fixture(scope="module")
def ctx() -> Context:
    context = Context()
    register_dialects(context)
    return context


def _totals(output: str) -> tuple[int, int]:
    line = next(x for x in output.splitlines() if x.startswith("total bytes sent:"))
    total, model = line.removeprefix("total bytes sent: ").split(" (all ranks); cost model: ")
    return int(total), int(model)


@pytest.mark.parametrize("example", ["seed", "mlp_tp",
                                     pytest.param("transformer_block", marks=pytest.mark.exhaustive)])  # 17 s
def test_examples_check_on_torch(example: str) -> None:
    code, output = run_captured([str(ROOT / "examples" / f"{example}.mlir"), "--backend", "torch", "--check"])
    assert code == 0 and "check: OK" in output, output
    total, model = _totals(output)
    assert total == model, output
    assert "total collective time: measured" in output, output


@pytest.mark.parametrize(("hierarchy", "dtype", "stride"), [
    ((2, 2), "f32", 7), ((2, 3), "i32", 7),
    pytest.param((2, 2), "f32", 1, marks=pytest.mark.exhaustive),
    pytest.param((2, 3), "i32", 1, marks=pytest.mark.exhaustive),
])
def test_exhaustive_boxing_pairs_on_torch(ctx: Context, hierarchy: tuple[int, ...], dtype: str, stride: int) -> None:
    """Issue 4's pairs (every `stride`-th ordered pair of [S(0), S(1), B, P, P(max)]^2; all of them under
    `-m exhaustive`), both planners, lowered by lower-boxing, run in one launch per mesh: torch equals the
    simulator bit for bit, bytes the model's."""
    states = list(itertools.product((S0, S1, B, P, PMAX), repeat=len(hierarchy)))
    cases = []
    for planner in ("optimal", "oneflow"):
        for k, (src, dst) in enumerate(itertools.islice(itertools.product(states, states), 0, None, stride)):
            a, b = f"!sbp.tensor<5x7x{dtype}, @m, {sbp_text(src)}>", f"!sbp.tensor<5x7x{dtype}, @m, {sbp_text(dst)}>"
            text = (f'sbp.placement @m "cpu" {np.arange(np.prod(hierarchy)).reshape(hierarchy).tolist()}\n'
                    f"func.func @main(%a: {a}) -> {b} {{\n"
                    f"  %0 = sbp.boxing %a : {a} -> {b}\n"
                    f"  func.return %0 : {b}\n}}\n")
            cases.append(compile_case(ctx, f"{planner} {sbp_text(src)} -> {sbp_text(dst)}", text,
                                      f"lower-boxing{{planner={planner}}}", k))
    failures, compared = check_cases(cases)
    assert not failures, "\n".join(failures[:20])
    assert compared > len(cases)  # most pairs need at least one collective


def _equal_bits_but_nan(got: np.ndarray, want: np.ndarray) -> bool:
    """Same dtype, shape and values, signed zeros included; NaN matches any NaN (numpy's fmod by 0 is -NaN,
    torch's +NaN)."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(w)
    same = (np.isnan(g) == nan).all() and (g[~nan] == w[~nan]).all() and (np.signbit(g) == np.signbit(w))[~nan].all()
    return got.dtype == want.dtype and got.shape == want.shape and bool(same)


def test_torch_kernels_edge_values_match_numpy() -> None:
    """C division and remainder at 0, -1 and INT_MIN, f16/bf16 fmod, casts and empty max-reductions:
    bit for bit as ops_numpy."""
    i32 = np.array([-2**31, -7, -1, 0, 1, 7, 2**31 - 1], np.int32)
    a, b = np.repeat(i32, len(i32)), np.tile(i32, len(i32))
    for t, n in ((ops_torch.int_div, ops_numpy.int_div), (ops_torch.int_fmod, ops_numpy.int_fmod)):
        with np.errstate(all="ignore"):
            want = n(a, b)
        assert ops_torch.to_numpy(t(ops_torch.to_torch(a), ops_torch.to_torch(b))).tobytes() == want.tobytes()
    rng = np.random.default_rng(0)
    with np.errstate(all="ignore"):
        _check_float_kernels(rng)


def _check_float_kernels(rng: np.random.Generator) -> None:
    for dtype in (np.dtype(np.float16), ops_numpy.BF16, np.dtype(np.float32)):
        x = (rng.standard_normal(512) * 100).astype(np.float32).astype(dtype)
        y = np.concatenate([rng.standard_normal(510), [0.0, -0.0]]).astype(np.float32).astype(dtype)
        got = ops_torch.to_numpy(ops_torch.fmod_tensors(ops_torch.to_torch(x), ops_torch.to_torch(y)))
        assert _equal_bits_but_nan(got, ops_numpy.fmod_arrays(x, y))
        for target in (np.dtype(np.int32), np.dtype(np.float16), ops_numpy.BF16):
            cast = ops_torch.cast_tensor(ops_torch.to_torch(x), ops_torch.torch_dtype(target))
            assert ops_torch.to_numpy(cast).tobytes() == ops_numpy.cast_array(x, target).tobytes()


@pytest.mark.parametrize("count", [16, pytest.param(60, marks=pytest.mark.exhaustive)])
def test_random_programs_on_torch(ctx: Context, count: int) -> None:
    """60 random programs (both rules, both planners, meshes up to 2x2x2, i32 and f32): bytes equal the
    model's, results the simulator's (bitwise, or within --check's tolerance for torch's float rounding)."""
    configs = [(r, p) for r in ("oneflow", "cost") for p in ("optimal", "oneflow")]
    cases = [compile_case(ctx, f"seed {seed} {configs[seed % 4]}", random_program(seed),
                          pipeline_for(*configs[seed % 4]), seed) for seed in range(count)]
    failures, compared = check_cases(cases)
    assert not failures, "\n".join(failures[:20])
    assert compared >= count * 10 // 3


_T, _TB = "!sbp.tensor<5x7xf32, @q, [S(0), S(1)]>", "!sbp.tensor<5x7xf32, @q, [B, S(1)]>"
FAULTY = f"""sbp.placement @q "cpu" [[0, 1], [2, 3]]
func.func @main(%x: {_T}) -> !sbp.tensor<5x7xf32, @q, [B, B]> {{
  %0 = sbp.relu %x : {_T} -> {_T}
  %1 = sbp.all_gather %0 {{mesh_axes = array<i64: 0>}} : {_T} -> {_TB}
  %2 = sbp.all_gather %1 {{mesh_axes = array<i64: 1>}} : {_TB} -> !sbp.tensor<5x7xf32, @q, [B, B]>
  func.return %2 : !sbp.tensor<5x7xf32, @q, [B, B]>
}}
"""


def _children() -> list[int]:
    """Processes (zombies too) whose parent is this test process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            found.append(int(entry))
    return found


@pytest.mark.parametrize(("fault", "line", "expected"), [
    ("1:raise:0", 3, "error: sbp.relu: rank 1 [0, 1]: sbp.relu(f32[5,7][S(0), S(1)] @q): fault injected by "
                     "SBPC_TORCH_FAULT"),
    ("2:kill:1", 4, "error: sbp.all_gather: rank 2 [1, 0]: the rank process was killed by SIGKILL while "
                    "running this op"),
    ("3:hang:1", 4, "error: sbp.all_gather: rank 3 [1, 1]: no rank made progress for 2 s: rank(s) [3] hang in "
                    "this op"),
])
def test_a_failing_rank_stops_every_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str, line: int,
                                         expected: str) -> None:
    """An injected failure (a raising kernel, a killed rank, a hanging rank) gives exit 1, a located
    message naming the rank and the op, within the timeout, and leaves no child process."""
    path = tmp_path / "faulty.mlir"
    path.write_text(FAULTY)
    assert _children() == []
    monkeypatch.setenv(FAULT_ENV, fault)
    began = time.monotonic()
    code, output = run_captured([str(path), "--pipeline", "", "--backend", "torch", "--timeout", "2", "--check"])
    elapsed = time.monotonic() - began
    assert code == 1, output
    assert f"{path}:{line}:" in output and expected in output, output
    assert "Traceback" not in output and "check:" not in output, output
    assert elapsed < 2 + 6, elapsed
    assert _children() == []


def test_without_fault_the_same_program_runs(tmp_path: Path) -> None:
    path = tmp_path / "faulty.mlir"
    path.write_text(FAULTY)
    code, output = run_captured([str(path), "--pipeline", "", "--backend", "torch", "--check", "--repeat", "3"])
    assert code == 0 and "check: OK" in output, output
    assert "median of 3 runs" in output, output
    assert "all_gather mesh_axes=[0] [S(0), S(1)]->[B, S(1)] f32[5,7]: bytes sent per rank [48, 36, 32, 24]; " \
           "measured " in output, output


def test_missing_devices_are_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "faulty.mlir"
    path.write_text(FAULTY)
    code, output = run_captured([str(path), "--pipeline", "", "--backend", "torch", "--dist-backend", "nccl"])
    assert code == 1, output
    assert f"{path}:2:1: error: func.func: --dist-backend nccl needs a cuda device for local rank 0; torch sees 0" \
        in output, output


@pytest.mark.exhaustive  # ~11 s: real torchrun processes
@pytest.mark.skipif(shutil.which("torchrun") is None, reason="torchrun is installed with torch")
def test_torchrun_runs_one_rank_per_process(tmp_path: Path) -> None:
    """`torchrun --standalone --nproc-per-node 4`: each process runs its rank; rank 0 gathers, prints, checks."""
    path = tmp_path / "prog.mlir"
    path.write_text(FAULTY)
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        ["torchrun", "--standalone", "--nproc-per-node", "4", "-m", "sbpc.tools.sbp_run", str(path),
         "--pipeline", "", "--backend", "torch", "--check"],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("check: OK") == 1, done.stdout
    assert "bytes sent per rank [48, 36, 32, 24]" in done.stdout, done.stdout
