"""Robustness of `sbp-opt` on malformed input (SPEC rule: located `error:`, exit 1, never a traceback).

Sources of bad programs:

1. Token mutations of the valid seed programs in `fuzz_seeds/` (deletions, duplications, swaps,
   replacements and insertions of tokens from a pool of dialect-flavoured pieces), driven by a fixed
   `random.Random` so every run feeds the same mutants; some run with `--print-op-generic`,
   `--split-input-file`, `--verify-diagnostics` or a pass pipeline.
2. Hypothesis-generated programs around one op, mostly valid with one wild part (SBP lists,
   `!sbp.tensor` types, `#sbp.layout`s, `#sbp.sig`s, placements, op properties, op structure), and
   the per-rank form that `--spmdize` produces (collectives with placement/src_sbp/dst_sbp/global_shape).
3. Pathological inputs that once hung or crashed the driver (deep nesting, unclosed strings,
   out-of-range literals).

Every program goes through the driver in-process (`tools.sbp_opt.main`, output captured): the exit code
must be 0, or 1 with a located `FILE:LINE:COL: error:` line; the output never holds `Traceback` or the
driver's `internal error` fallback. When a program is accepted, its output must parse again. A failure
prints the program, so `sbp-opt FILE --debug` reproduces it. A handful of mutants also run through the
real `sbp-opt` console script.
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sbpc.tools.sbp_opt import main

SEED_DIR = Path(__file__).parent / "fuzz_seeds"
SEEDS = sorted(SEED_DIR.glob("*.mlir"))
MUTANTS_PER_SEED = 45
HYPOTHESIS_EXAMPLES = 250
LOCAL_FORM_EXAMPLES = 200

# ---------------------------------------------------------------------------
# Running the driver
# ---------------------------------------------------------------------------


pytestmark = pytest.mark.usefixtures("cached_plugin_discovery")


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_in_process(path: Path, *flags: str) -> Run:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(path), *flags])
        except SystemExit as exit_:  # argparse; never expected with our flags
            code = exit_.code if isinstance(exit_.code, int) else 1
    return Run(code, out.getvalue(), err.getvalue())


def problem_with(run: Run, path: Path) -> str | None:
    """Why `run` breaks the robustness contract, or None."""
    if "Traceback" in run.output:
        return "a Python traceback was printed"
    if "internal error" in run.output:
        return "the driver's `internal error` fallback was printed (an exception escaped)"
    if run.code == 0:
        return None
    if run.code != 1:
        return f"exit code {run.code} (expected 0 or 1)"
    if "error:" not in run.output:
        return "exit code 1 without an `error:` message"
    if not re.search(rf"^{re.escape(str(path))}:\d+:\d+: error: \S", run.output, re.MULTILINE):
        return "the error is not located as FILE:LINE:COL: error: MESSAGE"
    return None


class Checker:
    """Feeds programs to the in-process driver through one scratch file and collects failures."""

    def __init__(self, directory: Path):
        self.path = directory / "mutant.mlir"
        self.again = directory / "reparsed.mlir"
        self.failures: list[str] = []
        self.count = 0
        self.accepted = 0

    def check(self, text: str, flags: Sequence[str] = (), label: str = "") -> Run:
        self.count += 1
        self.path.write_text(text, encoding="utf-8")
        run = run_in_process(self.path, *flags)
        problem = problem_with(run, self.path)
        if problem is None and run.code == 0:
            self.accepted += 1
            problem = self._check_reparse(run, flags)
        if problem is not None:
            self.failures.append(
                f"--- {label} (sbp-opt FILE {' '.join(flags)}): {problem}\n"
                f"--- program:\n{text}\n--- output:\n{run.output}"
            )
        return run

    def _check_reparse(self, run: Run, flags: Sequence[str]) -> str | None:
        """What the driver prints must parse again (the printer/parser round trip)."""
        if "--verify-diagnostics" in flags:
            return None
        self.again.write_text(run.stdout, encoding="utf-8")
        split = ["--split-input-file"] if "--split-input-file" in flags else []
        again = run_in_process(self.again, *split)
        if again.code != 0 or problem_with(again, self.again) is not None:
            return f"the accepted program's output does not parse again:\n{again.output}"
        return None

    def assert_clean(self) -> None:
        if self.failures:
            shown = "\n\n".join(self.failures[:5])
            pytest.fail(f"{len(self.failures)} of {self.count} programs broke the contract:\n\n{shown}")


# ---------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------


def seed_text(path: Path) -> str:
    """The seed without its comment lines (mutating comments tests nothing)."""
    return "".join(line for line in path.read_text().splitlines(keepends=True) if not line.lstrip().startswith("//"))


def test_seeds_are_valid(tmp_path: Path) -> None:
    assert len(SEEDS) >= 10
    checker = Checker(tmp_path)
    for seed in SEEDS:
        for flags in ((), ("--print-op-generic",)):
            run = checker.check(seed_text(seed), flags, seed.name)
            assert run.code == 0, f"seed {seed.name} does not parse:\n{run.output}"
    checker.assert_clean()


# ---------------------------------------------------------------------------
# Token mutations
# ---------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s+                                  # whitespace (kept, never mutated)
    | !sbp\.tensor< | \#sbp\.\w+<?            # dialect attribute/type openers
    | "[^"\n]*"                               # string literals
    | [%@^]\w+                                # SSA values, symbols, block labels
    | \d+(?:\.\d+)?(?:[eE][+-]?\d+)?           # numbers
    | (?<=\d)x                                # the `x` of a shape 4x8xf32
    | [A-Za-z_][\w.$]*                        # identifiers, keywords, op names
    | -> | :: | \S                            # punctuation
    """,
    re.VERBOSE,
)

