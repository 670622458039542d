"""Reading IOPDDL contest problems (google/iopddl's JSON, plain or gzip) into a `StrategyProblem`.

The largest published instances hold ~150 MB of JSON, almost all of it integer lists (the edges'
cost matrices). `json.load` would build one Python object per number (~40 million, several GB);
this reader streams instead: the few structural tokens are parsed one by one, and each list of
integer lists is consumed in fixed-size chunks, every chunk tokenised by numpy at once (digit runs,
bracket depth by a running sum), so memory is the result's int64 arrays plus one chunk.

Format (SPEC §9): `{"problem": {"name": ..., "nodes": {"intervals": [[a, b], ...], "costs":
[[...], ...], "usages": [[...], ...]}, "edges": {"nodes": [[u, v], ...], "costs": [[...], ...]},
"usage_limit": L}}`, keys in any order, `usage_limit` optional. A malformed file is an
`IopddlError` naming the file, line and column and what was expected.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from sbpc.passes.solver.strategy import ProblemError, StrategyProblem

CHUNK = 1 << 22
"""Bytes read (and tokenised) at a time."""
_WHITESPACE = b" \t\r\n"
_POW10 = 10 ** np.arange(20, dtype=np.uint64)
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[ord("0") : ord("9") + 1] = True
_ALLOWED = _DIGIT.copy()
_ALLOWED[[ord(c) for c in "[], \t\r\n"]] = True


class IopddlError(ValueError):
    """A located error in an IOPDDL file: `where` is `FILE:LINE:COLUMN`."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where


@dataclass
class _Ragged:
    """A list of integer lists: the values flat and the lengths."""

    values: list[np.ndarray] = field(default_factory=list)
    lengths: list[np.ndarray] = field(default_factory=list)
    started: bool = False
    """Whether a list was read (the next one follows a comma)."""

    def flat(self) -> tuple[np.ndarray, np.ndarray]:
        values = np.concatenate(self.values) if self.values else np.zeros(0, np.int64)
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, np.int64)
        return values, lengths


