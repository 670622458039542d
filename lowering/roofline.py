"""The roofline time model of one fmod kernel launch, from the CPU shim's counters.

One home for the model `bench/bench_fmod_kernel.py` tabulates and `sbp-run --kernels ascendc-cpu
--profile` prints per launch. Constants from `lowering/soc.py` (README states them):

* HBM bandwidth B (1.6 TB/s on A2), shared evenly by the SoC's AIV cores: one core streams at most B / cores;
* a launch costs 2 us;
* DMA bytes are charged as whole 32-byte GM bursts per DataCopyPad block (a strided row of 2000 bytes
  costs 2016; the shim's `gmBurstPadBytes`), a scalar GM access (`GetValue`/`SetValue`) one 32-byte burst;
* the busiest core decides, its bytes taken proportional to its elements (blockLength / N).

modelled = 2 us + effective bytes * (blockLength / N) / (B / cores); ideal = 2 us + minimum bytes / B,
where the minimum reads self and other and writes out once each. It ignores compute (little vector work
per byte), MTE overlap imperfections and HBM sector effects; it is a model, not a hardware measurement.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sbpc.lowering.soc import LAUNCH_S, SCALAR_GM_ACCESS_BYTES, SOCS


@dataclass(frozen=True)
class LaunchProfile:
    """One kernel launch: what it moved and the model's times."""

    name: str
    key: int
    rank: int
    dtype: str
    n: int
    moved_bytes: int
    minimum_bytes: int
    block_dim: int
    cores: int
    ub_high: int
    model_s: float
    ideal_s: float

    @property
    def bytes_ratio(self) -> float:
        return self.moved_bytes / self.minimum_bytes if self.minimum_bytes else 1.0

    @property
    def time_ratio(self) -> float:
        return self.model_s / self.ideal_s

    def line(self) -> str:
        """`kernel NAME key=K rank=R dtype=T n=N: bytes B (X.XXx min), cores C/48, ub U B, model M us,
        ideal I us (R.RRx)`: the last ratio is modelled / ideal time."""
        return (f"kernel {self.name} key={self.key} rank={self.rank} dtype={self.dtype} n={self.n}: "
                f"bytes {self.moved_bytes} ({self.bytes_ratio:.2f}x min), cores {self.block_dim}/{self.cores}, "
                f"ub {self.ub_high} B, model {self.model_s * 1e6:.2f} us, ideal {self.ideal_s * 1e6:.2f} us "
                f"({self.time_ratio:.2f}x)")


def profile_launch(
    name: str, key: int, rank: int, dtype: str, n: int, itemsize: int, minimum_bytes: int,
    counters: Mapping[str, int], block_dim: int, block_length: int, soc: str,
) -> LaunchProfile:
    """The model applied to one launch's shim counters (`ascendc_runtime.run_kernel`'s dict)."""
    info = SOCS[soc]
    moved = counters["gmToUbBytes"] + counters["ubToGmBytes"]
    scalar_bytes = counters["gmScalarReadBytes"] + counters["gmScalarWriteBytes"]
    effective = moved - scalar_bytes + SCALAR_GM_ACCESS_BYTES * (scalar_bytes // itemsize) + counters["gmBurstPadBytes"]
    share = block_length / n if n else 0.0
    model = LAUNCH_S + effective * share / (info.hbm_bytes_per_s / info.aiv_cores)
    ideal = LAUNCH_S + minimum_bytes / info.hbm_bytes_per_s
    return LaunchProfile(name, key, rank, dtype, n, moved, minimum_bytes, block_dim, info.aiv_cores,
                         counters["ubHighWater"], model, ideal)  # fmt: skip