POOL = (
    "S(", "S(0)", "S(1)", "S(7)", "S(-1)", "B", "P", "P(max)", "P(min)", "P(avg)", "P(", "[", "]", "[]",
    "[S(0)]", "[B, B]", "?", "->", "@q", "@p", "@nowhere", "@p::@q", "-1", "0", "1", "2", "99999999999999999999",
    "-99999999999999999999", "1e400", "x", "0x", "f64", "i1", "index", "bf16", "#sbp.layout<",
    "#sbp.layout<(4,8):(8,1)>", "#sbp.layout<():()>", "#sbp.sig<", "#sbp.sig<? -> ?>", "#sbp.S<", "#sbp.P<avg>",
    "#sbp.nd<[]>", "layout", "=",
    "offset", '"', '"cpu"', "{", "}", "(", ")", "<", ">", ",", ":", "%0", "%a", "%99", "^bb0", "sbp.tensor",
    "!sbp.tensor<", "!sbp.tensor<4xf32, @p>", "!sbp.tensor<f32, @p, [S(0)]>", "tensor<2xf32>", "array<i64: 0>",
    "array<i64>", "array<i32: 1>", "mesh_axes", "axes", "perm", "keepdims", "transpose_a", "<{", "}>",
    "sbp.placement", "sbp.add", "sbp.all_gather", "\"sbp.matmul\"", "func.return", "func.func", "builtin.module",
    "unit", "2.5 : f32", ": i64", "// -----", "\n", "1.0e300", "f80", "i99999999999", "0x7FC00000", "dense<",
)  # fmt: skip


def tokenize(text: str) -> list[str]:
    tokens = _TOKEN.findall(text)
    assert "".join(tokens) == text, "the tokenizer must cover the whole text"
    return tokens


def mutate(tokens: list[str], rng: random.Random) -> str:
    out = list(tokens)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        words = [i for i, t in enumerate(out) if not t.isspace()]
        if not words:
            break
        i, j = rng.choice(words), rng.choice(words)
        kind = rng.choice(("delete", "duplicate", "swap", "swap_next", "replace", "insert", "insert"))
        if kind == "delete":
            del out[i]
        elif kind == "duplicate":
            out.insert(i, out[i])
        elif kind == "swap":
            out[i], out[j] = out[j], out[i]
        elif kind == "swap_next":
            k = words[min(words.index(i) + 1, len(words) - 1)]
            out[i], out[k] = out[k], out[i]
        elif kind == "replace":
            out[i] = rng.choice(POOL) if rng.random() < 0.8 else out[j]
        else:
            out.insert(i, rng.choice(POOL) + rng.choice(("", " ")))
    return "".join(out)


FLAG_CHOICES = (
    (), (), (), ("--print-op-generic",), ("--print-op-generic",), ("--split-input-file",), ("--verify-diagnostics",),
    ("--infer-sbp",), ("--infer-sbp", "--materialize-boxing", "--lower-boxing", "--spmdize"),
)  # fmt: skip


def flags_for(rng: random.Random) -> tuple[str, ...]:
    return rng.choice(FLAG_CHOICES)


@pytest.mark.parametrize("seed", SEEDS, ids=[s.stem for s in SEEDS])
def test_token_mutants(seed: Path, tmp_path: Path) -> None:
    rng = random.Random(f"sbp-robustness:{seed.name}")
    tokens = tokenize(seed_text(seed))
    checker = Checker(tmp_path)
    for n in range(MUTANTS_PER_SEED):
        checker.check(mutate(tokens, rng), flags_for(rng), f"{seed.name} mutant {n}")
    assert checker.count == MUTANTS_PER_SEED
    checker.assert_clean()


# ---------------------------------------------------------------------------
# Hypothesis: generated attribute texts in a small program
# ---------------------------------------------------------------------------

PRELUDE = 'sbp.placement @p "cpu" [0, 1]\nsbp.placement @q "npu" [[0, 1], [2, 3]]\n'

