"""test/tool_server.py: a launched tool behaves as the real executable (output, stdin, exit status).
`launchers` (test/conftest.py) is a server of the test's own."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed.mlir"


def _both(launchers: Path, tool: str, args: list[str], stdin: str = "") -> tuple[subprocess.CompletedProcess[str], ...]:
    real = shutil.which(tool)
    if real is None:
        pytest.skip(f"{tool} is not installed")
    return tuple(subprocess.run([exe, *args], input=stdin, capture_output=True, text=True, check=False)
                 for exe in (str(launchers / tool), real))


@pytest.mark.parametrize("args", [
    [str(SEED), "--infer-sbp"],
    [str(SEED), "--no-such-option"],
    [str(ROOT / "no-such-file.mlir")],
    ["-", "--infer-sbp", "--sbp-report"],
])
def test_a_launched_tool_is_the_real_one(launchers: Path, args: list[str]) -> None:
    served, real = _both(launchers, "sbp-opt", args, SEED.read_text())
    assert (served.returncode, served.stdout, served.stderr) == (real.returncode, real.stdout, real.stderr)


def test_filecheck_failure_is_reported(launchers: Path) -> None:
    served, real = _both(launchers, "filecheck", [os.devnull], "nothing\n")
    assert served.returncode == real.returncode != 0
