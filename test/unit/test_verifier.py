"""`ProgramVerifier`: the drivers' verification with each `sbp` op's verification memoised by value
(and `SbpPrinter`, the drivers' printer: the same text as xDSL's).

It must reject exactly what `module.verify()` + `verify_signatures` reject: an op equal in every
value to a verified one passes, an op that differs in any value the verification reads (a type, a
property, the placement its types name) is verified again, and the memo is bounded and cleared."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, SymbolRefAttr, i64
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects import sbp_ops
from sbpc.dialects.context import register_dialects
from sbpc.dialects.placement import PlacementOp, lookup_placement_named
from sbpc.dialects.sbp_syntax import SbpPrinter
from sbpc.dialects.verifier import ProgramVerifier, irdl_reads_classes_only
from sbpc.passes.infer_sbp.infer_pass import InferSbpPass

_CTX = Context()
register_dialects(_CTX)

T = "!sbp.tensor<4x8xf32, @p, [S(0)]>"


def parse(text: str) -> ModuleOp:
    return Parser(_CTX, text).parse_module()


def program(body: str, placement: str = "[0, 1]", ty: str = T) -> ModuleOp:
    return parse(
        f'sbp.placement @p "cpu" {placement}\nfunc.func @f(%x: {ty}) -> {ty} {{\n{body}\n  func.return %x : {ty}\n}}'
    )


def relus(n: int, ty: str = T) -> str:
    return "\n".join(f"  %r{i} = sbp.relu %x : {ty} -> {ty}" for i in range(n))


def reference_error(module: ModuleOp) -> str:
    """The message xDSL's own verification gives."""
    with pytest.raises(VerifyException) as caught:
        module.verify()
    return str(caught.value)


def test_equal_ops_are_verified_once() -> None:
    verifier = ProgramVerifier()
    verifier.verify(program(relus(5)))
    assert len(verifier.verified) == 1  # five equal relus; func.return is never memoised
    verifier.verify(program(relus(3)))  # a second module, equal ops: nothing new
    assert len(verifier.verified) == 1


def test_a_changed_property_is_verified_again() -> None:
    ok = f"  %t = sbp.transpose %x {{perm = array<i64: 0, 1>}} : {T} -> !sbp.tensor<4x8xf32, @p>"
    bad = f"  %u = sbp.transpose %x {{perm = array<i64: 1, 0>}} : {T} -> !sbp.tensor<4x8xf32, @p>"
    verifier = ProgramVerifier()
    verifier.verify(program(ok))
    module = program(ok + "\n" + bad)  # equal text but the permutation: the result shape is wrong
    with pytest.raises(VerifyException) as caught:
        verifier.verify(module)
    assert str(caught.value) == reference_error(module)
    assert "result shape [4, 8] should be [8, 4]" in str(caught.value)
    with pytest.raises(VerifyException, match="should be"):  # a failed op is not remembered as verified
        verifier.verify(module)


def test_an_op_mutated_after_verification_is_verified_again() -> None:
    module = program(f"  %t = sbp.transpose %x {{perm = array<i64: 0, 1>}} : {T} -> !sbp.tensor<4x8xf32, @p>")
    verifier = ProgramVerifier()
    verifier.verify(module)
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    transpose = next(op for op in f.body.block.ops if isinstance(op, sbp_ops.TransposeOp))
    transpose.properties["perm"] = DenseArrayBase.from_list(i64, [1, 0])
    with pytest.raises(VerifyException, match="should be"):
        verifier.verify(module)


def test_the_same_op_on_another_placement_is_verified_again() -> None:
    """Equal op text, but @p is now 2-D: the 1-D ND-SBP no longer fits (the key holds the placement's value)."""
    verifier = ProgramVerifier()
    verifier.verify(program(relus(2)))
    module = program(relus(2), placement="[[0, 1], [2, 3]]")
    with pytest.raises(VerifyException) as caught:
        verifier.verify(module)
    assert str(caught.value) == reference_error(module)
    assert "but placement @p has hierarchy [2, 2]" in str(caught.value)


def test_an_unknown_placement_is_rejected_after_a_known_one() -> None:
    verifier = ProgramVerifier()
    verifier.verify(program(relus(1)))
    q = "!sbp.tensor<4x8xf32, @q, [S(0)]>"
    module = parse(f"func.func @f(%x: {q}) -> {q} {{\n  %r = sbp.relu %x : {q} -> {q}\n  func.return %x : {q}\n}}")
    with pytest.raises(VerifyException, match="unknown placement @q"):
        verifier.verify(module)