ints = st.one_of(st.integers(-2, 9), st.sampled_from((16, 64, 2**31, 2**63 - 1, 2**63, 2**64, 10**20, -(2**63) - 1)))
small = st.integers(0, 4)

BAD_ENTRIES = (
    "P(avg)", "P()", "S()", "S(x)", "S", "S(1", "Q", "?", "b", "#sbp.B", "#sbp.S<1>", "#sbp.P<min>",
    "#sbp.P<avg>", "#sbp.S<-1>", "#sbp.nd<[B]>", "#sbp.layout<(2):(1)>", "1", "[B]", "", "S(0.5)", "#sbp.B<1>",
)  # fmt: skip
sbp_entry = st.one_of(
    st.builds("S({})".format, ints),
    st.sampled_from(("B", "P", "P(sum)", "P(max)", "P(min)")),
    st.sampled_from(BAD_ENTRIES),
)
sbp_list = st.one_of(
    st.lists(sbp_entry, max_size=4).map(lambda e: "[" + ", ".join(e) + "]"),
    st.lists(sbp_entry, min_size=1, max_size=3).map(", ".join),  # missing brackets
    st.lists(sbp_entry, max_size=3).map(lambda e: "[" + ", ".join(e)),  # unclosed
)

BAD_LAYOUTS = (
    "#sbp.layout<>", "#sbp.layout<(4,8)>", "#sbp.layout<(4,8):>", "#sbp.layout<(4,8):(8,1), offset>",
    "#sbp.layout<(4,8):(8,1), offset = >", "#sbp.layout<(4,8):(8,1) offset = 2>", "#sbp.layout<(4,8):(8,-1)>",
    "#sbp.layout<((2,2),8):((1,2),4)>", "#sbp.layout<(4,8):(8,1), offset = -3>", "#sbp.layout<4:1>",
    "#sbp.layout<(4,8):(8,1), stride = 1>", "#sbp.layout<(,):(,)>", "#sbp.layout<(4 8):(8 1)>",
)  # fmt: skip
int_tuple = st.recursive(
    ints.map(str),
    lambda inner: st.lists(inner, max_size=3).map(lambda xs: "(" + ",".join(xs) + ")"),
    max_leaves=8,
)
layout = st.one_of(
    st.tuples(int_tuple, int_tuple).map(lambda t: f"#sbp.layout<{t[0]}:{t[1]}>"),
    st.tuples(int_tuple, int_tuple, ints).map(lambda t: f"#sbp.layout<{t[0]}:{t[1]}, offset = {t[2]}>"),
    st.tuples(small, small, small, small).map(lambda t: f"#sbp.layout<({t[0]},{t[1]}):({t[2]},{t[3]})>"),
    st.sampled_from(BAD_LAYOUTS),
)

ELEMENT_TYPES = (
    "f32", "f16", "bf16", "i16", "i32", "i64", "f64", "i8", "i1", "si32", "ui16", "index", "complex<f32>",
    "tensor<2xf32>", "vector<4xf32>", "none", "!sbp.tensor<f32, @p>", "f80", "", "i99999999999",
)  # fmt: skip
element_type = st.sampled_from(ELEMENT_TYPES)
dims = st.one_of(
    st.lists(ints, max_size=4).map(lambda ds: "".join(f"{d}x" for d in ds)),
    st.sampled_from(("?x", "4x?x", "0x", "4xx", "x", "4x8", "-1x")),
)
placement_ref = st.sampled_from(("@p", "@q", "@p", "@q", "@r", "@p::@q", '@"p"', "p", "#sbp.B", ""))


@st.composite
def tensor_type(draw: st.DrawFn) -> str:
    parts = [draw(dims) + draw(element_type), draw(placement_ref)]
    if draw(st.booleans()):
        parts.append(draw(sbp_list))
    if draw(st.integers(0, 3)) == 0:
        parts.append("layout = " + draw(layout))
    if draw(st.integers(0, 10)) == 0:
        parts.insert(draw(st.integers(0, len(parts))), draw(st.sampled_from(("[B]", "layout", "?", "@p", ""))))
    return "!sbp.tensor<" + ", ".join(parts) + ">"


