"""Measured gloo collectives vs the α-β model: `python bench/bench_torch_collectives.py [REPEAT] [OUT.md]`.

For each collective kind (all_gather S(0)->B, all_reduce P->B, reduce_scatter P->S(0), all_to_all
S(0)->S(1); f32), each size per rank (1 KiB ... 4 MiB: the shard each rank holds before the step) and
4 and 8 ranks on a 1-D mesh, one program holding that single collective runs on the torch backend
(one launch per rank count, REPEAT runs each, default 7). Reported: the measured time (median over
runs of the median over ranks, including sbpc's packing of the parts), the model's time with
DTensor's constants (`CommModel()`), and with constants fitted to these measurements by least
squares on the relative error (`base + hops·latency + bytes/bandwidth`, the model's own form, constants
≥ 0), and measured/model ratios.
Writes a Markdown table (default bench/RESULTS_torch.md).
"""

from __future__ import annotations

import itertools
import math
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import torch
from xdsl.context import Context

from sbpc.dialects.collectives import COLLECTIVES
from sbpc.dialects.context import register_dialects
from sbpc.passes.cost.comm import CommModel
from sbpc.runtime.torch_backend import Job, TorchOptions, TorchRecord, run_local
from sbpc.runtime.torch_conformance import compile_case

SIZES = (1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22)
RANKS = (4, 8)
KINDS = ("all_gather", "all_reduce", "reduce_scatter", "all_to_all")


def program(kind: str, n: int, size: int) -> str:
    """One collective over a 1-D mesh of n ranks whose every rank holds `size` bytes before it."""
    e = size // 4
    shape, src, dst = {
        "all_gather": (f"{e * n}", "S(0)", "B"),
        "all_reduce": (f"{e}", "P", "B"),
        "reduce_scatter": (f"{e}", "P", "S(0)"),
        "all_to_all": (f"{n}x{e}", "S(0)", "S(1)"),
    }[kind]
    a, b = f"!sbp.tensor<{shape}xf32, @m, [{src}]>", f"!sbp.tensor<{shape}xf32, @m, [{dst}]>"
    ranks = ", ".join(str(i) for i in range(n))
    return (f'sbp.placement @m "cpu" [{ranks}]\n'
            f"func.func @main(%a: {a}) -> {b} {{\n"
            f"  %0 = sbp.{kind} %a {{mesh_axes = array<i64: 0>}} : {a} -> {b}\n"
            f"  func.return %0 : {b}\n}}\n")


def fit(rows: list[tuple[int, float, float]]) -> CommModel:
    """`base + hops·latency + bytes/bandwidth` (µs) fitted to (hops, busiest bytes, measured µs) by least
    squares on the relative error, with every constant ≥ 0 (the best non-negative fit over the subsets of
    terms: three unknowns, so trying all eight is exact)."""
    a = np.array([[1.0, h, b] for h, b, _ in rows])
    y = np.array([t for _, _, t in rows])
    a, ones = a / y[:, None], np.ones_like(y)
    best, best_coef = math.inf, np.zeros(3)
    for mask in itertools.product((False, True), repeat=3):
        cols = [i for i in range(3) if mask[i]]
        if not cols:
            continue
        coef, *_ = np.linalg.lstsq(a[:, cols], ones, rcond=None)
        if (coef < 0).any():
            continue
        full = np.zeros(3)
        full[cols] = coef
        residual = float(np.sum((a @ full - ones) ** 2))
        if residual < best:
            best, best_coef = residual, full
    base, latency, per_byte = (float(c) for c in best_coef)
    return CommModel(base, latency, 1.0 / (per_byte * 1e3) if per_byte > 0 else math.inf)


def main() -> int:
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).with_name("RESULTS_torch.md")
    ctx = Context()
    register_dialects(ctx)
    measured: list[tuple[str, int, int, TorchRecord]] = []
    began = time.perf_counter()
    for n in RANKS:
        jobs, keys = [], []
        for kind in KINDS:
            for size in SIZES:
                case = compile_case(ctx, f"{kind} {n} {size}", program(kind, n, size), "", 0)
                jobs.append(Job(case.compiled, case.entry, case.shards))
                keys.append((kind, n, size))
        results = run_local(jobs, TorchOptions(timeout=300, repeat=repeat))
        for key, result in zip(keys, results, strict=True):
            (record,) = result.records
            measured.append((*key, record))
        print(f"{n} ranks done ({time.perf_counter() - began:.0f} s)", flush=True)
    default = CommModel()
    rows = []
    for kind, n, _, rec in measured:
        busiest = max(rec.step.modelled_bytes().values())
        rows.append((COLLECTIVES[kind].hops(n), busiest, rec.measured_s() * 1e6))
    fitted = fit(rows)
    lines = [
        "# gloo collectives measured vs the α-β model",
        "",
        f"`python bench/bench_torch_collectives.py {repeat}` — torch {torch.__version__}, gloo, "
        f"{platform.machine()}, {len(__import__('os').sched_getaffinity(0))} cores shared with other jobs, "
        f"{repeat} runs per point (median over runs of the median over ranks), {time.perf_counter() - began:.0f} s.",
        "",
        f"Model: `base + hops·latency + bytes/bandwidth` with the busiest rank's bytes. DTensor's constants: "
        f"base {default.base_us} µs, latency {default.latency_us} µs/hop, {default.bandwidth_gbps} GB/s. "
        f"Fitted here (relative least squares, constants ≥ 0, over all {len(rows)} points): "
        f"base {fitted.base_us:.0f} µs, latency "
        f"{fitted.latency_us:.0f} µs/hop, {fitted.bandwidth_gbps:.3f} GB/s.",
        "",
        "| collective | ranks | bytes/rank | sent by busiest rank | measured ms | DTensor model ms | ratio | "
        "fitted model ms | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ratios_default, ratios_fit = [], []
    for (kind, n, size, rec), (hops, busiest, t_us) in zip(measured, rows, strict=True):
        d = default.time(hops, busiest)
        f = fitted.time(hops, busiest)
        ratios_default.append(t_us / d)
        ratios_fit.append(t_us / f if f > 0 else math.inf)
        lines.append(f"| {kind} | {n} | {size} | {busiest} | {t_us / 1e3:.3f} | {d / 1e3:.4f} | {t_us / d:.0f}× | "
                     f"{f / 1e3:.3f} | {t_us / f:.2f} |")
    geo = float(np.exp(np.mean(np.log(ratios_default))))
    spread = [abs(math.log(r)) for r in ratios_fit if r > 0 and math.isfinite(r)]
    lines += [
        "",
        f"Measured / DTensor model: geometric mean {geo:.0f}×, range {min(ratios_default):.0f}× – "
        f"{max(ratios_default):.0f}×. Measured / fitted model: range {min(ratios_fit):.2f} – "
        f"{max(ratios_fit):.2f}, median |log ratio| {float(np.median(spread)):.2f}.",
    ]
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