def test_an_op_in_terminator_position_is_rejected_even_when_memoised() -> None:
    verifier = ProgramVerifier()
    verifier.verify(program(relus(1)))
    module = parse(f'sbp.placement @p "cpu" [0, 1]\nfunc.func @f(%x: {T}) {{\n  %r = sbp.relu %x : {T} -> {T}\n}}')
    with pytest.raises(VerifyException) as caught:
        verifier.verify(module)
    assert str(caught.value) == reference_error(module)
    assert "not a terminator" in str(caught.value)


def test_the_memo_is_bounded_and_cleared() -> None:
    shapes = [f"{n}x8" for n in (2, 4, 6, 8, 10)]
    body = "\n".join(
        f"  %r{i} = sbp.relu %a{i} : !sbp.tensor<{s}xf32, @p, [S(0)]> -> !sbp.tensor<{s}xf32, @p, [S(0)]>"
        for i, s in enumerate(shapes)
    )
    args = ", ".join(f"%a{i}: !sbp.tensor<{s}xf32, @p, [S(0)]>" for i, s in enumerate(shapes))
    module = parse(f'sbp.placement @p "cpu" [0, 1]\nfunc.func @f({args}) {{\n{body}\n  func.return\n}}')
    verifier = ProgramVerifier(max_entries=2)
    verifier.verify(module)
    assert 0 < len(verifier.verified) <= 2 and len(verifier.irdl_verified) <= 2
    verifier.clear()
    assert verifier.size() == 0
    verifier.verify(module)  # verifies again from scratch
    assert len(verifier.verified) > 0


def test_the_irdl_memo_applies_to_class_tests_only() -> None:
    assert irdl_reads_classes_only(sbp_ops.AddOp)
    assert irdl_reads_classes_only(sbp_ops.ReduceSumOp)
    assert not irdl_reads_classes_only(func.FuncOp)  # regions


def test_only_sbp_op_defines_verify_() -> None:
    """`ProgramVerifier` runs `SbpOp.verify_placed` in place of an op's `verify_`: an op family that
    defined a `verify_` of its own would be skipped there (they customise `verify_semantics`)."""
    dialects = Path(sbp_ops.__file__).resolve().parent
    defining = []
    for name in ("sbp_op_base.py", "sbp_ops.py", "collective_ops.py"):
        tree = ast.parse((dialects / name).read_text(encoding="utf-8"))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            if any(isinstance(f, ast.FunctionDef) and f.name == "verify_" for f in cls.body):
                defining.append(cls.name)
    assert defining == ["SbpOp"]


@pytest.mark.parametrize("example", ["seed.mlir", "mlp_tp.mlir", "transformer_block.mlir", "fmod.mlir"])
@pytest.mark.parametrize("generic", [False, True])
def test_sbp_printer_prints_what_xdsl_prints(example: str, generic: bool) -> None:
    """`SbpPrinter` (sbp-opt's output) writes sbp types and signatures in one piece: the same text."""
    root = Path(__file__).resolve().parents[2]
    module = parse((root / "examples" / example).read_text(encoding="utf-8"))
    for _ in range(2):  # as parsed, then typed by infer-sbp
        texts = []
        for cls in (Printer, SbpPrinter):
            out = io.StringIO()
            cls(stream=out, print_generic_format=generic).print_op(module)
            texts.append(out.getvalue())
        assert texts[0] == texts[1]
        assert "!sbp.tensor<" in texts[0]
        InferSbpPass().apply(_CTX, module)
    assert "#sbp.sig<" in texts[1]


def test_lookup_placement_named_is_the_symbol_table_lookup() -> None:
    """The placement lookup scans the nearest symbol table itself (no `SymbolRefAttr` built): for every
    name it answers what `SymbolTable.lookup_symbol` finds, when that is a placement, else None."""
    module = program(relus(1))
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    relu = next(iter(f.body.block.ops))
    for name in ("p", "f", "nope"):
        found = SymbolTable.lookup_symbol(relu, name)
        expected = found if isinstance(found, PlacementOp) else None
        assert lookup_placement_named(relu, name) is expected
        assert lookup_placement_named(relu, SymbolRefAttr(name)) is expected
    assert lookup_placement_named(relu, "p") is not None
    assert lookup_placement_named(relu, "f") is None  # a func.func, not a placement
    detached = sbp_ops.ReluOp.create(operands=[], result_types=[])
    assert lookup_placement_named(detached, "p") is None  # no symbol table above it