sig_entry = st.one_of(st.just("?"), sbp_list)
signature = st.one_of(
    st.tuples(st.lists(sig_entry, max_size=3), st.lists(sig_entry, max_size=2)).map(
        lambda t: f"#sbp.sig<{', '.join(t[0])} -> {', '.join(t[1])}>"
    ),
    st.sampled_from(("#sbp.sig<>", "#sbp.sig<[B]>", "#sbp.sig<-> ->>", "#sbp.sig<[B] [B] -> ?>", "#sbp.sig<?, -> ?>")),
)
i64_array = st.one_of(
    st.lists(ints, max_size=4).map(lambda xs: "array<i64" + (": " + ", ".join(map(str, xs)) if xs else "") + ">"),
    st.sampled_from(("array<i32: 0>", "array<i64: 0.5>", "[0, 1]", "dense<0> : tensor<1xi64>", "unit", "0")),
)
BAD_SCALARS = (
    "1.0e400 : f32", "1.0e300 : f32", "0x7FC00000 : f16", "1.0 : f80", "2 : i99999999999", "300 : i8", "true",
    '"two"', "unit", "2.5", "0x7FC00000 : f32", "[1]", "#sbp.B", "dense<300> : tensor<2xi8>",
    "dense<1.0> : tensor<2xcomplex<f32>>", "array<f32: 1.0e300>",
)  # fmt: skip
scalar = st.one_of(
    st.tuples(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(("f16", "bf16", "f32", "f64"))).map(
        lambda t: f"{t[0]!r} : {t[1]}"
    ),
    st.tuples(ints, st.sampled_from(("i1", "i8", "i16", "i32", "i64", "index", "si8", "ui8"))).map(
        lambda t: f"{t[0]} : {t[1]}"
    ),
    st.sampled_from(BAD_SCALARS),
)
nested_ranks = st.recursive(
    ints.map(str), lambda inner: st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"), max_leaves=8
)


# A program is mostly valid, with at most one "wild" component (drawn from the strategies above), so
# that generated texts get past the first type and reach every parser and verifier.
HIERARCHY = {"@p": (2,), "@q": (2, 2)}
VALID_ELEMENTS = ("f32", "f16", "bf16", "i16", "i32", "i64")
TARGETS = (
    None, "dims", "element", "placement", "sbp", "layout", "result", "property", "shape", "attribute", "structure",
    "local", "local",
)  # fmt: skip
OTHER_TYPES = ("tensor<4xf32>", "i32", "f32", "none", "!sbp.tensor<4xf32, @p>", "!sbp.tensor<f32, @q, [B, B]>")
ANY_PROPS = {
    "axes": "array<i64: 0>", "perm": "array<i64: 0>", "mesh_axes": "array<i64: 0>", "other": "1.0 : f32",
    "scalar": "2 : i32", "transpose_a": "", "keepdims": "", "sym_name": '"m"', "device_type": '"cpu"',
    "hierarchy": "array<i64: 1>", "ranks": "array<i64: 0>",
}  # fmt: skip


def valid_entry(rank: int) -> st.SearchStrategy[str]:
    kinds = ["B", "P", "P(sum)", "P(max)", "P(min)"]
    if rank == 0:
        return st.sampled_from(kinds)
    return st.one_of(st.sampled_from(kinds), st.integers(0, rank - 1).map("S({})".format))


