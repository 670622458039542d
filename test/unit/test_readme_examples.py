"""Every example runs by a README command (issue 14, point 7): each row of the README's Examples
table is run as written (in-process, from the repository root), must exit 0, and together the rows
name every file in examples/."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from sbpc.runtime.pipeline import DEFAULT_PIPELINE
from sbpc.tools import sbp_opt, sbp_run, sbp_translate

ROOT = Path(__file__).resolve().parents[2]
TOOLS: dict[str, Callable[[Sequence[str] | None], int]] = {
    "sbp-opt": sbp_opt.main,
    "sbp-run": sbp_run.main,
    "sbp-translate": sbp_translate.main,
}


def example_rows() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Examples\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(examples/[^`]+)` \|[^|]*\| `([^`]+)` \|$", section, re.MULTILINE)
    assert rows, "the README has no Examples table"
    return rows


SLOW_EXAMPLES = {"examples/transformer_block.mlir"}
"""Their README command (a --check of an f16 transformer block, ~15 s) runs in the exhaustive pass."""


def test_every_example_has_a_readme_command() -> None:
    named = {example for example, _ in example_rows()}
    on_disk = {f"examples/{p.name}" for p in (ROOT / "examples").glob("*.mlir")}
    assert named == on_disk
    for example, command in example_rows():
        assert example in command.split(), f"the command for {example} does not run it: {command}"


@pytest.mark.parametrize(("example", "command"), [
    pytest.param(e, c, marks=pytest.mark.exhaustive) if e in SLOW_EXAMPLES else (e, c) for e, c in example_rows()
], ids=lambda v: v if v.startswith("sbp") else None)
def test_the_readme_command_runs(example: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    tool, *args = shlex.split(command)
    if "-o" in args:  # keep the written output out of the checkout and /tmp
        args[args.index("-o") + 1] = str(tmp_path / "out")
    assert TOOLS[tool](args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    if "--check" in args:
        assert "check: OK" in out
    if "--emit-ascendc" in args:
        for kernel in ("fmod_tensor", "fmod_scalar"):
            assert (tmp_path / "out" / kernel / "op_kernel" / f"{kernel}.cpp").is_file()


@pytest.mark.torch  # the block ends with a run on backend="torch"
def test_the_readme_names_the_default_pipeline() -> None:
    """The tools' table says what sbp-run compiles with when no --pipeline is given."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"compile (default `{DEFAULT_PIPELINE}`)" in text


def test_the_readme_python_api_example_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's Python block runs as written from the repository root (its asserts hold)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks and "import sbpc" in blocks[0]
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], "README.md", "exec"), {})  # the README is the program under test
    assert "[S(0)], [S(0)] -> [S(0)]" in capsys.readouterr().out
