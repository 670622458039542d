"""The execution engine of `sbp-run` and `sbpc.run` (SPEC §4): parse, compile, distribute, run, reassemble, check.

Each step is a function of plain values; a failure the user can act on is a `Failure` whose message
is already formatted (`FILE:LINE:COL: error: MESSAGE` where it has a place, else `error: MESSAGE`).
`Located` turns an error into such a message: it holds the program's source and where each op of it
(and of its compiled clones) starts.

    ctx = sbp_context()
    module, located = parse(ctx, read_source(path))
    fn = entry_function(module, "main", located)
    types = argument_types(module, fn, located)
    rng = np.random.default_rng(0)
    result = run(ctx, module, located, random_inputs(types, rng), checked_pipeline(DEFAULT_PIPELINE), rng)
    check(result, module, located)

`run` compiles a clone, distributes the global inputs by the arguments' SBPs, runs every rank on the
lock-step simulator or on torch.distributed (`Backend`), with numpy or the Ascend C CPU kernels
(`LocalKernels`), and reassembles the outputs by the results' SBPs; `check` compares them with the
global numpy reference of the original program.
"""

from __future__ import annotations

import math
import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError

from sbpc.dialects.diagnostics import (
    DecodeError,
    LocatedParser,
    Source,
    argument_diagnostic,
    decode_source,
    error_diagnostic,
)
from sbpc.dialects.errors import OpError
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.dialects.units import human_bytes
from sbpc.runtime import ops_numpy, train_step
from sbpc.runtime.ascendc_kernels import FmodDeviation, KernelProfiler, kernel_overrides
from sbpc.runtime.check import bounded_inputs, dyadic_inputs, judge, summary
from sbpc.runtime.distribute import ReplicaMismatch, assemble, distribute
from sbpc.runtime.error_bounds import bounded_reference
from sbpc.runtime.op_impls import Overrides
from sbpc.runtime.pipeline import verify_program
from sbpc.runtime.simulator import (
    Dist,
    SimulationError,
    find_function,
    function_signature,
    modelled_bytes,
    reference,
    simulate,
    total_sent,
)

ArgumentType = tuple[tuple[int, ...], np.dtype]
"""The global shape and dtype of an entry argument."""


class Failure(Exception):
    """A user-facing error, already formatted (the drivers print it as is on stderr and exit 1)."""


class TorchMissing(Exception):
    """torch, which the torch backend runs on, is not installed; the message says how to install it."""


# ---------------------------------------------------------------------------
# Where errors point
# ---------------------------------------------------------------------------


@dataclass
class Located:
    """A program's source and the offset where each of its ops starts (also the ops of compiled clones)."""

    source: Source
    positions: dict[Operation, int] = field(default_factory=dict)
    debug: bool = False
    """Print the Python traceback of every error made into a `Failure` (`--debug`)."""

    def error(self, error: Exception, module: ModuleOp | None) -> Failure:
        """A parse error, a verifier error or an op's error as a located `Failure`."""
        if self.debug:
            traceback.print_exc()
        return Failure(error_diagnostic(error, self.source, self.positions, module).render())

    def at_argument(self, fn: func.FuncOp, index: int, message: str) -> Failure:
        """An error pointing at argument `index` of function `fn` in the source."""
        if self.positions.get(fn) is None:
            return Failure(f"{self.source.name}: error: {message}")
        return Failure(argument_diagnostic(fn, index, message, self.source, self.positions).render())

    def where(self, op: Operation) -> str:
        """`FILE:LINE:COL` of an op (the file name alone for an op without a position)."""
        pos = self.positions.get(op)
        if pos is None:
            return self.source.name
        line, col = self.source.line_col(pos)
        return f"{self.source.name}:{line}:{col}"


# ---------------------------------------------------------------------------
# Parse and compile
# ---------------------------------------------------------------------------


