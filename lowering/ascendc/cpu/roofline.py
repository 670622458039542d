"""The roofline time model of one fmod kernel launch, from the CPU shim's counters.

One home for the model `bench/bench_fmod_kernel.py` tabulates and `sbp-run --kernels ascendc-cpu
--profile` prints per launch. Constants from `lowering/ascendc/soc.py` (README states them):

* HBM bandwidth B (1.6 TB/s on A2), shared evenly by the SoC's AIV cores: one core streams at most B / cores;
* a launch costs 2 us;
* a strided burst (one DataCopyPad block, blockCount of them per call) costs its length rounded up to whole
  32-byte GM sectors (a strided row of 2000 bytes costs 2016; the shim's `gmBurstPadBytes`); a scalar GM
  access (`GetValue`/`SetValue`) costs one 32-byte sector;
* a UB transpose (the `Gather` that reorders a block moved by columns) runs on the vector pipe at
  `UB_GATHER_ELEMS_PER_CYCLE` (8) elements a cycle at `AIV_CLOCK_HZ` (1.85 GHz), overlapped with the DMA
  queues (double-buffered tiles), so a core's time is the larger of its DMA time and its gather time;
* the busiest core decides: its DMA bytes taken proportional to its elements (blockLength / N), its
  gather elements counted by the shim (`ubGatherBusiest`).

modelled = 2 us + max(effective bytes * (blockLength / N) / (B / cores), busiest gather elements / (8 x 1.85 GHz));
ideal = 2 us + minimum bytes / B, where the minimum reads self and other and writes out once each. It ignores
the fmod arithmetic (little vector work per byte), MTE overlap imperfections and HBM page effects; it is a
model, not a hardware measurement.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sbpc.lowering.ascendc.soc import AIV_CLOCK_HZ, LAUNCH_S, SCALAR_GM_ACCESS_BYTES, SOCS, UB_GATHER_ELEMS_PER_CYCLE


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
    unaligned_copies: int = 0
    """DataCopy calls whose length was not a multiple of 32 bytes (the shim's `dataCopyNon32`)."""

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
    dma = effective * share / (info.hbm_bytes_per_s / info.aiv_cores)
    gather = counters.get("ubGatherBusiest", 0) // itemsize / (UB_GATHER_ELEMS_PER_CYCLE * AIV_CLOCK_HZ)
    model = LAUNCH_S + max(dma, gather)
    ideal = LAUNCH_S + minimum_bytes / info.hbm_bytes_per_s
    return LaunchProfile(name, key, rank, dtype, n, moved, minimum_bytes, block_dim, info.aiv_cores,
                         counters["ubHighWater"], model, ideal, counters.get("dataCopyNon32", 0))  # fmt: skip
