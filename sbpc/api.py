"""sbpc's Python API (SPEC §6): parse a program, run a pipeline, read the report, run on the simulator.

Thin functions over what the command-line tools do, with the same located errors, raised as `Error`::

    import sbpc
    program = sbpc.parse_file("examples/seed.mlir")
    report = sbpc.report(program)                    # what `sbp-opt --sbp-report=json` prints, as a dict
    lowered = sbpc.compile(program, "infer-sbp,materialize-boxing,lower-boxing,spmdize")
    print(lowered)                                   # the IR, as `sbp-opt` prints it
    result = sbpc.run(program, seed=0)               # compile, distribute, simulate, reassemble, check
    assert result.ok, result.mismatches
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import PassPipeline
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.exceptions import DiagnosticException

from sbpc.dialects.context import sbp_context
from sbpc.dialects.diagnostics import Source, error_diagnostic
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.infer_sbp.report import REPORT_RULES, build_report, render
from sbpc.runtime import engine
from sbpc.runtime.engine import Backend, Failure, LocalKernels, Located, RunResult, TorchMissing
from sbpc.runtime.pipeline import DEFAULT_PIPELINE, UsageError, checked_pipeline

__all__ = ["DEFAULT_PIPELINE", "Error", "Program", "RunResult", "compile", "parse", "parse_file", "report",
           "report_text", "run"]


class Error(Exception):
    """A user-facing error, already located (`FILE:LINE:COL: error: MESSAGE`) where it has a place."""


@contextmanager
def _user_errors() -> Iterator[None]:
    """The engine's failures, raised as `Error`."""
    try:
        yield
    except Failure as failure:
        raise Error(str(failure)) from None


@dataclass
class Program:
    """A parsed and verified module, with its source so that later errors point into it."""

    module: ModuleOp
    source: Source
    positions: dict[Operation, int]
    ctx: Context
    cache: InferenceCache = field(default_factory=InferenceCache, repr=False, compare=False)
    """The inference tables this program's `report`, `compile` and `run` calls share (bounded, keyed
    by values): a rule=global search is solved once, however many of them ask for it."""
    defaults: list[np.ndarray] | None = field(default=None, repr=False, compare=False)
    """The global inputs `run` uses when given none (`from_torch`: the example args and the module's
    parameter, buffer and constant values); None: seeded random inputs."""

    def __str__(self) -> str:
        """The module as `sbp-opt` prints it (xDSL's MLIR target)."""
        out = io.StringIO()
        MLIRTarget().emit(self.ctx, self.module, out)
        return out.getvalue()

    def _located(self) -> Located:
        return Located(self.source, self.positions)


def parse(text: str, name: str = "<string>") -> Program:
    """Parse and verify an sbp program; `name` is the file name errors show."""
    return _parsed(Source(text, name))


def parse_file(path: str) -> Program:
    """`parse` of a file (UTF-8)."""
    with _user_errors():
        source = engine.read_source(path)
    return _parsed(source)


def _parsed(source: Source) -> Program:
    ctx = sbp_context()
    with _user_errors():
        module, located = engine.parse(ctx, source)
    return Program(module, source, located.positions, ctx)


def _pipeline(spec: str, program: Program) -> PassPipeline:
    """`spec` parsed, its `infer-sbp` passes using the program's cache."""
    try:
        pipeline = checked_pipeline(spec)
    except UsageError as error:
        raise Error(f"error: bad pipeline: {error}") from None
    for p in pipeline.passes:
        if isinstance(p, InferSbpPass):
            p.share_cache(program.cache)
    return pipeline


def compile(program: Program, pipeline: str = DEFAULT_PIPELINE) -> Program:
    """Run a pass pipeline (MLIR syntax, e.g. `infer-sbp{rule=cost},materialize-boxing`) on a copy."""
    passes = _pipeline(pipeline, program)
    with _user_errors():
        compiled, located = engine.compile_module(program.ctx, program.module, passes, program._located())
    return Program(compiled, program.source, located.positions, program.ctx, program.cache, program.defaults)


