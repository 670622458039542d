"""`sbp-opt`: the sbpc optimizer driver, with mlir-opt conventions.

    sbp-opt [FILE|-] [-p a,b | --pass-pipeline='builtin.module(a,b)' | --a --b="k=v"]... [-o OUT|-]
                 [--split-input-file] [--verify-diagnostics] [--print-op-generic] [--debug]
                 [--time-passes] [--mlir-print-ir-after-all] [--sbp-report[=text|json|dot]] [--progress]
    sbp-opt --list-passes | --version

The pipeline is every `-p`, `--pass-pipeline` and `--<pass>` in the order written. `--time-passes`
and `--mlir-print-ir-after-all` write to stderr, as mlir-opt does, so stdout stays the program.

Errors are printed as `FILE:LINE:COL: error: MESSAGE` with the source line and a caret, and the
exit code is 1; a Python traceback appears only with `--debug`. A bad pipeline is reported before the
input is read. An empty input is an empty module (`builtin.module {}`), as in mlir-opt. With
`--split-input-file` every `// -----` chunk is processed and the exit code is 1
if any failed. With `--verify-diagnostics` the errors go to stdout, MLIR-style
`// expected-error @+N {{...}}` annotations are checked, and an error no annotation expects fails
the run (exit 1), as in mlir-opt; stderr names it by its place (its text is printed once). An
unknown flag is named with the closest known one ("did you mean"). `--progress` shows each pass's
start and end on stderr; without it, a pass still running after 2 s is shown when stderr is a
terminal.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import traceback
from collections.abc import Sequence
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.targets import Target
from xdsl.targets.mlir import MLIRTarget
from xdsl.tools.command_line_tool import CommandLineTool
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from sbpc.dialects.context import register_dialects
from sbpc.dialects.diagnostics import (
    DecodeError,
    Diagnostic,
    LocatedParser,
    Source,
    check_expectations,
    decode_source,
    error_diagnostic,
    expectations,
)
from sbpc.dialects.sbp_syntax import SbpPrinter
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass
from sbpc.passes.infer_sbp.report import report_of
from sbpc.runtime.pipeline import (
    Instrumentation,
    UsageError,
    available_passes,
    list_passes,
    parse_pipeline_spec,
    pass_options,
    reject_per_rank,
    verify_program,
)
from sbpc.tools.cli import Progress, SuggestingParser, VersionAction, write_output


class _PipelinePart(argparse.Action):
    """`-p a,b`, `--pass-pipeline='builtin.module(...)'` and `--<pass>[="k=v"]` all append to one
    list, so passes run in the order they are written on the command line (as in mlir-opt)."""

    def __init__(self, *args: Any, pass_name: str | None = None, **kwargs: Any):
        super().__init__(*args, nargs="?" if pass_name else None, **kwargs)
        self.pass_name = pass_name

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        parts: list[str] = list(getattr(namespace, "pipeline_parts", None) or [])
        if self.pass_name is None:
            parts.append(values)
        else:
            parts.append(self.pass_name if not values else f"{self.pass_name}{{{values}}}")
        namespace.pipeline_parts = parts


class _ListPasses(argparse.Action):
    """`--list-passes`: print every pass with its options and their allowed values, exit 0."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sys.stdout.write(list_passes())
        parser.exit(0)


# On/off flags: (spellings, destination, help). The MLIR spellings are aliases of xDSL's.
_SWITCHES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("--print-between-passes", "--mlir-print-ir-after-all"), "print_ir_after_all",
     "print the IR after every pass to stderr"),
    (("--time-passes", "--mlir-timing"), "time_passes",
     "print the wall time of the parser, every pass and the printer to stderr"),
    (("--verify-diagnostics",), "verify_diagnostics", "check the errors against `// expected-error` annotations"),
    (("--split-input-file",), "split_input_file", "process every `// -----` chunk of the input on its own"),
    (("--print-op-generic",), "print_op_generic", "print operations in the generic format"),
    (("--print-no-properties",), "print_no_properties", "print properties as attributes"),
    (("--print-debuginfo",), "print_debuginfo", "print operation locations"),
    (("--syntax-highlight",), "syntax_highlight", "colour the printed program"),
)


