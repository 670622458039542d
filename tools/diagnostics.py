"""Located diagnostics for the sbpc drivers: `FILE:LINE:COL: error: MESSAGE`, source line, caret.

xDSL reports verifier errors as a generic-IR dump without positions. `LocatedParser` records
where each op starts (one dict entry per op, no attribute construction), and `locate_error`
maps a parse error, a verifier error or a pass's `OpError` back to that position.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from dialects.errors import OpError


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
        caret = " " * (self.col - 1) + "^" * max(1, min(self.width, len(self.source_line) - self.col + 1))
        return f"{head}\n{self.source_line}\n{caret}"


class LocatedParser(Parser):
    """A parser that remembers the source offset where each operation starts."""

    def __init__(self, ctx: Context, source: Source):
        super().__init__(ctx, source.text, source.name)
        self.source = source
        self.positions: dict[Operation, int] = {}

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        self.positions[op] = start
        return op


def parse_error_diagnostic(error: ParseError, source: Source) -> Diagnostic:
    line, col = source.line_col(error.span.start)
    return Diagnostic(source.name, line, col, error.msg, source.line_text(line), max(1, error.span.len))


def _position_of(op: Operation, positions: dict[Operation, int]) -> int | None:
    """Position of op, or of the nearest located op it came from (parents, then operands)."""
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
        return Diagnostic(loc.filename.data, loc.line.data, loc.column.data, message)
    pos = _position_of(op, positions)
    if pos is None:
        return Diagnostic(source.name, source.first_line, 1, message)
    line, col = source.line_col(pos)
    return Diagnostic(source.name, line, col, message, source.line_text(line))


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
        problems.append(f"unexpected error: {produced.render()}")
    return problems
