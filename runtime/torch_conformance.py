"""The torch backend against the simulator: many compiled programs, few process launches.

Cases are grouped by mesh and each group runs in one launch of forked ranks
(`torch_backend.run_local` with several jobs), since a launch costs more than a small program.
For every case and every collective, the bytes each rank sent on torch must equal the cost model's
count (`step_bytes_exact`), and every rank's results must equal the simulator's: bit for bit (NaN
equal to NaN), or within `--check`'s tolerance when a float op rounds differently in torch
(`torch_backend.rounds_differently`). Used by the tests and by `bench/stress_torch.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from sbpc.dialects.collectives import Shards
from sbpc.passes.registry import get_all_passes
from sbpc.runtime.distribute import distribute
from sbpc.runtime.simulator import compare, function_signature, simulate
from sbpc.runtime.torch_backend import Job, TorchOptions, job_hierarchy, rounds_differently, run_local


@dataclass
class Case:
    """A compiled program with its distributed inputs."""

    name: str
    compiled: ModuleOp
    shards: list[Shards]
    entry: str = "main"


def compile_case(ctx: Context, name: str, text: str, pipeline: str, seed: int = 0) -> Case:
    """Parse `text`, compile it with `pipeline` and distribute seeded random inputs by its arguments' SBPs."""
    module = Parser(ctx, text).parse_module()
    PassPipeline.parse_spec(get_all_passes(), pipeline).apply(ctx, module)
    module.verify()
    rng = np.random.default_rng(seed)
    args, _ = function_signature(module, "main")
    shards = []
    for d in args:
        if np.issubdtype(d.dtype, np.integer):
            value = rng.integers(-10, 11, size=d.shape).astype(d.dtype)
        else:
            value = rng.standard_normal(d.shape).astype(np.float32).astype(d.dtype)
        shards.append(distribute(value, d.sbp, d.hierarchy, rng))
    return Case(name, module, shards)


def _same(got: np.ndarray, want: np.ndarray, tolerant: bool) -> str | None:
    if not tolerant:
        if got.shape == want.shape and got.dtype == want.dtype and got.tobytes() == want.tobytes():
            return None
        if got.shape == want.shape and got.dtype == want.dtype and not np.issubdtype(got.dtype, np.integer):
            g, w = got.astype(np.float64), want.astype(np.float64)
            if bool(np.all((g == w) | (np.isnan(g) & np.isnan(w)))):
                return None  # equal values, NaNs with other payloads
    return compare(got, want, tolerant)


def check_cases(cases: Sequence[Case], options: TorchOptions = TorchOptions()) -> tuple[list[str], int]:
    """Run every case on torch (one launch per mesh) and on the simulator; the mismatches found and
    the number of collectives compared."""
    by_mesh: dict[tuple[int, ...], list[Case]] = {}
    for case in cases:
        by_mesh.setdefault(job_hierarchy(Job(case.compiled, case.entry, case.shards)), []).append(case)
    failures: list[str] = []
    compared = 0
    for group in by_mesh.values():
        results = run_local([Job(c.compiled, c.entry, c.shards) for c in group], options)
        for case, result in zip(group, results, strict=True):
            expected, log = simulate(case.compiled, case.entry, case.shards)
            for record, sim in zip(result.records, log, strict=True):
                compared += 1
                model = record.step.modelled_bytes()
                if record.sent != model or sim.sent != model:
                    failures.append(f"{case.name}: {record.step.describe()}: torch sent {record.per_rank()}, "
                                    f"simulator {sim.per_rank()}, model {[model[c] for c in sorted(model)]}")
            tolerant = rounds_differently(case.compiled, case.entry)
            for i, (got, want) in enumerate(zip(result.outputs, expected, strict=True)):
                for coord in sorted(want):
                    problem = _same(got[coord], want[coord], tolerant)
                    if problem is not None:
                        failures.append(f"{case.name}: result {i} on rank {list(coord)}: {problem}")
    return failures, compared
