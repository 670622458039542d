"""Located diagnostics for the sbpc drivers: `FILE:LINE:COL: error: MESSAGE`, source line, caret.

xDSL reports verifier errors as a generic-IR dump without positions. `LocatedParser` records
where each op starts (one dict entry per op, no attribute construction; only the few conversion ops,
which passes replace, also get a `FileLineColLoc` that the replacements inherit), and
`error_diagnostic` maps a parse error, a verifier error or a pass's `OpError` back to that position.
The parser also turns inputs xDSL would crash on (over-long literals, dimensions past int64) into
located parse errors, and `decode_source` locates bytes that are not UTF-8.
"""

from __future__ import annotations

import bisect
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import xdsl
from xdsl.context import Context
from xdsl.dialects.builtin import (
    FileLineColLoc,
    Float80Type,
    Float128Type,
    FloatAttr,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from sbpc.dialects.errors import ArgumentError, OpError
from sbpc.dialects.sbp_ops import ConversionOp
from sbpc.dialects.sbp_syntax import SbpParser

# xDSL 0.74's string-literal regex nests quantifiers (`(?:[^"...]+|escape)*"`): on an unclosed `"` it
# backtracks exponentially in the length of the rest of the line, so a stray quote hangs the parser.
# Matching one character per repetition accepts the same strings in linear time. Only the known
# vulnerable pattern is replaced, so a fixed xDSL keeps its own.
_SLOW_STRING = r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
if MLIRLexer._unescaped_characters_regex.pattern == _SLOW_STRING:
    MLIRLexer._unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


@dataclass
class Source:
    """One input chunk: its text, file name and the line number of its first line."""

    text: str
    name: str
    first_line: int = 1

    def __post_init__(self) -> None:
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]

    def line_col(self, pos: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset, lines counted in the whole file."""
        index = bisect.bisect_right(self._line_starts, pos) - 1
        return index + self.first_line, pos - self._line_starts[index] + 1

    def line_text(self, line: int) -> str:
        index = line - self.first_line
        if not 0 <= index < len(self._line_starts):
            return ""
        start = self._line_starts[index]
        end = self.text.find("\n", start)
        return self.text[start : end if end >= 0 else len(self.text)]


def decode_source(data: bytes, name: str) -> Source:
    """The text of a program file; bytes that are not UTF-8 are a located error (`DecodeError`)."""
    try:
        return Source(data.decode("utf-8"), name)
    except UnicodeDecodeError as error:
        good = data[: error.start].decode("utf-8")
        source = Source(good, name)
        line, col = source.line_col(len(good))
        bad = " ".join(f"0x{b:02x}" for b in data[error.start : error.end])
        raise DecodeError(Diagnostic(name, line, col, f"invalid UTF-8 byte {bad}: sbpc reads UTF-8 text",
                                     source.line_text(line))) from None


class DecodeError(Exception):
    """A program file that is not UTF-8 text; `diagnostic` says where."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


SHOWN_LINE_CHARS = 240


@dataclass
class Diagnostic:
    """A located error message."""

    file: str
    line: int
    col: int
    message: str
    source_line: str = ""
    width: int = 1

    def render(self) -> str:
        head = f"{self.file}:{self.line}:{self.col}: error: {self.message}"
        if not self.source_line:
            return head
        line, col = self.source_line, self.col
        if len(line) > SHOWN_LINE_CHARS:  # a window around the column, not megabytes of one line
            start = max(0, col - 1 - SHOWN_LINE_CHARS // 4)
            line, col = line[start : start + SHOWN_LINE_CHARS], col - start
        caret = " " * (col - 1) + "^" * max(1, min(self.width, len(line) - col + 1))
        return f"{head}\n{line}\n{caret}"


class LocatedParser(SbpParser):
    """A parser that remembers the source offset where each operation starts."""

    def __init__(self, ctx: Context, source: Source):
        super().__init__(ctx, source.text, source.name)
        self.source = source
        self.positions: dict[Operation, int] = {}

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])  # an empty input (or only comments) is an empty module, as in mlir-opt
        module = super().parse_module(allow_implicit_module)
        # Passes replace conversions (to_global -> boxing -> collectives) and carry the location over,
        # as MLIR rewrites do: give these few ops a real location, so that a planner error points at
        # the conversion that asked for the boxing. Other ops keep only their `positions` entry.
        for op, pos in self.positions.items():
            if isinstance(op, ConversionOp):
                line, col = self.source.line_col(pos)
                op.location = FileLineColLoc(StringAttr(self.source.name), IntAttr(line), IntAttr(col))
        return module

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            op = super().parse_operation()
        except VerifyException as error:
            # A custom-form op that breaks a constraint while being built (e.g. a property of the
            # wrong kind) fails inside the parser: report it at the op, like a verifier error.
            message = str(error)
            name = _OP_NAME.match(self.source.text, start)
            if name is not None and not message.startswith(name.group(1)):
                message = f"{name.group(1)}: {message}"
            self.raise_error(message, start, start + 1)
        except struct.error as error:  # a custom format packing a too-wide value (an i16 grid axis >= 2**15)
            if not _raised_in_xdsl(error):
                raise
            name = _OP_NAME.match(self.source.text, start)
            bounds = re.sub(r"^.*format requires ", "", str(error)).replace("number", "value")
            self.raise_error(f"{name.group(1) + ': ' if name else ''}value out of range for its type ({bounds})",
                             start, start + 1)
        self.positions[op] = start
        return op

    def _consume_token(self, expected_kind=None):  # type: ignore[no-untyped-def, override]
        token = self._current_token
        text = token.text
        if token.kind == MLIRTokenKind.INTEGER_LIT and len(text) > MAX_DECIMAL_DIGITS and text[:2] not in ("0x", "0X"):
            # Python refuses to convert longer decimal strings (a ValueError deep inside xDSL).
            self.raise_error(f"integer literal of {len(text)} digits is too long (at most {MAX_DECIMAL_DIGITS})",
                             token.span)
        return super()._consume_token(expected_kind)

    def parse_shape_dimension(self, allow_dynamic: bool = True) -> int:
        start = self._current_token.span
        dim = super().parse_shape_dimension(allow_dynamic)
        if dim >= 2**63:  # MLIR dimensions are int64; larger ones overflow every size computation
            self.raise_error(f"dimension {dim} does not fit in a 64-bit integer", start)
        return dim

    # xDSL builds builtin attributes while parsing and some constructors fail with plain Python
    # exceptions on out-of-range literals (`1.0e300 : f32` and `0x7FC00000 : f16` raise OverflowError,
    # `dense<300> : tensor<2xi8>` ValueError, `1.0 : f80` NotImplementedError). The innermost attribute
    # or type being parsed turns such an exception into a ParseError spanning it; exceptions raised
    # from our own dialect code are left alone, so they still surface as bugs.
    def parse_optional_attribute(self):  # type: ignore[override]
        start = self._current_token.span.start
        attr = self._xdsl_guarded(super().parse_optional_attribute)
        if isinstance(attr, FloatAttr) and not _packable(attr.type):  # it would crash the printer
            self.raise_error(f"{attr.type} float values are not supported by xDSL", start, self.pos)
        return attr

    def parse_optional_type(self):  # type: ignore[override]
        token = self._current_token
        if token.kind == MLIRTokenKind.BARE_IDENT and (width := _INT_TYPE.fullmatch(token.text)) is not None:
            if int(width.group(1)) > MAX_INT_WIDTH:  # xDSL has no limit and computes 2**width ranges
                self.raise_error(f"integer bitwidth is limited to {MAX_INT_WIDTH} bits", token.span)
        return self._xdsl_guarded(super().parse_optional_type)

    def _xdsl_guarded(self, parse: Callable[[], _T]) -> _T:
        start = self._current_token.span.start
        try:
            return parse()
        except (OverflowError, ValueError, NotImplementedError, AssertionError, struct.error) as error:
            if not _raised_in_xdsl(error):
                raise
            detail = str(error) or (
                "not supported by xDSL" if isinstance(error, NotImplementedError) else "malformed (rejected by xDSL)"
            )
            if isinstance(error, OverflowError | struct.error):  # struct: packing a too-wide DenseArray value
                detail = f"value out of range for its type ({detail})"
            self.raise_error(detail, start, max(start + 1, self.pos))


