"""Number values of pass options, read around xDSL 0.74's pipeline lexer (`xdsl.utils.arg_spec`),
which sbpc uses but does not change.

That lexer reads `1e-08` and `1E-8` as identifiers (its first rule makes a digit run followed by letters
a name, for passes like `2d-slice`), so a float option gets the string `'1e-08'` and rejects it; it
splits `-1e-3` into `-1` and `e-3`, a syntax error; `.5` is an unknown token; and `1` is an int, which
a `float` option rejects too. So:

* before lexing, `quote_number_values` quotes every option value that starts like a number but is not
  a plain integer or decimal (`1e-08`, `-1e-3`, `.5`, `12.5MiB`), so that the lexer keeps it whole as a
  string, and records where each value stands in the text;
* after, `coerce_numbers` turns a float option's strings and ints into floats (`1e-08`, `1E-8`,
  `2.5e+3`, `-1e-3`, `1`); a value that is not a decimal number (`1e-3x`, `1.5.3`, `abc`, `nan`, `true`)
  is a `NumberError` that points at the value in the pipeline text.

Ranges (a negative `lr`, a `beta1` of 1) are each pass's own checks, after the value is a float.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from xdsl.utils.arg_spec import ArgSpec

_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\[[^\]]*\]|[{}=,]|\s+|[^\s{}=,"\[\]]+|.', re.S)
"""The pieces of a pipeline: quoted strings, `mlir-opt[...]` bodies, punctuation, blanks, words, and
any other character alone (an unclosed quote: kept for xDSL to report)."""
_NUMBERISH = re.compile(r"[-+]?\.?[0-9]")
"""A value a reader takes for a number (or a number with a unit) starts like this."""
_PLAIN = re.compile(r"[-+]?[0-9]+(?:\.[0-9]*)?")
"""What xDSL lexes whole as a NUMBER: an int, or a decimal without an exponent."""
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""A float option's value: a decimal, with an optional exponent (no `nan`, `inf` or `_` separators)."""


@dataclass(frozen=True)
class Site:
    """Where an option value stands in the text that was scanned."""

    column: int
    """0-based offset of the value's first character."""
    text: str
    """The value as written (a comma list whole)."""


Sites = dict[tuple[int, str], Site]
"""(the pass's position in the pipeline, the option's name with `_` for `-`) -> where its value stands."""


class NumberError(ValueError):
    """A float option's value is not a number; `str()` is the message, `site` where the value stands."""

    def __init__(self, message: str, site: Site | None) -> None:
        super().__init__(message)
        self.site = site


@dataclass(frozen=True)
class Quoted:
    """A pipeline text with its number values quoted (`quote_number_values`)."""

    text: str
    sites: Sites
    """Where each option's value stands in the text as written."""
    inserted: tuple[int, ...]
    """The offsets in `text` of the quotes added."""

    def relocate(self, message: str, written: str, offset: int) -> str:
        """xDSL's syntax error `message` on `text`, told on `written` (in which the text as written starts
        at `offset`): its column, the line shown and the carets moved back over the added quotes."""
        lines = message.split("\n")
        at = next((k for k, line in enumerate(lines) if re.fullmatch(r"pass-pipeline:1:[0-9]+", line)), None)
        if at is None or len(lines) < at + 3 or not lines[at + 2].strip():
            return message
        carets = lines[at + 2]
        start = len(carets) - len(carets.lstrip(" "))
        end = start + len(carets.strip())
        new_start, new_end = self._back(start) + offset, self._back(end) + offset
        lines[at] = f"pass-pipeline:1:{new_start + 1}"
        lines[at + 1] = written
        lines[at + 2] = " " * new_start + "^" * max(new_end - new_start, 1)
        lines[at + 3:] = [" " * new_start + line.strip() if line.strip() else line for line in lines[at + 3:]]
        return "\n".join(lines)

    def _back(self, column: int) -> int:
        return column - sum(1 for p in self.inserted if p < column)


def quote_number_values(text: str) -> Quoted:
    """`text` with every number-like option value that xDSL would not lex whole quoted (module
    docstring), and where each option's value stands in `text`. Text the scan does not understand is
    left as it is, for xDSL to report."""
    out: list[str] = []
    sites: Sites = {}
    inserted: list[int] = []
    length = 0
    ordinal, depth, key, expecting = 0, 0, "", "key"
    value_start: int | None = None
    for found in _TOKEN.finditer(text):
        piece = found.group()
        if depth == 0:
            if piece == ",":
                ordinal += 1
            elif piece == "{":
                depth, expecting = 1, "key"
            out.append(piece)
            length += len(piece)
            continue
        if piece == "}":
            depth = 0
        elif piece.isspace():
            expecting = "key"
        elif piece == "=" and expecting == "equals":
            expecting, value_start = "value", None
        elif piece == "," and expecting == "more":
            expecting = "value"
        elif expecting == "key" and piece not in ("{", "=", ","):
            key, expecting = piece.replace("-", "_"), "equals"
        elif expecting == "value":
            if value_start is None:  # the first of a comma list
                value_start = found.start()
            sites[(ordinal, key)] = Site(value_start, text[value_start:found.end()])
            expecting = "more"
            if _NUMBERISH.match(piece) and not _PLAIN.fullmatch(piece):
                inserted += [length, length + len(piece) + 1]
                piece = f'"{piece}"'
        out.append(piece)
        length += len(piece)
    return Quoted("".join(out), sites, tuple(inserted))


def _scalar_types(hint: Any) -> set[Any]:
    """The scalar types an option of type `hint` takes (through `| None` and `tuple[T, ...]`)."""
    origin = get_origin(hint)
    if origin in (Union, UnionType, tuple):
        return {t for arg in get_args(hint) if arg is not Ellipsis for t in _scalar_types(arg)}
    if origin is Literal or hint is NoneType:
        return set()
    return {hint}


def coerce_numbers(cls: type, spec: ArgSpec, ordinal: int, sites: Sites) -> ArgSpec:
    """`spec` (the pass `cls` at position `ordinal` of the pipeline) with its float options' values as
    floats; NumberError for a value that is not a number. Other options are left to xDSL's checks."""
    hints = get_type_hints(cls)
    parameters: dict[str, tuple[Any, ...]] = {}
    for key, values in spec.parameters.items():
        name = key.replace("-", "_")
        kinds = _scalar_types(hints[name]) if name in hints else set()
        if float in kinds:
            values = tuple(_as_float(v, int in kinds, str in kinds) for v in values)
            if any(v is None for v in values):
                written = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in spec.parameters[key])
                option = key.replace("_", "-")
                raise NumberError(f"pass '{spec.name}': {option}={written} is not a number "
                                  "(write a decimal, e.g. 0.001, 1e-08 or 2.5E+3)", sites.get((ordinal, name)))
        parameters[key] = values
    return ArgSpec(spec.name, parameters)


def _as_float(value: Any, keep_int: bool, keep_str: bool) -> Any:
    """A float option's value as the option takes it, None if it is not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) or (keep_int and isinstance(value, int)):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, str) and _FLOAT.fullmatch(value):
        return float(value)
    return value if keep_str else None


def pointer(spec: str, offset: int, site: Site) -> str:
    """`pass-pipeline:1:COL`, the pipeline, and carets under the value at `offset + site.column` of `spec`
    (the form of xDSL's own pipeline syntax errors)."""
    column = offset + site.column
    return f"pass-pipeline:1:{column + 1}\n{spec}\n{' ' * column}{'^' * max(len(site.text), 1)}"
