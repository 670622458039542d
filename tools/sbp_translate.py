"""`sbp-translate FILE --emit-ascendc -o DIR | --emit-mlir [-o OUT] | --import-shard`: Ascend C projects,
upstream MLIR, or an upstream program imported.

`--emit-mlir` prints the per-rank program (default pipeline through spmdize) in upstream dialects
only (SPEC §4.2), in generic form, to `-o OUT` or stdout (`=mpi`: with MPI collectives and an
entry `@mpi_main` on `sbp-run --seed N`'s inputs, for `mpiexec -n R mlir-runner-22`).
`--import-shard` reads a `shard`-annotated linalg/tensor/tosa program and prints it in the sbp
dialect, ready for `sbp-opt --infer-sbp`
(`--grid NAME=SHAPE` sizes a `?` grid; `--free-args` leaves unannotated arguments to `rule=global`).

The program is compiled with `--pipeline` (default: infer-sbp, materialize-boxing, lower-boxing,
spmdize, lower-to-ascendc) unless it already holds `ascendc.launch` ops, then every kernel is
printed as a CANN custom-op project (SPEC §5). Errors are located; exit code 1 (a bad command line:
2, with "did you mean" for an unknown flag). `--progress` shows each pass on stderr.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence
from io import StringIO
from pathlib import Path
from typing import TypeVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError

from sbpc.dialects.ascendc import LaunchOp
from sbpc.dialects.context import sbp_context
from sbpc.dialects.diagnostics import DecodeError, LocatedParser, Source, decode_source, error_diagnostic
from sbpc.lowering.ascendc.cann_project import CANN_PACKAGE_PATH
from sbpc.lowering.ascendc.printer import emit_project
from sbpc.runtime.pipeline import (
    DEFAULT_PIPELINE,
    UsageError,
    checked_pipeline,
    checking_callback,
    parse_pipeline_spec,
    verify_program,
)
from sbpc.tools import sbp_translate_torch
from sbpc.tools.cli import Progress, SuggestingParser, VersionAction, write_output

MLIR_GLOBAL_PIPELINE = "infer-sbp"
T = TypeVar("T")


def ascendc_pipeline(soc: str) -> str:
    """The default pipeline, then the lowering of the fmod ops to Ascend C kernels for `soc`."""
    return f"{DEFAULT_PIPELINE},lower-to-ascendc{{soc={soc}}}"


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = SuggestingParser(prog="sbp-translate", description=__doc__.splitlines()[0])
    parser.add_argument("input_file", help="program (.mlir; '-' reads stdin)")
    parser.add_argument("--version", action=VersionAction, tool="sbp-translate",
                        help="print the version of sbpc and xDSL and exit")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--emit-ascendc", action="store_true", help="write the Ascend C projects")
    target.add_argument("--emit-mlir", nargs="?", const="per-rank", choices=["per-rank", "global", "mpi"],
                        help="print the per-rank program (or, =global, the global program with shard "
                        "annotations; =mpi, the per-rank program with MPI collectives and an entry "
                        "@mpi_main on the --seed inputs, for mpiexec mlir-runner-22) in upstream MLIR "
                        "dialects (SPEC §4.2)")
    target.add_argument("--import-shard", action="store_true",
                        help="read FILE as upstream MLIR with shard annotations and print it as an sbp program")
    sbp_translate_torch.add_arguments(parser, target)
    parser.add_argument("--grid", action="append", default=[], metavar="NAME=SHAPE",
                        help="--import-shard: the size of a grid written with `?` axes (e.g. --grid grid_1d=4, "
                        "--grid mesh=2x4; repeat for several grids)")
    parser.add_argument("--free-args", action="store_true",
                        help="--import-shard: leave unannotated arguments without an SBP, for "
                        "infer-sbp{rule=global} to decide (default: replicated, as MLIR's partition reads them)")
    parser.add_argument("-o", "--output", default=None,
                        help="output directory (--emit-ascendc) or file (--emit-mlir; default and '-': stdout)")
    parser.add_argument("--pipeline", default=None, help="passes to run first (default: the full pipeline)")
    parser.add_argument("--seed", type=int, default=0,
                        help="--emit-mlir=mpi: the seed of @mpi_main's inputs (sbp-run --seed's, default 0)")
    parser.add_argument("--soc", default="ascend910b", help="target SoC (ascend910b, ascend910b3, ascend910_93, ...)")
    parser.add_argument("--cann-path", default=None,
                        help="CANN toolkit the projects' CMakePresets.json names (ASCEND_CANN_PACKAGE_PATH; "
                        "default /usr/local/Ascend/ascend-toolkit/latest)")
    parser.add_argument("--progress", action="store_true",
                        help="show each pass on stderr as it starts and ends (by default only passes that run "
                        "over 2 s, and only when stderr is a terminal)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    args = parser.parse_args(argv)
    if (args.grid or args.free_args) and not args.import_shard:
        parser.error(f"{'--grid' if args.grid else '--free-args'} is an option of --import-shard")
    args.progress = Progress("sbp-translate", args.progress)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    if args.import_torch:
        return _write(args, sbp_translate_torch.translate(args))
    if args.import_shard:
        return _import_shard(args)
    if args.emit_mlir is not None:
        return _emit_mlir(args)
    if args.output is None:
        print("error: --emit-ascendc needs -o DIR", file=sys.stderr)
        return 1
    spec = args.pipeline if args.pipeline is not None else ascendc_pipeline(args.soc)
    pipeline = _pipeline(spec, args.progress)  # before reading the input
    if pipeline is None:
        return 1
    output = Path(args.output)
    if output.exists() and not output.is_dir():
        print(f"error: -o {args.output}: exists and is not a directory (the kernel projects are written "
              "into a directory)", file=sys.stderr)
        return 1
    cann_path = args.cann_path if args.cann_path is not None else CANN_PACKAGE_PATH

    def emit(ctx: Context, module: ModuleOp) -> list[Path]:
        if not any(isinstance(op, LaunchOp) for op in module.walk()):
            pipeline.apply(ctx, module)
        try:
            return emit_project(module, output, cann_path)
        except OSError as error:  # a path part that is a file, no permission, full disk
            raise _Reported(f"error: cannot write the kernel projects to {args.output}: {error.strerror or error}"
                            f"{f' ({error.filename})' if error.filename else ''}") from error

    written = _compile(args, emit)
    if written is None:
        return 1
    if not written:
        print("error: the program has no fmod op to emit", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


class _Reported(Exception):
    """A failure whose message is already the user-facing text."""


def _pipeline(spec: str, progress: Progress) -> PassPipeline | None:
    try:
        if not progress.enabled:
            return checked_pipeline(spec)
        return parse_pipeline_spec([spec], progress.passes(checking_callback(True)))
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return None


def _compile(args: argparse.Namespace, act: Callable[[Context, ModuleOp], T], ctx: Context | None = None) -> T | None:
    """Read, parse and verify `args.input_file` (in sbpc's dialects; in `ctx`, unverified: an imported
    upstream program is mlir-opt's to verify, xDSL's few upstream verifiers differ), then `act` on
    it; every failure is printed (located where it can be) and gives None."""
    try:
        stdin = args.input_file == "-"  # mlir-opt's convention, as in sbp-opt
        data = sys.stdin.buffer.read() if stdin else Path(args.input_file).read_bytes()
        source = decode_source(data, "<stdin>" if stdin else args.input_file)
    except OSError as error:
        print(f"error: cannot read {args.input_file}: {error}", file=sys.stderr)
        return None
    except DecodeError as error:
        print(error.diagnostic.render(), file=sys.stderr)
        return None
    upstream = ctx is not None
    if ctx is None:
        ctx = sbp_context()
    parser = LocatedParser(ctx, source)
    module = None
    try:
        module = parser.parse_module()
        if not upstream:
            verify_program(module)
        try:
            return act(ctx, module)
        finally:
            args.progress.close()
    except (ParseError, DiagnosticException) as error:
        if args.debug:
            traceback.print_exc()
        print(error_diagnostic(error, source, parser.positions, module).render(), file=sys.stderr)
    except _Reported as error:
        print(error, file=sys.stderr)
    except Exception as error:  # never a traceback without --debug
        if args.debug:
            traceback.print_exc()
        print(f"error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
    return None


def _import_shard(args: argparse.Namespace) -> int:
    """`--import-shard`: the shard-annotated upstream program FILE as an sbp program (custom form)."""
    # The translations load xDSL's upstream dialects (seconds): only the runs that translate import them.
    from sbpc.translate.from_upstream_shard import import_context, import_shard, parse_grid_sizes

    try:
        sizes = parse_grid_sizes(args.grid)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1

    def translate(ctx: Context, module: ModuleOp) -> str:
        imported = import_shard(module, sizes, free_args=args.free_args)
        verify_program(imported)
        text = StringIO()
        Printer(stream=text).print_op(imported)
        return text.getvalue() + "\n"

    return _write(args, _compile(args, translate, import_context()))


def _write(args: argparse.Namespace, text: str | None) -> int:
    """Print `text` to `-o` or stdout; 1 if it is None (the failure was printed) or cannot be written."""
    if text is None:
        return 1
    if args.output in (None, "-"):
        sys.stdout.write(text)
        return 0
    problem = write_output(args.output, text)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    return 0


def _seeded_inputs(module: ModuleOp, seed: int, path: str) -> list[np.ndarray]:
    """The global inputs `sbp-run --seed SEED` gives @main (or the module's only function)."""
    from sbpc.runtime import engine  # numpy kernels and ml_dtypes (~0.7 s): loaded only for =mpi

    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    name = "main" if any(f.sym_name.data == "main" for f in funcs) or len(funcs) != 1 else funcs[0].sym_name.data
    located = engine.Located(Source("", path))
    try:
        fn = engine.entry_function(module, name, located)
        return engine.random_inputs(engine.argument_types(module, fn, located), np.random.default_rng(seed), fn)
    except engine.Failure as failure:
        raise _Reported(str(failure)) from None


def _emit_mlir(args: argparse.Namespace) -> int:
    """`--emit-mlir[=global|mpi]`: compile (through spmdize, or infer-sbp for the global form), print
    the program in upstream dialects (generic form) to `-o` or stdout; =mpi with MPI collectives and
    the entry @mpi_main on `sbp-run --seed`'s inputs (`translate/to_upstream_mpi.py`)."""
    default = MLIR_GLOBAL_PIPELINE if args.emit_mlir == "global" else DEFAULT_PIPELINE
    pipeline = _pipeline(args.pipeline if args.pipeline is not None else default, args.progress)
    if pipeline is None:
        return 1
    # Loaded only here, as in `_import_shard`.
    from sbpc.translate.to_upstream_global import to_upstream_global
    from sbpc.translate.to_upstream_mlir import to_upstream_mlir
    from sbpc.translate.to_upstream_mpi import to_upstream_mpi

    def translate(ctx: Context, module: ModuleOp) -> str:
        if args.emit_mlir == "mpi":  # sbp-run's seeded inputs, from the global program
            inputs = _seeded_inputs(module, args.seed, args.input_file)
            pipeline.apply(ctx, module)
            return to_upstream_mpi(module, inputs)
        pipeline.apply(ctx, module)
        text = StringIO()
        upstream = to_upstream_global(module) if args.emit_mlir == "global" else to_upstream_mlir(module)
        Printer(stream=text, print_generic_format=True).print_op(upstream)
        return text.getvalue() + "\n"

    return _write(args, _compile(args, translate))
