"""`sbp-run`: compile a global program, run it on a simulated device mesh and check it (SPEC §4).

    sbp-run FILE|- [--entry main] [--seed N | --inputs a.npy,b.npy] [--pipeline P | --rule R [--mem B]]
                 [--kernels numpy|ascendc-cpu [--profile]] [--check] [--save-outputs DIR] [--debug]
                 [--backend simulator|torch] [--dist-backend gloo|nccl|hccl] [--timeout S] [--repeat N]
                 [--progress] [--version]

1. parse and verify FILE (located errors, exit 1);
2. build global inputs: seeded random (floats standard normal, integers in [-10, 10]) or `.npy`
   files whose shape and dtype must match the entry function's argument types;
3. compile a clone of the module with the pass pipeline P
   (default `infer-sbp,materialize-boxing,lower-boxing,spmdize`; `--rule R [--mem B]` is that
   pipeline with `infer-sbp{rule=R mem=B}`, e.g. `--rule global` for arguments without an SBP);
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
a Python traceback appears only with `--debug`. The steps are `runtime.engine`'s (as `sbpc.run`'s);
this driver reads the command line and the `.npy` inputs, prints, and saves the outputs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import get_args, get_type_hints

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from sbpc.dialects.context import sbp_context
from sbpc.dialects.placement import PlacementOp
from sbpc.passes.infer_sbp.options import InferOptions
from sbpc.runtime import engine, ops_numpy
from sbpc.runtime.engine import ArgumentType, Backend, Failure, LocalKernels, Located, TorchMissing
from sbpc.runtime.pipeline import (
    DEFAULT_PIPELINE,
    UsageError,
    checked_pipeline,
    checking_callback,
    default_pipeline_for,
    parse_pipeline_spec,
)
from sbpc.tools.cli import Progress, SuggestingParser, VersionAction

RULES: tuple[str, ...] = get_args(get_type_hints(InferOptions)["rule"])
"""infer-sbp's rules, the choices of `--rule`."""


class _ArgumentParser(SuggestingParser):
    usage_status = 1  # usage errors exit 1, like every other error


