"""`SbpParser`: each distinct `!sbp.*` type, `#sbp.*` attribute and `array<...>` text parsed once per
parse, and the same module (values, printed text, errors) as xDSL's own parser gives."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError

from sbpc.dialects.context import register_dialects
from sbpc.dialects.sbp_syntax import SbpParser, SbpPrinter, TextCache
from sbpc.dialects.tensor_type import GlobalTensorType

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from gen_dag import generate  # noqa: E402

_CTX = Context()
register_dialects(_CTX)

T = "!sbp.tensor<4x8xf32, @p, [S(0)]>"


def program(body: str, ty: str = T) -> str:
    return f'sbp.placement @p "cpu" [0, 1]\nfunc.func @f(%x: {ty}) -> {ty} {{\n{body}\n  func.return %x : {ty}\n}}'


def printed(module: ModuleOp, generic: bool = False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def types_of(module: ModuleOp) -> list[Attribute]:
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return [v.type for op in f.body.block.ops for v in (*op.operands, *op.results)]


def test_repeated_texts_are_one_value() -> None:
    text = program("\n".join(f"  %r{i} = sbp.relu %x : {T} -> {T}" for i in range(5)))
    parser = SbpParser(_CTX, text)
    found = types_of(parser.parse_module())
    assert len(found) == 11 and all(t is found[0] for t in found)  # 5 relus and the return
    assert list(parser.types.entries) == [T]


SOURCES = [
    *(p.name for p in sorted((ROOT / "examples").glob("*.mlir"))),
    "gen_dag",
    "gen_dag --uniform",
]


def source(name: str) -> str:
    if name.startswith("gen_dag"):
        return generate(300, uniform=name.endswith("--uniform"))
    return (ROOT / "examples" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", SOURCES)
def test_the_module_is_xdsls(name: str) -> None:
    """Parsed through the cache or by xDSL alone: the same text printed, generic or custom, and an
    equal value at every operand and result."""
    text = source(name)
    cached, plain = SbpParser(_CTX, text).parse_module(), Parser(_CTX, text).parse_module()
    for generic in (False, True):
        assert printed(cached, generic) == printed(plain, generic)
    assert types_of(cached) == types_of(plain)


def test_signatures_layouts_and_arrays_are_cached() -> None:
    ty = "!sbp.tensor<4x8xf32, @p, [S(0)], layout = #sbp.layout<(4,8):(1,4)>>"
    hinted = f"sbp.reduce_sum %x {{axes = array<i64: 1>, keepdims, sbp.hint = #sbp.sig<[S(0)] -> ?>}} : {ty} -> "
    body = "\n".join(f"  %r{i} = {hinted}!sbp.tensor<4x1xf32, @p>" for i in range(3))
    parser = SbpParser(_CTX, program(body, ty))
    module = parser.parse_module()
    assert ty in parser.types.entries
    # The layout was met inside the type's first occurrence, parsed through the parser too.
    assert set(parser.attributes.entries) == {"array<i64: 1>", "#sbp.sig<[S(0)] -> ?>", "#sbp.layout<(4,8):(1,4)>"}
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    hints = [op.attributes["sbp.hint"] for op in f.body.block.ops if "sbp.hint" in op.attributes]
    assert len(hints) == 3 and all(h is hints[0] for h in hints)
    assert printed(module) == printed(Parser(_CTX, program(body, ty)).parse_module())


def test_a_text_the_match_does_not_delimit_is_not_cached() -> None:
    """A comment holding `>` inside a type: the text up to that `>` is no type of its own, so it is
    parsed as usual and not kept; a later type that reads like that prefix is parsed for itself."""
    tricky = "!sbp.tensor<4x8xf32, @p // a note >\n, [B]>"
    plain = "!sbp.tensor<4x8xf32, @p>"
    body = f"  %a = sbp.relu %x : {T} -> {tricky}\n  %b = sbp.relu %x : {T} -> {plain}"
    parser = SbpParser(_CTX, program(body))
    found = types_of(parser.parse_module())
    assert isinstance(found[1], GlobalTensorType) and found[1].nd_sbp is not None
    assert found[1].sbp.short_str() == "[B]"
    assert isinstance(found[3], GlobalTensorType) and found[3].nd_sbp is None
    assert tricky not in parser.types.entries and "!sbp.tensor<4x8xf32, @p // a note >" not in parser.types.entries


@pytest.mark.parametrize(
    "bad",
    [
        "!sbp.tensor<4x8xf32, @p, [S(2)]>",  # split axis out of range
        "!sbp.tensor<4x8xf32, @p, [S(0)] >",  # the same text as T, but one blank: another key
        "!sbp.tensor<4x8xf64, @p>",  # element type
    ],
)
def test_errors_are_xdsls(bad: str) -> None:
    """After a cached type, a different (bad, or differently spaced) text is parsed for itself: the
    same error, at the same place, as xDSL's parser reports (or the same module)."""
    text = program(f"  %a = sbp.relu %x : {T} -> {T}\n  %b = sbp.relu %x : {T} -> {bad}")
    outcomes = []
    for cls in (SbpParser, Parser):
        try:
            outcomes.append(printed(cls(_CTX, text).parse_module()))
        except ParseError as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]


def test_the_cache_is_bounded() -> None:
    types = [f"!sbp.tensor<{n}x8xf32, @p, [B]>" for n in (2, 4, 6, 8)]
    body = "\n".join(f"  %r{i} = sbp.relu %x : {T} -> {types[i % 4]}" for i in range(12))
    parser = SbpParser(_CTX, program(body), capacity=2)
    module = parser.parse_module()
    assert len(parser.types.entries) <= 2
    assert printed(module) == printed(Parser(_CTX, program(body)).parse_module())


def test_text_cache_drops_the_oldest() -> None:
    cache: TextCache[int] = TextCache(2)
    for i, key in enumerate("abc"):
        cache.put(key, i)
    assert cache.get("a") is None and cache.get("b") == 1 and cache.get("c") == 2


def test_sbp_printer_prints_a_cached_parse_as_xdsl_does() -> None:
    text = source("gen_dag")
    module = SbpParser(_CTX, text).parse_module()
    out = io.StringIO()
    SbpPrinter(stream=out).print_op(module)
    assert out.getvalue() == printed(Parser(_CTX, text).parse_module())
