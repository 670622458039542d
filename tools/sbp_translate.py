"""`sbp-translate FILE --emit-ascendc -o DIR`: write the Ascend C projects of a program's fmod ops.

The program is compiled with `--pipeline` (default: infer-sbp, materialize-boxing, lower-boxing,
spmdize, lower-to-ascendc) unless it already holds `ascendc.launch` ops, then every kernel is
printed as a CANN custom-op project (SPEC §5). Errors are located; exit code 1.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from xdsl.context import Context
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from sbpc.tools.diagnostics import LocatedParser, Source, error_diagnostic
from sbpc.tools.sbp_opt import register_dialects

DEFAULT_PIPELINE = "infer-sbp,materialize-boxing,lower-boxing,spmdize,lower-to-ascendc{{soc={soc}}}"


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="sbp-translate", description=__doc__.splitlines()[0])
    parser.add_argument("input_file", help="program (.mlir)")
    parser.add_argument("--emit-ascendc", action="store_true", required=True, help="write the Ascend C projects")
    parser.add_argument("-o", "--output", required=True, help="output directory")
    parser.add_argument("--pipeline", default=None, help="passes to run first (default: the full pipeline)")
    parser.add_argument("--soc", default="ascend910b", help="target SoC (ascend910b, ascend910b3, ascend910_93, ...)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    try:
        text = Path(args.input_file).read_text(encoding="utf-8")
    except OSError as error:
        print(f"error: cannot read {args.input_file}: {error}", file=sys.stderr)
        return 1
    source = Source(text, args.input_file)
    ctx = Context()
    register_dialects(ctx)
    parser = LocatedParser(ctx, source)
    module = None
    try:
        from sbpc.dialects.ascendc import LaunchOp
        from sbpc.lowering.ascendc_printer import emit_project
        from sbpc.passes import get_all_passes

        module = parser.parse_module()
        module.verify()
        if not any(isinstance(op, LaunchOp) for op in module.walk()):
            spec = args.pipeline if args.pipeline is not None else DEFAULT_PIPELINE.format(soc=args.soc)

            def verify(_prev: object, mod: object, _next: object) -> None:
                mod.verify()  # type: ignore[attr-defined]

            PassPipeline.parse_spec(get_all_passes(), spec, verify).apply(ctx, module)
        written = emit_project(module, Path(args.output))
    except (ParseError, DiagnosticException) as error:
        if args.debug:
            traceback.print_exc()
        print(error_diagnostic(error, source, parser.positions, module).render(), file=sys.stderr)
        return 1
    except ArgSpecParseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # never a traceback without --debug
        if args.debug:
            traceback.print_exc()
        print(f"error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    if not written:
        print("error: the program has no fmod op to emit", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0