_T = TypeVar("_T")
_INT_TYPE = re.compile(r"[su]?i([0-9]+)")
MAX_INT_WIDTH = (1 << 24) - 1
"""MLIR's IntegerType::kMaxWidth."""
MAX_DECIMAL_DIGITS = 4300
"""Python's default limit on int(str) (sys.get_int_max_str_digits); ~14000 bits, past any i-type sbpc runs."""

_XDSL_DIR = os.path.dirname(xdsl.__file__) + os.sep
_PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _packable(float_type: Attribute) -> bool:
    """xDSL 0.74 cannot pack (so cannot print) f80 and f128 values."""
    return not isinstance(float_type, Float80Type | Float128Type)


def _raised_in_xdsl(error: BaseException) -> bool:
    """Whether the innermost xDSL-or-project frame of the traceback is in xDSL (not our code)."""
    last = None
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(_XDSL_DIR) or filename.startswith(_PROJECT_DIR):
            last = filename
        tb = tb.tb_next
    return last is not None and last.startswith(_XDSL_DIR)


# The op name at an op's start: optional `%results =`, then a bare or quoted name.
_OP_NAME = re.compile(r'(?:%[^=]*=\s*)?"?([A-Za-z_][\w$.]*)')


def parse_error_diagnostic(error: ParseError, source: Source) -> Diagnostic:
    line, col = source.line_col(error.span.start)
    message = error.msg
    if not message.strip() or message[0].isspace():
        # Some xDSL errors are only a context fragment, e.g. " in block definition" when a block holds
        # something that is neither an operation nor `}`: say what was found.
        got = error.span.text.strip() or "end of file"
        if message.strip() == "in block definition":
            message = f"expected an operation or '}}', got '{got}'"
        else:
            message = f"unexpected '{got}'{message.rstrip()}"
    elif message == "End of file reached before closing string literal.":  # xDSL: strings end at a newline
        message = "unterminated string literal: the closing '\"' must be on the same line"
    return Diagnostic(source.name, line, col, message, source.line_text(line), max(1, error.span.len))


