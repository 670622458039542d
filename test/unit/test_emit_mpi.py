"""`sbp-translate --emit-mlir=mpi` run for real: `mpiexec -n <ranks> mlir-runner-22` against `sbp-run`.

The exported module is lowered by `mlir-opt-22 --run-reproducer` (the file carries
`to_upstream_mpi.LLVM_PIPELINE`), stripped of the `dlti` attribute (`strip_for_runner`) and run on
as many MPI processes as the mesh has ranks (Debian `mpich`). Rank 0 prints every result after
the program's own collectives and a replicating boxing, all MPI; the values must be `sbp-run
--seed N --save-outputs`'s: exactly for f16/bf16 and integer results (the 6 printed digits name one f16),
to 1e-5 relative for f32 (the runner prints 6 digits; the loops sum in another order than BLAS), and
within stated ulps where LLVM's exp/tanh/sqrt differ from numpy's (`EXAMPLES`).
Skips without mpiexec, mlir-opt-22, mlir-runner-22 or the runner/MPICH libraries.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from sbpc.tools.sbp_opt import main as opt_main
from sbpc.tools.sbp_run import main as run_main
from sbpc.tools.sbp_translate import main as translate_main
from sbpc.translate.to_upstream_mpi import ENTRY, RUNNER_LIBRARIES, strip_for_runner

ROOT = Path(__file__).resolve().parents[2]
MPIEXEC, MLIR_OPT, RUNNER = (shutil.which(t) for t in ("mpiexec", "mlir-opt-22", "mlir-runner-22"))
_LIB_DIRS = ("/usr/lib/llvm-22/lib", f"/usr/lib/{sysconfig.get_config_var('MULTIARCH') or ''}", "/usr/lib",
             "/usr/local/lib")
LIBRARIES = [next((f"{d}/{n}" for d in _LIB_DIRS if os.path.exists(f"{d}/{n}")), None) for n in RUNNER_LIBRARIES]
needs_mpi = pytest.mark.skipif(
    None in (MPIEXEC, MLIR_OPT, RUNNER) or None in LIBRARIES,
    reason="needs mpiexec (apt-get install -y mpich), mlir-opt-22 and mlir-runner-22 (mlir-22-tools)")
_NUMBER = re.compile(r"-?nan|-?inf|-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def emit(program: Path, out: Path, seed: int = 0, *flags: str) -> str:
    """`sbp-translate PROGRAM --emit-mlir=mpi --seed SEED -o OUT`; the text (asserts success)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = translate_main([str(program), "--emit-mlir=mpi", "--seed", str(seed), "-o", str(out), *flags])
    assert rc == 0, err.getvalue()
    return out.read_text()


def run_mpi(module: Path, ranks: int | None = None, timeout: float = 600) -> list[np.ndarray]:
    """Lower `module` with its reproducer pipeline, run it under mpiexec on the mesh's ranks (or
    `ranks`), and read back what rank 0 printed (one array per result, as float64)."""
    assert MLIR_OPT is not None and RUNNER is not None and MPIEXEC is not None
    if ranks is None:
        found = re.search(r"run it with mpiexec -n (\d+)", module.read_text(errors="replace"))
        assert found is not None
        ranks = int(found.group(1))
    lowered = subprocess.run([MLIR_OPT, "--run-reproducer", str(module)], capture_output=True, text=True,
                             timeout=timeout)
    assert lowered.returncode == 0, lowered.stderr[-4000:]
    runnable = module.with_suffix(".llvm.mlir")
    runnable.write_text(strip_for_runner(lowered.stdout))
    ran = subprocess.run([MPIEXEC, "-n", str(ranks), RUNNER, str(runnable), "-e", ENTRY,
                          "--entry-point-result=void", f"--shared-libs={','.join(map(str, LIBRARIES))}"],
                         capture_output=True, text=True, timeout=timeout)
    assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-4000:])
    results: list[np.ndarray] = []
    for chunk in ran.stdout.split("Unranked Memref")[1:]:
        sizes = re.search(r"sizes = \[([\d, ]*)\]", chunk)
        assert sizes is not None, chunk[:200]
        shape = tuple(int(n) for n in sizes.group(1).split(",") if n.strip())
        values = [float(v) for v in _NUMBER.findall(chunk.split("data =", 1)[1])]
        results.append(np.array(values, dtype=np.float64).reshape(shape))
    return results


