"""`sbp-translate --import-shard` on what MLIR 22's own shard tests write (issue 22 item 3): free
arguments (`--free-args`), integer element types, `--grid` for `?` grids, matmuls and reductions into
data, annotated init tensors and splat constants as inits, tosa.abs; each checked by execution
(`sbp-run --check` against the single-device reference) where it imports, a located error where not.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from sbpc.tools.sbp_opt import main as opt_main
from sbpc.tools.sbp_run import main as run_main
from sbpc.tools.sbp_translate import main


def _run(fn, argv: list[str]) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = fn(argv)
    return rc, out.getvalue(), err.getvalue()


def _import(text: str, tmp_path: Path, *flags: str) -> str:
    (tmp_path / "in.mlir").write_text(text)
    rc, out, err = _run(main, ["--import-shard", str(tmp_path / "in.mlir"), *flags])
    assert rc == 0, err
    (tmp_path / "sbp.mlir").write_text(out)
    return out


def _checked(tmp_path: Path, *flags: str) -> str:
    """`sbp-run --check` of the imported program (tmp_path/sbp.mlir): it must pass."""
    rc, out, err = _run(run_main, [str(tmp_path / "sbp.mlir"), "--check", *flags])
    assert rc == 0, out + err
    return out


def _refused(text: str, tmp_path: Path, line: int, message: str, *flags: str) -> None:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    rc, out, err = _run(main, ["--import-shard", str(path), *flags])
    assert rc == 1 and out == "", err
    assert re.match(rf"{re.escape(str(path))}:{line}:\d+: error: .*{re.escape(message)}", err), err
    assert "Traceback" not in err and "internal error" not in err


MATMUL_INTO_ARG = """shard.grid @g(shape = 2)
func.func @main(%a: tensor<4x6xi8>, %b: tensor<6x8xi8>, %c: tensor<4x8xi8>) -> tensor<4x8xi8> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %as = shard.shard %a to %s : tensor<4x6xi8>
  %m = linalg.matmul ins(%as, %b : tensor<4x6xi8>, tensor<6x8xi8>) outs(%c : tensor<4x8xi8>) -> tensor<4x8xi8>
  return %m : tensor<4x8xi8>
}
"""


def test_matmul_into_an_argument_adds_it(tmp_path: Path) -> None:
    """`linalg.matmul outs(%c)` is %c + a·b (i8, wrapping as MLIR's): a matmul, then an add of %c."""
    out = _import(MATMUL_INTO_ARG, tmp_path)
    assert re.findall(r"= (sbp\.\w+)", out) == ["sbp.matmul", "sbp.add"]
    assert re.search(r"%m = sbp\.add %\d+, %c ", out), out
    _checked(tmp_path)


def test_unannotated_arguments_replicated_or_free(tmp_path: Path) -> None:
    """By default an unannotated argument is replicated (MLIR's partition reads it so); with
    `--free-args` it has no SBP and `rule=global` decides it (the default rule then says so, located)."""
    out = _import(MATMUL_INTO_ARG, tmp_path)
    assert "%b: !sbp.tensor<6x8xi8, @g, [B]>, %c: !sbp.tensor<4x8xi8, @g, [B]>" in out
    out = _import(MATMUL_INTO_ARG, tmp_path, "--free-args")
    assert "%a: !sbp.tensor<4x6xi8, @g, [S(0)]>" in out
    assert "%b: !sbp.tensor<6x8xi8, @g>, %c: !sbp.tensor<4x8xi8, @g>" in out
    rc, planned, err = _run(opt_main, [str(tmp_path / "sbp.mlir"), "-p", "infer-sbp{rule=global}"])
    assert rc == 0, err
    decided = re.search(r"%b: !sbp\.tensor<6x8xi8, @g, \[(\w+(?:\(\d\))?)\]>", planned)
    assert decided is not None, planned
    rc, _, err = _run(opt_main, [str(tmp_path / "sbp.mlir"), "-p", "infer-sbp"])
    assert rc == 1 and "rule=global" in err and "Traceback" not in err, err
    _checked(tmp_path, "--rule", "global")


REDUCE = """shard.grid @g(shape = 2)
func.func @main(%x: tensor<6x4xi32>, %acc: tensor<6xi32>) -> (tensor<6xi32>, tensor<i32>, tensor<6xi32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<6x4xi32>
  %e = tensor.empty() : tensor<6xi32>
  %es = shard.shard %e to %s : tensor<6xi32>
  %r = linalg.reduce ins(%xs : tensor<6x4xi32>) outs(%es : tensor<6xi32>) dimensions = [1]
    (%in: i32, %init: i32) {
      %t = arith.addi %in, %init : i32
      linalg.yield %t : i32
    }
  %z = arith.constant dense<-2147483648> : tensor<i32>
  %all = linalg.reduce ins(%x : tensor<6x4xi32>) outs(%z : tensor<i32>) dimensions = [0, 1]
    (%in: i32, %init: i32) {
      %t = arith.maxsi %in, %init : i32
      linalg.yield %t : i32
    }
  %into = linalg.reduce ins(%x : tensor<6x4xi32>) outs(%acc : tensor<6xi32>) dimensions = [1]
    (%in: i32, %init: i32) {
      %t = arith.addi %in, %init : i32
      linalg.yield %t : i32
    }
  return %r, %all, %into : tensor<6xi32>, tensor<i32>, tensor<6xi32>
}
"""


def test_linalg_reduce_inits(tmp_path: Path) -> None:
    """linalg.reduce into an annotated tensor.empty (unspecified contents: the identity is one of
    them; its annotation is the result's sharding), into a splat constant of the identity, and into
    data (a sum, then an add of it)."""
    out = _import(REDUCE, tmp_path)
    assert re.findall(r"= (sbp\.\w+)", out) == ["sbp.reduce_sum", "sbp.to_global", "sbp.reduce_max",
                                                "sbp.reduce_sum", "sbp.add"]
    assert re.search(r"%\w+ = sbp\.reduce_sum %x \{.*sbp\.hint = #sbp\.sig<\[S\(0\)\] -> \?>", out), out
    assert "-> !sbp.tensor<6xi32, @g, [S(0)]>" in out  # the init's annotation: a requirement on the result
    _checked(tmp_path)


ABS = """shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x2xi8>) -> tensor<4x2xi8> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x2xi8>
  %a = "tosa.abs"(%xs) : (tensor<4x2xi8>) -> tensor<4x2xi8>
  return %a : tensor<4x2xi8>
}
"""


SIGMOID_TANH = """shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  %a = "tosa.sigmoid"(%xs) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = "tosa.tanh"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
"""


def test_tosa_abs_is_maximum_of_neg(tmp_path: Path) -> None:
    """tosa.abs = maximum(neg(x), x), exact (i8's -128 wraps to itself in both)."""
    out = _import(ABS, tmp_path)
    assert re.findall(r"= (sbp\.\w+)", out) == ["sbp.neg", "sbp.maximum"]
    _checked(tmp_path)


def test_tosa_sigmoid_and_tanh(tmp_path: Path) -> None:
    out = _import(SIGMOID_TANH, tmp_path)
    assert re.findall(r"= (sbp\.\w+)", out) == ["sbp.sigmoid", "sbp.tanh"]
    assert "sbp.sigmoid %x {sbp.hint = #sbp.sig<[S(1)] -> ?>}" in out
    _checked(tmp_path)


INIT_ANNOTATED = """shard.grid @g(shape = 2x2)
func.func @main(%x: tensor<8x6xf32>, %w: tensor<6x4xf32>) -> tensor<8x4xf32> {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s0 : tensor<8x6xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %s01 = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %es = shard.shard %e to %s01 : tensor<8x4xf32>
  %z = arith.constant 0.0 : f32
  %eu = shard.shard %es to %s01 annotate_for_users : tensor<8x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%eu : tensor<8x4xf32>) -> tensor<8x4xf32>
  %m = linalg.matmul ins(%xs, %w : tensor<8x6xf32>, tensor<6x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}
"""


def test_annotated_init_tensor_is_the_results_sharding(tmp_path: Path) -> None:
    """An annotated `tensor.empty` filled and used as outs: MLIR gives the result its init's
    sharding, so the importer requires that SBP after the op; a splat constant as outs likewise."""
    out = _import(INIT_ANNOTATED, tmp_path)
    assert re.search(r"%m_1 = sbp\.to_global %m : !sbp\.tensor<8x4xf32, @g> -> !sbp\.tensor<8x4xf32, @g, "
                     r"\[S\(0\), S\(1\)\]>", out), out
    _checked(tmp_path)
    dense = INIT_ANNOTATED.replace("%z = arith.constant 0.0 : f32", "%z = arith.constant dense<0.0> : tensor<8x4xf32>")
    dense = dense.replace("%eu = shard.shard %es to %s01 annotate_for_users : tensor<8x4xf32>\n", "")
    dense = dense.replace("%f = linalg.fill ins(%z : f32) outs(%eu : tensor<8x4xf32>) -> tensor<8x4xf32>\n", "")
    out = _import(dense.replace("outs(%f :", "outs(%z :"), tmp_path)
    assert re.findall(r"= (sbp\.\w+)", out) == ["sbp.matmul"]


GRID = """shard.grid @g(shape = ?x2)
func.func @main(%x: tensor<8x6xi1>) -> tensor<8x6xi1> {
  %s = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x6xi1>
  %s1 = shard.sharding @g split_axes = [[1]] : !shard.sharding
  %r = shard.shard %xs to %s1 annotate_for_users : tensor<8x6xi1>
  return %r : tensor<8x6xi1>
}
"""


@pytest.mark.parametrize("elt", ["i1", "ui8"])
def test_grid_option_sizes_a_dynamic_grid(elt: str, tmp_path: Path) -> None:
    """`--grid g=4x2` sizes the `?` axis (the static one must match); without it, the use of the
    grid is a located error naming the option. The program (i1 / ui8, resharded) runs."""
    out = _import(GRID.replace("xi1>", f"x{elt}>"), tmp_path, "--grid", "g=4x2")
    assert 'sbp.placement @g "npu" [[0, 1], [2, 3], [4, 5], [6, 7]]' in out
    assert f"-> !sbp.tensor<8x6x{elt}, @g, [B, S(0)]>" in out  # dim 0 split on grid axis 1
    _checked(tmp_path)
    _refused(GRID, tmp_path, 3, "grid @g has shape ?x2, sized only at run time; an sbp placement lists its devices: "
             "give the size with `--grid g=Nx2`")
    _refused(GRID, tmp_path, 1, "--grid g=4x3 does not fit its shape ?x2", "--grid", "g=4x3")
    _refused(GRID, tmp_path, 1, "--grid h=...: the module has no shard.grid @h (its grids: @g)", "--grid", "h=2")


@pytest.mark.parametrize(("flag", "message"), [("g", "expected NAME=SHAPE"), ("g=0x2", "at least one device"),
                                               ("g=2x", "expected NAME=SHAPE")])
def test_malformed_grid_option(flag: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "in.mlir").write_text(GRID)
    rc, out, err = _run(main, ["--import-shard", str(tmp_path / "in.mlir"), "--grid", flag])
    assert rc == 1 and out == "" and message in err and "Traceback" not in err, err


HEAD = "shard.grid @g(shape = 2)\nfunc.func @main(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {\n"
REFUSALS = [
    ("index", "shard.grid @g(shape = 2)\nfunc.func @main(%x: tensor<4xindex>) -> tensor<4xindex> {\n"
     "  return %x : tensor<4xindex>\n}\n", 2, "has element type index, which sbp tensors cannot hold"),
    ("constant as data", HEAD + "  %c = arith.constant dense<1.0> : tensor<4x6xf32>\n"
     "  %e = tensor.empty() : tensor<4x6xf32>\n"
     "  %r = linalg.add ins(%x, %c : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>\n"
     "  return %r : tensor<4x6xf32>\n}\n", 5, "an operand is the tensor arith.constant builds, used as data; sbp has "
     "no constant op"),
    ("constant init", HEAD + "  %c = arith.constant dense<1.0> : tensor<4xf32>\n"
     "  %r = linalg.reduce ins(%x : tensor<4x6xf32>) outs(%c : tensor<4xf32>) dimensions = [1]\n"
     "    (%in: f32, %init: f32) {\n      %t = arith.addf %in, %init : f32\n      linalg.yield %t : f32\n    }\n"
     "  return %x : tensor<4x6xf32>\n}\n", 4, "the init of a sum reduction must be a tensor filled with 0.0 or data"),
    ("unsigned abs", ABS.replace("i8>", "ui8>"), 5, "tosa.abs of ui8: |x| of an unsigned type is x"),
    ("no operand", HEAD + '  %a = "tosa.sigmoid"() : () -> tensor<4x6xf32>\n  return %x : tensor<4x6xf32>\n}\n', 3,
     "tosa.sigmoid with no data operand has no sbp form"),
    ("abs arity", HEAD + '  %a = "tosa.abs"() : () -> tensor<4x6xf32>\n  return %x : tensor<4x6xf32>\n}\n', 3,
     "tosa.abs with 0 operands has no sbp form"),
    ("segments", HEAD + '  %a = "linalg.matmul"(%x) ({}) : (tensor<4x6xf32>) -> tensor<4x4xf32>\n'
     "  return %x : tensor<4x6xf32>\n}\n", 3, "its operands cannot be split into ins and outs"),
    ("dynamic dim", "shard.grid @g(shape = 2)\nfunc.func @main(%x: tensor<?x6xf32>) -> tensor<?x6xf32> {\n"
     "  return %x : tensor<?x6xf32>\n}\n", 2, "has a dynamic dim; sbp global tensors have static shapes"),
    ("several grids", "shard.grid @g(shape = 2)\nshard.grid @h(shape = 2)\n"
     "func.func @main(%x: tensor<4x6xf32>, %y: tensor<4x6xf32>, %z: tensor<4x6xf32>) -> tensor<4x6xf32> {\n"
     "  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding\n  %xs = shard.shard %x to %s : tensor<4x6xf32>\n"
     "  %t = shard.sharding @h split_axes = [[0]] : !shard.sharding\n  %ys = shard.shard %y to %t : tensor<4x6xf32>\n"
     "  return %x : tensor<4x6xf32>\n}\n", 3, "argument 2 has no shard annotation and the function uses 2 grids"),
]


@pytest.mark.parametrize(("what", "text", "line", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_are_located(what: str, text: str, line: int, message: str, tmp_path: Path) -> None:
    _refused(text, tmp_path, line, message)


FOR_USERS_ARG = """shard.grid @g(shape = 2x2)
func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.add ins(%xs, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
"""


def test_argument_read_for_users_has_that_sbp(tmp_path: Path) -> None:
    """An argument whose only annotation is `annotate_for_users` takes that SBP: MLIR's partition
    types a block argument by the shard op using it (`element_wise_on_use` partitions %arg0 to
    4x4 on a 2x4 grid); an argument with none stays replicated."""
    out = _import(FOR_USERS_ARG, tmp_path)
    assert "%x: !sbp.tensor<8x16xf32, @g, [S(0), S(1)]>, %y: !sbp.tensor<8x16xf32, @g, [B, B]>" in out
    _checked(tmp_path)
