"""`import sbpc` gives a small Python API (SPEC §6, issue 11 point 8b): the same results and the same
located errors as the command-line tools."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import sbpc
from sbpc.dialects.context import sbp_context
from sbpc.runtime import engine
from sbpc.runtime.pipeline import DEFAULT_PIPELINE, checked_pipeline
from sbpc.tools import sbp_opt
from sbpc.tools.sbp_run import run_captured

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = os.path.join(ROOT, "examples", "seed.mlir")
WRONG = os.path.join(ROOT, "test", "tools", "sbp-run", "wrong_program.mlir")


def sbp_opt_output(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = sbp_opt.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_parse_prints_what_sbp_opt_prints() -> None:
    program = sbpc.parse_file(SEED)
    assert str(program) == sbp_opt_output(SEED)[1]


@pytest.mark.parametrize("pipeline", ["infer-sbp", "infer-sbp{rule=cost},materialize-boxing,lower-boxing",
                                      sbpc.DEFAULT_PIPELINE])
def test_compile_is_sbp_opt_with_that_pipeline(pipeline: str) -> None:
    program = sbpc.parse_file(SEED)
    compiled = sbpc.compile(program, pipeline)
    assert str(compiled) == sbp_opt_output(SEED, "-p", pipeline)[1]
    assert str(program) == sbp_opt_output(SEED)[1]  # on a copy: the parsed program is unchanged


@pytest.mark.parametrize("rule", ["oneflow", "cost"])
def test_report_is_the_json_report(rule: str) -> None:
    program = sbpc.parse_file(SEED)
    code, _, err = sbp_opt_output(SEED, f"--infer-sbp=rule={rule}", "--sbp-report=json")
    assert code == 0
    assert sbpc.report(program, rule) == json.loads(err)
    assert sbpc.report_text(program, rule) == sbp_opt_output(SEED, f"--infer-sbp=rule={rule}", "--sbp-report")[2]
    chosen = sbpc.report(program, rule)["ops"][0]
    assert chosen["chosen"] == "[S(0)], [S(0)] -> [S(0)]"
    assert str(program) == sbp_opt_output(SEED)[1]  # the report leaves the program as it was


def test_run_is_sbp_run() -> None:
    result = sbpc.run(sbpc.parse_file(SEED), seed=3)
    code, text = run_captured([SEED, "--check", "--seed", "3"])
    assert code == 0 and result.ok and result.checked
    assert result.collectives == ["all_to_all mesh_axes=[0] S(1)->S(0) f32[2,4]: bytes sent per rank [8, 8]"]
    assert (result.bytes_sent, result.modelled_bytes) == (16, 16)
    assert text.splitlines() == [*result.collectives, "total bytes sent: 16 (all ranks); cost model: 16",
                                 "check: OK (result 0: exact)"]
    t1, t2 = result.inputs
    np.testing.assert_array_equal(result.outputs[0], t1 + t2)


def test_the_engine_runs_as_its_docstring_says() -> None:
    """`runtime.engine`, which `sbpc.run` and `sbp-run` both call, with plain values (no command line)."""
    ctx = sbp_context()
    module, located = engine.parse(ctx, engine.read_source(SEED))
    fn = engine.entry_function(module, "main", located)
    types = engine.argument_types(module, fn, located)
    rng = np.random.default_rng(3)
    result = engine.run(ctx, module, located, engine.random_inputs(types, rng), checked_pipeline(DEFAULT_PIPELINE),
                        rng)
    assert result is not None and not result.checked
    engine.check(result, module, located)
    assert result.ok and result.checked
    assert result.log == [*sbpc.run(sbpc.parse_file(SEED), seed=3).collectives,
                          "total bytes sent: 16 (all ranks); cost model: 16"]


@pytest.mark.torch
def test_run_on_torch_is_sbp_run_backend_torch() -> None:
    """`backend="torch"`: the same program on forked torch.distributed ranks (gloo), the same
    outputs and bytes as the simulator; a bad backend name or a wrong program is an `sbpc.Error`."""
    program = sbpc.parse_file(SEED)
    simulated = sbpc.run(program, seed=3)
    result = sbpc.run(program, seed=3, backend="torch")
    assert result.ok and result.checked
    assert (result.bytes_sent, result.modelled_bytes) == (16, 16)
    assert len(result.collectives) == 1 and result.collectives[0].startswith("all_to_all mesh_axes=[0] S(1)->S(0)")
    np.testing.assert_array_equal(result.outputs[0], simulated.outputs[0])
    x = np.arange(12, dtype=np.int32).reshape(4, 3)
    wrong = sbpc.run(sbpc.parse_file(WRONG), [x, x], pipeline="", backend="torch")
    assert not wrong.ok and wrong.mismatches[0].startswith("result 0 (i32[4,3][P] @p): ")
    with pytest.raises(sbpc.Error, match=r"^error: unknown backend 'mpi' \(allowed: simulator, torch\)$"):
        sbpc.run(program, backend="mpi")


def test_run_with_given_inputs_and_a_wrong_program() -> None:
    x = np.arange(12, dtype=np.int32).reshape(4, 3)
    result = sbpc.run(sbpc.parse_file(WRONG), [x, x], pipeline="")
    assert not result.ok
    assert len(result.mismatches) == 1 and result.mismatches[0].startswith("result 0 (i32[4,3][P] @p): ")
    replicas = sbpc.run(sbpc.parse_file(WRONG), entry="replicas", pipeline="", check=False)
    assert replicas.mismatches == ["result 0 (f32[4,3][B] @p): broadcast replicas differ on mesh axis 0"]
    assert replicas.outputs == [None]


def test_errors_are_located() -> None:
    with pytest.raises(sbpc.Error, match=r"^bad\.mlir:2:29: error: split axis 3 out of range for a rank-1 tensor"):
        sbpc.parse('sbp.placement @p "cpu" [0, 1]\nfunc.func @f(%x: !sbp.tensor<4xf32, @p, [S(3)]>) {\n'
                   "  func.return\n}\n", "bad.mlir")
    program = sbpc.parse_file(SEED)
    with pytest.raises(sbpc.Error, match=r"^error: bad pipeline: unknown pass 'nope'"):
        sbpc.compile(program, "nope")
    with pytest.raises(sbpc.Error, match=r"^error: unknown kernels 'cuda' \(allowed: numpy, ascendc-cpu\)$"):
        sbpc.run(program, kernels="cuda")  # type: ignore[arg-type]
    with pytest.raises(sbpc.Error, match=r"input 1 is float64\[2, 4\], but argument 1 of @main is float32\[2, 4\]"):
        sbpc.run(program, [np.zeros((2, 4), np.float32), np.zeros((2, 4))])
    with pytest.raises(sbpc.Error, match="@nope"):
        sbpc.run(program, entry="nope")
    with pytest.raises(sbpc.Error, match="unknown rule 'foo' \\(allowed: oneflow, cost, global\\)"):
        sbpc.report(program, "foo")
    with pytest.raises(sbpc.Error, match="cannot read"):
        sbpc.parse_file(os.path.join(ROOT, "no-such-file.mlir"))


def test_importing_a_subpackage_does_not_load_the_api(tmp_path) -> None:
    """Nor does the API load the command-line drivers: it runs on `sbpc.runtime.engine`."""
    code = ("import sys, sbpc.dialects.sbp; assert 'sbpc.api' not in sys.modules; import sbpc; sbpc.parse; "
            "assert 'sbpc.api' in sys.modules; assert not [m for m in sys.modules if m.startswith('sbpc.tools')]; "
            "print(' '.join(sbpc.__all__)); print(' '.join(dir(sbpc)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout
    exported, listed = (line.split() for line in out.splitlines())
    api = {"DEFAULT_PIPELINE", "Error", "Program", "RunResult", "compile", "parse", "parse_file", "report",
           "report_text", "run"}
    assert set(exported) == {"__version__", *api, "from_torch", "parallelize"}
    assert api <= set(listed)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sbpc.nope