def sbp_run(program: Path, out: Path, seed: int = 0, *flags: str) -> list[np.ndarray]:
    """`sbp-run PROGRAM --seed SEED --save-outputs OUT`: the reassembled outputs."""
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_main([str(program), "--seed", str(seed), "--save-outputs", str(out), *flags]) == 0
    saved = [np.load(out / f"result{i}.npy") for i in range(len(list(out.glob("result*.npy"))))]
    return [a.view(ml_dtypes.bfloat16) if a.dtype.kind == "V" else a for a in saved]  # .npy keeps bf16 as V2


def compare(got: list[np.ndarray], expected: list[np.ndarray], rtol: float | None = None,
            atol: float = 0.0) -> None:
    """Exact for 16-bit floats and integers, to 1e-5 for wider floats (6 printed digits); with
    `rtol`, every float result to rtol + atol x its largest magnitude."""
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g.shape == e.shape, (i, g.shape, e.shape)
        wide = e.astype(np.float64)
        scale = float(np.nanmax(np.abs(wide))) if wide.size else 0.0
        if e.dtype.kind in "iub" or (rtol is None and e.dtype.itemsize <= 2):  # the digits name one value
            np.testing.assert_array_equal(g.astype(e.dtype).astype(np.float64), wide, err_msg=f"result {i}")
        else:
            np.testing.assert_allclose(g, wide, rtol=1e-5 if rtol is None else rtol,
                                       atol=(1e-6 if rtol is None else atol) * scale, err_msg=f"result {i}")


def check_against_sbp_run(program: Path, tmp_path: Path, seed: int = 0, rtol: float | None = None,
                          atol: float = 0.0, flags: Sequence[str] = ()) -> list[np.ndarray]:
    emit(program, tmp_path / "prog.mpi.mlir", seed, *flags)
    got = run_mpi(tmp_path / "prog.mpi.mlir")
    compare(got, sbp_run(program, tmp_path / "out", seed, *flags), rtol, atol)
    return got


@needs_mpi
def test_seed_example_runs_under_mpiexec(tmp_path: Path) -> None:
    """examples/seed.mlir: an all_to_all on 2 ranks, then the replicating all_gather of the result."""
    got = check_against_sbp_run(ROOT / "examples/seed.mlir", tmp_path, 3)
    assert got[0].shape == (2, 4) and np.any(got[0] != 0)


