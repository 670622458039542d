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

import argparse
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import PassPipeline
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.exceptions import DiagnosticException, ParseError

from sbpc.dialects.diagnostics import LocatedParser, Source, error_diagnostic
from sbpc.dialects.errors import OpError
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.infer_sbp.report import REPORT_RULES, build_report, render
from sbpc.runtime import simulator
from sbpc.runtime.distribute import distribute
from sbpc.runtime.simulator import SimulationError
from sbpc.tools.sbp_run import DEFAULT_PIPELINE, Failure, Run, build_arg_parser

if TYPE_CHECKING:
    from sbpc.runtime.ascendc_kernels import FmodDeviation

__all__ = ["DEFAULT_PIPELINE", "Error", "Program", "RunResult", "compile", "parse", "parse_file", "report",
           "report_text", "run"]


class Error(Exception):
    """A user-facing error, already located (`FILE:LINE:COL: error: MESSAGE`) where it has a place."""


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

    def __str__(self) -> str:
        """The module as `sbp-opt` prints it (xDSL's MLIR target)."""
        out = io.StringIO()
        MLIRTarget().emit(self.ctx, self.module, out)
        return out.getvalue()


def _session(name: str, pipeline: str = DEFAULT_PIPELINE, kernels: str = "numpy", entry: str = "main") -> Run:
    """The command-line tool's run state, for the steps the API shares with it."""
    args: argparse.Namespace = build_arg_parser().parse_args(
        [name, "--pipeline", pipeline, "--kernels", kernels, "--entry", entry]
    )
    return Run(args)


def parse(text: str, name: str = "<string>") -> Program:
    """Parse and verify an sbp program; `name` is the file name errors show."""
    session = _session(name)
    source = Source(text, name)
    parser = LocatedParser(session.ctx, source)
    module: ModuleOp | None = None
    try:
        module = parser.parse_module()
        module.verify()
    except (ParseError, DiagnosticException) as error:
        raise Error(error_diagnostic(error, source, parser.positions, module).render()) from None
    return Program(module, source, parser.positions, session.ctx)


def parse_file(path: str) -> Program:
    """`parse` of a file (UTF-8)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as error:
        raise Error(f"error: cannot read {path}: {error}") from None
    return parse(text, path)


def _attach(session: Run, program: Program) -> Run:
    session.ctx, session.source, session.positions = program.ctx, program.source, dict(program.positions)
    return session


def _pipeline(session: Run, spec: str, program: Program) -> PassPipeline:
    """`spec` parsed, its `infer-sbp` passes using the program's cache."""
    pipeline = session.pipeline(spec)
    for p in pipeline.passes:
        if isinstance(p, InferSbpPass):
            p.share_cache(program.cache)
    return pipeline


def compile(program: Program, pipeline: str = DEFAULT_PIPELINE) -> Program:
    """Run a pass pipeline (MLIR syntax, e.g. `infer-sbp{rule=cost},materialize-boxing`) on a copy."""
    session = _attach(_session(program.source.name, pipeline), program)
    try:
        compiled = session.compile(program.module, _pipeline(session, pipeline, program))
    except Failure as failure:
        raise Error(str(failure)) from None
    return Program(compiled, program.source, session.positions, program.ctx, program.cache)


def report(program: Program, rule: str = "oneflow", mem: int | None = None) -> dict[str, Any]:
    """The `--sbp-report` of the program under `rule` (`oneflow`, `cost` or `global`), as the JSON form's
    dict; `mem` is rule=global's per-device budget in bytes."""
    if rule not in REPORT_RULES:
        raise Error(f"error: unknown rule '{rule}' (allowed: {', '.join(REPORT_RULES)})")
    try:
        if mem is not None and rule != "global":
            raise Error(f"error: mem is an option of rule=global only (got rule={rule})")
        # Built on clones (the program is left as it is), through the program's cache.
        return build_report(program.module, rule, mem, program.cache)
    except DiagnosticException as error:
        raise Error(error_diagnostic(error, program.source, program.positions, program.module).render()) from None


def report_text(program: Program, rule: str = "oneflow", fmt: str = "text", mem: int | None = None) -> str:
    """`report` rendered as `sbp-opt --sbp-report[=json]` prints it."""
    return render(report(program, rule, mem), fmt)


@dataclass
class RunResult:
    """What `sbp-run` prints, as values."""

    inputs: list[np.ndarray]
    outputs: list[np.ndarray | None]
    collectives: list[str]
    bytes_sent: int
    modelled_bytes: int
    checked: bool
    mismatches: list[str] = field(default_factory=list)
    fmod_deviation: FmodDeviation | None = None

    @property
    def ok(self) -> bool:
        return not self.mismatches


