"""lowering/soc.py is the one home of the SoC figures: the shims read headers generated from it."""

from __future__ import annotations

from pathlib import Path

from sbpc.lowering import soc
from sbpc.lowering.tiling import TensorView, compute_tiling, get_soc

ROOT = Path(__file__).resolve().parents[2]
SHIMS = (ROOT / "lowering" / "shim", ROOT / "lowering" / "host_shim")


def test_generated_headers_are_current():
    for path, text in soc.generated_headers().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run python -m sbpc.lowering.soc"


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
