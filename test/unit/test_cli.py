"""Issue 22 point 4: the command line as a new user tries it (tools/cli.py and the three drivers).

`-` for stdin, `--version` everywhere, "did you mean", sizes with a unit in a pipeline, a pipeline the
shell cut at a space, empty input, an unexpected error printed once, a free argument named where it is
declared, `sbp-run --rule global`, the report's totals first, and progress lines on stderr.
"""

from __future__ import annotations

import contextlib
import io
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

from sbpc.runtime.pipeline import checked_pipeline
from sbpc.tools import cli, sbp_opt, sbp_run, sbp_translate

pytestmark = pytest.mark.usefixtures("cached_plugin_discovery")

EXAMPLES = Path(__file__).parents[2] / "examples"


class Run(NamedTuple):
    code: int
    stdout: str
    stderr: str


def _run(main: Callable[[Sequence[str]], int], args: Sequence[str | Path], stdin: bytes | None = None) -> Run:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        if stdin is not None:
            patch = stack.enter_context(pytest.MonkeyPatch.context())
            patch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        try:
            code = main([str(a) for a in args])
        except SystemExit as stop:
            code = int(stop.code or 0)
    return Run(code, out.getvalue(), err.getvalue())


def test_sbp_run_reads_stdin() -> None:
    result = _run(sbp_run.main, ["-", "--check"], (EXAMPLES / "seed.mlir").read_bytes())
    assert result.code == 0, result
    assert result.stdout.splitlines()[-1].startswith("check: OK")


@pytest.mark.parametrize("main", [sbp_opt.main, sbp_run.main, sbp_translate.main])
def test_every_tool_has_the_same_version_line(main: Callable[[Sequence[str]], int]) -> None:
    result = _run(main, ["--version"])
    assert result.code == 0
    assert re.fullmatch(r"sbp-(opt|run|translate) \(sbpc\) \d+\.\d+\.\d+, built on xdsl \d+\.\d+\.\d+\n",
                        result.stdout), result


@pytest.mark.parametrize(("main", "flag", "hint", "status"), [
    (sbp_opt.main, "--verify-diagnostcs", "--verify-diagnostics", 2),
    (sbp_run.main, "--chek", "--check", 1),
    (sbp_translate.main, "--emit-mlr", "--emit-mlir", 2),  # also before "one of ... is required"
])
def test_an_unknown_flag_gets_did_you_mean(main: Callable[[Sequence[str]], int], flag: str, hint: str,
                                           status: int) -> None:
    result = _run(main, [EXAMPLES / "seed.mlir", flag])
    assert result.code == status
    assert result.stderr.splitlines()[-1].endswith(f"error: unrecognized arguments: {flag} (did you mean {hint}?)")


def test_unknown_flags_ignores_values_prefixes_and_stuck_short_options() -> None:
    parser = sbp_run.build_arg_parser()
    argv = ["x.mlir", "--che", "--timeout=-1", "-5", "--seed", "3", "--", "--later"]
    assert cli.unknown_flags(parser, argv) == []
    assert cli.unknown_flags(parser, ["--no-such-flag-at-all"]) == [("--no-such-flag-at-all", None)]


@pytest.mark.parametrize(("argv", "extra", "quoted"), [
    (["-p", "infer-sbp{rule=global", "mem=1MiB}", "x.mlir"], ["mem=1MiB}"], "-p 'infer-sbp{rule=global mem=1MiB}'"),
    (["--pipeline", "a{k=1", "j=2},b", "x.mlir"], ["x.mlir"], "--pipeline 'a{k=1 j=2},b'"),
    (["x.mlir", "--infer-sbp=rule=global", "mem=1MiB"], ["mem=1MiB"], "--infer-sbp='rule=global mem=1MiB'"),
    (["x.mlir", "stray"], ["stray"], None),
])
def test_a_pipeline_cut_by_the_shell_is_shown_quoted(argv: list[str], extra: list[str], quoted: str | None) -> None:
    assert cli.cut_pipeline(argv, extra) == quoted


@pytest.mark.parametrize("spec", ["infer-sbp{rule=global mem=12.5MiB}", "infer-sbp{mem=12.5MiB rule=global}",
                                  'infer-sbp{rule=global mem="12.5MiB"}'])
def test_a_size_with_a_unit_needs_no_quotes_in_a_pipeline(spec: str) -> None:
    (infer,) = checked_pipeline(spec).passes
    assert infer.mem == "12.5MiB"  # type: ignore[attr-defined]