def local_shape(shape: Sequence[int], sbp: Sequence[str], hierarchy: Sequence[int]) -> list[int]:
    """The largest shard's shape (balanced split, mesh axis 0 first)."""
    out = list(shape)
    for entry, ranks in zip(sbp, hierarchy, strict=True):
        if entry.startswith("S("):
            k = int(entry[2:-1])
            out[k] = -(-out[k] // ranks)
    return out


def layout_text(extents: Sequence[int], column_major: bool) -> str:
    strides, acc = [0] * len(extents), 1
    for k in range(len(extents)) if column_major else reversed(range(len(extents))):
        strides[k], acc = acc, acc * extents[k]
    return f"#sbp.layout<({','.join(map(str, extents))}):({','.join(map(str, strides))})>"


@st.composite
def typed(
    draw: st.DrawFn, target: str | None, shape: Sequence[int], element: str, place: str, sbp: str = "maybe"
) -> str:
    """`!sbp.tensor<...>` text for (shape, element, place); one part is wild if `target` names it."""
    dims_text = draw(dims) if target == "dims" else "".join(f"{d}x" for d in shape)
    element_text = draw(element_type) if target == "element" else element
    place_text = draw(placement_ref) if target == "placement" else place
    parts = [dims_text + element_text, place_text]
    hierarchy = HIERARCHY[place]
    entries: list[str] | None = None
    if sbp == "always" or (sbp == "maybe" and draw(st.booleans())):
        entries = draw(st.lists(valid_entry(len(shape)), min_size=len(hierarchy), max_size=len(hierarchy)))
        parts.append(draw(sbp_list) if target == "sbp" else "[" + ", ".join(entries) + "]")
    if target == "layout":
        parts.append("layout = " + draw(layout))
    elif entries is not None and draw(st.integers(0, 3)) == 0:
        parts.append("layout = " + layout_text(local_shape(shape, entries, hierarchy), draw(st.booleans())))
    return "!sbp.tensor<" + ", ".join(parts) + ">"


shapes = st.lists(st.integers(1, 6), max_size=3)
OPS = {
    "unary": ("relu", "neg", "exp", "cast", "reshape", "to_global", "boxing"),
    "binary": ("add", "sub", "mul", "div", "maximum", "minimum", "fmod"),
    "scalar": ("fmod_scalar", "add_scalar", "mul_scalar"),
    "reduce": ("reduce_sum", "reduce_max", "reduce_min"),
    "collective": ("all_gather", "all_reduce", "reduce_scatter", "all_to_all", "all_slice", "to_partial"),
    "other": ("matmul", "transpose", "placement"),
}
TRANSITIONS = {  # (source entry, destination entry) on a listed mesh axis, {k}/{j} split axes
    "all_gather": ("S({k})", "B"), "all_reduce": ("P(max)", "B"), "reduce_scatter": ("P", "S({k})"),
    "all_to_all": ("S({k})", "S({j})"), "all_slice": ("B", "S({k})"), "to_partial": ("S({k})", "P(min)"),
}  # fmt: skip


def op_text(name: str, operands: Sequence[tuple[str, str]], result: str, props: dict[str, str], generic: bool) -> str:
    """One op in custom or generic form; `props` values are attribute texts ("" for a unit flag)."""
    if generic:
        inner = ", ".join(k if v == "" else f"{k} = {v}" for k, v in props.items())
        args = ", ".join(v for v, _ in operands)
        types = ", ".join(t for _, t in operands)
        return f'  %r = "sbp.{name}"({args}) {"<{" + inner + "}> " if props else ""}: ({types}) -> {result}\n'
    scalar = props.pop("other", None) or props.pop("scalar", None)
    args = ", ".join(v for v, _ in operands) + (f", {scalar}" if scalar is not None else "")
    inner = ", ".join(k if v == "" else f"{k} = {v}" for k, v in props.items())
    types = ", ".join(t for _, t in operands)
    return f"  %r = sbp.{name} {args}{' {' + inner + '}' if props else ''} : {types} -> {result}\n"


@st.composite
def program(draw: st.DrawFn) -> str:
    """A placement prelude and one function holding one generated op."""
    target = draw(st.sampled_from(TARGETS))
    generic = draw(st.booleans())
    name = draw(st.sampled_from([op for ops in OPS.values() for op in ops]))
    if name == "placement":
        ranks = draw(nested_ranks) if target is not None else draw(st.sampled_from(("[0]", "[[0, 1], [2, 3]]")))
        device = draw(st.sampled_from(('"cpu"', '"npu"', '""', "cpu")))
        return f"{PRELUDE}sbp.placement @m {device} {ranks}\n"
    if target == "structure":  # generic form with any operands, results and properties
        types = st.one_of(st.sampled_from(OTHER_TYPES), tensor_type())
        operand_types = draw(st.lists(types, max_size=3))
        results = draw(st.lists(types, max_size=2))
        props = {k: draw(st.one_of(st.just(v), i64_array)) for k, v in ANY_PROPS.items() if draw(st.booleans())}
        body = op_text(name, [(f"%a{i}", t) for i, t in enumerate(operand_types)], "R", props, generic=True)
        body = body.replace("-> R", "-> (" + ", ".join(results) + ")").replace(
            "%r = ", "" if not results else ("%r = " if len(results) == 1 else f"%r:{len(results)} = ")
        )
        params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operand_types))
        return f"{PRELUDE}func.func @f({params}) {{\n{body}  func.return\n}}\n"
    if target == "local":  # the per-rank form after --spmdize: builtin tensors, collectives spell out their step
        return draw(local_program(draw(st.sampled_from((*OPS["collective"], name)))))
    place = draw(st.sampled_from(tuple(HIERARCHY)))
    element = draw(st.sampled_from(VALID_ELEMENTS))
    shape = draw(shapes)
    props: dict[str, str] = {}
    result_sbp = "maybe"
    if name in OPS["binary"]:
        other = shape[draw(st.integers(0, len(shape))) :]
        other = [1 if draw(st.integers(0, 3)) == 0 else d for d in other]
        operand_shapes = [shape, other]
        out = shape if name == "fmod" else [max(x, y) for x, y in zip(shape[len(shape) - len(other) :], other)]
        out = shape[: len(shape) - len(other)] + out if name != "fmod" else out
    elif name == "matmul":
        m, k, n = draw(st.integers(1, 5)), draw(st.integers(1, 5)), draw(st.integers(1, 5))
        batch = draw(st.lists(st.integers(1, 3), max_size=1))
        ta, tb = draw(st.booleans()), draw(st.booleans())
        operand_shapes = [[*batch, *((k, m) if ta else (m, k))], [*((n, k) if tb else (k, n))]]
        props.update({"transpose_a": ""} if ta else {})
        props.update({"transpose_b": ""} if tb else {})
        out = [*batch, m, n]
    elif name in OPS["reduce"]:
        axes = draw(st.lists(st.integers(0, max(0, len(shape) - 1)), unique=True, max_size=len(shape)))
        keep = draw(st.booleans())
        props["axes"] = "array<i64" + (": " + ", ".join(map(str, axes)) if axes else "") + ">"
        props.update({"keepdims": ""} if keep else {})
        operand_shapes = [shape]
        out = [1 if i in axes else d for i, d in enumerate(shape) if keep or i not in axes]
    elif name == "transpose":
        perm = draw(st.permutations(range(len(shape))))
        props["perm"] = "array<i64" + (": " + ", ".join(map(str, perm)) if perm else "") + ">"
        operand_shapes = [shape]
        out = [shape[p] for p in perm]
    elif name in OPS["collective"]:
        shape = [*shape, 4, 4][:3] if len(shape) < 2 else shape
        hierarchy = HIERARCHY[place]
        k, j = draw(st.integers(0, len(shape) - 1)), draw(st.integers(0, len(shape) - 1))
        j = (k + 1) % len(shape) if j == k else j
        src_entry, dst_entry = (e.format(k=k, j=j) for e in TRANSITIONS[name])
        mesh_axes = draw(st.lists(st.integers(0, len(hierarchy) - 1), unique=True, min_size=1))
        keep = [draw(valid_entry(len(shape))) for _ in hierarchy]
        src = [src_entry if a in mesh_axes else keep[a] for a in range(len(hierarchy))]
        dst = [dst_entry if a in mesh_axes else keep[a] for a in range(len(hierarchy))]
        props["mesh_axes"] = "array<i64: " + ", ".join(map(str, mesh_axes)) + ">"
        a = f"!sbp.tensor<{''.join(f'{d}x' for d in shape)}{element}, {place}, [{', '.join(src)}]>"
        r = f"!sbp.tensor<{''.join(f'{d}x' for d in shape)}{element}, {place}, [{', '.join(dst)}]>"
        if target in ("dims", "element", "placement", "sbp", "layout"):
            a = draw(typed(target, shape, element, place, "always"))
        elif target in ("result", "shape"):
            r = draw(tensor_type()) if target == "result" else draw(typed(None, draw(shapes), element, place, "always"))
        if target == "property":
            props["mesh_axes"] = draw(i64_array)
        return finish(draw, [("%a", a)], r, name, props, generic, target)
    else:  # unary, scalar
        operand_shapes = [shape]
        out = shape
        if name == "reshape":
            out = [math.prod(shape)] if draw(st.booleans()) else [*shape, 1]
        if name in OPS["scalar"]:
            props["other" if name == "fmod_scalar" else "scalar"] = draw(
                st.sampled_from(("2.5 : f32", "3 : i32", "-1.0 : f16", "7 : i64"))
            )
    operand_types = [draw(typed(target, s, element, place)) for s in operand_shapes]
    result_element = draw(st.sampled_from(VALID_ELEMENTS)) if name == "cast" else element
    if target == "result":
        result = draw(tensor_type())
    elif target == "shape":
        result = draw(typed(None, draw(shapes), result_element, place, result_sbp))
    else:
        result = draw(typed(None, out, result_element, place, result_sbp))
    if target == "property":
        key = draw(st.sampled_from(("axes", "perm", "mesh_axes", "other", "scalar", "transpose_a", "bogus")))
        props[key] = draw(st.one_of(i64_array, scalar, signature, layout, st.just("")))
    operands = [(f"%a{i}", t) for i, t in enumerate(operand_types)]
    return finish(draw, operands, result, name, props, generic, target)


