"""Regression tests for issue 11 point 5: inputs a new user tried that ended in an internal error.

Each bad input must give exit code 1, a located `FILE:LINE:COL: error:` line (or, for a bad command
line, one `error:` line) and no traceback; each valid one must run and give the right result. The
drivers run in-process (their `main`), output captured.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

from sbpc.runtime.pipeline import DEFAULT_PIPELINE as PIPELINE
from sbpc.tools import sbp_opt, sbp_run, sbp_translate

pytestmark = pytest.mark.usefixtures("cached_plugin_discovery")

EXAMPLES = Path(__file__).parents[2] / "examples"


class Run(NamedTuple):
    """Exit code and captured streams of one in-process driver run; `output` is both streams."""

    code: int
    stdout: str
    stderr: str
    output: str


def _run(main: Callable[[Sequence[str]], int], args: Sequence[str]) -> Run:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as stop:  # --list-passes and --version end through argparse
            code = int(stop.code or 0)
    return Run(code, out.getvalue(), err.getvalue(), out.getvalue() + err.getvalue())


def opt(*args: str | Path) -> Run:
    return _run(sbp_opt.main, [str(a) for a in args])


def run(*args: str | Path) -> Run:
    return _run(sbp_run.main, [str(a) for a in args])


def translate(*args: str | Path) -> Run:
    return _run(sbp_translate.main, [str(a) for a in args])


def write(tmp_path: Path, text: str | bytes, name: str = "input.mlir") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def assert_located(result: Run, path: Path, line: int, message: str, col: int | None = None) -> None:
    """Exit 1, `PATH:LINE:COL: error: ...message...` on stderr, no traceback, no internal error."""
    assert result.code == 1, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    where = rf"{re.escape(str(path))}:{line}:{col if col is not None else r'[0-9]+'}: error: "
    found = re.search(where + r"(.*)", result.stderr)
    assert found is not None, result.output
    assert message in found.group(1), result.output


def assert_usage_error(result: Run, message: str) -> None:
    assert result.code == 1, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    assert re.search(r"^error: .*" + re.escape(message), result.stderr, re.MULTILINE), result.output


# ---------------------------------------------------------------------------
# Types that appear only in a function signature
# ---------------------------------------------------------------------------

SIGNATURES = {
    "nd_sbp_length": (
        'sbp.placement @p "cpu" [0, 1]\n'
        "func.func @main(%a: !sbp.tensor<4xf32, @p, [S(0), B]>) -> !sbp.tensor<4xf32, @p, [S(0), B]> {\n"
        "  func.return %a : !sbp.tensor<4xf32, @p, [S(0), B]>\n}\n",
        "func.func @main: argument 0 has ND-SBP [S(0), B] of length 2, but placement @p has hierarchy [2] of rank 1",
    ),
    "unknown_placement": (
        'sbp.placement @p "cpu" [0, 1]\n'
        "func.func @main(%a: !sbp.tensor<4xf32, @nope, [S(0)]>) {\n  func.return\n}\n",
        "func.func @main: argument 0 refers to unknown placement @nope",
    ),
    "non_placement_symbol": (
        'sbp.placement @p "cpu" [0, 1]\n'
        "func.func private @g(!sbp.tensor<4xf32, @main, [S(0)]>)\n"
        "func.func @main() {\n  func.return\n}\n",
        "func.func @g: argument 0 refers to @main, which is a func.func, not an sbp.placement",
    ),
    "layout_extents": (
        'sbp.placement @p "cpu" [0, 1]\n'
        "func.func private @main() -> !sbp.tensor<4x4xf32, @p, [S(0)], layout = #sbp.layout<(4,4):(4,1)>>\n",
        "func.func @main: result 0 layout (4,4):(4,1) has extents [4, 4], but the largest local shard is [2, 4]",
    ),
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature_types_are_verified(name: str, tmp_path: Path) -> None:
    text, message = SIGNATURES[name]
    path = write(tmp_path, text)
    assert_located(opt(path), path, 2, message, col=1)


def test_signature_types_are_verified_before_the_full_pipeline(tmp_path: Path) -> None:
    path = write(tmp_path, SIGNATURES["nd_sbp_length"][0])  # was an IndexError in the pipeline
    assert_located(run(path), path, 2, "has ND-SBP [S(0), B] of length 2", col=1)
    assert_located(translate(path, "--emit-ascendc", "-o", tmp_path / "out"), path, 2, "of length 2", col=1)


def test_a_matching_layout_in_a_signature_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, SIGNATURES["layout_extents"][0].replace("(4,4):(4,1)", "(2,4):(4,1)"))
    result = opt(path)
    assert result.code == 0, result.output
    assert "layout = #sbp.layout<(2,4):(4,1)>" in result.stdout


# ---------------------------------------------------------------------------
# The per-rank output of the default pipeline, fed back
# ---------------------------------------------------------------------------


@pytest.fixture
def per_rank(tmp_path: Path) -> Path:
    path = tmp_path / "per_rank.mlir"
    result = opt(EXAMPLES / "seed.mlir", "-p", PIPELINE, "-o", path)
    assert result.code == 0, result.output
    return path


def test_sbp_run_runs_a_per_rank_program(per_rank: Path) -> None:
    result = run(per_rank, "--check")
    assert result.code == 0, result.output
    assert "all_to_all mesh_axes=[0] S(1)->S(0) f32[2,4]: bytes sent per rank [8, 8]" in result.stdout
    assert result.stdout.rstrip().endswith("check: OK (result 0: exact)")
    assert result.stdout == run(EXAMPLES / "seed.mlir", "--check").stdout  # as the global program


@pytest.mark.parametrize("flags", [("--infer-sbp",), ("--sbp-report",), ("-p", PIPELINE)])
def test_inference_on_a_per_rank_program_is_a_located_error(per_rank: Path, flags: tuple[str, ...]) -> None:
    assert_located(opt(per_rank, *flags), per_rank, 3, "func.func @main is already per-rank", col=3)


def test_sbp_run_with_inference_on_a_per_rank_program_is_a_located_error(per_rank: Path) -> None:
    assert_located(run(per_rank, "--pipeline", "infer-sbp"), per_rank, 3, "already per-rank", col=3)


def test_spmdize_leaves_a_per_rank_program_as_it_is(per_rank: Path) -> None:
    result = opt(per_rank, "-p", "spmdize")
    assert result.code == 0, result.output
    assert result.stdout == per_rank.read_text(encoding="utf-8")  # used to drop sbp.sbp / sbp.global_shape


# ---------------------------------------------------------------------------
# Bytes that are not UTF-8
# ---------------------------------------------------------------------------

NOT_UTF8 = b'sbp.placement @p "cpu" [0, 1] // caf\xe9\n'


def test_non_utf8_bytes_are_located_in_every_driver(tmp_path: Path) -> None:
    path = write(tmp_path, NOT_UTF8)
    for result in (opt(path), run(path), translate(path, "--emit-ascendc", "-o", tmp_path / "out")):
        assert_located(result, path, 1, "invalid UTF-8 byte 0xe9", col=37)


def test_non_utf8_bytes_on_a_later_line(tmp_path: Path) -> None:
    path = write(tmp_path, b'sbp.placement @p "cpu" [0, 1]\n// \xff\xfe\n')
    assert_located(opt(path, "--split-input-file"), path, 2, "invalid UTF-8 byte 0xff", col=4)


# ---------------------------------------------------------------------------
# sbp-translate -o FILE
# ---------------------------------------------------------------------------

FMOD = (
    'sbp.placement @p "cpu" [0, 1]\n'
    "func.func @main(%a: !sbp.tensor<{shape}f32, @p, [{sbp}]>) -> !sbp.tensor<{shape}f32, @p, [{sbp}]> {{\n"
    "  %0 = sbp.fmod_scalar %a, 0.7 : f32 : !sbp.tensor<{shape}f32, @p, [{sbp}]>"
    " -> !sbp.tensor<{shape}f32, @p, [{sbp}]>\n"
    "  func.return %0 : !sbp.tensor<{shape}f32, @p, [{sbp}]>\n}}\n"
)


def test_translate_into_an_existing_file_is_a_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path, FMOD.format(shape="8x", sbp="S(0)"))
    target = write(tmp_path, "not a directory", "out")
    assert_usage_error(translate(path, "--emit-ascendc", "-o", target), "exists and is not a directory")
    assert target.read_text(encoding="utf-8") == "not a directory"
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "fmod_scalar").write_text("", encoding="utf-8")  # a file where a project directory goes
    assert_usage_error(translate(path, "--emit-ascendc", "-o", blocked), "cannot write the kernel projects")


# ---------------------------------------------------------------------------
# Huge literals, huge placements, huge dimensions, huge tensors
# ---------------------------------------------------------------------------


def test_a_ten_million_digit_integer_is_located(tmp_path: Path) -> None:
    path = write(tmp_path, 'sbp.placement @p "cpu" [' + "9" * 10**7 + "]\n")
    result = opt(path)
    assert_located(result, path, 1, "integer literal of 10000000 digits is too long (at most 4300)", col=25)
    assert len(result.stderr) < 2000  # the source line is shown as a window, not ten megabytes


def test_a_placement_of_1e5_ranks_with_a_duplicate_is_fast(tmp_path: Path) -> None:
    ranks = [*range(10**5), 7]
    path = write(tmp_path, 'sbp.placement @p "cpu" [' + ", ".join(map(str, ranks)) + "]\n")
    start = time.perf_counter()
    result = opt(path)
    assert time.perf_counter() - start < 30  # the quadratic check took > 60 s
    assert_located(result, path, 1, "sbp.placement @p: duplicate ranks [7]", col=1)


@pytest.mark.parametrize("ty", ["!sbp.tensor<9223372036854775808xf32, @p, [S(0)]>",
                                "tensor<4x9223372036854775808xf32>"])
def test_dimensions_past_int64_are_rejected(ty: str, tmp_path: Path) -> None:
    path = write(tmp_path, f'sbp.placement @p "cpu" [0, 1]\n"test.op"() {{t = {ty}}} : () -> ()\n')
    assert_located(opt(path), path, 2, "dimension 9223372036854775808 does not fit in a 64-bit integer")


def test_the_largest_int64_dimension_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, '"test.op"() {t = tensor<9223372036854775807xf32>} : () -> ()\n')
    result = opt(path)
    assert result.code == 0, result.output
    assert "tensor<9223372036854775807xf32>" in result.stdout


def test_sbp_run_refuses_tensors_larger_than_memory_up_front(tmp_path: Path) -> None:
    path = write(tmp_path, FMOD.format(shape="100000x100000x1000x", sbp="S(0)"))
    result = run(path)
    # argument, fmod result: 2 x 4e13 bytes (36.4 TiB each)
    assert_located(result, path, 2, "@main needs at least 72.8 TiB for its global tensors, more than this machine's")
    assert "(largest: argument 0 f32[100000,100000,1000][S(0)] @p, 36.4 TiB)" in result.stderr


# ---------------------------------------------------------------------------
# fmod on 0-d tensors with the Ascend C kernels
# ---------------------------------------------------------------------------

FMOD_0D = (
    'sbp.placement @p "cpu" [0, 1]\n'
    "func.func @main(%a: !sbp.tensor<f32, @p, [B]>, %b: !sbp.tensor<f32, @p, [B]>) -> !sbp.tensor<f32, @p, [B]> {\n"
    "  %0 = sbp.fmod %a, %b : !sbp.tensor<f32, @p, [B]>, !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<f32, @p, [B]>\n"
    "  func.return %0 : !sbp.tensor<f32, @p, [B]>\n}\n"
)


@pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU shim needs g++")
@pytest.mark.parametrize("text", [FMOD_0D, FMOD.format(shape="", sbp="B")], ids=["fmod", "fmod_scalar"])
def test_fmod_on_0d_tensors_runs_with_ascendc_kernels(text: str, tmp_path: Path) -> None:
    import numpy as np

    path = write(tmp_path, text)
    np.save(tmp_path / "a.npy", np.array(5.5, np.float32))
    np.save(tmp_path / "b.npy", np.array(2.0, np.float32))
    inputs = "a.npy,b.npy" if "%b" in text else "a.npy"
    inputs = ",".join(str(tmp_path / p) for p in inputs.split(","))
    result = run(path, "--kernels", "ascendc-cpu", "--check", "--inputs", inputs, "--save-outputs", tmp_path / "out")
    assert result.code == 0, result.output
    assert "check: OK" in result.stdout
    got = np.load(tmp_path / "out" / "result0.npy")
    assert got.shape == ()
    # the value of the kernel on a 1-element shard (the TBE formula: 5.5 fmod 0.7 is 0.5999999, not C's 0.6000001)
    from sbpc.lowering.ascendc.fmod_reference import fmod_scalar_reference, fmod_tensor_reference

    one, two = np.array([5.5], np.float32), np.array([2.0], np.float32)
    want = fmod_tensor_reference(one, two) if "%b" in text else fmod_scalar_reference(one, 0.7)
    assert got == want[0] and got == np.float32(1.5 if "%b" in text else 0.5999999)


# ---------------------------------------------------------------------------
# Planner errors point at the op that needs the boxing
# ---------------------------------------------------------------------------


def test_a_planner_error_points_at_the_to_global(tmp_path: Path) -> None:
    path = write(tmp_path, (
        'sbp.placement @p "cpu" [0, 1]\n'
        "func.func @main(%a: !sbp.tensor<4xf32, @p, [S(0)]>) -> !sbp.tensor<4xf32, @p> {\n"
        "  %0 = sbp.to_global %a : !sbp.tensor<4xf32, @p, [S(0)]> -> !sbp.tensor<4xf32, @p>\n"
        "  func.return %0 : !sbp.tensor<4xf32, @p>\n}\n"
    ))  # the boxing's operand is an argument: the error used to point at func.func (line 2)
    result = opt(path, "-p", "materialize-boxing,lower-boxing")
    assert_located(result, path, 3, "boxing types must carry ND-SBPs", col=3)


def test_a_planner_error_points_at_the_consumer(tmp_path: Path) -> None:
    path = write(tmp_path, (
        'sbp.placement @p "cpu" [0, 1]\n'
        "func.func @main(%a: !sbp.tensor<4xf32, @p>) -> !sbp.tensor<4xf32, @p, [S(0)]> {\n"
        "  %0 = sbp.neg %a {sbp.signature = #sbp.sig<[S(0)] -> [S(0)]>} : !sbp.tensor<4xf32, @p> -> "
        "!sbp.tensor<4xf32, @p, [S(0)]>\n"
        "  func.return %0 : !sbp.tensor<4xf32, @p, [S(0)]>\n}\n"
    ))  # the box is made for the neg; its operand is an argument
    result = opt(path, "-p", "materialize-boxing,lower-boxing")
    assert_located(result, path, 3, "boxing types must carry ND-SBPs", col=3)


# ---------------------------------------------------------------------------
# Pass options, the registry, --list-passes, --version, --pass-pipeline
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("option", "allowed"), [
    ("--infer-sbp=rule=foo", "pass 'infer-sbp': rule=foo is not allowed (allowed: oneflow, cost, global)"),
    ("--lower-boxing=planner=fast", "pass 'lower-boxing': planner=fast is not allowed (allowed: optimal, oneflow)"),
    ("--lower-to-ascendc=soc=ascend310p", "soc=ascend310p is not allowed (allowed: ascend910b, ascend910b1"),
    ("--infer-sbp=rules=cost", "pass 'infer-sbp' has no option 'rules' (options: rule=oneflow | cost"),
])
def test_bad_pass_options_are_rejected_before_reading_the_input(option: str, allowed: str, tmp_path: Path) -> None:
    missing = tmp_path / "missing.mlir"  # never read: the option is wrong first
    assert_usage_error(opt(missing, option), allowed)


def test_bad_pipelines_of_sbp_run_and_sbp_translate_come_before_the_input(tmp_path: Path) -> None:
    missing = tmp_path / "missing.mlir"
    assert_usage_error(run(missing, "--pipeline", "infer-sbp{rule=foo}"), "rule=foo is not allowed (allowed: oneflow")
    assert_usage_error(translate(missing, "--emit-ascendc", "-o", tmp_path / "o", "--soc", "nope"),
                       "soc=nope is not allowed")


def test_list_passes_names_every_pass_option_and_value() -> None:
    result = opt("--list-passes")
    assert result.code == 0, result.output
    lines = result.stdout.splitlines()
    names = [line.split(":")[0] for line in lines if not line.startswith(" ")]
    assert names == ["autodiff", "infer-sbp", "materialize-boxing", "lower-boxing", "spmdize", "report",
                     "lower-to-ascendc"]
    assert "    rule=oneflow | cost | global (default oneflow)" in lines
    assert "    mem=BYTES (rule=global only; e.g. 64MiB, 2GiB) (optional)" in lines
    assert "    planner=optimal | oneflow (default optimal)" in lines
    assert "    format=text | json | dot (default text)" in lines
    soc = "    soc=ascend910b | ascend910b1 | ascend910b2 | ascend910b3 | ascend910b4 | ascend910_93"
    soc += " (default ascend910b)"
    assert soc in lines


def test_version_names_sbpc() -> None:
    from sbpc import __version__

    result = opt("--version")
    assert result.code == 0, result.output
    assert result.stdout.startswith(f"sbp-opt (sbpc) {__version__}, built on xdsl ")


def test_pass_pipeline_in_mlir_syntax(tmp_path: Path) -> None:
    anchored = opt(EXAMPLES / "seed.mlir", "--pass-pipeline=builtin.module(infer-sbp{rule=cost},materialize-boxing)")
    plain = opt(EXAMPLES / "seed.mlir", "-p", "infer-sbp{rule=cost},materialize-boxing")
    assert anchored.code == 0 and plain.code == 0, anchored.output + plain.output
    assert anchored.stdout == plain.stdout and "sbp.boxing" in plain.stdout
    assert_usage_error(opt(EXAMPLES / "seed.mlir", "--pass-pipeline=func.func(spmdize)"),
                       "only the builtin.module anchor is supported")


def test_the_pass_registry_does_not_import_lowering() -> None:
    import subprocess
    import sys

    code = ("import sys, sbpc.passes.registry as r; r.get_all_passes(); "
            "print(any(m.startswith('sbpc.lowering') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------
# --verify-diagnostics and --split-input-file
# ---------------------------------------------------------------------------

BAD_CHUNK = 'sbp.placement @p "cpu" [[0, 1], [2]]\n'
GOOD_CHUNK = 'sbp.placement @q "cpu" [0, 1]\n'


def test_verify_diagnostics_fails_on_an_unexpected_error(tmp_path: Path) -> None:
    path = write(tmp_path, BAD_CHUNK)
    result = opt(path, "--verify-diagnostics")
    assert result.code == 1, result.output
    assert f"{path}:1:24: error: placement ranks must form a rectangular nested list" in result.stdout
    assert "unexpected error:" in result.stderr


def test_verify_diagnostics_passes_on_expected_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "// expected-error @+1 {{rectangular}}\n" + BAD_CHUNK)
    result = opt(path, "--verify-diagnostics")
    assert result.code == 0, result.output
    assert result.stderr == ""


def test_split_input_file_goes_on_after_a_failing_chunk(tmp_path: Path) -> None:
    path = write(tmp_path, BAD_CHUNK + "// -----\n" + GOOD_CHUNK + "// -----\n" + BAD_CHUNK)
    result = opt(path, "--split-input-file")
    assert_located(result, path, 1, "placement ranks must form a rectangular nested list", col=24)
    assert f"{path}:5:24: error: placement ranks" in result.stderr  # the third chunk was processed too
    assert 'sbp.placement @q "cpu" [0, 1]' in result.stdout
