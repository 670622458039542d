"""The wheel installs one import package, `sbpc`, with the shim headers inside (SPEC §6, issue 11 point 8a).

Built from a copy of the source tree, so that no stale `build/` of the checkout leaks in and the checkout
is left as it was.
"""

from __future__ import annotations

import configparser
import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache",
                                 ".hypothesis", "Output", ".venv", ".lit_test_times.txt")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    work = tmp_path_factory.mktemp("wheel")
    shutil.copytree(ROOT, work / "src", symlinks=True, ignore=IGNORED)
    # Without build isolation when the build backend is at hand (fast, offline); else pip fetches it.
    at_hand = all(importlib.util.find_spec(m) for m in ("setuptools", "wheel"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(work / "src"), "-w", str(work / "dist"), "--no-deps",
                    *(["--no-build-isolation"] if at_hand else []), "-q"], check=True, capture_output=True, timeout=300)
    (built,) = (work / "dist").glob("sbpc-*.whl")
    return zipfile.ZipFile(built)


def test_the_only_top_level_package_is_sbpc(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    assert {n.split("/")[0] for n in names} == {"sbpc", info}
    assert wheel.read(f"{info}/top_level.txt").decode().split() == ["sbpc"]
    for package in ("dialects", "passes", "lowering", "translate", "runtime", "tools"):
        assert f"sbpc/{package}/__init__.py" in names
    assert "sbpc/api.py" in names and "sbpc/runtime/distribute.py" in names


def test_the_shim_headers_are_package_data(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    lowering = ROOT / "lowering" / "ascendc" / "cpu"
    shipped = sorted(p.relative_to(lowering).as_posix() for folder in ("shim", "host_shim")
                     for p in (lowering / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert "shim/kernel_operator.h" in shipped and "shim/launcher.cpp" in shipped
    missing = [p for p in shipped if f"sbpc/lowering/ascendc/cpu/{p}" not in names]
    assert not missing


def test_the_console_scripts_point_into_sbpc(wheel: zipfile.ZipFile) -> None:
    info = next(n.split("/")[0] for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    entry_points = configparser.ConfigParser()
    entry_points.read_string(wheel.read(f"{info}/entry_points.txt").decode())
    assert dict(entry_points["console_scripts"]) == {
        "sbp-opt": "sbpc.tools.sbp_opt:main",
        "sbp-run": "sbpc.tools.sbp_run:main",
        "sbp-translate": "sbpc.tools.sbp_translate:main",
        "sbp-solve": "sbpc.tools.sbp_solve:main",
    }

