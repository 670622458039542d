"""`--emit-mlir` of training steps (SPEC §4.2, §8): the backward and optimizer ops' linalg forms pass
`mlir-opt-22 --verify-each` and `--convert-shard-to-mpi` on a 2-device plan, and on one device, lowered
to LLVM and run by `mlir-runner-22`, compute what `sbp-run` computes (exhaustive)."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import sbpc
from sbpc.tools.sbp_run import main as run_main
from sbpc.tools.sbp_translate import main as translate_main

MLIR_OPT = shutil.which("mlir-opt-22")
RUNNER = shutil.which("mlir-runner-22")
RUNNER_LIBS = [Path("/usr/lib/llvm-22/lib") / f"lib{n}.so.22.1" for n in ("mlir_c_runner_utils", "mlir_runner_utils")]
needs_mlir = pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt-22 absent (apt-get install -y mlir-22-tools)")


def forward(ranks: str, x_sbp: str) -> str:
    """matmul, layer_norm, gelu, relu and a row max into a summed loss (every backward op; AdamW's three)."""
    return f"""sbp.placement @p "cpu" {ranks}
func.func @main(%x: !sbp.tensor<4x8xf32, @p, {x_sbp}>, %w: !sbp.tensor<8x8xf32, @p, [B]>,
                %g: !sbp.tensor<8xf32, @p, [B]>, %b: !sbp.tensor<8xf32, @p, [B]>) -> !sbp.tensor<f32, @p> {{
  %h = sbp.matmul %x, %w : !sbp.tensor<4x8xf32, @p, {x_sbp}>, !sbp.tensor<8x8xf32, @p, [B]> -> !sbp.tensor<4x8xf32, @p>
  %n = sbp.layer_norm %h, %g, %b : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<8xf32, @p, [B]>, !sbp.tensor<8xf32, @p, [B]>
    -> !sbp.tensor<4x8xf32, @p>
  %a = sbp.gelu %n : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %r = sbp.relu %a : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %m = sbp.reduce_max %a {{axes = array<i64: 1>, keepdims}} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x1xf32, @p>
  %z = sbp.sub %r, %m : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x1xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %q = sbp.mul %z, %z : !sbp.tensor<4x8xf32, @p>, !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<4x8xf32, @p>
  %l = sbp.reduce_sum %q {{axes = array<i64: 0, 1>}} : !sbp.tensor<4x8xf32, @p> -> !sbp.tensor<f32, @p>
  func.return %l : !sbp.tensor<f32, @p>
}}
"""


def step_file(tmp_path: Path, ranks: str, x_sbp: str) -> Path:
    program = sbpc.compile(sbpc.parse(forward(ranks, x_sbp)), "autodiff{optimizer=adamw lr=0.01 weight-decay=0.1}")
    path = tmp_path / "step.mlir"
    path.write_text(str(program.module))
    return path


def emit(path: Path) -> Path:
    out = path.with_suffix(".up.mlir")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert translate_main([str(path), "--emit-mlir", "-o", str(out)]) == 0, err.getvalue()
    return out


@needs_mlir
def test_a_step_on_two_devices_verifies_and_converts(tmp_path: Path) -> None:
    out = emit(step_file(tmp_path, "[0, 1]", "[S(0)]"))
    text = out.read_text()
    assert '"sbp.' not in text  # no sbp op is left (discardable sbp.* attributes are kept)
    for flags in ((), ("--convert-shard-to-mpi",)):
        done = subprocess.run([MLIR_OPT, "--verify-each", *flags, str(out)], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr


@pytest.mark.exhaustive  # ~3 s: sbp-run, mlir-opt lowering to LLVM, mlir-runner
@pytest.mark.skipif(MLIR_OPT is None or RUNNER is None or not all(p.exists() for p in RUNNER_LIBS),
                    reason="mlir-runner-22 and its runtime libraries absent")
def test_a_step_runs_under_mlir_runner_as_sbp_run(tmp_path: Path) -> None:
    path = step_file(tmp_path, "[0]", "[B]")
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_main([str(path), "--save-outputs", str(tmp_path / "out"), "--seed", "3"]) == 0
    expected = [np.load(tmp_path / "out" / f"result{i}.npy") for i in range(10)]
    shapes = [(4, 8), (8, 8), (8,), (8,), *[(8, 8)] * 2, *[(8,)] * 4]
    rng = np.random.default_rng(3)
    from sbpc.runtime.engine import random_inputs
    from sbpc.runtime.simulator import find_function

    fn = find_function(sbpc.parse(path.read_text()).module, "main")
    inputs = random_inputs([(s, np.dtype(np.float32)) for s in shapes], rng, fn)

    def dense(a: np.ndarray) -> str:
        text = np.array2string(a, separator=", ", precision=9, floatmode="unique", threshold=10**6)
        return f"dense<{text}> : tensor<{'x'.join(map(str, a.shape))}xf32>" if a.ndim else \
            f"dense<{float(a)!r}> : tensor<f32>"

    names = [f"%i{k}" for k in range(len(inputs))]
    consts = "\n".join(f"    {n} = arith.constant {dense(v)}"
                       for n, v in zip(names, inputs, strict=True))
    types = [f"tensor<{'x'.join(map(str, s))}xf32>" for s in shapes]
    out_types = ["tensor<f32>", types[1], types[2], types[3], *types[4:]]
    prints = []
    for k, ty in enumerate(out_types):
        memref = ty.replace("tensor", "memref")
        prints.append(f"    %m{k} = bufferization.to_buffer %r#{k} : {ty} to {memref}\n"
                      f"    %u{k} = memref.cast %m{k} : {memref} to memref<*xf32>\n"
                      f"    func.call @printMemrefF32(%u{k}) : (memref<*xf32>) -> ()")
    driver = (f"func.func private @printMemrefF32(memref<*xf32>)\n  func.func @entry() {{\n{consts}\n"
              f"    %r:10 = func.call @main({', '.join(names)}) : ({', '.join(types)}) -> ({', '.join(out_types)})\n"
              + "\n".join(prints) + "\n    return\n  }\n")
    body = re.sub(r'\s*"shard\.grid".*\n', "\n", emit(path).read_text()).rstrip()
    # On one device every collective is the identity: a tensor.cast to its own type, so that no shard op
    # is left for the LLVM lowering.
    body = re.sub(r'"shard\.\w+"\((%\w+)\) <\{[^}]*\}> :', r'"tensor.cast"(\1) :', body)
    end = body.rfind("})")
    (tmp_path / "run.mlir").write_text(body[:end] + driver + body[end:] + "\n")
    passes = ["--one-shot-bufferize=bufferize-function-boundaries", "--convert-linalg-to-loops",
              "--expand-strided-metadata", "--lower-affine", "--convert-scf-to-cf", "--convert-math-to-llvm",
              "--convert-to-llvm", "--reconcile-unrealized-casts"]
    assert MLIR_OPT is not None and RUNNER is not None
    lowered = subprocess.run([MLIR_OPT, str(tmp_path / "run.mlir"), *passes], capture_output=True, text=True,
                             timeout=60)
    assert lowered.returncode == 0, lowered.stderr
    (tmp_path / "low.mlir").write_text(lowered.stdout)
    ran = subprocess.run([RUNNER, str(tmp_path / "low.mlir"), "-e", "entry", "--entry-point-result=void",
                          f"--shared-libs={','.join(map(str, RUNNER_LIBS))}"], capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    blocks = ran.stdout.split("data =")[1:]
    assert len(blocks) == 10
    for block, want in zip(blocks, expected, strict=True):
        printed = np.array([float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]\d+)?", block.split("Unranked")[0])])
        assert printed.size == want.size
        np.testing.assert_allclose(printed.reshape(want.shape), want, rtol=1e-4, atol=1e-5)