def read_source(path: str) -> Source:
    """The UTF-8 text of the file `path`, or of stdin for `-` (bytes that are not UTF-8 are a located error)."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as error:
        raise Failure(f"error: cannot read {path}: {error.strerror or error}") from None
    try:
        return decode_source(data, name)
    except DecodeError as error:
        raise Failure(error.diagnostic.render()) from None


def parse(ctx: Context, source: Source, debug: bool = False) -> tuple[ModuleOp, Located]:
    """Parse and verify a program (ops, then function signatures against their placements)."""
    parser = LocatedParser(ctx, source)
    located = Located(source, parser.positions, debug)
    module: ModuleOp | None = None
    try:
        module = parser.parse_module()
        verify_program(module)
    except (ParseError, DiagnosticException) as error:
        raise located.error(error, module) from None
    return module, located


def compile_module(ctx: Context, module: ModuleOp, pipeline: PassPipeline, located: Located,
                   ) -> tuple[ModuleOp, Located]:
    """Run `pipeline` on a clone of `module` and verify it; the clone's ops are located where the
    originals are (the returned `Located` holds both)."""
    compiled = module.clone()
    positions = dict(located.positions)
    for old, new in zip(module.walk(), compiled.walk(), strict=True):
        if old in positions:
            positions[new] = positions[old]
    located = replace(located, positions=positions)
    try:
        pipeline.apply(ctx, compiled)
        compiled.verify()
    except (ParseError, DiagnosticException) as error:
        raise located.error(error, compiled) from None
    return compiled, located


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def entry_function(module: ModuleOp, entry: str, located: Located) -> func.FuncOp:
    """The function `@entry` of `module`."""
    try:
        return find_function(module, entry)
    except SimulationError as error:
        where = located.source.name
        if not any(isinstance(op, func.FuncOp) for op in module.ops):  # an empty input is an empty module
            raise Failure(f"{where}:{located.source.first_line}:1: error: the program has no function to run "
                          f"(sbp-run runs @{entry}; see --entry)") from None
        raise Failure(f"{where}: error: {error}") from None


def check_memory(fn: func.FuncOp, located: Located) -> None:
    """Refuse up front a program whose global tensors alone exceed this machine's memory (numpy would
    end in MemoryError part way): the reference run holds every one of them."""
    sized: list[tuple[int, str, Operation | None, int | None]] = []  # bytes, what, op, argument index
    for i, ty in enumerate(fn.function_type.inputs.data):
        if isinstance(ty, GlobalTensorType):
            sized.append((_nbytes(ty), f"argument {i} {ty.describe()}", None, i))
    for op in fn.body.walk():
        for r in op.results:
            if isinstance(r.type, GlobalTensorType):
                sized.append((_nbytes(r.type), f"the result of {op.name} {r.type.describe()}", op, None))
    total = sum(n for n, *_ in sized)
    available = _physical_memory()
    if not sized or available is None or total <= available:
        return
    largest, what, op, index = max(sized, key=lambda t: t[0])
    message = (f"@{fn.sym_name.data} needs at least {human_bytes(total)} for its global tensors, more than this "
               f"machine's {human_bytes(available)} of memory (largest: {what}, {human_bytes(largest)})")
    if op is not None:
        raise located.error(OpError(op, message), None)
    raise located.at_argument(fn, index or 0, message)


def _nbytes(ty: GlobalTensorType) -> int:
    return math.prod(ty.get_shape()) * ops_numpy.np_dtype(ty.element_type).itemsize


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # no sysconf on this platform: do not guess
        return None


def argument_types(module: ModuleOp, fn: func.FuncOp, located: Located) -> list[ArgumentType]:
    """The global shape and dtype of each argument of `fn` (a per-rank function's from its signature)."""
    found: list[ArgumentType] = []
    for i, ty in enumerate(fn.function_type.inputs.data):
        if isinstance(ty, GlobalTensorType):
            found.append((ty.get_shape(), ops_numpy.np_dtype(ty.element_type)))
            continue
        try:
            args, _ = function_signature(module, fn.sym_name.data)
        except DiagnosticException:
            raise located.at_argument(fn, i, f"argument {i} of @{fn.sym_name.data} has type {ty}, "
                                             "expected !sbp.tensor") from None
        found.append((args[i].shape, args[i].dtype))
    return found


def random_inputs(types: Sequence[ArgumentType], rng: np.random.Generator, fn: func.FuncOp | None = None,
                  ) -> list[np.ndarray]:
    """Seeded global inputs on the dyadic grid of SPEC §4.3 (`runtime.check`), scaled for `fn`'s matmuls
    (a training step's second moments non-negative, `train_step.state_inputs`)."""
    values = dyadic_inputs(types, rng, fn)
    spec = train_step.spec_of(fn) if fn is not None else None
    return values if spec is None else train_step.state_inputs(spec, values)


def check_inputs(values: Sequence[np.ndarray], types: Sequence[ArgumentType], entry: str) -> None:
    """Given inputs must be arrays of the arguments' global shapes and dtypes."""
    if len(values) != len(types):
        raise Failure(f"error: {len(values)} inputs given but @{entry} takes {len(types)} arguments")
    for i, (value, (shape, dtype)) in enumerate(zip(values, types, strict=True)):
        if not isinstance(value, np.ndarray) or value.shape != shape or value.dtype != dtype:
            got = f"{value.dtype}{list(value.shape)}" if isinstance(value, np.ndarray) else type(value).__name__
            raise Failure(f"error: input {i} is {got}, but argument {i} of @{entry} is {dtype}{list(shape)}")


# ---------------------------------------------------------------------------
# Kernels and backends
# ---------------------------------------------------------------------------


@dataclass
class LocalKernels:
    """The kernels of the local ops: numpy, or the emitted Ascend C fmod kernels on the CPU shim (the
    other ops stay numpy), with `profile` recording every launch. Owned by one run."""

    kind: Literal["numpy", "ascendc-cpu"] = "numpy"
    profile: bool = False
    profiler: KernelProfiler | None = field(default=None, init=False)
    overrides: Overrides | None = field(default=None, init=False)
    """The kernels that replace numpy's, by op class (None: numpy's alone)."""

    def __post_init__(self) -> None:
        if self.kind == "numpy":
            return
        if self.profile:
            self.profiler = KernelProfiler()
            self.overrides = self.profiler.overrides()
        else:
            self.overrides = dict(kernel_overrides())

    def fmod_deviation(self) -> FmodDeviation | None:
        """With Ascend C kernels the global reference computes fmod by the TBE formula they implement,
        measuring on the way how far it lands from the IR's C fmod."""
        return None if self.kind == "numpy" else FmodDeviation()

    def launch_lines(self) -> list[str]:
        """One line per profiled kernel launch, in launch order."""
        return [launch.line() for launch in self.profiler.launches] if self.profiler is not None else []


@dataclass(frozen=True)
class Backend:
    """Where the ranks run: the lock-step mesh simulator, or torch.distributed (SPEC §4.1)."""

    name: Literal["simulator", "torch"] = "simulator"
    dist_backend: str = "gloo"
    timeout: float = 60.0
    """torch: seconds without progress on any rank before the run fails."""
    repeat: int = 1
    """torch: how many times the program runs (the report gives median times)."""
    join_torchrun: bool = False
    """torch: if torchrun launched this process, run as its rank (else fork one process per rank)."""


# ---------------------------------------------------------------------------
# Run and check
# ---------------------------------------------------------------------------


@dataclass
class RunResult:
    """One run: what `sbp-run` prints, as values."""

    entry: str
    inputs: list[np.ndarray]
    outputs: list[np.ndarray | None]
    """The reassembled global results (None where the shards could not be assembled)."""
    collectives: list[str]
    """One line per collective run: its kind, SBPs, shape and the bytes each rank sent."""
    bytes_sent: int
    modelled_bytes: int
    log: list[str]
    """The lines `sbp-run` prints for the run: the collectives, the totals and, profiled, the launches."""
    compiled: ModuleOp
    result_dists: list[Dist]
    tolerant: bool
    """Whether the backend rounded a float op differently from numpy."""
    checked: bool = False
    mismatches: list[str] = field(default_factory=list)
    """Results that could not be reassembled and, once checked, results that differ from the reference."""
    fmod_deviation: FmodDeviation | None = None
    tolerances: list[str] = field(default_factory=list)
    """Once checked, per result the tolerance it was judged with (`result 0: exact`, `result 1: bound 2e-06`)."""
    losses: list[float] = field(default_factory=list)
    """A training step run `steps` times (`run_steps`): the loss of each step."""
    parameters: dict[str, np.ndarray] = field(default_factory=dict)
    """... and each parameter's global value after the last step, by name."""

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def check_line(self) -> str:
        """`check: OK (result 0: exact; ...)`, the line `sbp-run --check` prints for a passing check."""
        return summary(self.tolerances)


@dataclass
class _Ranks:
    """What the ranks gave: shards per result, and the collectives' lines and bytes."""

    outputs: list[dict]
    collectives: list[str]
    bytes_sent: int
    log: list[str]
    tolerant: bool = False


def run(ctx: Context, module: ModuleOp, located: Located, inputs: Sequence[np.ndarray], pipeline: PassPipeline,
        rng: np.random.Generator, entry: str = "main", kernels: LocalKernels | None = None,
        backend: Backend = Backend()) -> RunResult | None:
    """Compile `module` with `pipeline`, distribute `inputs` by the arguments' SBPs (partial ones as
    random pieces from `rng`), run every rank and reassemble the outputs. None on a torchrun rank
    other than 0 (rank 0 gathers the results)."""
    kernels = kernels if kernels is not None else LocalKernels()
    compiled, located = compile_module(ctx, module, pipeline, located)
    try:
        arg_dists, res_dists = function_signature(compiled, entry)
        if len(arg_dists) != len(inputs):
            raise Failure(f"error: the pipeline changed the number of arguments of @{entry} from {len(inputs)} to "
                          f"{len(arg_dists)} (run a pass that adds arguments, such as autodiff, with sbp-opt first)")
        for i, (dist, value) in enumerate(zip(arg_dists, inputs, strict=True)):
            if dist.shape != value.shape:
                raise Failure(f"error: the pipeline changed argument {i} of @{entry} from shape "
                              f"{list(value.shape)} to {list(dist.shape)}")
        shards = [distribute(x, d.sbp, d.hierarchy, rng) for x, d in zip(inputs, arg_dists, strict=True)]
        model = modelled_bytes(compiled, entry)
        if backend.name == "torch":
            ranks = _run_torch(compiled, entry, shards, kernels, backend, model, located)
            if ranks is None:
                return None
        else:
            outputs, records = simulate(compiled, entry, shards, kernels.overrides)
            lines = [record.line() for record in records]
            sent = total_sent(records)
            log = [*lines, f"total bytes sent: {sent} (all ranks); cost model: {model}", *kernels.launch_lines()]
            ranks = _Ranks(outputs, lines, sent, log)
    except DiagnosticException as error:
        raise located.error(error, compiled) from None
    except SimulationError as error:
        raise Failure(f"{located.source.name}: error: {error}") from None
    results, failures = reassemble(ranks.outputs, res_dists)
    return RunResult(entry, list(inputs), results, ranks.collectives, ranks.bytes_sent, model, ranks.log, compiled,
                     res_dists, ranks.tolerant, mismatches=failures)


def run_steps(ctx: Context, module: ModuleOp, located: Located, inputs: Sequence[np.ndarray], pipeline: PassPipeline,
              rng: np.random.Generator, steps: int, entry: str = "main", kernels: LocalKernels | None = None,
              backend: Backend = Backend(), checked: bool = False) -> RunResult:
    """Run the training step `@entry` (a program of the `autodiff` pass) `steps` times, each step's
    updated parameters and optimizer state the next one's (AdamW's step count advancing), and, if
    `checked`, check every step as `check` does (against the float64 reference and eager torch). The
    last step's result, with `losses` and `parameters` filled in; a step whose check fails ends the run."""
    spec = train_step.step_spec(module, entry)
    if spec is None:
        raise Failure(f"error: --steps runs a training step, and @{entry} is none (no sbp.train_step: make it "
                      "with sbp-opt -p 'autodiff{...}')")
    if steps < 1:
        raise Failure(f"error: --steps must be at least 1, got {steps}")
    if backend.join_torchrun and steps > 1 and os.environ.get("RANK") is not None:
        raise Failure("error: --steps N > 1 runs ranks forked by sbp-run, not under torchrun")
    current = list(inputs)
    losses: list[float] = []
    result: RunResult | None = None
    try:
        for k in range(steps):
            train_step.set_step_count(module, entry, spec.step + k)
            result = run(ctx, module, located, current, pipeline, rng, entry, kernels, backend)
            assert result is not None
            if checked:
                check(result, module, located, kernels)
            if not result.ok:
                break
            loss = result.outputs[0]
            losses.append(float(np.asarray(loss).reshape(-1)[0]) if loss is not None else math.nan)
            current = train_step.carried(spec, current, result.outputs)  # type: ignore[arg-type]
    finally:
        train_step.set_step_count(module, entry, spec.step)
    assert result is not None
    result.losses = losses
    if result.ok:
        result.parameters = {name: current[i] for name, i in zip(spec.names, spec.params, strict=True)}
    return result


def _run_torch(compiled: ModuleOp, entry: str, shards: Sequence[dict], kernels: LocalKernels, backend: Backend,
               model: int, located: Located) -> _Ranks | None:
    """The compiled program on torch.distributed ranks (forked, or this torchrun rank)."""
    try:  # torch is optional, and takes seconds to load
        from sbpc.runtime import torch_backend
    except ImportError as error:
        raise TorchMissing(f"torch (pip install -e '.[dist]'): {error}") from None
    job = torch_backend.Job(compiled, entry, shards, kernels.overrides)
    options = torch_backend.TorchOptions(backend.dist_backend, backend.timeout, backend.repeat)
    try:
        if backend.join_torchrun and torch_backend.launched_by_torchrun():
            result = torch_backend.run_as_rank(job, options)
        else:
            (result,) = torch_backend.run_local([job], options)
    except torch_backend.TorchBackendError as error:
        raise located.error(OpError(find_function(compiled, entry), str(error)), compiled) from None
    if result is None:
        return None
    return _Ranks(result.outputs, [record.line() for record in result.records],
                  sum(sum(record.sent.values()) for record in result.records),
                  torch_backend.report_lines(result.records, model, backend.repeat),
                  torch_backend.rounds_differently(compiled, entry))


def reassemble(outputs: Sequence[dict], dists: Sequence[Dist]) -> tuple[list[np.ndarray | None], list[str]]:
    """Each result's global value from its shards, by its SBP; and what could not be reassembled."""
    results: list[np.ndarray | None] = []
    failures: list[str] = []
    for i, (shards, dist) in enumerate(zip(outputs, dists, strict=True)):
        try:
            value = assemble(shards, dist.sbp, dist.hierarchy)
        except ReplicaMismatch as error:
            failures.append(f"result {i} ({dist.describe()}): {error}")
            results.append(None)
            continue
        except ValueError as error:  # shards that do not concatenate
            failures.append(f"result {i} ({dist.describe()}): shards cannot be assembled: {error}")
            results.append(None)
            continue
        if value.shape != dist.shape:
            failures.append(f"result {i} ({dist.describe()}): assembled shape {list(value.shape)} is not the "
                            f"declared {list(dist.shape)}")
        results.append(value)
    return results, failures


def check(result: RunResult, module: ModuleOp, located: Located, kernels: LocalKernels | None = None) -> None:
    """Judge the reassembled outputs against the float64 reference of the original `module`, each
    within the error bound propagated through the program (SPEC §4.3, `runtime.check`): bit for bit
    where it is exact. Adds the differences to `result.mismatches` and the tolerances used to
    `result.tolerances`."""
    deviation = kernels.fmod_deviation() if kernels is not None else None
    try:
        # The program on one device in its element types (with Ascend C kernels, by the TBE formula,
        # measuring on the way how far it lands from C fmod): its own error sets the statistical tolerance.
        values: dict[SSAValue, np.ndarray] = {}
        single = reference(module, result.entry, result.inputs, None if deviation is None else deviation.overrides(),
                           values)
        arg_dists, _ = function_signature(result.compiled, result.entry)
        expected = bounded_reference(module, result.entry, bounded_inputs(result.inputs, arg_dists),
                                     ascendc=deviation is not None, single=values)
    except DiagnosticException as error:
        raise located.error(error, module) from None
    except SimulationError as error:
        raise Failure(f"{located.source.name}: error: {error}") from None
    for i, (got, want, one, dist) in enumerate(zip(result.outputs, expected, single, result.result_dists,
                                                   strict=True)):
        if got is None:
            continue
        verdict = judge(got, want, one)
        result.tolerances.append(f"result {i}: {verdict.tolerance}")
        if verdict.problem is not None:
            result.mismatches.append(f"result {i} ({dist.describe()}): {verdict.problem}")
    spec = train_step.step_spec(module, result.entry)
    if spec is not None:
        _check_step(result, module, expected, spec)
    result.checked, result.fmod_deviation = True, deviation


def _check_step(result: RunResult, module: ModuleOp, expected: list, spec: train_step.StepSpec) -> None:
    """A training step's results against the same step in eager torch (SPEC §8), when torch is there."""
    try:
        import torch  # noqa: F401
    except ImportError:
        result.tolerances.append("training step: torch is not installed, so no eager torch comparison")
        return
    eager = train_step.eager_step(module, result.entry, result.inputs)
    lines, problems = train_step.compare_with_torch(result.outputs, expected, eager, spec.result_names())
    result.tolerances += lines
    result.mismatches += problems
