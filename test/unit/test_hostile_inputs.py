"""Regression tests for issue 22 point 2: hostile inputs that ended in an unlocated internal error.

Each must end as a located `FILE:LINE:COL: error:` (exit 1, no traceback, no "internal error"), a
clear usage error, or a correct run. The drivers run in-process (their `main`), output captured.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

from sbpc.tools import sbp_opt, sbp_run, sbp_translate

pytestmark = pytest.mark.usefixtures("cached_plugin_discovery")

EXAMPLES = Path(__file__).parents[2] / "examples"


class Run(NamedTuple):
    code: int
    stdout: str
    stderr: str


def _run(main: Callable[[Sequence[str]], int], args: Sequence[str | Path]) -> Run:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as stop:  # argparse's usage errors
            code = int(stop.code or 0)
    return Run(code, out.getvalue(), err.getvalue())


def opt(*args: str | Path) -> Run:
    return _run(sbp_opt.main, args)


def run(*args: str | Path) -> Run:
    return _run(sbp_run.main, args)


def translate(*args: str | Path) -> Run:
    return _run(sbp_translate.main, args)


def assert_clean(result: Run) -> None:
    text = result.stdout + result.stderr
    assert "Traceback" not in text and "internal error" not in text, text


def assert_located(result: Run, path: Path, line: int, message: str) -> None:
    assert result.code == 1, result
    assert_clean(result)
    found = re.search(rf"{re.escape(str(path))}:{line}:[0-9]+: error: (.*)", result.stderr)
    assert found is not None, result.stderr
    assert message in found.group(1), result.stderr


# ---------------------------------------------------------------------------
# --emit-mlir=global on a 0-d tensor (an IndexError)
# ---------------------------------------------------------------------------

ZERO_D = """sbp.placement @p "cpu" [0, 1]
func.func @main(%a: !sbp.tensor<4x8xf32, @p, [S(0)]>, %b: !sbp.tensor<f32, @p, [B]>) -> !sbp.tensor<f32, @p> {
  %s = sbp.reduce_sum %a {axes = array<i64: 0, 1>} : !sbp.tensor<4x8xf32, @p, [S(0)]> -> !sbp.tensor<f32, @p>
  %c = sbp.add %s, %b : !sbp.tensor<f32, @p>, !sbp.tensor<f32, @p, [B]> -> !sbp.tensor<f32, @p>
  func.return %c : !sbp.tensor<f32, @p>
}
"""


def test_emit_mlir_global_exports_0d_tensors(tmp_path: Path) -> None:
    path = tmp_path / "zero_d.mlir"
    path.write_text(ZERO_D)
    result = translate(path, "--emit-mlir=global")
    assert result.code == 0, result
    assert "split_axes = #shard<axisarray[[]]>" in result.stdout
    assert 'sbp.pending = "P on grid axis 0"' in result.stdout
    back = tmp_path / "back.mlir"
    back.write_text(result.stdout)
    imported = translate("--import-shard", back)
    assert imported.code == 0, imported
    assert "!sbp.tensor<f32, @p, [P]>" in imported.stdout
    if shutil.which("mlir-opt-22") is not None:  # valid for MLIR's own verifier
        subprocess.run(["mlir-opt-22", "--verify-each", str(back)], check=True, capture_output=True)


# ---------------------------------------------------------------------------
# --import-shard: shardings and grids that crashed the importer
# ---------------------------------------------------------------------------


def _shard_program(grid: str, sharding: str) -> str:
    return (f"{grid}\n"
            "func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
            f"  %s = {sharding}\n"
            "  %xs = shard.shard %x to %s : tensor<8x8xf32>\n"
            "  return %xs : tensor<8x8xf32>\n"
            "}\n")


_GENERIC_SHARDING = ('"shard.sharding"() <{{grid = @mesh, split_axes = {axes}, static_halo_sizes = array<i64>, '
                     'static_sharded_dims_offsets = array<i64>, operandSegmentSizes = array<i32: 0, 0>}}> : '
                     '() -> !shard.sharding')
_SHARDING = "shard.sharding @mesh split_axes = {axes} : !shard.sharding"

IMPORT_ERRORS = {
    "split_axis_past_the_grid": (
        _shard_program("shard.grid @mesh(shape = 2)", _SHARDING.format(axes="[[1]]")), 3,
        "grid axis 1 is not an axis of @mesh (shape [2])"),
    "split_axes_a_string": (
        _shard_program("shard.grid @mesh(shape = 2)", _GENERIC_SHARDING.format(axes='"a"')), 3,
        'shard.sharding: "a" should be of base attribute shard.axisarray'),
    "split_axes_a_plain_array": (
        _shard_program("shard.grid @mesh(shape = 2)", _GENERIC_SHARDING.format(axes="[array<i16: 5>]")), 3,
        "should be of base attribute shard.axisarray"),
    "grid_axis_past_i16": (
        _shard_program("shard.grid @mesh(shape = 2)", _SHARDING.format(axes="[[32768]]")), 3,
        "shard.sharding: value out of range for its type (-32768 <= value <= 32767)"),
    "grid_of_2_62_devices": (
        _shard_program("shard.grid @mesh(shape = 4611686018427387904)", _SHARDING.format(axes="[[0]]")), 1,
        "has 4611686018427387904 devices; sbpc imports grids of at most 1048576 devices"),
    "grid_of_10_12_devices": (
        _shard_program("shard.grid @mesh(shape = 1000000x1000000)", _SHARDING.format(axes="[[0]]")), 1,
        "has 1000000000000 devices"),
    "grid_product_past_int64": (
        _shard_program("shard.grid @mesh(shape = 9223372036854775807x9223372036854775807x4)",
                       _SHARDING.format(axes="[[0]]")), 1,
        "sbpc imports grids of at most 1048576 devices"),
    "device_list_too_short": (
        _shard_program("shard.grid @mesh(shape = 2x2) {sbp.devices = array<i64: 0, 1, 2>}",
                       _SHARDING.format(axes="[[0]]")), 1,
        "shard.grid @mesh: sbp.devices lists 3 ranks for a grid of 4 devices (shape [2, 2])"),
    "device_list_too_long": (
        _shard_program("shard.grid @mesh(shape = 2) {sbp.devices = array<i64: 0, 1, 2>}",
                       _SHARDING.format(axes="[[0]]")), 1,
        "sbp.devices lists 3 ranks for a grid of 2 devices"),
    "device_list_not_an_array": (
        _shard_program('shard.grid @mesh(shape = 2) {sbp.devices = "0,1"}', _SHARDING.format(axes="[[0]]")), 1,
        "sbp.devices must be an array<i64: ...> of ranks"),
    "module_without_a_block": ('"builtin.module"() ({}) : () -> ()\n', 1, "expected a single block, but got 0"),
    "multi_block_function": (
        "shard.grid @mesh(shape = 2)\n"
        "func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
        '  "cf.br"()[^bb1] : () -> ()\n'
        "^bb1:\n"
        "  return %x : tensor<8x8xf32>\n"
        "}\n", 2, "@main has 2 blocks; --import-shard reads functions of one block"),
}


@pytest.mark.parametrize("name", sorted(IMPORT_ERRORS))
def test_import_shard_refuses_with_a_located_error(name: str, tmp_path: Path) -> None:
    text, line, message = IMPORT_ERRORS[name]
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    assert_located(translate("--import-shard", path), path, line, message)


def test_import_shard_keeps_a_device_list_of_the_right_length(tmp_path: Path) -> None:
    path = tmp_path / "devices.mlir"
    path.write_text(_shard_program("shard.grid @mesh(shape = 2x2) {sbp.devices = array<i64: 7, 6, 5, 4>}",
                                   _SHARDING.format(axes="[[0]]")))
    result = translate("--import-shard", path)
    assert result.code == 0, result
    assert 'sbp.placement @mesh "npu" [[7, 6], [5, 4]]' in result.stdout


@pytest.mark.parametrize("text", ["", "\n// only a comment\n", "builtin.module {}\n"])
def test_import_shard_of_an_empty_module_is_an_empty_module(text: str, tmp_path: Path) -> None:
    path = tmp_path / "empty.mlir"
    path.write_text(text)
    result = translate("--import-shard", path)
    assert (result.code, result.stdout) == (0, "builtin.module {\n}\n"), result


# ---------------------------------------------------------------------------
# Link figures the cost model cannot price (a KeyError in its search)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("links", "message"), [
    ("(25.0, 1.0e308), (25.0, 1.0e308)", "link latency 1e+308 µs is out of the range the cost model prices "
                                         "(1e-06 to 1e+09 µs)"),
    ("(1.0e-300, 1.0), (25.0, 1.0)", "link bandwidth 1e-300 GB/s is out of the range the cost model prices"),
])
@pytest.mark.parametrize("how", ["cost", "global", "report"])
def test_link_figures_past_the_cost_model_are_refused_at_the_placement(
        links: str, message: str, how: str, tmp_path: Path) -> None:
    text = (EXAMPLES / "mlp_tp.mlir").read_text().replace(
        'sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]',
        f'sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]] links [{links}]')
    path = tmp_path / "links.mlir"
    path.write_text(text)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if s.startswith("sbp.placement"))
    args = ["--sbp-report"] if how == "report" else ["-p", f"infer-sbp{{rule={how}}}"]
    assert_located(opt(path, *args), path, line, message)


def test_the_largest_link_figures_are_priced(tmp_path: Path) -> None:
    text = (EXAMPLES / "mlp_tp.mlir").read_text().replace(
        'sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]',
        'sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]] links [(1.0e-6, 1.0e9), (1.0e12, 1.0e-6)]')
    path = tmp_path / "links.mlir"
    path.write_text(text)
    for rule in ("cost", "global"):
        result = opt(path, "-p", f"infer-sbp{{rule={rule}}}")
        assert result.code == 0, result
    report = opt(path, "--sbp-report")
    assert report.code == 0 and "total rule=cost" in report.stderr, report


# ---------------------------------------------------------------------------
# Output files and options
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("main", [opt, translate])
def test_an_output_that_cannot_be_written_is_a_clear_error(main: Callable[..., Run], tmp_path: Path) -> None:
    extra = ["--emit-mlir"] if main is translate else []
    for target, message in (("", "error: -o '': an empty file name (give a file, or '-' for stdout)"),
                            (str(tmp_path), f"error: cannot write {tmp_path}: Is a directory")):
        result = main(EXAMPLES / "seed.mlir", *extra, "-o", target)
        assert result.code == 1, result
        assert_clean(result)
        assert result.stderr.strip() == message


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "0", "-1", "abc"])
def test_a_timeout_that_is_no_duration_is_a_usage_error(value: str) -> None:
    result = run(EXAMPLES / "seed.mlir", "--backend", "torch", f"--timeout={value}")
    assert result.code == 1, result
    assert_clean(result)
    assert result.stderr.splitlines()[-1] == (
        f"sbp-run: error: argument --timeout: expected a positive number of at most 86400, got '{value}'")