def run(
    program: Program,
    inputs: Sequence[np.ndarray] | None = None,
    *,
    entry: str = "main",
    seed: int = 0,
    pipeline: str = DEFAULT_PIPELINE,
    kernels: str = "numpy",
    check: bool = True,
    backend: str = "simulator",
    dist_backend: str = "gloo",
    timeout: float = 60.0,
) -> RunResult:
    """Compile `program` with `pipeline`, distribute the global inputs (random from `seed` if None) by
    their SBPs, run every rank with `kernels` (`numpy` or `ascendc-cpu`) — on the simulated mesh, or with
    `backend="torch"` on torch.distributed (one forked process per rank, `dist_backend`, `timeout`
    seconds without progress), as `sbp-run --backend torch` does — reassemble the outputs and, with
    `check`, compare them with the global reference."""
    if backend not in ("simulator", "torch"):
        raise Error(f"error: unknown backend '{backend}' (allowed: simulator, torch)")
    session = _attach(_session(program.source.name, pipeline, kernels, entry), program)
    module = program.module
    try:
        fn = simulator.find_function(module, entry)
        types = session.argument_types(module, fn)
        rng = np.random.default_rng(seed)
        values = list(inputs) if inputs is not None else session.random_inputs(types, rng)
        _check_inputs(values, types, entry)
        compiled = session.compile(module, _pipeline(session, pipeline, program))
        arg_dists, res_dists = simulator.function_signature(compiled, entry)
        shards = [distribute(x, d.sbp, d.hierarchy, rng) for x, d in zip(values, arg_dists, strict=True)]
        if backend == "torch":
            outputs, collectives, sent, tolerant = _run_torch(
                session, compiled, entry, shards, dist_backend, timeout)
        else:
            outputs, log = simulator.simulate(compiled, entry, shards, session.kernels())
            collectives = [record.line() for record in log]
            sent, tolerant = simulator.total_sent(log), False
        results, mismatches = session.assemble(outputs, res_dists)
        deviation = session.fmod_deviation() if check else None
        if check:
            kernels_of_reference = None if deviation is None else deviation.overrides()
            expected = simulator.reference(module, entry, values, kernels_of_reference)
            tolerant = tolerant or simulator.reorders_float_sums(compiled, entry)
            for i, (got, want, dist) in enumerate(zip(results, expected, res_dists, strict=True)):
                problem = None if got is None else simulator.compare(got, want, tolerant)
                if problem is not None:
                    mismatches.append(f"result {i} ({dist.describe()}): {problem}")
        total = simulator.modelled_bytes(compiled, entry)
    except Failure as failure:
        raise Error(str(failure)) from None
    except DiagnosticException as error:
        raise Error(str(session.located(error, module))) from None
    except SimulationError as error:
        raise Error(f"{program.source.name}: error: {error}") from None
    return RunResult(values, results, collectives, sent, total, check, mismatches, deviation)


def _run_torch(
    session: Run, compiled: ModuleOp, entry: str, shards: list[dict], dist_backend: str, timeout: float,
) -> tuple[list[dict], list[str], int, bool]:
    """The compiled program on forked torch.distributed ranks: (outputs, the collectives' lines,
    bytes sent over all ranks, whether torch rounds a float op differently from numpy)."""
    try:
        from sbpc.runtime import torch_backend
    except ImportError as error:
        raise Error(f"error: backend torch needs torch (pip install -e '.[dist]'): {error}") from None
    job = torch_backend.Job(compiled, entry, shards, session.kernels())
    try:
        (result,) = torch_backend.run_local([job], torch_backend.TorchOptions(dist_backend, timeout))
    except torch_backend.TorchBackendError as error:
        fn = simulator.find_function(compiled, entry)
        raise Error(str(session.located(OpError(fn, str(error)), compiled))) from None
    assert result is not None  # forked ranks: this process is rank 0's parent and gathers everything
    sent = sum(sum(record.sent.values()) for record in result.records)
    return (result.outputs, [record.line() for record in result.records], sent,
            torch_backend.rounds_differently(compiled, entry))


def _check_inputs(values: Sequence[np.ndarray], types: Sequence[tuple[tuple[int, ...], np.dtype]], entry: str) -> None:
    if len(values) != len(types):
        raise Error(f"error: {len(values)} inputs given but @{entry} takes {len(types)} arguments")
    for i, (value, (shape, dtype)) in enumerate(zip(values, types, strict=True)):
        if not isinstance(value, np.ndarray) or value.shape != shape or value.dtype != dtype:
            got = f"{value.dtype}{list(value.shape)}" if isinstance(value, np.ndarray) else type(value).__name__
            raise Error(f"error: input {i} is {got}, but argument {i} of @{entry} is {dtype}{list(shape)}")
