"""`--emit-mlir` of the ops of SPEC §7: a program using every one of them, per rank (a vocab-split
embedding among them, which reads its rank's first row from a table) and in the global form, verifies
under `mlir-opt-22 --verify-each`; on one rank, lowered to LLVM and run by `mlir-runner-22`, it
computes what the simulator computes."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sbpc.tools.sbp_run import main as run_main
from sbpc.tools.sbp_translate import main as translate_main

MLIR_OPT = shutil.which("mlir-opt-22")
RUNNER = shutil.which("mlir-runner-22")
RUNNER_LIBS = [Path("/usr/lib/llvm-22/lib") / f"lib{n}.so.22.1" for n in ("mlir_c_runner_utils", "mlir_runner_utils")]
needs_mlir = pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt-22 absent (apt-get install -y mlir-22-tools)")

ARGS = [("x", "4x6xf32"), ("g", "6xf32"), ("t", "10x6xf32"), ("i", "4xi64"), ("j", "4xi32"), ("c", "4x1xi1")]
BODY = """  %0 = sbp.sigmoid %x : X -> F
  %1 = sbp.tanh %0 : F -> F
  %2 = sbp.silu %1 : F -> F
  %3 = sbp.softmax %2 {axis = 0 : i64} : F -> F
  %4 = sbp.rms_norm %3, %g {epsilon = 1.000000e-03 : f32} : F, G -> F
  %5 = sbp.dropout %4 {p = 1.000000e-01 : f32} : F -> F
  %6 = sbp.embedding %t, %i : T, I -> F
  %7 = sbp.concat %5, %6 {axis = 1 : i64} : F, F -> !sbp.tensor<4x12xf32, @p>
  %8 = sbp.slice %7 {start = array<i64: 0, 1>, stop = array<i64: 4, 12>, step = array<i64: 1, 2>} : W -> F
  %9 = sbp.broadcast_to %c : C -> !sbp.tensor<4x6xi1, @p>
  %10 = sbp.where %9, %8, %6 : !sbp.tensor<4x6xi1, @p>, F, F -> F
  %11 = sbp.cross_entropy %10, %j : F, J -> !sbp.tensor<4xf32, @p>
  func.return %10, %11 : F, !sbp.tensor<4xf32, @p>
