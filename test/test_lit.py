"""Runs the lit/FileCheck suite under test/ from pytest, so one `pytest` run covers everything."""

import os
import subprocess
import sys

TEST_DIR = os.path.dirname(os.path.abspath(__file__))


def test_lit_suite() -> None:
    workers = str(max(1, os.cpu_count() or 1))
    result = subprocess.run(
        [sys.executable, "-m", "lit", "-q", "-j", workers, "--order=smart", TEST_DIR],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"