@pytest.mark.parametrize("stdin", [True, False])
def test_empty_input_is_an_empty_module(stdin: bool, tmp_path: Path) -> None:
    path = tmp_path / "empty.mlir"
    path.write_text("")
    opt = _run(sbp_opt.main, [] if stdin else [path], b"" if stdin else None)
    assert (opt.code, opt.stdout) == (0, "builtin.module {\n}\n\n"), opt
    run = _run(sbp_run.main, ["-" if stdin else path], b"" if stdin else None)
    name = "<stdin>" if stdin else str(path)
    assert run.code == 1
    assert run.stderr == f"{name}:1:1: error: the program has no function to run (sbp-run runs @main; see --entry)\n"


def test_verify_diagnostics_prints_an_unexpected_error_once(tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text('sbp.placement @p "cpu" [[0, 1], [2]]\n')
    result = _run(sbp_opt.main, [path, "--verify-diagnostics"])
    assert result.code == 1
    text = result.stdout + result.stderr
    assert text.count("placement ranks must form a rectangular nested list") == 1, text
    assert f"unexpected error: {path}:1:24: no `// expected-error` annotation matches it" in result.stderr


def test_a_free_argument_is_named_at_its_declaration_and_rule_global_runs_it() -> None:
    path = EXAMPLES / "gpt_block.mlir"
    failed = _run(sbp_run.main, [path])
    assert failed.code == 1
    head = failed.stderr.splitlines()[0]
    assert head.startswith(f"{path}:17:16: error: func.func @main: argument 1 (f32[256][?] @mesh) has no SBP; "
                           "give %ln1_g one, or let rule=global decide it"), head
    assert "sbp-run --rule global" in head
    assert "--pipeline 'infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize'" in head
    ran = _run(sbp_run.main, [path, "--rule", "global", "--mem", "12.5MiB", "--check"])
    assert ran.code == 0, ran
    assert ran.stdout.splitlines()[-1].startswith("check: OK")
    assert sbp_run.rule_pipeline("global", "12.5MiB") == (
        'infer-sbp{rule=global mem="12.5MiB"},materialize-boxing,lower-boxing,spmdize')


def test_the_report_prints_its_totals_and_the_global_summary_first() -> None:
    result = _run(sbp_opt.main, [EXAMPLES / "gpt_block.mlir", "-p", "infer-sbp{rule=global}", "--sbp-report"])
    lines = result.stderr.splitlines()
    assert lines[0] == "// sbp-report (rule=global)"
    assert lines[1].startswith("total rule=global: ")
    first_op = next(i for i, line in enumerate(lines) if line.startswith("op "))
    assert all(line.startswith(("total rule=", "global: ")) for line in lines[1:first_op]), lines[:first_op]
    assert not any(line.startswith(("total rule=", "global: ")) for line in lines[first_op:])


# ---------------------------------------------------------------------------
# Progress lines
# ---------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_shows_only_the_steps_that_run_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli.Progress, "DELAY", 0.05)
    stream = _Terminal()
    progress = cli.Progress("sbp-opt", False, stream)
    with progress.step("quick"):
        pass
    with progress.step("solving @main"):
        time.sleep(0.3)
    assert re.fullmatch(r"sbp-opt: solving @main\.\.\. done in \d+\.\d s\n", stream.getvalue()), stream.getvalue()


def test_progress_is_silent_when_stderr_is_captured_unless_asked() -> None:
    quiet = io.StringIO()
    with cli.Progress("sbp-run", False, quiet).step("running"):
        pass
    assert quiet.getvalue() == ""
    asked = io.StringIO()
    progress = cli.Progress("sbp-run", True, asked)
    with progress.step("running @main on 8 ranks (simulator)"), progress.step("spmdize on @main"):
        pass
    assert re.fullmatch(r"sbp-run: running @main on 8 ranks \(simulator\)\.\.\.\n"
                        r"sbp-run: spmdize on @main\.\.\. done in \d+\.\d s\n"
                        r"sbp-run: running @main on 8 ranks \(simulator\)\.\.\. done in \d+\.\d s\n",
                        asked.getvalue()), asked.getvalue()


def test_a_pass_that_fails_ends_its_progress_line(tmp_path: Path) -> None:
    result = _run(sbp_opt.main, [EXAMPLES / "gpt_block.mlir", "-p", "infer-sbp", "--progress"])
    assert result.code == 1
    assert result.stderr.startswith("sbp-opt: infer-sbp on @main... failed\n"), result.stderr
