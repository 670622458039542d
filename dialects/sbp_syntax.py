"""Reading and writing `sbp` programs fast: a parser that parses each distinct `sbp` type or
attribute text once, and a printer that writes them from the text they keep.

A program writes a few distinct `!sbp.tensor<...>` types thousands of times (every operand and
result names its type), and xDSL parses each occurrence anew: token by token, a verified attribute
per shape dimension, the type verified again. `SbpParser` keeps what one parse found, keyed by the
exact text from the `!sbp.`/`#sbp.` name (or `array`, the integer-list properties) to the closing
`>`: the same text in the same parse is the same value (attributes are immutable), so a repeat
costs one match and one dictionary look-up. The cache belongs to the parser (one per parse,
dropped with it) and is bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Generic, TypeVar

from xdsl.ir import Attribute, TypeAttribute
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.mlir_lexer import MLIRTokenKind

from sbpc.dialects.sbp import SignatureAttr
from sbpc.dialects.tensor_type import GlobalTensorType

_V = TypeVar("_V")

_BODY = re.compile(r"<(?:->|[^<>]|<[^<>]*>)*>")
"""A `<...>` parameter body with at most one level of nested `<...>` (`layout = #sbp.layout<...>`);
`->` (in `#sbp.sig`) is no bracket. A text it does not delimit exactly is parsed as usual, uncached."""


class TextCache(Generic[_V]):
    """Values by the source text they were parsed from, at most `capacity` of them (the oldest
    entry is dropped first)."""

    def __init__(self, capacity: int = 4096):
        self.capacity = capacity
        self.entries: dict[str, _V] = {}

    def get(self, text: str) -> _V | None:
        return self.entries.get(text)

    def put(self, text: str, value: _V) -> None:
        if len(self.entries) >= self.capacity:
            del self.entries[next(iter(self.entries))]
        self.entries[text] = value


class SbpParser(Parser):
    """xDSL's parser, parsing each distinct `!sbp.*<...>` type, `#sbp.*<...>` attribute and
    `array<...>` property text once per parse (`TextCache`); everything else, and the first occurrence
    of each text, goes through xDSL as before, so the values and the errors are the same."""

    def __init__(self, ctx, input: str | bytes, name: str = "<unknown>", capacity: int = 4096):  # type: ignore[no-untyped-def]
        super().__init__(ctx, input, name)
        self.types: TextCache[TypeAttribute] = TextCache(capacity)
        self.attributes: TextCache[Attribute] = TextCache(capacity)

    def parse_optional_type(self) -> TypeAttribute | None:
        token = self._current_token
        if token.kind is MLIRTokenKind.EXCLAMATION_IDENT and token.text.startswith("!sbp."):
            return self._cached(self.types, super().parse_optional_type)
        return super().parse_optional_type()

    def parse_optional_attribute(self) -> Attribute | None:
        token = self._current_token
        kind = token.kind
        if (kind is MLIRTokenKind.HASH_IDENT and token.text.startswith("#sbp.")) or (
            kind is MLIRTokenKind.BARE_IDENT and token.text == "array"
        ):
            return self._cached(self.attributes, super().parse_optional_attribute)
        return super().parse_optional_attribute()

    def _cached(self, cache: TextCache[_V], parse: Callable[[], _V | None]) -> _V | None:
        """The value of the `name<...>` text at the current token: from `cache` if this parse has
        met the same text, else `parse()`'s, kept if it ended exactly at the body's `>`."""
        span = self._current_token.span
        content = self.lexer.input.content
        body = _BODY.match(content, span.end)
        if body is None:
            return parse()
        end = body.end()
        text = content[span.start : end]
        found = cache.get(text)
        if found is not None:
            self._resume_from(end)
            return found
        value = parse()
        after = self.pos
        if value is not None and after >= end and (after == end or content[end:after].isspace()):
            cache.put(text, value)
        return value


class SbpPrinter(Printer):
    """xDSL's printer, writing `!sbp.tensor` types and `#sbp.sig` attributes from the text they keep
    (`parameters_text`) in one piece: the generic `print_attribute` tests every attribute against five
    abstract classes and writes it in three pieces, for the several types and the signature of every
    op. The text is the same (`test/unit/test_verifier.py` compares whole modules)."""

    def print_attribute(self, attribute: Attribute) -> None:
        kind = type(attribute)
        if kind is GlobalTensorType:
            self.print_string("!sbp.tensor" + attribute.parameters_text)  # type: ignore[attr-defined]
        elif kind is SignatureAttr:
            self.print_string("#sbp.sig" + attribute.parameters_text)  # type: ignore[attr-defined]
        else:
            super().print_attribute(attribute)
