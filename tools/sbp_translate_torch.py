"""`sbp-translate --import-torch FILE.py:FACTORY --mesh 2x4 [--input-sbp 'x=[S(0), B]'] [--param-sbp NAME=SBP]
[--device cpu]` (SPEC §7): the module FACTORY() returns, captured and printed as an sbp program.

FACTORY() returns `(module, example_args)`. The mesh `2x4` is the placement `[[0, 1, 2, 3], [4, 5, 6, 7]]`
(ranks row-major); `--input-sbp` fixes a forward argument's SBP and `--param-sbp` a parameter's (by its
`named_parameters()` name); every other argument is left free for `infer-sbp{rule=global}`. A bad
FILE, FACTORY, mesh or SBP, and an unsupported ATen op, are located errors with exit code 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import re
import sys
import traceback
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser, target: Any) -> None:
    """The flags of `--import-torch` (the input file is then `FILE.py:FACTORY`)."""
    target.add_argument("--import-torch", action="store_true",
                        help="read FILE as FILE.py:FACTORY, FACTORY() returning (torch module, example args), and "
                        "print the module captured with torch.export as an sbp program (SPEC §7)")
    parser.add_argument("--mesh", default=None, help="--import-torch: the device mesh, e.g. 8 or 2x4 (ranks row-major)")
    parser.add_argument("--input-sbp", action="append", default=[], metavar="NAME=SBP",
                        help="--import-torch: the SBP of a forward argument, e.g. 'x=[S(0), B]' (repeatable)")
    parser.add_argument("--param-sbp", action="append", default=[], metavar="NAME=SBP",
                        help="--import-torch: the SBP of a parameter or buffer, by its named_parameters() name")
    parser.add_argument("--device", default="cpu", help="--import-torch: the placement's device type (default cpu)")


class _Bad(Exception):
    """A user error, already formatted."""


def parse_mesh(text: str | None) -> list[Any]:
    """`2x4` -> [[0, 1, 2, 3], [4, 5, 6, 7]]; `8` -> [0, ..., 7]."""
    if text is None:
        raise _Bad("error: --import-torch needs --mesh (e.g. --mesh 2x4)")
    if not re.fullmatch(r"\s*\d+(\s*x\s*\d+)*\s*", text) or any(int(d) == 0 for d in text.split("x")):
        raise _Bad(f"error: --mesh {text!r}: expected positive sizes joined by 'x', e.g. 8 or 2x4")
    shape = [int(d) for d in text.split("x")]
    ranks: list[Any] = list(range(math.prod(shape)))
    for size in reversed(shape[1:]):
        ranks = [ranks[i:i + size] for i in range(0, len(ranks), size)]
    return ranks


def _assignments(flag: str, items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, eq, sbp = item.partition("=")
        if not eq or not name.strip():
            raise _Bad(f"error: {flag} {item!r}: expected NAME=SBP, e.g. 'x=[S(0), B]'")
        out[name.strip()] = sbp.strip()
    return out


def load_factory(spec: str) -> tuple[Any, tuple[Any, ...]]:
    """Import FILE.py and call FACTORY(); errors name the file (and the line where loading failed)."""
    path_text, colon, name = spec.rpartition(":")
    if not colon or not path_text or not name.isidentifier():
        raise _Bad(f"error: --import-torch: expected FILE.py:FACTORY, got {spec!r}")
    path = Path(path_text)
    if not path.is_file():
        raise _Bad(f"error: cannot read {path_text}: no such file")
    module_spec = importlib.util.spec_from_file_location(f"sbp_translate_model_{path.stem}", path)
    if module_spec is None or module_spec.loader is None:
        raise _Bad(f"{path_text}: error: not a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.parent.resolve()))  # sibling imports of the model file
    try:
        module_spec.loader.exec_module(module)
        factory = getattr(module, name, None)
        if not callable(factory):
            found = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                           and getattr(v, "__module__", None) == module.__name__)
            raise _Bad(f"{path_text}: error: no function {name!r} (defined: {', '.join(found) or 'none'})")
        made = factory()
    except _Bad:
        raise
    except SyntaxError as error:
        raise _Bad(f"{path_text}:{error.lineno or 1}:{error.offset or 1}: error: {error.msg}") from None
    except Exception as error:
        raise _Bad(f"{_frame(error, path)}: error: {spec} failed: {type(error).__name__}: {error}") from None
    finally:
        sys.path.remove(str(path.parent.resolve()))
    if not (isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], tuple | list)):
        raise _Bad(f"{path_text}: error: {name}() must return (module, example_args), got {type(made).__name__}")
    return made[0], tuple(made[1])


def _frame(error: Exception, path: Path) -> str:
    """`FILE:LINE` of the innermost frame of `error` in the model file."""
    here = path.resolve()
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if Path(f.filename).resolve() == here]
    return f"{path}:{lines[-1]}" if lines else str(path)


def translate(args: argparse.Namespace) -> str | None:
    """`--import-torch`: the program's text, or None once the error is printed."""
    from sbpc.api import Error  # the API, the engine and torch load only for an import
    from sbpc.torch_api import from_torch

    try:
        mesh = parse_mesh(args.mesh)
        sbp = _assignments("--input-sbp", args.input_sbp)
        params = _assignments("--param-sbp", args.param_sbp)
        model, example = load_factory(args.input_file)
        return str(from_torch(model, example, mesh=mesh, device=args.device, sbp=sbp, params=params))
    except (_Bad, Error) as error:
        print(error, file=sys.stderr)
    except Exception as error:  # never a traceback without --debug
        if args.debug:
            traceback.print_exc()
        print(f"error: internal error: {type(error).__name__}: {error}", file=sys.stderr)
    return None