local_type = st.one_of(
    st.lists(st.integers(0, 6), max_size=3).map(lambda ds: "tensor<" + "".join(f"{d}x" for d in ds) + "f32>"),
    st.sampled_from(("tensor<?x4xf32>", "tensor<*xf32>", "tensor<4xf16>", "tensor<4x4xi64>", "tensor<4xindex>")),
)
valid_nd = st.sampled_from(("[S(0)]", "[B]", "[P]", "[S(1)]", "[P(max)]", "[S(0), B]", "[B, S(1)]", "[P, P]"))


@st.composite
def local_program(draw: st.DrawFn, name: str) -> str:
    """One op of the per-rank form: builtin tensor types; collectives carry placement/src_sbp/dst_sbp/shape.

    As in `program`, at most one part is wild.
    """
    parts = (None, None, "types", "mesh_axes", "placement", "src_sbp", "dst_sbp", "global_shape", "gone")
    wild = draw(st.sampled_from((*parts, "lengths", "lengths")))  # lengths: src_sbp and dst_sbp lengths differ
    valid_type = st.lists(st.integers(1, 6), min_size=1, max_size=3).map(
        lambda ds: "tensor<" + "".join(f"{d}x" for d in ds) + "f32>"
    )
    operand_type = draw(local_type if wild == "types" else valid_type)
    count = 2 if name in OPS["binary"] or name == "matmul" else 1
    operands = [(f"%a{i}", operand_type if i == 0 else draw(st.one_of(st.just(operand_type), valid_type)))
                for i in range(count)]  # fmt: skip
    props: dict[str, str] = {}
    if name in OPS["collective"]:
        # A valid step: the op's transition on the listed mesh axes, the same entry elsewhere.
        place = draw(st.sampled_from(tuple(HIERARCHY)))
        mesh = range(len(HIERARCHY[place]))
        axes = draw(st.lists(st.sampled_from(mesh), unique=True, min_size=1))
        src_entry, dst_entry = (e.format(k=0, j=1) for e in TRANSITIONS[name])
        keep = [draw(valid_entry(2)) for _ in mesh]
        src = [src_entry if a in axes else keep[a] for a in mesh]
        dst = [dst_entry if a in axes else keep[a] for a in mesh]
        if wild == "lengths":
            src, dst = draw(st.sampled_from(((src[:-1], dst), (src, dst[:-1]), ([*src, "B"], dst), (src, [*dst, "B"]))))
        props = {
            "mesh_axes": "array<i64: " + ", ".join(map(str, axes)) + ">",
            "placement": place,
            "src_sbp": "#sbp.nd<[" + ", ".join(src) + "]>",
            "dst_sbp": "#sbp.nd<[" + ", ".join(dst) + "]>",
            "global_shape": "array<i64: 8, 6>",
        }
        wild_nd = st.one_of(valid_nd, sbp_list, st.sampled_from(("1", "#sbp.B")))
        bad = {
            "mesh_axes": i64_array,
            "placement": st.sampled_from(("@zz", '"p"', "@p::@q", "#sbp.B", "@p", "@q")),
            "src_sbp": wild_nd.map(lambda nd: nd if nd in ("1", "#sbp.B") else f"#sbp.nd<{nd}>"),
            "dst_sbp": wild_nd.map(lambda nd: nd if nd in ("1", "#sbp.B") else f"#sbp.nd<{nd}>"),
            "global_shape": i64_array,
        }
        if wild in bad:
            props[wild] = draw(bad[wild])
        elif wild == "gone":
            del props[draw(st.sampled_from(tuple(props)))]
    elif name in OPS["reduce"]:
        props["axes"] = draw(i64_array if wild else st.just("array<i64: 0>"))
    elif name == "transpose":
        props["perm"] = draw(i64_array if wild else st.just("array<i64: 0>"))
    elif name in OPS["scalar"]:
        props["other" if name == "fmod_scalar" else "scalar"] = draw(scalar if wild else st.just("2.0 : f32"))
    results = st.one_of(local_type, tensor_type()) if wild == "types" else st.one_of(valid_type, st.just(operand_type))
    result = draw(results)
    params = ", ".join(f"{v}: {t}" for v, t in operands)
    body = op_text(name, operands, result, props, draw(st.booleans()))
    return f"{PRELUDE}func.func @f({params}) {{\n{body}  func.return\n}}\n"