def report(program: Program, rule: str = "oneflow", mem: int | None = None,
           time_limit: float | None = None) -> dict[str, Any]:
    """The `--sbp-report` of the program under `rule` (`oneflow`, `cost` or `global`), as the JSON form's
    dict; `mem` is rule=global's per-device budget in bytes, `time_limit` its seconds per HiGHS run."""
    if rule not in REPORT_RULES:
        raise Error(f"error: unknown rule '{rule}' (allowed: {', '.join(REPORT_RULES)})")
    try:
        if (mem is not None or time_limit is not None) and rule != "global":
            raise Error(f"error: mem and time_limit are options of rule=global only (got rule={rule})")
        # Built on clones (the program is left as it is), through the program's cache.
        return build_report(program.module, rule, mem, program.cache, time_limit)
    except DiagnosticException as error:
        raise Error(error_diagnostic(error, program.source, program.positions, program.module).render()) from None


def report_text(program: Program, rule: str = "oneflow", fmt: str = "text", mem: int | None = None) -> str:
    """`report` rendered as `sbp-opt --sbp-report[=json]` prints it."""
    return render(report(program, rule, mem), fmt)


def run(
    program: Program,
    inputs: Sequence[np.ndarray] | None = None,
    *,
    entry: str = "main",
    seed: int = 0,
    pipeline: str = DEFAULT_PIPELINE,
    kernels: Literal["numpy", "ascendc-cpu"] = "numpy",
    check: bool = True,
    backend: Literal["simulator", "torch"] = "simulator",
    dist_backend: str = "gloo",
    timeout: float = 60.0,
    steps: int | None = None,
) -> RunResult:
    """Compile `program` with `pipeline`, distribute the global inputs (the program's `defaults`, else
    random from `seed`, if None) by
    their SBPs, run every rank with `kernels` (`numpy` or `ascendc-cpu`) — on the simulated mesh, or with
    `backend="torch"` on torch.distributed (one forked process per rank, `dist_backend`, `timeout`
    seconds without progress), as `sbp-run --backend torch` does — reassemble the outputs and, with
    `check`, compare them with the global reference. `steps=N` runs a training step (SPEC §8, made by the
    `autodiff` pass) N times carrying parameters and optimizer state, checking every step with `check`;
    the result adds `losses` (N floats) and `parameters` (name -> updated global value)."""
    if backend not in ("simulator", "torch"):
        raise Error(f"error: unknown backend '{backend}' (allowed: simulator, torch)")
    if kernels not in ("numpy", "ascendc-cpu"):
        raise Error(f"error: unknown kernels '{kernels}' (allowed: numpy, ascendc-cpu)")
    module, located = program.module, program._located()
    with _user_errors():
        fn = engine.entry_function(module, entry, located)
        engine.check_memory(fn, located)
        types = engine.argument_types(module, fn, located)
        rng = np.random.default_rng(seed)
        if inputs is not None:
            values = list(inputs)
        elif program.defaults is not None:
            values = list(program.defaults)
        else:
            values = engine.random_inputs(types, rng, fn)
        engine.check_inputs(values, types, entry)
        local = LocalKernels(kernels)
        try:
            if steps is not None:
                result = engine.run_steps(program.ctx, module, located, values, _pipeline(pipeline, program), rng,
                                          steps, entry, local, Backend(backend, dist_backend, timeout), checked=check)
            else:
                result = engine.run(program.ctx, module, located, values, _pipeline(pipeline, program), rng, entry,
                                    local, Backend(backend, dist_backend, timeout))
        except TorchMissing as missing:
            raise Error(f"error: backend torch needs {missing}") from None
        assert result is not None  # forked ranks: this process is rank 0's parent and gathers everything
        if check and steps is None:
            engine.check(result, module, located, local)
    return result
