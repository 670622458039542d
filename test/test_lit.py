"""Runs the lit/FileCheck suite under test/ from pytest, so one `pytest` run covers everything."""

import os
import shutil
import subprocess
import sys

TEST_DIR = os.path.dirname(os.path.abspath(__file__))


def _lit() -> list[str]:
    beside = os.path.join(os.path.dirname(sys.executable), "lit")
    if os.path.exists(beside):
        return [beside]
    found = shutil.which("lit")
    assert found is not None, "lit is not installed (pip install -e '.[test]')"
    return [found]


def test_lit_suite() -> None:
    workers = str(max(1, os.cpu_count() or 1))
    result = subprocess.run(
        [*_lit(), "-q", "-j", workers, "--order=smart", TEST_DIR],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"