def finish(
    draw: st.DrawFn,
    operands: list[tuple[str, str]],
    result: str,
    name: str,
    props: dict[str, str],
    generic: bool,
    target: str | None,
) -> str:
    params = ", ".join(f"{v}: {t}" for v, t in operands)
    attrs = ""
    if target == "attribute" or draw(st.integers(0, 4)) == 0:
        hint = draw(st.sampled_from(("sbp.hint", "sbp.signature", "x")))
        value = draw(
            st.one_of(signature, sbp_list.map("#sbp.nd<{}>".format), layout, tensor_type())
            if target == "attribute"
            else st.sampled_from(("#sbp.sig<" + ", ".join("?" for _ in operands) + " -> ?>", "unit", '"note"'))
        )
        attrs = f"{hint} = {value}"
    body = op_text(name, operands, result, props, generic)
    if attrs:  # discardable attributes: generic `{...}` after the properties, custom form merges them
        if generic:
            body = (
                body.replace(") : (", f") {{{attrs}}} : (", 1)
                if "<{" not in body
                else body.replace("}> : (", f"}}> {{{attrs}}} : (", 1)
            )
        elif " {" in body.split(" : ")[0]:
            body = body.replace("} : ", f", {attrs}}} : ", 1)
        else:
            head, _, rest = body.partition(" : ")
            body = f"{head} {{{attrs}}} : {rest}"
    return f"{PRELUDE}func.func @f({params}) {{\n{body}  func.return\n}}\n"


@pytest.fixture(scope="module")
def hypothesis_checker(tmp_path_factory: pytest.TempPathFactory) -> Checker:
    return Checker(tmp_path_factory.mktemp("hypothesis"))