# Every collective kind (all_gather, all_reduce sum/max, reduce_scatter, all_to_all, all_slice,
# to_partial from B and from S), uneven shards (5 rows on 2 ranks, 4 on 3), a 2x2 mesh, f16, i32, and
# partial inputs (the entry's own B -> P).
KINDS = """sbp.placement @p "cpu" [[0, 1], [2, 3]]
func.func @main(%a: !sbp.tensor<5x6xf32, @p, [S(0), B]>, %b: !sbp.tensor<6x7xf32, @p, [B, S(0)]>,
                %c: !sbp.tensor<5x7xf32, @p, [B, P(max)]>)
    -> (!sbp.tensor<5x7xf32, @p, [S(1), B]>, !sbp.tensor<5x7xf32, @p, [B, B]>, !sbp.tensor<5x7xf32, @p, [B, S(1)]>) {
  %0 = sbp.to_global %a : !sbp.tensor<5x6xf32, @p, [S(0), B]> -> !sbp.tensor<5x6xf32, @p, [B, S(1)]>
  %1 = sbp.matmul %0, %b : !sbp.tensor<5x6xf32, @p, [B, S(1)]>, !sbp.tensor<6x7xf32, @p, [B, S(0)]>
      -> !sbp.tensor<5x7xf32, @p, [B, P]>
  %2 = sbp.to_global %1 : !sbp.tensor<5x7xf32, @p, [B, P]> -> !sbp.tensor<5x7xf32, @p, [S(1), B]>
  %3 = sbp.to_global %c : !sbp.tensor<5x7xf32, @p, [B, P(max)]> -> !sbp.tensor<5x7xf32, @p, [B, B]>
  %4 = sbp.add %3, %2 : !sbp.tensor<5x7xf32, @p, [B, B]>, !sbp.tensor<5x7xf32, @p, [S(1), B]>
      -> !sbp.tensor<5x7xf32, @p, [B, B]>
  %5 = sbp.to_global %4 : !sbp.tensor<5x7xf32, @p, [B, B]> -> !sbp.tensor<5x7xf32, @p, [B, S(0)]>
  %6 = sbp.to_global %5 : !sbp.tensor<5x7xf32, @p, [B, S(0)]> -> !sbp.tensor<5x7xf32, @p, [B, S(1)]>
  func.return %2, %4, %6 : !sbp.tensor<5x7xf32, @p, [S(1), B]>, !sbp.tensor<5x7xf32, @p, [B, B]>,
      !sbp.tensor<5x7xf32, @p, [B, S(1)]>
}
"""
F16_PARTIAL = """sbp.placement @p "cpu" [0, 1, 2]
func.func @main(%a: !sbp.tensor<4x5xf16, @p, [S(1)]>, %b: !sbp.tensor<5x3xf16, @p, [S(0)]>,
                %i: !sbp.tensor<7xi32, @p, [S(0)]>, %s: !sbp.tensor<4x3xf16, @p, [P]>,
                %m: !sbp.tensor<7xi32, @p, [P(max)]>, %t: !sbp.tensor<4x3xf16, @p, [B]>,
                %v: !sbp.tensor<4x3xf16, @p, [S(1)]>)
    -> (!sbp.tensor<4x3xf16, @p, [S(0)]>, !sbp.tensor<7xi32, @p, [B]>) {
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x5xf16, @p, [S(1)]>, !sbp.tensor<5x3xf16, @p, [S(0)]>
      -> !sbp.tensor<4x3xf16, @p, [P]>
  %1 = sbp.add %0, %s : !sbp.tensor<4x3xf16, @p, [P]>, !sbp.tensor<4x3xf16, @p, [P]> -> !sbp.tensor<4x3xf16, @p, [P]>
  %t1 = sbp.to_global %t : !sbp.tensor<4x3xf16, @p, [B]> -> !sbp.tensor<4x3xf16, @p, [P]>
  %v1 = sbp.to_global %v : !sbp.tensor<4x3xf16, @p, [S(1)]> -> !sbp.tensor<4x3xf16, @p, [P]>
  %p1 = sbp.add %1, %t1 : !sbp.tensor<4x3xf16, @p, [P]>, !sbp.tensor<4x3xf16, @p, [P]> -> !sbp.tensor<4x3xf16, @p, [P]>
  %p2 = sbp.add %p1, %v1 : !sbp.tensor<4x3xf16, @p, [P]>, !sbp.tensor<4x3xf16, @p, [P]> -> !sbp.tensor<4x3xf16, @p, [P]>
  %2 = sbp.to_global %p2 : !sbp.tensor<4x3xf16, @p, [P]> -> !sbp.tensor<4x3xf16, @p, [S(0)]>
  %3 = sbp.to_global %i : !sbp.tensor<7xi32, @p, [S(0)]> -> !sbp.tensor<7xi32, @p, [B]>
  %4 = sbp.to_global %m : !sbp.tensor<7xi32, @p, [P(max)]> -> !sbp.tensor<7xi32, @p, [B]>
  %5 = sbp.add %3, %4 : !sbp.tensor<7xi32, @p, [B]>, !sbp.tensor<7xi32, @p, [B]> -> !sbp.tensor<7xi32, @p, [B]>
  func.return %2, %5 : !sbp.tensor<4x3xf16, @p, [S(0)]>, !sbp.tensor<7xi32, @p, [B]>
}
"""
# bf16 partials (gathered, summed in order), i8 and i1 gathers (bits; i1 as i8), a 0-d partial.
DTYPES = """sbp.placement @p "cpu" [0, 1, 2]
func.func @main(%a: !sbp.tensor<4x5xbf16, @p, [S(1)]>, %b: !sbp.tensor<5x3xbf16, @p, [S(0)]>,
                %k: !sbp.tensor<7xi8, @p, [S(0)]>, %s: !sbp.tensor<5xf32, @p, [S(0)]>,
                %q: !sbp.tensor<7xi1, @p, [S(0)]>)
    -> (!sbp.tensor<4x3xbf16, @p, [B]>, !sbp.tensor<7xi8, @p, [B]>, !sbp.tensor<f32, @p, [B]>,
        !sbp.tensor<7xi1, @p, [B]>) {
  %0 = sbp.matmul %a, %b : !sbp.tensor<4x5xbf16, @p, [S(1)]>, !sbp.tensor<5x3xbf16, @p, [S(0)]>
      -> !sbp.tensor<4x3xbf16, @p, [P]>
  %1 = sbp.to_global %0 : !sbp.tensor<4x3xbf16, @p, [P]> -> !sbp.tensor<4x3xbf16, @p, [B]>
  %2 = sbp.to_global %k : !sbp.tensor<7xi8, @p, [S(0)]> -> !sbp.tensor<7xi8, @p, [B]>
  %3 = sbp.reduce_sum %s {axes = array<i64: 0>} : !sbp.tensor<5xf32, @p, [S(0)]> -> !sbp.tensor<f32, @p, [P]>
  %4 = sbp.to_global %3 : !sbp.tensor<f32, @p, [P]> -> !sbp.tensor<f32, @p, [B]>
  %5 = sbp.to_global %q : !sbp.tensor<7xi1, @p, [S(0)]> -> !sbp.tensor<7xi1, @p, [B]>
  func.return %1, %2, %4, %5 : !sbp.tensor<4x3xbf16, @p, [B]>, !sbp.tensor<7xi8, @p, [B]>,
      !sbp.tensor<f32, @p, [B]>, !sbp.tensor<7xi1, @p, [B]>
}
"""
PROGRAMS = {"kinds": KINDS, "f16_partial": F16_PARTIAL, "dtypes": DTYPES}