def build_arg_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="sbp-run",
        description="Compile an sbp program, run it on a simulated device mesh and compare with the global reference.",
    )
    parser.add_argument("file", metavar="FILE", help="input .mlir file ('-' reads stdin)")
    parser.add_argument("--version", action=VersionAction, tool="sbp-run",
                        help="print the version of sbpc and xDSL and exit")
    parser.add_argument("--entry", default="main", help="function to run (default: main)")
    inputs = parser.add_mutually_exclusive_group()
    inputs.add_argument("--seed", type=int, default=None, help="seed of the random inputs (default 0)")
    inputs.add_argument("--inputs", default=None, help="comma-separated .npy files, one per argument")
    compile_with = parser.add_mutually_exclusive_group()
    compile_with.add_argument(
        "--pipeline", default=None,
        help=f"pass pipeline, MLIR syntax (default: {DEFAULT_PIPELINE}; none for a per-rank program)",
    )
    compile_with.add_argument("--rule", choices=RULES, default=None,
                              help="the default pipeline with infer-sbp{rule=RULE} (global: sbpc decides the "
                              "arguments' SBPs too)")
    parser.add_argument("--mem", default=None, metavar="BYTES",
                        help="with --rule global: the per-device memory budget (bytes, or e.g. 64MiB, 2GiB)")
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
    parser.add_argument("--timeout", type=_positive(float, MAX_TIMEOUT), default=60.0, metavar="S",
                        help="--backend torch: seconds without progress on any rank before the run fails (default 60)")
    parser.add_argument("--repeat", type=_positive(int), default=1, metavar="N",
                        help="--backend torch: run the program N times and report median times (default 1)")
    parser.add_argument("--steps", type=_positive(int), default=None, metavar="N",
                        help="run a training step (made by the autodiff pass) N times, carrying the parameters and "
                        "optimizer state; prints each step's loss (with --check, checks every step)")
    parser.add_argument("--progress", action="store_true",
                        help="show each pass and the run on stderr as they start and end (by default only "
                        "steps that take over 2 s, and only when stderr is a terminal)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    return parser


def rule_pipeline(rule: str, mem: str | None = None) -> str:
    """`--rule RULE [--mem BYTES]`: the default pipeline with that inference rule (and budget)."""
    budget = f' mem="{mem}"' if mem is not None else ""
    return f"infer-sbp{{rule={rule}{budget}}},materialize-boxing,lower-boxing,spmdize"


MAX_TIMEOUT = 86400.0
"""The longest `--timeout` (one day): torch.distributed's own timeouts overflow a C int of ms past ~12 days."""


def _positive(kind: type, at_most: float | None = None) -> Callable[[str], float]:
    """An argparse type: a positive finite `kind` (nan and inf are not seconds), at most `at_most`."""

    def parse(text: str) -> float:
        expected = "a positive number" if at_most is None else f"a positive number of at most {at_most:g}"
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not (math.isfinite(value) and value > 0) or (at_most is not None and value > at_most):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


def _pipeline(spec: str, progress: Progress | None = None, what: str = "--pipeline") -> PassPipeline:
    try:
        if progress is None or not progress.enabled:
            return checked_pipeline(spec)
        return parse_pipeline_spec([spec], progress.passes(checking_callback(True)))
    except UsageError as error:
        raise Failure(f"error: bad {what}: {error}") from None


def _ranks(module: ModuleOp) -> int:
    """The most devices a placement of `module` has (how many ranks the run simulates or forks)."""
    return max((len(op.get_ranks()) for op in module.ops if isinstance(op, PlacementOp)), default=1)


def _load_inputs(paths_text: str, fn: func.FuncOp, types: Sequence[ArgumentType], located: Located,
                 ) -> list[np.ndarray]:
    """`--inputs a.npy,b.npy`: one array per argument, of its global shape and dtype."""
    paths = [p.strip() for p in paths_text.split(",") if p.strip()]
    name = fn.sym_name.data
    if len(paths) != len(types):
        message = (f"--inputs gives {len(paths)} file{'' if len(paths) == 1 else 's'} but @{name} takes "
                   f"{len(types)} argument{'' if len(types) == 1 else 's'}")
        if not types:
            raise Failure(f"error: {message}")
        raise located.at_argument(fn, 0, message)
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
            raise located.at_argument(
                fn, i, f"input {i} ({path}) has shape {list(value.shape)} and dtype {value.dtype}, but argument "
                f"{i} of @{name} is {expected} (shape {list(shape)}, dtype {dtype})"
            )
        inputs.append(value)
    return inputs


def _save(directory: str, results: Sequence[np.ndarray | None]) -> None:
    """`--save-outputs DIR`: DIR/result0.npy, DIR/result1.npy, ... (a result that was not reassembled is left out)."""
    try:
        os.makedirs(directory, exist_ok=True)
        for i, value in enumerate(results):
            if value is not None:
                np.save(os.path.join(directory, f"result{i}.npy"), value)
    except OSError as error:
        raise Failure(f"error: cannot write outputs to {directory}: {error.strerror or error}") from None


def run(args: argparse.Namespace) -> int:
    """The steps in the order their errors are reported: options, pipeline, program, inputs, run, check."""
    if args.profile and args.kernels != "ascendc-cpu":
        raise Failure("error: --profile needs --kernels ascendc-cpu")
    if args.profile and args.backend != "simulator":
        raise Failure("error: --profile runs with --backend simulator (launches are profiled in this process)")
    if args.mem is not None and args.rule != "global":
        raise Failure("error: --mem is the budget of --rule global (give --rule global)")
    progress = Progress("sbp-run", args.progress)
    given = None  # usage errors first
    if args.pipeline is not None:
        given = _pipeline(args.pipeline, progress)
    elif args.rule is not None:
        given = _pipeline(rule_pipeline(args.rule, args.mem), progress, "--rule/--mem")
    ctx = sbp_context()
    module, located = engine.parse(ctx, engine.read_source(args.file), args.debug)
    fn = engine.entry_function(module, args.entry, located)
    engine.check_memory(fn, located)
    kernels = LocalKernels(args.kernels, args.profile)
    types = engine.argument_types(module, fn, located)
    rng = np.random.default_rng(0 if args.seed is None else args.seed)
    inputs = _load_inputs(args.inputs, fn, types, located) if args.inputs is not None else engine.random_inputs(
        types, rng, fn)
    pipeline = given if given is not None else _pipeline(default_pipeline_for(module), progress)
    backend = Backend(args.backend, args.dist_backend, args.timeout, args.repeat, join_torchrun=True)
    try:
        ranks = _ranks(module)
        with progress.step(f"running @{args.entry} on {ranks} rank{'' if ranks == 1 else 's'} ({args.backend})"):
            if args.steps is not None:
                result = engine.run_steps(ctx, module, located, inputs, pipeline, rng, args.steps, args.entry, kernels,
                                          backend, checked=args.check)
            else:
                result = engine.run(ctx, module, located, inputs, pipeline, rng, args.entry, kernels, backend)
    except TorchMissing as missing:
        raise Failure(f"error: --backend torch needs {missing}") from None
    finally:
        progress.close()
    if result is None:  # a torchrun rank other than 0: rank 0 reports
        return 0
    for line in result.log:
        print(line)
    for k, loss in enumerate(result.losses, start=1):
        print(f"step {k}: loss {loss:.9g}")
    if args.save_outputs is not None:
        _save(args.save_outputs, result.outputs)
    if not args.check:
        for message in result.mismatches:
            print(f"error: {message}", file=sys.stderr)
        return 1 if result.mismatches else 0
    if args.steps is None:
        engine.check(result, module, located, kernels)
    if result.fmod_deviation is not None and result.fmod_deviation.elements:
        print(result.fmod_deviation.line(located.where))
    if result.mismatches:
        for message in result.mismatches:
            print(f"check: FAILED: {message}")
        return 1
    print(result.check_line())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    try:
        return run(args)
    except Failure as failure:
        print(str(failure), file=sys.stderr)
        return 1
    except Exception as error:  # every failure is reported as one line, never a traceback
        if args.debug:
            traceback.print_exc()
        print(f"error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


def run_captured(argv: Sequence[str]) -> tuple[int, str]:
    """Run `sbp-run argv` in this process; return its exit code and everything it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


def pipeline_for(rule: str, planner: str) -> str:
    """The default pipeline with an inference rule and a boxing planner."""
    return f"infer-sbp{{rule={rule}}},materialize-boxing,lower-boxing{{planner={planner}}},spmdize"


if __name__ == "__main__":
    sys.exit(main())