@dataclasses.dataclass(frozen=True)
class SbpMLIRTarget(MLIRTarget):
    """xDSL's MLIR output, through `SbpPrinter` (the same text, sbp types and signatures written from
    the text they keep); with syntax highlighting, xDSL's own."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.syntax_highlight:
            super().emit(ctx, module, output)
            return
        printer = SbpPrinter(
            stream=output,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
        )
        printer.print_op(module)
        printer.print_metadata(ctx.loaded_dialects)
        print("\n", file=output)


class SbpOptMain(xDSLOptMain):
    """xDSL's opt driver with the sbp dialect, one flag per pass and located diagnostics."""

    def register_all_dialects(self) -> None:
        register_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in available_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        # Only the MLIR printer: xDSL's other targets (llvm, riscv-asm, wgsl, ...) need dialects and
        # lowerings an sbp program never reaches, so offering them would only end in a crash.
        def mlir() -> type[Target]:
            return SbpMLIRTarget

        self.available_targets = {"mlir": mlir}

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        # xDSL builds a plain ArgumentParser; its errors then say "did you mean" as sbp-run's and
        # sbp-translate's do (SuggestingParser only overrides methods, it adds no state to set up).
        arg_parser.__class__ = SuggestingParser
        CommandLineTool.register_all_arguments(self, arg_parser)  # FILE, --disable-verify, ...
        arg_parser.add_argument("-t", "--target", choices=tuple(self.available_targets), default="mlir",
                                help="output format (only mlir: the program is printed as MLIR text)")
        arg_parser.add_argument("-o", "--output-file", default=None, metavar="OUT",
                                help="write the program to OUT ('-', the default, is stdout)")
        arg_parser.add_argument("-p", "--passes", action=_PipelinePart, metavar="PASSES",
                                help="comma-separated passes, e.g. 'infer-sbp{rule=cost},materialize-boxing'")
        arg_parser.add_argument("--pass-pipeline", action=_PipelinePart, metavar="PIPELINE",
                                help="pass pipeline in MLIR syntax, e.g. 'builtin.module(infer-sbp{rule=cost})'")
        for flags, dest, text in _SWITCHES:
            arg_parser.add_argument(*flags, action="store_true", dest=dest, help=text)
        arg_parser.add_argument("-v", "--version", action=VersionAction, tool="sbp-opt",
                                help="print the version of sbpc and xDSL and exit")
        arg_parser.add_argument("--progress", action="store_true",
                                help="show each pass's start and end on stderr (by default only passes that "
                                "run over 2 s, and only when stderr is a terminal)")
        arg_parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
        arg_parser.add_argument("--list-passes", action=_ListPasses,
                                help="list every pass with its options and their allowed values")
        arg_parser.add_argument(
            "--sbp-report",
            nargs="?",
            const="text",
            choices=("text", "json", "dot"),
            default=None,
            help="print to stderr why infer-sbp chose each signature and the program's modelled "
            "communication (text, json), or the compiled plan as a Graphviz graph (dot)",
        )
        passes = arg_parser.add_argument_group("passes (run in the order written; options in MLIR syntax)")
        for name, factory in self.available_passes.items():
            options = ", ".join(o.describe() for o in pass_options(factory()))
            passes.add_argument(
                f"--{name}",
                action=_PipelinePart,
                pass_name=name,
                dest=f"flag_{name.replace('-', '_')}",
                metavar="OPTIONS",
                help=f"run {name}" + (f"; options: {options}" if options else " (no options)"),
            )

    def setup_pipeline(self) -> None:
        self.instrumentation = Instrumentation(
            verify=not self.args.disable_verify,
            stream=sys.stderr,
            print_ir_after_all=self.args.print_ir_after_all,
            generic=self.args.print_op_generic,
        )
        parts = getattr(self.args, "pipeline_parts", None) or []
        self.progress = Progress("sbp-opt", self.args.progress)
        callback = self.progress.passes(self.instrumentation) if self.progress.enabled else self.instrumentation
        self.pipeline = parse_pipeline_spec(parts, callback)

    # -- running -----------------------------------------------------------
    def chunks(self) -> list[Source]:
        from_stdin = self.args.input_file in (None, "-")
        name = "<stdin>" if from_stdin else self.args.input_file
        if from_stdin:
            data = sys.stdin.buffer.read()
        else:
            with open(self.args.input_file, "rb") as f:
                data = f.read()
        text = decode_source(data, name).text
        if not self.args.split_input_file:
            return [Source(text, name)]
        sources: list[Source] = []
        line = 1
        for piece in text.split("// -----"):
            sources.append(Source(piece, name, line))
            line += piece.count("\n")
        return sources

    def process(self, source: Source) -> tuple[str | None, Diagnostic | None]:
        """Parse, verify, run the pipeline and print one chunk: (output, error)."""
        parser = LocatedParser(self.ctx, source)
        module: ModuleOp | None = None
        try:
            started = time.perf_counter()
            module = parser.parse_module(not self.args.no_implicit_module)
            if not self.args.disable_verify:
                verify_program(module)
            self.instrumentation.record("Parser", time.perf_counter() - started)
            if self.args.sbp_report is not None:
                reject_per_rank(module, "--sbp-report")
                self.print_report(module)
            try:
                self.pipeline.apply(self.ctx, module)
            finally:
                self.progress.close()
            started = time.perf_counter()
            output = self.output_resulting_program(module)
            self.instrumentation.record("Output", time.perf_counter() - started)
            return output, None
        except (ParseError, DiagnosticException) as error:
            if self.args.debug:
                traceback.print_exc()
            return None, error_diagnostic(error, source, parser.positions, module)
        except RecursionError:
            # Python's recursion limit, hit by pathologically deep nesting (`[[[[...`, `((((...`, nested
            # regions) in xDSL's recursive-descent parser or ours: located where the parser stopped.
            if self.args.debug:
                traceback.print_exc()
            message = "nesting too deep"
            if module is not None:
                return None, Diagnostic(source.name, source.first_line, 1, message)
            located = ParseError(parser._current_token.span, message)
            return None, error_diagnostic(located, source, parser.positions, None)

    def print_report(self, module: ModuleOp) -> None:
        # The rule, budget and cache are the pipeline's infer-sbp's (so rule=global's pass takes the
        # report's solutions rather than solving again), else the defaults; so is the planner.
        infer, planner = InferSbpPass(), "optimal"
        for p in self.pipeline.passes:
            if isinstance(p, InferSbpPass):
                infer = p
            if p.name == "lower-boxing":
                planner = getattr(p, "planner", planner)
        sys.stderr.write(report_of(module, infer, self.args.sbp_report, planner))

    def run(self) -> int:  # type: ignore[override]
        try:
            sources = self.chunks()
        except OSError as error:
            print(f"error: cannot read input: {error}", file=sys.stderr)
            return 1
        except DecodeError as error:
            print(error.diagnostic.render(), file=sys.stderr)
            return 1
        outputs: list[str] = []
        status = 0
        for source in sources:
            output, diagnostic = self.process(source)
            if self.args.verify_diagnostics:
                if diagnostic is not None:
                    outputs.append(diagnostic.render() + "\n")
                # Expected errors must appear; an error no annotation expects fails the run (stderr
                # names it by its place; its text is printed once, on stdout).
                for problem in check_expectations(expectations(source), diagnostic, source):
                    print(problem, file=sys.stderr)
                    status = 1
                if output is not None:
                    outputs.append(output)
                continue
            if diagnostic is not None:  # the next chunks still run (mlir-opt's --split-input-file)
                print(diagnostic.render(), file=sys.stderr)
                status = 1
                continue
            assert output is not None
            outputs.append(output)
        text = "// -----\n".join(outputs)
        if self.args.time_passes:
            sys.stderr.write(self.instrumentation.report())
        to_stdout = self.args.output_file in (None, "-")
        if not to_stdout and status and not self.args.verify_diagnostics:
            return status  # as mlir-opt: the output file is kept only when every chunk succeeded
        if to_stdout:
            sys.stdout.write(text)
            return status
        problem = write_output(self.args.output_file, text)
        if problem is not None:
            print(problem, file=sys.stderr)
            return 1
        return status


def main(argv: Sequence[str] | None = None) -> int:
    debug = "--debug" in (argv if argv is not None else sys.argv)
    try:
        driver = SbpOptMain(description="sbpc optimizer driver", args=argv)
        return driver.run()
    except (ArgSpecParseError, UsageError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # every failure is reported as one line, never a traceback
        if debug:
            traceback.print_exc()
        print(f"error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
