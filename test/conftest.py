"""Which sbpc the tests exercise, and the lit files as pytest items.

* By default, this checkout's, installed editable (`pip install -e .`: pyproject's package-dir maps
  `sbpc.*` onto the top-level folders); pyproject's `pythonpath = ["."]` puts the repository first on
  sys.path (for `bench/`), and the tools the tests start get it first on PYTHONPATH (set here for
  subprocesses, in lit.cfg for the lit files). An install of another checkout is refused at start.
* With `SBPC_TEST_INSTALLED=1`, the installed package (a wheel in site-packages): the repository moves
  behind site-packages on sys.path (tests still import `bench/` from it), leaves PYTHONPATH, and lit.cfg
  does not add it; the tools run from the environment's bin/. This is how the wheel is tested (README).
* Every file lit would run (`lit test/`: lit.cfg's suffixes and excludes) is one pytest item, run in this
  process through lit's own API, so `python -m pytest` shows progress per file, spreads the files over the
  xdist workers, and runs one with `python -m pytest test/passes/report/report_pass.mlir`.
* The lit files' tool starts (sbp-opt, sbp-run, sbp-translate, sbp-solve, filecheck) go through a fork
  server per worker (`test/tool_server.py`: the tools imported once, each start a fork), which cuts the
  default run by about half; `SBPC_TEST_FORK=0` runs the real executables, as `lit test/` does.
* Tests marked `torch` skip with a reason when PyTorch is not installed, tests marked `cxx` when there is
  no C++ compiler (`$CXX`, default g++) for the Ascend C CPU shim; lit.cfg gives lit the same features.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import lit.discovery
import lit.LitConfig
import lit.Test
import lit.worker
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_DIR = Path(ROOT) / "test"
INSTALLED = os.environ.get("SBPC_TEST_INSTALLED") == "1"
FORK = os.environ.get("SBPC_TEST_FORK", "1") != "0"
MISSING = {
    name: reason
    for name, reason, present in (
        ("torch", "needs PyTorch (pip install -e '.[dist]')", importlib.util.find_spec("torch") is not None),
        ("cxx", "needs a C++ compiler for the Ascend C CPU shim (g++, or $CXX)",
         shutil.which(os.environ.get("CXX", "g++")) is not None),
    )
    if not present
}


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
    import sbpc.dialects

    where = os.path.dirname(sbpc.dialects.__file__)
    if not INSTALLED and os.path.dirname(where) != ROOT:
        # pyproject's package-dir maps sbpc.dialects onto this checkout's dialects/ only through an
        # install of this checkout: another one's would test other code than the files read here.
        raise pytest.UsageError(f"sbpc.dialects comes from {where}, not this checkout: pip install -e '.[test]'")
    return f"sbpc {sbpc.__version__} from {os.path.dirname(sbpc.__file__)} ({where})"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for name, reason in MISSING.items():
            if item.get_closest_marker(name) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))


@functools.cache
def _lit() -> tuple[lit.LitConfig.LitConfig, dict[Path, lit.Test.Test]]:
    """lit's configuration and every test `lit test/` finds, by path (discovered once per process)."""
    config = lit.LitConfig.LitConfig(
        progname="lit",
        path=[],
        diagnostic_level="note",
        useValgrind=False,
        valgrindLeakCheck=False,
        valgrindArgs=[],
        noExecute=False,
        debug=False,
        isWindows=platform.system() == "Windows",
        order="lexical",
        params={},
    )
    tests = lit.discovery.find_tests_for_inputs(config, [str(TEST_DIR)])
    if FORK and tests:
        launchers, stop = start_tool_server(tests[0].config.environment)
        atexit.register(stop)
        for suite_config in dict.fromkeys(t.config for t in tests):  # one per lit suite (hashed by identity)
            path = suite_config.environment.get("PATH", "")
            suite_config.environment["PATH"] = os.pathsep.join([launchers, path])
    return config, {Path(test.getSourcePath()): test for test in tests}


def start_tool_server(environment: dict[str, str]) -> tuple[str, Callable[[], None]]:
    """Start a tool server (`test/tool_server.py`) in `environment`: its launchers' folder, and what
    stops it (closing the pipe to it; it also stops when this process dies)."""
    folder = tempfile.mkdtemp(prefix="sbpc-tools-")
    server = subprocess.Popen(
        [sys.executable, str(TEST_DIR / "tool_server.py"), os.path.join(folder, "socket"), folder],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(environment), text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    if server.stdout.readline().strip() != "ready":
        raise RuntimeError(f"the lit tool server did not start (exit {server.wait()})")
    server.wait()  # the process that detached the server

    def stop() -> None:
        assert server.stdin is not None
        server.stdin.close()
        shutil.rmtree(folder, ignore_errors=True)

    return folder, stop


@pytest.fixture
def launchers() -> Iterator[Path]:
    """A tool server of this test's own, in this process's environment: its launchers' folder."""
    folder, stop = start_tool_server(dict(os.environ))
    yield Path(folder)
    stop()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> LitFile | None:
    if file_path.suffix in {".mlir"} and file_path in _lit()[1]:
        return LitFile.from_parent(parent, path=file_path)
    return None


class LitFile(pytest.File):
    """A file of lit RUN lines: one item."""

    def collect(self) -> list[LitItem]:
        return [LitItem.from_parent(self, name="lit")]


class LitFailure(Exception):
    """lit's verdict and output for a failing file."""


class LitItem(pytest.Item):
    """Runs one lit file's RUN lines (lit's internal shell, lit.cfg's substitutions and environment)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.add_marker("lit")

    def runtest(self) -> None:
        config, tests = _lit()
        test = tests[self.path]
        result = lit.worker._execute(test, config)
        if result.code is lit.Test.UNSUPPORTED:
            pytest.skip(f"lit: UNSUPPORTED (REQUIRES: {', '.join(test.requires) or '-'})")
        if result.code.isFailure:
            raise LitFailure(f"lit: {result.code.name}\n{result.output}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: str | None = None) -> str:
        if isinstance(excinfo.value, LitFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"lit {self.path.relative_to(TEST_DIR)}"
