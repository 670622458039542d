"""`sbp-run`: compile a global program, run it on a simulated device mesh and check it (SPEC §4).

    sbp-run FILE [--entry main] [--seed N | --inputs a.npy,b.npy] [--pipeline P]
                 [--kernels numpy|ascendc-cpu [--profile]] [--check] [--save-outputs DIR] [--debug]
                 [--backend simulator|torch] [--dist-backend gloo|nccl|hccl] [--timeout S] [--repeat N]

1. parse and verify FILE (located errors, exit 1);
2. build global inputs: seeded random (floats standard normal, integers in [-10, 10]) or `.npy`
   files whose shape and dtype must match the entry function's argument types;
3. compile a clone of the module with the pass pipeline P
   (default `infer-sbp,materialize-boxing,lower-boxing,spmdize`);
4. distribute every input by its argument's SBP (`runtime.distribute`; partial inputs as exact
   random pieces), run the compiled program in lock step on every rank (`runtime.simulator`),
   and reassemble the outputs by the results' SBPs;
   With `--backend torch` the compiled program runs on torch.distributed instead, one forked process
   per rank, or this process's rank under torchrun (`runtime.torch_backend`, SPEC §4.1);
5. print, per collective, the bytes each rank sent (torch: and its measured time beside the α-β
   model's), then the total and the cost model's prediction;
6. with `--check`, compare with the global numpy reference run on the original program: bitwise
   unless the program sums floats in another order (then allclose with per-dtype tolerances);
   print `check: OK` or a mismatch report and exit 1 on mismatch. With `--kernels ascendc-cpu` the
   reference computes fmod by the kernels' TBE formula, and a line first reports its largest
   deviation from the IR's C fmod.
7. with `--kernels ascendc-cpu --profile` (simulator backend), one line per kernel launch after the run:
   `kernel NAME key=K rank=R dtype=T n=N: bytes B (X.XXx min), cores C/48, ub U B, model M us, ideal I us
   (R.RRx)` from the shim's counters and the roofline model of `lowering/ascendc/cpu/roofline.py`.

Errors print as `FILE:LINE:COL: error: MESSAGE` (or `error: MESSAGE`) on stderr with exit code 1;
a Python traceback appears only with `--debug`.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError

from sbpc.dialects.diagnostics import DecodeError, Diagnostic, LocatedParser, Source, decode_source, error_diagnostic
from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import GlobalTensorType
from sbpc.dialects.units import human_bytes
from sbpc.runtime import ops_numpy
from sbpc.runtime.distribute import ReplicaMismatch, assemble, distribute
from sbpc.runtime.pipeline import UsageError, checking_callback, parse_pipeline_spec, verify_program
from sbpc.runtime.simulator import (
    Dist,
    SimulationError,
    compare,
    find_function,
    function_signature,
    modelled_bytes,
    reference,
    reorders_float_sums,
    simulate,
    total_sent,
)
from sbpc.tools.sbp_opt import register_dialects

if TYPE_CHECKING:
    from sbpc.runtime.ascendc_kernels import FmodDeviation, KernelProfiler

DEFAULT_PIPELINE = "infer-sbp,materialize-boxing,lower-boxing,spmdize"


class Failure(Exception):
    """A user-facing error, already formatted (printed as is on stderr, exit 1)."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # usage errors exit 1, like every other error
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_arg_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="sbp-run",
        description="Compile an sbp program, run it on a simulated device mesh and compare with the global reference.",
    )
    parser.add_argument("file", metavar="FILE", help="input .mlir file")
    parser.add_argument("--entry", default="main", help="function to run (default: main)")
    inputs = parser.add_mutually_exclusive_group()
    inputs.add_argument("--seed", type=int, default=None, help="seed of the random inputs (default 0)")
    inputs.add_argument("--inputs", default=None, help="comma-separated .npy files, one per argument")
    parser.add_argument(
        "--pipeline", default=None,
        help=f"pass pipeline, MLIR syntax (default: {DEFAULT_PIPELINE}; none for a per-rank program)",
    )
    parser.add_argument("--kernels", choices=("numpy", "ascendc-cpu"), default="numpy",
                        help="local kernels: numpy (default) or the emitted Ascend C fmod kernels on the CPU shim")
    parser.add_argument("--profile", action="store_true",
                        help="with --kernels ascendc-cpu: per kernel launch, bytes, cores, UB and roofline times")
    parser.add_argument("--check", action="store_true", help="compare the outputs with the global numpy reference")
    parser.add_argument("--save-outputs", metavar="DIR", default=None,
                        help="write the reassembled outputs as DIR/result0.npy, DIR/result1.npy, ...")
    parser.add_argument("--backend", choices=("simulator", "torch"), default="simulator",
                        help="run on the lock-step mesh simulator (default) or on torch.distributed processes")
    parser.add_argument("--dist-backend", choices=("gloo", "nccl", "hccl"), default="gloo",
                        help="torch.distributed backend of --backend torch (default gloo, on the CPU)")
    parser.add_argument("--timeout", type=_positive(float), default=60.0, metavar="S",
                        help="--backend torch: seconds without progress on any rank before the run fails (default 60)")
    parser.add_argument("--repeat", type=_positive(int), default=1, metavar="N",
                        help="--backend torch: run the program N times and report median times (default 1)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    return parser


def _positive(kind: type) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value

    return parse


# ---------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------


class Run:
    """One invocation: the source, its parsed module and what is needed to locate errors."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.ctx = Context()
        register_dialects(self.ctx)
        self.source: Source | None = None
        self.positions: dict[Operation, int] = {}
        self.torch_tolerant = False
        """Whether torch rounded a float op differently from numpy (then --check uses its tolerance)."""
        self.profiler: KernelProfiler | None = None

    # -- diagnostics ---------------------------------------------------------
    def located(self, error: Exception, module: ModuleOp | None) -> Failure:
        if self.args.debug:
            traceback.print_exc()
        assert self.source is not None
        return Failure(error_diagnostic(error, self.source, self.positions, module).render())

    def at_argument(self, fn: func.FuncOp, index: int, message: str) -> Failure:
        """An error pointing at the entry function's argument `index` in the source."""
        assert self.source is not None
        start = self.positions.get(fn)
        if start is None:
            return Failure(f"{self.source.name}: error: {message}")
        pos, width = start, 1
        arg = fn.body.blocks.first.args[index] if fn.body.blocks.first is not None else None
        if arg is not None and arg.name_hint is not None:
            found = re.compile(rf"%{re.escape(arg.name_hint)}\s*:").search(self.source.text, start)
            if found is not None:
                pos, width = found.start(), len(arg.name_hint) + 1
        line, col = self.source.line_col(pos)
        return Failure(Diagnostic(self.source.name, line, col, message, self.source.line_text(line), width).render())

    # -- 1. parse --------------------------------------------------------------
    def parse(self) -> ModuleOp:
        try:
            with open(self.args.file, "rb") as f:
                data = f.read()
        except OSError as error:
            raise Failure(f"error: cannot read {self.args.file}: {error.strerror or error}") from None
        try:
            self.source = decode_source(data, self.args.file)
        except DecodeError as error:
            raise Failure(error.diagnostic.render()) from None
        parser = LocatedParser(self.ctx, self.source)
        module: ModuleOp | None = None
        try:
            module = parser.parse_module()
            self.positions = parser.positions
            verify_program(module)
        except (ParseError, DiagnosticException) as error:
            self.positions = parser.positions
            raise self.located(error, module) from None
        return module

    # -- 2. inputs -------------------------------------------------------------
    def check_memory(self, fn: func.FuncOp) -> None:
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
            raise self.located(OpError(op, message), None)
        raise self.at_argument(fn, index or 0, message)

    def argument_types(self, module: ModuleOp, fn: func.FuncOp) -> list[tuple[tuple[int, ...], np.dtype]]:
        """Global shape and dtype of each entry argument."""
        found: list[tuple[tuple[int, ...], np.dtype]] = []
        for i, ty in enumerate(fn.function_type.inputs.data):
            if isinstance(ty, GlobalTensorType):
                found.append((ty.get_shape(), ops_numpy.np_dtype(ty.element_type)))
                continue
            try:
                args, _ = function_signature(module, fn.sym_name.data)
            except DiagnosticException:
                raise self.at_argument(fn, i, f"argument {i} of @{fn.sym_name.data} has type {ty}, "
                                               "expected !sbp.tensor") from None
            found.append((args[i].shape, args[i].dtype))
        return found

    def random_inputs(self, types: Sequence[tuple[tuple[int, ...], np.dtype]], rng: np.random.Generator,
                      ) -> list[np.ndarray]:
        inputs: list[np.ndarray] = []
        for shape, dtype in types:
            if ops_numpy.is_integer(dtype):
                inputs.append(rng.integers(-10, 11, size=shape).astype(dtype))
            else:
                inputs.append(rng.standard_normal(shape).astype(np.float32).astype(dtype))
        return inputs

    def load_inputs(self, fn: func.FuncOp, types: Sequence[tuple[tuple[int, ...], np.dtype]]) -> list[np.ndarray]:
        paths = [p.strip() for p in self.args.inputs.split(",") if p.strip()]
        name = fn.sym_name.data
        if len(paths) != len(types):
            message = (f"--inputs gives {len(paths)} file{'' if len(paths) == 1 else 's'} but @{name} takes "
                       f"{len(types)} argument{'' if len(types) == 1 else 's'}")
            if not types:
                raise Failure(f"error: {message}")
            raise self.at_argument(fn, 0, message)
        inputs: list[np.ndarray] = []
        for i, (path, (shape, dtype)) in enumerate(zip(paths, types, strict=True)):
            try:
                value = np.load(path, allow_pickle=False)
            except (OSError, ValueError, EOFError) as error:
                raise Failure(f"error: cannot read input {path}: {error}") from None
            if not isinstance(value, np.ndarray):
                raise Failure(f"error: input {path} holds several arrays (.npz); give one .npy file per argument")
            if dtype == ops_numpy.BF16 and value.dtype == np.dtype("V2"):
                value = value.view(ops_numpy.BF16)
            if value.shape != shape or value.dtype != dtype:
                dims = ",".join(str(d) for d in shape)
                expected = f"{ops_numpy.dtype_name(dtype)}[{dims}]"
                raise self.at_argument(
                    fn, i, f"input {i} ({path}) has shape {list(value.shape)} and dtype {value.dtype}, but argument "
                    f"{i} of @{name} is {expected} (shape {list(shape)}, dtype {dtype})"
                )
            inputs.append(value)
        return inputs

    # -- 3. compile --------------------------------------------------------------
    def default_spec(self, module: ModuleOp) -> str:
        """The full pipeline for a global program, none for a per-rank one (spmdize's output runs as it is)."""
        from sbpc.passes.spmdize import is_per_rank

        per_rank = any(isinstance(op, func.FuncOp) and is_per_rank(op) for op in module.ops)
        return "" if per_rank else DEFAULT_PIPELINE

    def pipeline(self, spec: str) -> PassPipeline:
        try:
            return parse_pipeline_spec([spec], checking_callback(True))
        except UsageError as error:
            raise Failure(f"error: bad --pipeline: {error}") from None

    def compile(self, module: ModuleOp, pipeline: PassPipeline) -> ModuleOp:
        compiled = module.clone()
        for old, new in zip(module.walk(), compiled.walk(), strict=True):
            if old in self.positions:
                self.positions[new] = self.positions[old]
        try:
            pipeline.apply(self.ctx, compiled)
            compiled.verify()
        except (ParseError, DiagnosticException) as error:
            raise self.located(error, compiled) from None
        return compiled

    # -- kernels -------------------------------------------------------------
    def kernels(self) -> dict[str, ops_numpy.Kernel] | None:
        if self.args.kernels == "numpy":
            return None
        missing = "error: --kernels ascendc-cpu needs the Ascend C backend (not built yet)"
        try:
            from sbpc.runtime.ascendc_kernels import kernel_overrides
        except ImportError as error:
            raise Failure(f"{missing}: {error}") from None
        # The backend's bridge: op name -> kernel(local operands, op) -> local result, like ops_numpy.
        if self.args.profile:
            from sbpc.runtime.ascendc_kernels import KernelProfiler

            self.profiler = KernelProfiler()
            return self.profiler.overrides()
        return dict(kernel_overrides())

    def fmod_deviation(self) -> FmodDeviation | None:
        """With Ascend C kernels the global reference computes fmod by the TBE formula they implement,
        measuring on the way how far it lands from the IR's C fmod."""
        if self.args.kernels == "numpy":
            return None
        from sbpc.runtime.ascendc_kernels import FmodDeviation

        return FmodDeviation()

    def where(self, op: Operation) -> str:
        """`FILE:LINE:COL` of an op of the parsed module."""
        assert self.source is not None
        pos = self.positions.get(op)
        if pos is None:
            return self.source.name
        line, col = self.source.line_col(pos)
        return f"{self.source.name}:{line}:{col}"

    # -- everything --------------------------------------------------------------
    def run(self) -> int:
        args = self.args
        if args.profile and args.kernels != "ascendc-cpu":
            raise Failure("error: --profile needs --kernels ascendc-cpu")
        if args.profile and args.backend != "simulator":
            raise Failure("error: --profile runs with --backend simulator (launches are profiled in this process)")
        given = self.pipeline(args.pipeline) if args.pipeline is not None else None  # usage errors first
        module = self.parse()
        try:
            fn = find_function(module, args.entry)
        except SimulationError as error:
            raise Failure(f"{args.file}: error: {error}") from None
        self.check_memory(fn)
        kernels = self.kernels()
        types = self.argument_types(module, fn)
        rng = np.random.default_rng(0 if args.seed is None else args.seed)
        inputs = self.load_inputs(fn, types) if args.inputs is not None else self.random_inputs(types, rng)

        pipeline = given if given is not None else self.pipeline(self.default_spec(module))
        compiled = self.compile(module, pipeline)
        try:
            arg_dists, res_dists = function_signature(compiled, args.entry)
            for i, (dist, (shape, _)) in enumerate(zip(arg_dists, types, strict=True)):
                if dist.shape != shape:
                    raise Failure(f"error: the pipeline changed argument {i} of @{args.entry} from shape "
                                  f"{list(shape)} to {list(dist.shape)}")
            shards = [distribute(x, d.sbp, d.hierarchy, rng) for x, d in zip(inputs, arg_dists, strict=True)]
            model = modelled_bytes(compiled, args.entry)
            if args.backend == "torch":
                found = self.run_torch(compiled, shards, kernels, model)
                if found is None:  # a torchrun rank other than 0: rank 0 reports
                    return 0
                outputs = found
            else:
                outputs, log = simulate(compiled, args.entry, shards, kernels)
                for record in log:
                    print(record.line())
                print(f"total bytes sent: {total_sent(log)} (all ranks); cost model: {model}")
                for launch in self.profiler.launches if self.profiler is not None else []:
                    print(launch.line())
        except DiagnosticException as error:
            raise self.located(error, compiled) from None
        except SimulationError as error:
            raise Failure(f"{args.file}: error: {error}") from None

        results, failures = self.assemble(outputs, res_dists)
        if args.save_outputs is not None:
            self.save(results)
        if args.check:
            failures += self.check(module, compiled, inputs, results, res_dists)
        elif failures:
            for message in failures:
                print(f"error: {message}", file=sys.stderr)
            return 1
        if args.check:
            if failures:
                for message in failures:
                    print(f"check: FAILED: {message}")
                return 1
            print("check: OK")
        return 0

    def run_torch(self, compiled: ModuleOp, shards: Sequence[dict], kernels: dict[str, ops_numpy.Kernel] | None,
                  model: int) -> list[dict] | None:
        """Run on torch.distributed (forked ranks, or this torchrun rank); print the measured table."""
        try:
            from sbpc.runtime import torch_backend
        except ImportError as error:
            raise Failure(f"error: --backend torch needs torch (pip install -e '.[dist]'): {error}") from None
        args = self.args
        job = torch_backend.Job(compiled, args.entry, shards, kernels)
        options = torch_backend.TorchOptions(args.dist_backend, args.timeout, args.repeat)
        try:
            if torch_backend.launched_by_torchrun():
                result = torch_backend.run_as_rank(job, options)
            else:
                (result,) = torch_backend.run_local([job], options)
        except torch_backend.TorchBackendError as error:
            raise self.located(OpError(find_function(compiled, args.entry), str(error)), compiled) from None
        if result is None:
            return None
        for line in torch_backend.report_lines(result.records, model, args.repeat):
            print(line)
        self.torch_tolerant = torch_backend.rounds_differently(compiled, args.entry)
        return result.outputs

    def assemble(self, outputs: Sequence[dict], dists: Sequence[Dist]) -> tuple[list[np.ndarray | None], list[str]]:
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

    def check(self, module: ModuleOp, compiled: ModuleOp, inputs: Sequence[np.ndarray],
              results: Sequence[np.ndarray | None], dists: Sequence[Dist]) -> list[str]:
        deviation = self.fmod_deviation()
        try:
            expected = reference(module, self.args.entry, inputs, None if deviation is None else deviation.overrides())
            tolerant = reorders_float_sums(compiled, self.args.entry) or self.torch_tolerant
        except DiagnosticException as error:
            raise self.located(error, module) from None
        if deviation is not None and deviation.elements:
            print(deviation.line(self.where))
        failures: list[str] = []
        for i, (got, want, dist) in enumerate(zip(results, expected, dists, strict=True)):
            if got is None:
                continue
            problem = compare(got, want, tolerant)
            if problem is not None:
                failures.append(f"result {i} ({dist.describe()}): {problem}")
        return failures

    def save(self, results: Sequence[np.ndarray | None]) -> None:
        directory = self.args.save_outputs
        try:
            os.makedirs(directory, exist_ok=True)
            for i, value in enumerate(results):
                if value is not None:
                    np.save(os.path.join(directory, f"result{i}.npy"), value)
        except OSError as error:
            raise Failure(f"error: cannot write outputs to {directory}: {error.strerror or error}") from None


def _nbytes(ty: GlobalTensorType) -> int:
    return math.prod(ty.get_shape()) * ops_numpy.np_dtype(ty.element_type).itemsize


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # no sysconf on this platform: do not guess
        return None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    try:
        return Run(args).run()
    except Failure as failure:
        print(str(failure), file=sys.stderr)
        return 1
    except Exception as error:  # every failure is reported as one line, never a traceback
        if args.debug:
            traceback.print_exc()
        print(f"error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())


def run_captured(argv: Sequence[str]) -> tuple[int, str]:
    """Run `sbp-run argv` in this process; return its exit code and everything it printed."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


def pipeline_for(rule: str, planner: str) -> str:
    """The default pipeline with an inference rule and a boxing planner."""
    return f"infer-sbp{{rule={rule}}},materialize-boxing,lower-boxing{{planner={planner}}},spmdize"