@needs_mpi
@pytest.mark.parametrize("name", ["kinds", "f16_partial", pytest.param("dtypes", marks=pytest.mark.exhaustive)])
def test_collectives_and_uneven_shards(name: str, tmp_path: Path) -> None:
    program = tmp_path / f"{name}.mlir"
    program.write_text(PROGRAMS[name])
    check_against_sbp_run(program, tmp_path, 1)


def test_two_mesh_sizes_are_a_located_error(tmp_path: Path) -> None:
    """MPI rank r is rank r of every placement: placements of different sizes are refused, located."""
    program = tmp_path / "two.mlir"
    program.write_text('sbp.placement @q "cpu" [0, 1, 2]\n' + (ROOT / "examples/seed.mlir").read_text())
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert translate_main([str(program), "--emit-mlir=mpi", "-o", str(tmp_path / "out.mlir")]) == 1
    assert re.match(r".*two\.mlir:1:1: error: sbp.placement: --emit-mlir=mpi runs one mesh: the placements "
                    r"have \[2, 3\] ranks", err.getvalue()), err.getvalue()


@needs_mpi
def test_wrong_rank_count_is_an_error(tmp_path: Path) -> None:
    """Run on 3 processes, the 2-rank program stops with the count it needs."""
    emit(ROOT / "examples/seed.mlir", tmp_path / "seed.mpi.mlir")
    with pytest.raises(AssertionError, match="the mesh \\[2\\] has 2 ranks: run it with mpiexec -n 2"):
        run_mpi(tmp_path / "seed.mpi.mlir", ranks=3)


# The examples, 8 ranks each: mlp_tp (f16, relu: bitwise) and fmod (f32) as sbp-run computes them;
# the blocks' exp/tanh/sqrt come from LLVM's math, not numpy's, so they agree to a few ulps (f32) or
# f16 roundings that flip and propagate (transformer_block: 1-4 f16 ulps on 11 % of the elements).
EXAMPLES = {"mlp_tp": (None, 0.0), "fmod": (None, 0.0), "gpt_block_megatron": (1e-4, 1e-5),
            "transformer_block": (4e-3, 1e-3), "gpt_block": (1e-4, 1e-5), "mlp_train": (1e-4, 1e-5)}
GLOBAL = "infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize"
PIPELINES = {"gpt_block": GLOBAL, "mlp_train": GLOBAL}  # free weights
STEP = "autodiff{optimizer=adamw lr=0.001}"
"""mlp_train runs as the README makes it: one AdamW step (`sbp-opt -p autodiff{...}`) first."""


@needs_mpi
@pytest.mark.exhaustive
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_examples_under_mpiexec(example: str, tmp_path: Path) -> None:
    program = ROOT / "examples" / f"{example}.mlir"
    if example == "mlp_train":
        step = tmp_path / "step.mlir"
        assert opt_main([str(program), "-p", STEP, "-o", str(step)]) == 0
        program = step
    flags = ["--pipeline", PIPELINES[example]] if example in PIPELINES else []
    check_against_sbp_run(program, tmp_path, 0, *EXAMPLES[example], flags=flags)