def _position_of(op: Operation, positions: dict[Operation, int]) -> int | None:
    """Position of op; for an op a pass made, the located op that uses its result (the op a boxing
    was made for), else the nearest located op it came from (parents, then operands)."""
    users: list[Operation] = [op]
    seen: set[Operation] = set()
    while users and len(seen) < 64:  # a chain of collectives ends at the op that needed them
        current_user = users.pop(0)
        if current_user in positions:
            return positions[current_user]
        if current_user in seen:
            continue
        seen.add(current_user)
        users.extend(use.operation for result in current_user.results for use in result.uses)
    current: Operation | None = op
    while current is not None:
        if current in positions:
            return positions[current]
        for operand in current.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner in positions:
                return positions[owner]
        current = current.parent_op()
    return None


def op_diagnostic(op: Operation, message: str, source: Source, positions: dict[Operation, int]) -> Diagnostic:
    if not message.startswith(op.name):
        message = f"{op.name}: {message}"
    if isinstance(op.location, FileLineColLoc):
        loc = op.location
        line, col = loc.line.data, loc.column.data
        shown = source.line_text(line) if loc.filename.data == source.name else ""
        return Diagnostic(loc.filename.data, line, col, message, shown)
    pos = _position_of(op, positions)
    if pos is None:
        return Diagnostic(source.name, source.first_line, 1, message)
    line, col = source.line_col(pos)
    return Diagnostic(source.name, line, col, message, source.line_text(line))


def argument_diagnostic(fn: Operation, index: int, message: str, source: Source,
                        positions: dict[Operation, int]) -> Diagnostic:
    """An error about argument `index` of the function `fn`, at its `%name:` in the source (else at `fn`)."""
    start = positions.get(fn)
    block = fn.regions[0].blocks.first if fn.regions else None
    arg = block.args[index] if block is not None and index < len(block.args) else None
    if start is None or arg is None or arg.name_hint is None:
        return op_diagnostic(fn, message, source, positions)
    found = re.compile(rf"%{re.escape(arg.name_hint)}\s*:").search(source.text, start)
    if found is None:
        return op_diagnostic(fn, message, source, positions)
    line, col = source.line_col(found.start())
    return Diagnostic(source.name, line, col, message, source.line_text(line), len(arg.name_hint) + 1)


def find_failing_op(module: ModuleOp) -> tuple[Operation, str] | None:
    """The first op (in walk order) whose own verifier fails, with its message."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as error:
            return op, str(error)
    return None


def error_diagnostic(
    error: Exception, source: Source, positions: dict[Operation, int], module: ModuleOp | None
) -> Diagnostic:
    """Locate a parse error, an `OpError` or a verifier failure of `module`."""
    if isinstance(error, ParseError):
        return parse_error_diagnostic(error, source)
    if isinstance(error, ArgumentError):
        return argument_diagnostic(error.op, error.index, error.message, source, positions)
    if isinstance(error, OpError):
        return op_diagnostic(error.op, error.message, source, positions)
    if module is not None and isinstance(error, VerifyException):
        found = find_failing_op(module)
        if found is not None:
            return op_diagnostic(found[0], found[1], source, positions)
    return Diagnostic(source.name, source.first_line, 1, str(error))


# MLIR-style expectations: `// expected-error {{msg}}`, `// expected-error @+1 {{msg}}`, `@-2`, `@above`.
_EXPECTED = re.compile(r"//\s*expected-error\s*(?:@(\+\d+|-\d+|above|below))?\s*\{\{(.*?)\}\}")


@dataclass
class Expectation:
    line: int
    message: str


def expectations(source: Source) -> list[Expectation]:
    found: list[Expectation] = []
    for index, text in enumerate(source.text.split("\n")):
        for match in _EXPECTED.finditer(text):
            line = index + source.first_line
            offset = match.group(1)
            if offset == "above":
                line -= 1
            elif offset == "below":
                line += 1
            elif offset is not None:
                line += int(offset)
            found.append(Expectation(line, match.group(2)))
    return found


def check_expectations(expected: list[Expectation], produced: Diagnostic | None, source: Source) -> list[str]:
    """Mismatches between `expected-error` annotations and the produced diagnostic."""
    problems: list[str] = []
    matched = False
    for exp in expected:
        if produced is not None and produced.line == exp.line and exp.message in produced.message:
            matched = True
        else:
            problems.append(f"{source.name}:{exp.line}: error: expected error \"{exp.message}\" was not produced")
    if produced is not None and not matched:
        # Its text is already printed (on stdout): name it by its place, so that it is shown once.
        problems.append(f"unexpected error: {produced.file}:{produced.line}:{produced.col}: no `// expected-error` "
                        "annotation matches it")
    return problems