"""


def _program(devices: str, sbps: dict[str, str]) -> str:
    types = {n.upper(): f"!sbp.tensor<{t}, @p, [{sbps.get(n, 'B')}]>" for n, t in ARGS}
    body = BODY
    for key, ty in types.items():
        body = re.sub(rf"\b{key}\b", ty, body)
    body = re.sub(r"\bF\b", "!sbp.tensor<4x6xf32, @p>", body).replace(" W ", " !sbp.tensor<4x12xf32, @p> ")
    args = ", ".join(f"%{n}: {types[n.upper()]}" for n, _ in ARGS)
    return (f'sbp.placement @p "cpu" [{devices}]\nfunc.func @main({args}) -> (!sbp.tensor<4x6xf32, @p>, '
            f"!sbp.tensor<4xf32, @p>) {{\n{body}}}\n")


def _emit(text: str, tmp_path: Path, form: str = "per-rank") -> str:
    src, out = tmp_path / "in.mlir", tmp_path / f"{form}.mlir"
    src.write_text(text)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = translate_main([str(src), f"--emit-mlir={form}", "-o", str(out)])
    assert rc == 0, err.getvalue()
    return out.read_text()


def _verify(path: Path) -> None:
    assert MLIR_OPT is not None
    done = subprocess.run([MLIR_OPT, "--verify-each", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@needs_mlir
@pytest.mark.parametrize("form", ["per-rank", "global"])
def test_every_new_op_exports_and_verifies(tmp_path: Path, form: str) -> None:
    mlir = _emit(_program("0, 1, 2", {"x": "S(0)", "t": "S(0)"}), tmp_path, form)
    for name in ('"linalg.generic"', '"tensor.concat"', '"tensor.extract_slice"', '"math.tanh"', '"math.log"',
                 '"arith.select"'):
        assert name in mlir, name
    if form == "per-rank":  # the vocab-split table: rank r's first row from a constant table
        assert '"shard.process_linear_index"' in mlir
        assert "dense<[0, 4, 7]> : tensor<3xindex>" in mlir
    _verify(tmp_path / f"{form}.mlir")


needs_runner = pytest.mark.skipif(MLIR_OPT is None or RUNNER is None or not all(p.exists() for p in RUNNER_LIBS),
                                  reason="mlir-opt-22, mlir-runner-22 or their runtime libraries absent")
ELEMENTS = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64", np.dtype(np.int32): "i32",
            np.dtype(np.uint8): "i8", np.dtype(np.bool_): "i1"}


def _run_both(text: str, inputs: dict[str, np.ndarray], tmp_path: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The one-rank program's f32 results as mlir-runner-22 prints them (its export lowered to LLVM)
    and as sbp-run computes them."""
    mlir = _emit(text, tmp_path)
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
    (tmp_path / "prog.mlir").write_text(text)
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_main([str(tmp_path / "prog.mlir"), "--inputs", ",".join(str(tmp_path / f"{n}.npy") for n in inputs),
                         "--save-outputs", str(tmp_path / "out")]) == 0
    expected = [np.load(path) for path in sorted((tmp_path / "out").glob("result*.npy"))]

    def dense(a: np.ndarray) -> str:
        values = a.astype(np.int64) if a.dtype in (np.bool_, np.uint8) else a
        body = np.array2string(values, separator=", ", precision=9, floatmode="unique", threshold=10**6)
        if a.dtype == np.bool_:
            body = body.replace("1", "true").replace("0", "false")
        body = body.replace("nan", "0x7FC00000")  # MLIR spells a NaN by its bits
        return f"dense<{body}> : {_tensor(a)}"

    consts = "\n".join(f"    %{n} = arith.constant {dense(v)}" for n, v in inputs.items())
    ins, outs = ", ".join(_tensor(v) for v in inputs.values()), ", ".join(_tensor(e) for e in expected)
    prints = "\n".join(
        f"    %m{k} = bufferization.to_buffer %r#{k} : {_tensor(e)} to {_tensor(e, 'memref')}\n"
        f"    %u{k} = memref.cast %m{k} : {_tensor(e, 'memref')} to memref<*xf32>\n"
        f"    func.call @printMemrefF32(%u{k}) : (memref<*xf32>) -> ()" for k, e in enumerate(expected))
    driver = f"""func.func private @printMemrefF32(memref<*xf32>)
  func.func @entry() {{
{consts}
    %r:{len(expected)} = func.call @main({", ".join(f"%{n}" for n in inputs)}) : ({ins}) -> ({outs})
{prints}
    return
  }}
"""
    body = re.sub(r'\s*"shard\.grid".*\n', "\n", mlir).rstrip()
    end = body.rfind("})")
    (tmp_path / "run.mlir").write_text(body[:end] + driver + body[end:] + "\n")
    assert MLIR_OPT is not None and RUNNER is not None
    passes = ["--one-shot-bufferize=bufferize-function-boundaries", "--convert-linalg-to-loops",
              "--expand-strided-metadata", "--lower-affine", "--convert-scf-to-cf", "--convert-math-to-llvm",
              "--convert-to-llvm", "--reconcile-unrealized-casts"]
    lowered = subprocess.run([MLIR_OPT, str(tmp_path / "run.mlir"), *passes], capture_output=True, text=True,
                             timeout=60)
    assert lowered.returncode == 0, lowered.stderr
    (tmp_path / "low.mlir").write_text(lowered.stdout)
    ran = subprocess.run([RUNNER, str(tmp_path / "low.mlir"), "-e", "entry", "--entry-point-result=void",
                          f"--shared-libs={','.join(map(str, RUNNER_LIBS))}"],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    printed = [np.array([float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]\d+)?|nan", part.split("Unranked")[0])])
               for part in ran.stdout.split("data =")[1:]]
    return [p.reshape(e.shape) for p, e in zip(printed, expected, strict=True)], expected


def _tensor(a: np.ndarray, kind: str = "tensor") -> str:
    return f"{kind}<{'x'.join(map(str, a.shape))}{'x' if a.shape else ''}{ELEMENTS[a.dtype]}>"


@needs_runner
def test_one_rank_export_runs_under_mlir_runner(tmp_path: Path) -> None:
    """The exported program, lowered to LLVM and run by mlir-runner-22, prints what sbp-run computes."""
    rng = np.random.default_rng(3)
    inputs = {"x": rng.standard_normal((4, 6)).astype(np.float32), "g": rng.standard_normal(6).astype(np.float32),
              "t": rng.standard_normal((10, 6)).astype(np.float32),
              "i": np.array([3, -1, 9, 10], np.int64), "j": np.array([5, 0, 7, 2], np.int32),
              "c": np.array([[True], [False], [True], [True]])}
    printed, expected = _run_both(_program("0", {}), inputs, tmp_path)
    for got, want in zip(printed, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


DTYPES = """sbp.placement @p "cpu" [0]
func.func @main(%x: !sbp.tensor<2x4xf32, @p, [B]>, %u: !sbp.tensor<2x4xui8, @p, [B]>) -> (!sbp.tensor<2x4xf32, @p>,
    !sbp.tensor<2x4xf32, @p>, !sbp.tensor<2xf32, @p>, !sbp.tensor<2x4xf32, @p>) {
  %0 = sbp.cast %x : !sbp.tensor<2x4xf32, @p, [B]> -> !sbp.tensor<2x4xi1, @p>
  %1 = sbp.cast %0 : !sbp.tensor<2x4xi1, @p> -> !sbp.tensor<2x4xf32, @p>
  %2 = sbp.maximum %u, %u : !sbp.tensor<2x4xui8, @p, [B]>, !sbp.tensor<2x4xui8, @p, [B]> -> !sbp.tensor<2x4xui8, @p>
  %3 = sbp.cast %2 : !sbp.tensor<2x4xui8, @p> -> !sbp.tensor<2x4xf32, @p>
  %4 = sbp.reduce_min %u {axes = array<i64: 1>} : !sbp.tensor<2x4xui8, @p, [B]> -> !sbp.tensor<2xui8, @p>
  %5 = sbp.cast %4 : !sbp.tensor<2xui8, @p> -> !sbp.tensor<2xf32, @p>
  %6 = sbp.cast %u : !sbp.tensor<2x4xui8, @p, [B]> -> !sbp.tensor<2x4xi32, @p>
  %7 = sbp.cast %6 : !sbp.tensor<2x4xi32, @p> -> !sbp.tensor<2x4xf32, @p>
  func.return %1, %3, %5, %7 : !sbp.tensor<2x4xf32, @p>, !sbp.tensor<2x4xf32, @p>, !sbp.tensor<2xf32, @p>,
      !sbp.tensor<2x4xf32, @p>
}
"""


@needs_runner
def test_i1_and_ui8_export_runs_under_mlir_runner(tmp_path: Path) -> None:
    """Casts to and from i1 (nonzero is true, NaN too; true is 1) and ui8 above 127 (held as signless
    i8: unsigned max, min, extension and conversion) compute in MLIR what sbp-run computes."""
    inputs = {"x": np.array([[0.0, -0.0, 0.5, np.nan], [-3.0, 0.0, 1e-30, 2.0]], np.float32),
              "u": np.array([[0, 127, 128, 255], [200, 3, 250, 129]], np.uint8)}
    printed, expected = _run_both(DTYPES, inputs, tmp_path)
    assert expected[0].tolist() == [[0, 0, 1, 1], [1, 0, 1, 1]]
    assert expected[2].tolist() == [0, 3] and expected[3][1].tolist() == [200, 3, 250, 129]
    for got, want in zip(printed, expected, strict=True):
        np.testing.assert_array_equal(got, want)
