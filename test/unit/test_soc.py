"""lowering/ascendc/soc.py is the one home of the SoC figures: the shims read headers generated from it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sbpc.lowering.ascendc import soc
from sbpc.lowering.ascendc.tiling import TensorView, compute_tiling, get_soc

ROOT = Path(__file__).resolve().parents[2]
SHIMS = (ROOT / "lowering" / "ascendc" / "cpu" / "shim", ROOT / "lowering" / "ascendc" / "cpu" / "host_shim")


def test_generated_headers_are_current():
    for path, text in soc.generated_headers().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run python -m sbpc.lowering.ascendc.soc"


def test_generated_headers_hold_the_table():
    device = soc.device_header_text()
    assert f"TOTAL_UB_SIZE = {soc.UB_BYTES};" in device and f"ONE_BLK_SIZE = {soc.ALIGN_BYTES};" in device
    host = soc.host_header_text()
    rows = [line for line in host.splitlines() if line.startswith('    {"')]
    assert [r.split('"')[1] for r in rows] == list(soc.SOCS)
    assert rows[0].startswith(f'    {{"{soc.DEFAULT_SOC}", "Ascend910B2", 48, 24, {soc.UB_BYTES}ULL')
    assert '{"ascend910b3", "Ascend910B3", 40, 20,' in host


def test_no_other_shim_source_spells_the_figures():
    generated = set(soc.generated_headers())
    for root in SHIMS:
        for path in root.rglob("*"):
            if path.suffix in (".h", ".cpp") and path not in generated:
                text = path.read_text(encoding="utf-8")
                assert str(soc.UB_BYTES) not in text, path
                assert "ONE_BLK_SIZE = " not in text and "coreNumAiv = 4" not in text, path


def test_tiling_reads_the_table():
    assert get_soc("ascend910b3") is soc.SOCS["ascend910b3"]
    t = compute_tiling(TensorView.row_major((1 << 20,)), 2.0, None, "f32", "ascend910b3")
    assert t.blockDim == soc.SOCS["ascend910b3"].aiv_cores == 40
    assert t.to_json()["coreNum"] == 40


PLATFORM_PROBE = r"""
#include <cstdio>
#include "tiling/platform/platform_ascendc.h"
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    fe::PlatFormInfos info = fe::PlatFormInfos::ForSoc(argv[i]);
    platform_ascendc::PlatformAscendC platform(&info);
    uint64_t ub = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    std::printf("%s %s %u %u %llu\n", info.shortSocVersion.c_str(), info.socVersion.c_str(), platform.GetCoreNumAiv(),
                platform.GetCoreNumAic(), static_cast<unsigned long long>(ub));
  }
}
"""


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "g++")) is None, reason="needs g++")
def test_host_shim_platform_is_the_table(tmp_path):
    src, exe = tmp_path / "probe.cpp", tmp_path / "probe"
    src.write_text(PLATFORM_PROBE)
    cxx = os.environ.get("CXX", "g++")
    build = [cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{SHIMS[1]}", str(src), "-o", str(exe)]
    subprocess.run(build, check=True, capture_output=True)
    out = subprocess.run([str(exe), *soc.SOCS], check=True, capture_output=True, text=True).stdout.splitlines()
    assert out == [f"{s.name} {s.version} {s.aiv_cores} {s.aic_cores} {s.ub_bytes}" for s in soc.SOCS.values()]
