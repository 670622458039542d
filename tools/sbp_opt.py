"""`sbp-opt`: the sbpc optimizer driver, with mlir-opt conventions.

    sbp-opt FILE [-p a,b | --pass-pipeline='builtin.module(a,b)' | --a --b="k=v"] [-o OUT]
                 [--split-input-file] [--verify-diagnostics] [--print-op-generic] [--debug]
    sbp-opt --list-passes | --version

Errors are printed as `FILE:LINE:COL: error: MESSAGE` with the source line and a caret, and the
exit code is 1; a Python traceback appears only with `--debug`. A bad pipeline is reported before the
input is read. With `--split-input-file` every `// -----` chunk is processed and the exit code is 1
if any failed. With `--verify-diagnostics` the errors go to stdout, MLIR-style
`// expected-error @+N {{...}}` annotations are checked, and an error no annotation expects fails
the run (exit 1), as in mlir-opt.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from sbpc import __version__
from sbpc.tools.diagnostics import (
    DecodeError,
    Diagnostic,
    LocatedParser,
    Source,
    check_expectations,
    decode_source,
    error_diagnostic,
    expectations,
)
from sbpc.tools.pipeline import (
    UsageError,
    available_passes,
    checking_callback,
    list_passes,
    parse_pipeline_spec,
    reject_per_rank,
    verify_program,
)


def register_dialects(ctx: Context) -> None:
    """Lazily register the dialects sbpc programs use."""

    def sbp():
        from sbpc.dialects.sbp_dialect import SBP

        return SBP

    def builtin():
        from xdsl.dialects.builtin import Builtin

        return Builtin

    def func():
        from xdsl.dialects.func import Func

        return Func

    def arith():
        from xdsl.dialects.arith import Arith

        return Arith

    def test():
        from xdsl.dialects.test import Test

        return Test

    def ascendc():
        from sbpc.dialects.ascendc import ASCENDC

        return ASCENDC

    for name, factory in (
        ("builtin", builtin),
        ("func", func),
        ("arith", arith),
        ("test", test),
        ("sbp", sbp),
        ("ascendc", ascendc),
    ):
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)


class _PassFlag(argparse.Action):
    """`--<pass>` or `--<pass>="k=v k2=v2"`: appended to the pipeline in command-line order."""

    def __init__(self, *args: Any, pass_name: str, **kwargs: Any):
        super().__init__(*args, nargs="?", **kwargs)
        self.pass_name = pass_name

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        flags: list[str] = getattr(namespace, "pass_flags", None) or []
        flags.append(self.pass_name if not values else f"{self.pass_name}{{{values}}}")
        namespace.pass_flags = flags


class _ListPasses(argparse.Action):
    """`--list-passes`: print every pass with its options and their allowed values, exit 0."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sys.stdout.write(list_passes())
        parser.exit(0)


class SbpOptMain(xDSLOptMain):
    """xDSL's opt driver with the sbp dialect, one flag per pass and located diagnostics."""

    version_format = f"sbp-opt (sbpc) {__version__}, built on xdsl {{xdsl_version}}"

    def register_all_dialects(self) -> None:
        register_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in available_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
        arg_parser.add_argument("--list-passes", action=_ListPasses, help="list every pass with its options")
        arg_parser.add_argument("--pass-pipeline", default=None,
                                help="pass pipeline in MLIR syntax, e.g. 'builtin.module(infer-sbp{rule=cost})'")
        arg_parser.add_argument(
            "--sbp-report",
            nargs="?",
            const="text",
            choices=("text", "json"),
            default=None,
            help="print to stderr why infer-sbp chose each signature and the program's modelled communication",
        )
        for name in self.available_passes:
            arg_parser.add_argument(
                f"--{name}",
                action=_PassFlag,
                pass_name=name,
                dest=f"flag_{name.replace('-', '_')}",
                help=f'run the {name} pass (options in MLIR syntax: --{name}="key=value")',
            )

    def setup_pipeline(self) -> None:
        flags = getattr(self.args, "pass_flags", None) or []
        specs = [s for s in (self.args.passes, self.args.pass_pipeline, *flags) if s]
        self.pipeline = parse_pipeline_spec(specs, checking_callback(not self.args.disable_verify))

    # -- running -----------------------------------------------------------
    def chunks(self) -> list[Source]:
        name = self.args.input_file or "<stdin>"
        if self.args.input_file in (None, "-"):
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
            module = parser.parse_module(not self.args.no_implicit_module)
            if not self.args.disable_verify:
                verify_program(module)
            if self.args.sbp_report is not None:
                reject_per_rank(module, "--sbp-report")
                self.print_report(module)
            self.pipeline.apply(self.ctx, module)
            return self.output_resulting_program(module), None
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
        from sbpc.passes.sbp_report import build_report, render

        rule = "oneflow"
        for p in self.pipeline.passes:
            if p.name == "infer-sbp":
                rule = getattr(p, "rule", rule)
        sys.stderr.write(render(build_report(module, rule), self.args.sbp_report))

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
                # Expected errors must appear; an error no annotation expects fails the run.
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
        if self.args.output_file is not None and status and not self.args.verify_diagnostics:
            return status  # as mlir-opt: the output file is kept only when every chunk succeeded
        if self.args.output_file is None:
            sys.stdout.write(text)
        else:
            with open(self.args.output_file, "w", encoding="utf-8") as f:
                f.write(text)
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
