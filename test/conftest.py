"""Which sbpc the tests exercise.

* By default, this checkout's: pyproject's `pythonpath = ["."]` puts the repository first on sys.path (its
  `sbpc/` links onto the top-level folders), and the tools the tests start get it first on PYTHONPATH
  (set here for subprocesses, in lit.cfg for the lit suite).
* With `SBPC_TEST_INSTALLED=1`, the installed package (a wheel in site-packages): the repository moves
  behind site-packages on sys.path (tests still import `bench/` from it), leaves PYTHONPATH, and lit.cfg
  does not add it; the tools run from the environment's bin/. This is how the wheel is tested (README).
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTALLED = os.environ.get("SBPC_TEST_INSTALLED") == "1"


def _is_root(entry: str) -> bool:
    return os.path.abspath(entry or os.getcwd()) == ROOT


if INSTALLED:
    assert "sbpc" not in sys.modules, "sbpc was imported before test/conftest.py chose which one"
    sys.path[:] = [p for p in sys.path if not _is_root(p)] + [ROOT]
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and not _is_root(p)]
    os.environ["PYTHONPATH"] = os.pathsep.join(kept)
else:
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT, *rest])


def pytest_report_header() -> str:
    import sbpc

    return f"sbpc {sbpc.__version__} from {os.path.dirname(sbpc.__file__)}"