@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=program(), generic=st.booleans())
def test_generated_attributes(hypothesis_checker: Checker, text: str, generic: bool) -> None:
    checker = hypothesis_checker
    checker.failures.clear()
    checker.check(text, ("--print-op-generic",) if generic else (), "hypothesis example")
    checker.assert_clean()


@settings(
    max_examples=LOCAL_FORM_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), name=st.sampled_from((*OPS["collective"], *OPS["collective"], *OPS["binary"], "matmul")))
def test_generated_local_form(hypothesis_checker: Checker, data: st.DataObject, name: str) -> None:
    """The per-rank form of --spmdize (collectives with placement/src_sbp/dst_sbp/global_shape)."""
    checker = hypothesis_checker
    checker.failures.clear()
    checker.check(data.draw(local_program(name)), (), f"local-form example ({name})")
    checker.assert_clean()


# ---------------------------------------------------------------------------
# Pathological inputs (each was a hang or an escaped exception once)
# ---------------------------------------------------------------------------

DEEP = 3000
LONG_TAIL = " -> !sbp.tensor<16x32xf16, @p>" * 4
PATHOLOGICAL = {
    # xDSL's string regex backtracked exponentially on an unclosed quote followed by a long line.
    "unclosed_string": f'{PRELUDE}func.func @f(%a: !sbp.tensor<16x32"f16, @p>{LONG_TAIL}) {{\n  func.return\n}}\n',
    # Python's recursion limit in the recursive-descent parsers.
    "deep_ranks": 'sbp.placement @m "cpu" ' + "[" * DEEP + "0" + "]" * DEEP + "\n",
    "deep_array": '"test.op"() {x = ' + "[" * DEEP + "0" + "]" * DEEP + "} : () -> ()\n",
    "deep_layout": '"test.op"() {x = #sbp.layout<' + "(" * DEEP + "1" + ")" * DEEP + ":1>} : () -> ()\n",
    "deep_tensor": '"test.op"() {x = ' + "!sbp.tensor<" * DEEP + ">" * DEEP + "} : () -> ()\n",
    # Builtin attribute constructors raising OverflowError / ValueError / NotImplementedError / AssertionError.
    "f32_overflow": f"{PRELUDE}func.func @f(%a: !sbp.tensor<4xf32, @p>) {{\n"
    "  %0 = sbp.add_scalar %a, 1.0e300 : f32 : !sbp.tensor<4xf32, @p> -> !sbp.tensor<4xf32, @p>\n  func.return\n}\n",
    "hex_f16": '"test.op"() {x = 0x7FC00000 : f16} : () -> ()\n',
    "dense_i8": '"test.op"() {x = dense<300> : tensor<2xi8>} : () -> ()\n',
    "dense_complex": '"test.op"() {x = dense<1.0> : tensor<2xcomplex<f32>>} : () -> ()\n',
    "f80_value": '"test.op"() {x = 1.0 : f80} : () -> ()\n',
    # 2**width computations on an absurd integer width.
    "int_width": '"test.op"() {x = 2 : i99999999999} : () -> ()\n',
    "rank_overflow": 'sbp.placement @m "cpu" [-9223372036854775809]\n',
    # A block holding a non-operation: xDSL's message was only " in block definition".
    "not_an_op": f"{PRELUDE}func.func @f() {{\n  [] = sbp.relu\n}}\n",
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_inputs(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.mlir"
    path.write_text(PATHOLOGICAL[name], encoding="utf-8")
    run = run_in_process(path)
    assert problem_with(run, path) is None, run.output
    assert run.code == 1, run.output
    assert re.search(r"error: \S", run.output), run.output


# ---------------------------------------------------------------------------
# The real console script
# ---------------------------------------------------------------------------


def test_console_script_on_mutants(tmp_path: Path) -> None:
    """A few failing mutants through the installed `sbp-opt`: exit 1, located error on stderr only."""
    exe = shutil.which("sbp-opt")
    assert exe is not None, "sbp-opt is not on PATH (pip install -e .)"
    rng = random.Random("sbp-robustness:console")
    chosen: list[tuple[Path, str]] = []
    while len(chosen) < 5:
        seed = rng.choice(SEEDS)
        text = mutate(tokenize(seed_text(seed)), rng)
        path = tmp_path / f"mutant{len(chosen)}.mlir"
        path.write_text(text, encoding="utf-8")
        if run_in_process(path).code == 1:
            chosen.append((path, text))
    # Started together: each process spends most of its time importing xDSL.
    procs = [
        (subprocess.Popen([exe, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), path, text)
        for path, text in chosen
    ]
    for proc, path, text in procs:
        stdout, stderr = proc.communicate(timeout=120)
        context = f"program:\n{text}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        assert proc.returncode == 1, context
        assert stdout == "", context
        assert re.match(rf"{re.escape(str(path))}:\d+:\d+: error: \S", stderr), context
        assert "Traceback" not in stderr, context
        assert "internal error" not in stderr, context