class _Reader:
    """A byte stream with a look-ahead buffer, a position and line/column bookkeeping."""

    def __init__(self, stream: IO[bytes], name: str):
        self.stream, self.name = stream, name
        self.buffer = b""
        self.pos = 0
        self.line, self.line_offset, self.consumed = 1, 0, 0  # for locations: lines before `buffer`

    def where(self, pos: int | None = None) -> str:
        pos = self.pos if pos is None else pos
        head = self.buffer[:pos]
        newlines = head.count(b"\n")
        line = self.line + newlines
        start = self.consumed + head.rfind(b"\n") + 1 if newlines else self.line_offset
        return f"{self.name}:{line}:{self.consumed + pos - start + 1}"

    def fail(self, message: str, pos: int | None = None) -> IopddlError:
        return IopddlError(self.where(pos), message)

    def _drop(self) -> None:
        """Forget the buffer before `pos` (keeping the line count)."""
        head = self.buffer[: self.pos]
        newlines = head.count(b"\n")
        if newlines:
            self.line += newlines
            self.line_offset = self.consumed + head.rfind(b"\n") + 1
        self.consumed += self.pos
        self.buffer, self.pos = self.buffer[self.pos :], 0

    def more(self) -> bool:
        """Read another chunk onto the buffer; False at the end of the stream."""
        self._drop()
        try:
            data = self.stream.read(CHUNK)
        except (OSError, EOFError, gzip.BadGzipFile) as error:
            raise self.fail(f"cannot read: {error}") from None
        self.buffer += data
        return bool(data)

    def peek(self) -> int:
        """The next non-space byte (not consumed); -1 at the end."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self.more():
                return -1

    def expect(self, char: str) -> None:
        if self.peek() != ord(char):
            found = "the end of the file" if self.peek() < 0 else repr(chr(self.buffer[self.pos]))
            raise self.fail(f"expected '{char}', found {found}")
        self.pos += 1

    def scalar(self) -> Any:
        """A string, number, true/false/null: the text up to the next delimiter, read by `json`."""
        self.peek()
        end = 1  # relative to `pos`, which `more` keeps at the scalar's first byte
        if self.buffer[self.pos : self.pos + 1] == b'"':
            while True:
                found = self.buffer.find(b'"', self.pos + end)
                if found < 0:
                    end = len(self.buffer) - self.pos
                    if not self.more():
                        raise self.fail("unterminated string")
                    continue
                run = found - len(self.buffer[self.pos : found].rstrip(b"\\")) - self.pos
                end = found - self.pos + 1
                if run % 2 == 0:
                    break
        else:
            while True:
                while self.pos + end < len(self.buffer) and self.buffer[self.pos + end] not in b",]}:" + _WHITESPACE:
                    end += 1
                if self.pos + end < len(self.buffer) or not self.more():
                    break
        text = self.buffer[self.pos : self.pos + end]
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise self.fail(f"expected a value, found {text[:40].decode('utf-8', 'replace')!r}") from None
        self.pos += end
        return value

    def value(self) -> Any:
        """Any JSON value; lists of integer lists arrive as `_Ragged`."""
        c = self.peek()
        if c == ord("{"):
            return dict(self.members())
        if c == ord("["):
            self.pos += 1
            if self.peek() == ord("["):
                return self.ragged()
            items: list[Any] = []
            if self.peek() == ord("]"):
                self.pos += 1
                return items
            while True:
                items.append(self.value())
                if self.peek() == ord("]"):
                    self.pos += 1
                    return items
                self.expect(",")
        if c < 0:
            raise self.fail("expected a value, found the end of the file")
        return self.scalar()

    def members(self) -> list[tuple[str, Any]]:
        """An object's members, in order."""
        self.expect("{")
        out: list[tuple[str, Any]] = []
        if self.peek() == ord("}"):
            self.pos += 1
            return out
        while True:
            if self.peek() != ord('"'):
                raise self.fail("expected a key (a string)")
            key = self.scalar()
            self.expect(":")
            out.append((key, self.value()))
            if self.peek() == ord("}"):
                self.pos += 1
                return out
            self.expect(",")

    def ragged(self) -> _Ragged:
        """The rest of a list of integer lists (after its '['), chunk by chunk."""
        out = _Ragged()
        while True:
            data = np.frombuffer(self.buffer, dtype=np.uint8, offset=self.pos)
            brackets = np.flatnonzero((data == ord("[")) | (data == ord("]")))
            opening = data[brackets] == ord("[")
            depth = 1 + np.cumsum(np.where(opening, 1, -1))  # the depth after each bracket
            closed = np.flatnonzero(depth == 0)
            if len(closed):
                cut, last = int(brackets[closed[0]]), True
                keep = closed[0]
            else:
                ends = np.flatnonzero(depth == 1)
                keep = int(ends[-1]) + 1 if len(ends) else 0
                cut, last = (int(brackets[keep - 1]) + 1 if keep else 0), False
            if cut or last:
                self._chunk(data[:cut], brackets[:keep], opening[:keep], depth[:keep], out)
            self.pos += cut + (1 if last else 0)
            if last:
                return out
            if not self.more():
                raise self.fail("unterminated list")

    def _chunk(self, data: np.ndarray, brackets: np.ndarray, opening: np.ndarray, depth: np.ndarray,
               out: _Ragged) -> None:
        """Whole inner lists (and the commas between them): their integers and lengths. Counts
        between brackets come from sorted positions (searchsorted), not from running sums over
        every byte."""
        if np.bincount(data, minlength=256)[~_ALLOWED].any():
            wrong = np.flatnonzero(~_ALLOWED[data])
            raise self.fail(f"expected a non-negative integer, found {chr(data[wrong[0]])!r}", self.pos + int(wrong[0]))
        if len(depth) and depth.max() > 2:
            raise self.fail("expected integers, found a list nested deeper", self.pos + int(brackets[np.argmax(depth)]))
        digit = ((data - np.uint8(ord("0"))) < 10).view(np.int8)
        edges = np.flatnonzero(np.diff(digit, prepend=np.int8(0), append=np.int8(0)))
        starts, ends = edges[::2], edges[1::2]
        width = ends - starts
        if len(width) and width.max() > 19:
            raise self.fail("an integer above 2**63 - 1", self.pos + int(starts[np.argmax(width)]))
        opens, closes = brackets[opening], brackets[~opening]
        if len(starts):
            before = np.searchsorted(brackets, starts) - 1  # the bracket before each integer
            outside = np.flatnonzero((before < 0) | (depth[np.maximum(before, 0)] < 2))
            if len(outside):
                raise self.fail("expected a list, found an integer", self.pos + int(starts[outside[0]]))
        commas = np.flatnonzero(data == ord(","))
        inside_tokens = np.searchsorted(starts, closes) - np.searchsorted(starts, opens)
        inside_commas = np.searchsorted(commas, closes) - np.searchsorted(commas, opens)
        bad = np.flatnonzero(inside_commas != np.maximum(inside_tokens - 1, 0))
        if len(bad):
            raise self.fail("expected integers separated by commas", self.pos + int(opens[bad[0]]))
        between = np.searchsorted(commas, opens[1:]) - np.searchsorted(commas, closes[:-1])
        lead = int(np.searchsorted(commas, opens[0])) if len(opens) else len(commas)
        trail = len(commas) - int(np.searchsorted(commas, closes[-1])) if len(closes) else 0
        if np.any(between != 1) or trail or (len(opens) and lead != (1 if out.started else 0)) or (
                not len(opens) and lead):
            raise self.fail("expected lists separated by commas", self.pos + (int(opens[0]) if len(opens) else 0))
        out.started = out.started or bool(len(opens))
        if len(starts):  # up to 19 digits, < 2**64: exact in uint64, then checked against int64
            at = np.flatnonzero(digit)
            digits = (data[at] - ord("0")).astype(np.uint64)
            run = np.repeat(ends, width) - at - 1
            values = np.add.reduceat(digits * _POW10[run], np.cumsum(width) - width)
            big = np.flatnonzero(values > np.iinfo(np.int64).max)
            if len(big):
                raise self.fail("an integer above 2**63 - 1", self.pos + int(starts[big[0]]))
            values = values.astype(np.int64)
        else:
            values = np.zeros(0, np.int64)
        out.values.append(values)
        out.lengths.append(inside_tokens)


