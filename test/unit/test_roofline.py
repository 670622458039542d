"""The roofline model of one kernel launch (`lowering/ascendc/cpu/roofline.py`) and `sbp-run --profile`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.cpu.roofline import profile_launch
from sbpc.lowering.ascendc.tiling import TensorView
from sbpc.runtime.ascendc_kernels import KernelProfiler, run_fmod
from sbpc.tools.sbp_run import run_captured

COUNTERS = {"gmToUbBytes": 8000, "ubToGmBytes": 4000, "gmScalarReadBytes": 400, "gmScalarWriteBytes": 0,
            "gmBurstPadBytes": 96, "ubHighWater": 1234}  # fmt: skip


def test_model_charges_bursts_and_scalar_accesses() -> None:
    # f32, n = 1000 on one core: 100 scalar reads (400 B) cost 32 B each, DataCopyPad blocks 96 B of padding
    p = profile_launch("fmod_tensor", 4, 1, "f32", 1000, 4, 12000, COUNTERS, 1, 1000, "ascend910b")
    effective = 12000 - 400 + 100 * 32 + 96
    assert p.model_s == pytest.approx(2e-6 + effective / (1.6e12 / 48))
    assert p.ideal_s == pytest.approx(2e-6 + 12000 / 1.6e12)
    assert p.bytes_ratio == 1.0 and p.cores == 48 and p.ub_high == 1234
    assert p.line() == (
        "kernel fmod_tensor key=4 rank=1 dtype=f32 n=1000: bytes 12000 (1.00x min), cores 1/48, ub 1234 B, "
        f"model {p.model_s * 1e6:.2f} us, ideal {p.ideal_s * 1e6:.2f} us ({p.model_s / p.ideal_s:.2f}x)"
    )


def test_busiest_core_share_and_40_core_soc() -> None:
    # 40 cores, the busiest core holds a quarter of the elements
    p = profile_launch("fmod_scalar", 0, 0, "f16", 4000, 2, 16000,
                       {**COUNTERS, "gmToUbBytes": 8000, "ubToGmBytes": 8000, "gmScalarReadBytes": 0,
                        "gmBurstPadBytes": 0}, 4, 1000, "ascend910b3")  # fmt: skip
    assert p.cores == 40
    assert p.model_s == pytest.approx(2e-6 + 16000 * 0.25 / (1.6e12 / 40))


PROGRAM = """
sbp.placement @p "npu" [0, 1]
func.func @main(%a: !sbp.tensor<100x1000xf32, @p, [S(0)]>, %b: !sbp.tensor<1000xf32, @p, [B]>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<100x1000xf32, @p, [S(0)]>, !sbp.tensor<1000xf32, @p, [B]>
      -> !sbp.tensor<100x1000xf32, @p>
  %1 = sbp.fmod_scalar %a, 2.5 : f32 : !sbp.tensor<100x1000xf32, @p, [S(0)]> -> !sbp.tensor<100x1000xf32, @p>
  func.return
}
"""
LINE = re.compile(
    r"kernel (\w+) key=(\d) rank=(\d+) dtype=(\w+) n=(\d+): bytes (\d+) \((\d+\.\d\d)x min\), cores (\d+)/48, "
    r"ub (\d+) B, model (\d+\.\d\d) us, ideal (\d+\.\d\d) us \((\d+\.\d\d)x\)$"
)


@pytest.mark.cxx
def test_sbp_run_profile_prints_one_line_per_launch(tmp_path: Path) -> None:
    (tmp_path / "p.mlir").write_text(PROGRAM)
    code, out = run_captured([str(tmp_path / "p.mlir"), "--kernels", "ascendc-cpu", "--profile", "--check"])
    assert code == 0, out
    lines = [m for m in map(LINE.match, out.splitlines()) if m]
    assert [(m[1], m[2], m[3]) for m in lines] == [
        ("fmod_tensor", "2", "0"), ("fmod_tensor", "2", "1"), ("fmod_scalar", "0", "0"), ("fmod_scalar", "0", "1"),
    ]
    for m in lines:
        assert m[4] == "f32" and m[5] == "50000"
        assert int(m[9]) <= 196608
    scalar = lines[2]
    assert int(scalar[6]) == 2 * 50000 * 4 and scalar[7] == "1.00" and scalar[8] == "48" and scalar[12] == "1.00"
    assert "check: OK" in out


def test_profile_needs_the_ascendc_kernels(tmp_path: Path) -> None:
    (tmp_path / "p.mlir").write_text(PROGRAM)
    code, out = run_captured([str(tmp_path / "p.mlir"), "--profile"])
    assert code == 1 and out.strip() == "error: --profile needs --kernels ascendc-cpu"


ISSUE15 = Path(__file__).parent / "Inputs" / "profile_issue15.mlir"
"""The six launches of issue 15's acceptance: key 2 row broadcast (100x1000 + (1000,), f32), key 2 column
broadcast (1000x1000 + (1000,1), f16), key 3 transposed 1000x1000 f16, key 4 transposed self and other
1000x1000 f32, key 4 row-sliced bf16 (row stride 2000), key 0 1e6 i16 (layouts via `#sbp.layout`)."""


@pytest.mark.cxx
def test_issue15_profile_cases_at_the_roofline() -> None:
    code, out = run_captured([str(ISSUE15), "--kernels", "ascendc-cpu", "--profile", "--check"])
    assert code == 0, out
    lines = [m for m in map(LINE.match, out.splitlines()) if m]
    assert [(m[2], m[4]) for m in lines] == [("2", "f32"), ("2", "f16"), ("3", "f16"), ("4", "f32"), ("4", "bf16"),
                                             ("0", "i16")]  # fmt: skip
    for m in lines:
        assert float(m[12]) <= 1.3, m[0]  # modelled / ideal
        assert float(m[7]) <= 1.05, m[0]  # GM<->UB bytes / minimum
        assert int(m[9]) <= 196608, m[0]  # UB high water
    assert "check: OK" in out


def test_issue15_profile_cases_copy_32_byte_aligned() -> None:
    """The same six launches through the profiler API: every DataCopy moves whole 32-byte blocks (the shim
    counts the others), no element moves by scalar GM access, and the strided ones reorder by Gather."""
    rng = np.random.default_rng(3)

    def arr(shape: tuple[int, ...], dtype: str) -> np.ndarray:
        values = rng.uniform(-50, 50, shape) if dtype != "i16" else rng.integers(-300, 300, shape)
        values = np.where(values == 0, 7, values)
        return values.astype(dtypes.find(dtype).numpy_dtype())  # type: ignore[union-attr]

    t = TensorView((1000, 1000), (1, 1000))
    rows = TensorView((1000, 1000), (2000, 1))
    profiler = KernelProfiler()
    run_fmod(arr((100, 1000), "f32"), arr((1000,), "f32"), profiler=profiler)
    run_fmod(arr((1000, 1000), "f16"), arr((1000, 1), "f16"), profiler=profiler)
    run_fmod(arr((1000, 1000), "f16"), 2.5, profiler=profiler, self_view=t)
    run_fmod(arr((1000, 1000), "f32"), arr((1000, 1000), "f32"), profiler=profiler, self_view=t, other_view=t)
    run_fmod(arr((1000, 1000), "bf16"), arr((1000, 1000), "bf16"), profiler=profiler, self_view=rows,
             other_view=rows)  # fmt: skip
    run_fmod(arr((10**6,), "i16"), 3, profiler=profiler)
    assert [p.key for p in profiler.launches] == [2, 2, 3, 4, 4, 0]
    for p in profiler.launches:
        assert p.unaligned_copies == 0, p.line()
        assert p.time_ratio <= 1.3 and p.bytes_ratio <= 1.05 and p.ub_high <= 196608, p.line()