def _field(obj: dict[str, Any], key: str, where: str, reader: _Reader) -> Any:
    if key not in obj:
        raise IopddlError(reader.where(), f"{where} has no \"{key}\"")
    return obj[key]


def _pairs(value: Any, what: str, reader: _Reader) -> np.ndarray:
    if isinstance(value, list) and not value:
        return np.zeros((0, 2), np.int64)
    if not isinstance(value, _Ragged):
        raise IopddlError(reader.where(), f"{what} is not a list of [a, b] pairs")
    values, lengths = value.flat()
    bad = np.flatnonzero(lengths != 2)
    if len(bad):
        raise IopddlError(reader.where(), f"{what}[{int(bad[0])}] has {int(lengths[bad[0]])} entries, not 2")
    return values.reshape(-1, 2)


def _lists(value: Any, what: str, reader: _Reader) -> tuple[np.ndarray, np.ndarray]:
    """Flat values and the n + 1 offsets."""
    if isinstance(value, list) and not value:
        return np.zeros(0, np.int64), np.zeros(1, np.int64)
    if not isinstance(value, _Ragged):
        raise IopddlError(reader.where(), f"{what} is not a list of integer lists")
    values, lengths = value.flat()
    return values, np.concatenate(([0], np.cumsum(lengths)))


def read_stream(stream: IO[bytes], name: str) -> StrategyProblem:
    """The problem in `stream` (plain JSON bytes); `name` is the file's name for locations."""
    reader = _Reader(stream, name)
    top = dict(reader.members())
    if reader.peek() >= 0:
        raise reader.fail("expected the end of the file after the top-level object")
    body = top.get("problem", top)
    if not isinstance(body, dict):
        raise IopddlError(reader.where(), "\"problem\" is not an object")
    nodes, edges = _field(body, "nodes", "the problem", reader), body.get("edges", {"nodes": [], "costs": []})
    if not isinstance(nodes, dict) or not isinstance(edges, dict):
        raise IopddlError(reader.where(), "\"nodes\" and \"edges\" are objects")
    intervals = _pairs(_field(nodes, "intervals", "\"nodes\"", reader), "nodes.intervals", reader)
    costs, start = _lists(_field(nodes, "costs", "\"nodes\"", reader), "nodes.costs", reader)
    usages, usage_start = _lists(_field(nodes, "usages", "\"nodes\"", reader), "nodes.usages", reader)
    pairs = _pairs(_field(edges, "nodes", "\"edges\"", reader), "edges.nodes", reader)
    edge_costs, edge_start = _lists(_field(edges, "costs", "\"edges\"", reader), "edges.costs", reader)
    if not np.array_equal(start, usage_start):
        raise IopddlError(reader.where(), "nodes.costs and nodes.usages differ in shape")
    if len(edge_start) - 1 != len(pairs):
        raise IopddlError(reader.where(), f"{len(pairs)} edges but {len(edge_start) - 1} cost lists")
    limit = body.get("usage_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int | float) or limit < 0):
        raise IopddlError(reader.where(), f"usage_limit is {limit!r}, not a non-negative number")
    problem = StrategyProblem(str(body.get("name", Path(name).stem)), start, costs, usages, intervals,
                              pairs, edge_start, edge_costs, limit)
    try:
        problem.validate()
    except ProblemError as error:
        raise IopddlError(name, str(error)) from None
    return problem


def read_problem(path: str | Path) -> StrategyProblem:
    """An IOPDDL problem from `path` (gzip if it starts with gzip's magic bytes)."""
    path = Path(path)
    try:
        with open(path, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as stream:
            return read_stream(stream, str(path))
    except OSError as error:
        raise IopddlError(str(path), error.strerror or str(error)) from None
