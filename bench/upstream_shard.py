"""sbpc's `--import-shard` + `infer-sbp` against `mlir-opt-22 --sharding-propagation`, value by value,
on upstream MLIR 22's own shard tests (test/Inputs/mlir_shard_tests/, 56 functions).

Each test file is split into its functions (at `// -----` where its RUN line has
`--split-input-file`, and at each top-level `func.func`; every piece keeps its chunk's grids and
`#map` aliases), printed in generic form by mlir-opt-22 (xDSL reads
tosa only so), then:

* imported by `--import-shard` (the `?` grids sized by GRIDS, as `--grid` does) — a located refusal
  is counted with its reason;
* planned by `infer-sbp` (default rule) — sbpc's plan;
* propagated by `mlir-opt-22 --sharding-propagation` and that output imported and planned the same
  way — MLIR's plan read as sbpc reads it (every value annotated, so inference only fills in what
  MLIR's partition also derives, e.g. the partial sum of a k-split matmul before its reduction).

Per value (every argument and every op result that is a tensor): MLIR's sharding is its plain
`shard.shard` annotation in the propagated output (for an argument, the shard op using it, plain or
for users, as MLIR's partition types it; replicated without one); sbpc's is the SBP of the value
standing for it after inference (for an annotated value, the value after that annotation's
conversion). Both are read through `--import-shard`, so they are compared in one vocabulary. Each
function is also imported with `--free-args` and planned by `rule=global` (the free column).
A function agrees when every value does; otherwise it differs-but-valid when both plans pass
`sbp-run --check` (execution on the simulator against the single-device reference, SPEC §4.3).
sbpc's plan is run so in every case: an agreeing one must pass too (`invalid` otherwise).

`python bench/upstream_shard.py` prints the table (per file: functions, imported, agree,
differ-valid, refused with reasons) and one line per function with `-v`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "test/Inputs/mlir_shard_tests"
MLIR_OPT = shutil.which("mlir-opt-22")
PROPAGATION = "--pass-pipeline=builtin.module(func.func(sharding-propagation))"
GRIDS = {"grid_1d": "8", "grid_3d": "2x2x2", "grid_1d_dynamic": "2"}
"""Sizes for the tests' `?` grids (MLIR's propagation does not need them; a placement does)."""


@dataclass
class Piece:
    """One upstream test function, alone in a module with its file's grids."""

    file: str
    name: str
    text: str
    expects_error: bool = False
    """The upstream test expects an error from it (an `expected-error` line in or before it)."""


@dataclass
class Outcome:
    """What became of one function."""

    piece: Piece
    status: str  # one of IMPORTED, or refused
    reason: str = ""
    values: list[tuple[str, str, str]] = field(default_factory=list)  # (value, MLIR, sbpc) where they differ
    free_agree: bool = False
    """Imported with `--free-args` and planned by `rule=global`, every value agrees with MLIR."""


def _strip_comments(text: str) -> str:
    return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())


def _function_spans(text: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each top-level `func.func` in `text` (comments removed)."""
    spans: list[tuple[str, int, int]] = []
    for found in re.finditer(r"func\.func\s+(?:private\s+)?@([\w$.]+)", text):
        start = found.start()
        if spans and start < spans[-1][2]:
            continue  # nested (cannot happen in these tests; kept safe)
        depth, i = 0, text.index("(", start)
        opened = False
        while i < len(text):
            c = text[i]
            if c == "{":
                depth += 1
                opened = True
            elif c == "}":
                depth -= 1
                if opened and depth == 0:
                    # `attributes {...}` before the body: a brace group followed by another `{`
                    rest = text[i + 1:].lstrip()
                    if not rest.startswith("{"):
                        break
            i += 1
        spans.append((found.group(1), start, i + 1))
    return spans


def split(path: Path) -> list[Piece]:
    """The functions of one upstream test file, each a module of its own."""
    pieces: list[Piece] = []
    whole = path.read_text()
    chunks = whole.split("// -----") if "--split-input-file" in whole else [whole]  # as the RUN line reads it
    for chunk in chunks:
        text = _strip_comments(chunk)  # line for line: offsets in `text` are lines of `chunk`
        raw_lines = chunk.splitlines()
        aliases = re.findall(r"^\s*(#\w+\s*=.*)$", text, re.M)
        grids = [line.strip() for line in re.findall(r"^\s*(shard\.grid\b.*)$", text, re.M)]
        after = 0  # the line after the previous function
        for name, start, end in _function_spans(text):
            body = "\n".join([*aliases, *grids, text[start:end]]) + "\n"
            last = text.count("\n", 0, end) + 1
            expects = any("expected-error" in line for line in raw_lines[after:last])
            pieces.append(Piece(path.name, name, body, expects))
            after = last
    return pieces


def all_pieces() -> list[Piece]:
    return [p for path in sorted(TESTS.glob("*.mlir")) for p in split(path)]


def mlir_opt(text: str, *args: str) -> tuple[int, str, str]:
    """mlir-opt-22 on `text`, output in generic form."""
    assert MLIR_OPT is not None
    run = subprocess.run([MLIR_OPT, "--mlir-print-op-generic", *args, "-"], input=text, capture_output=True,
                         text=True, timeout=120)
    return run.returncode, run.stdout, run.stderr


def _first_error(err: str) -> str:
    for line in err.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return err.strip().splitlines()[-1] if err.strip() else "failed"


REASONS = (  # (pattern of a refusal's message, the table's short reason)
    (r"sbp has no constant op", "a constant or fill used as data (sbp has no constant op)"),
    (r"halo sizes", "halo sizes"),
    (r"not the balanced split", "non-balanced offsets"),
    (r"dynamic dim", "dynamic dims"),
    (r"blocks; --import-shard", "a multi-block function"),
    (r"grid axis \d+ is not an axis", "a split axis past the grid"),
    (r"not a ranked tensor|shard\.get_sharding", "non-tensor values (scalars, !shard.sharding)"),
    (r"^infer-sbp: .*no SBP signature.*MLIR's propagation fails too", "no plan satisfies the annotations (MLIR's "
     "propagation fails too)"),
    (r"^infer-sbp: .*no SBP signature", "no plan satisfies the annotations"),
    (r"(\S+) has no sbp form \(--import-shard", r"`\1` (no sbp op)"),
    (r"--grid", "an unsized `?` grid"),
)


def _reason(message: str) -> str:
    """A refusal's message as the table's short reason."""
    for pattern, short in REASONS:
        found = re.search(pattern, message)
        if found:
            return found.expand(short)
    return message[:80]


@dataclass
class Plan:
    """An imported function after inference: its sbp text (before inference, for sbp-run) and the
    SBP of each upstream value, keyed by position (`arg0`, `op3.0 tosa.matmul`)."""

    program: str
    entry: str
    sbps: dict[str, str]


def _run_tool(tool: object, argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tool(argv)  # type: ignore[operator]
    return rc, out.getvalue(), err.getvalue()


def planned_values(generic: str, grids: dict[str, str], tmp: Path, *, free: bool = False) -> Plan | str:
    """`generic` (one function) imported and planned by infer-sbp (`free`: imported with
    `--free-args`, planned by `rule=global`); a refusal's message instead. The import runs through
    `sbp-translate --import-shard` itself (so that an internal error shows)."""
    from xdsl.dialects.func import FuncOp
    from xdsl.dialects.shard import ShardingOp, ShardOp
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import DiagnosticException

    from sbpc.dialects.tensor_type import GlobalTensorType
    from sbpc.runtime.pipeline import checked_pipeline
    from sbpc.tools.sbp_translate import main as translate
    from sbpc.translate.from_upstream_shard import import_context, import_shard, parse_grid_sizes
    from sbpc.translate.raise_linalg import op_name

    source = tmp / "upstream.mlir"
    source.write_text(generic)
    used = grids
    argv = ["--import-shard", str(source), *(f"--grid={n}={s}" for n, s in used.items()), *(["--free-args"] * free)]
    rc, program, err = _run_tool(translate, argv)
    if rc != 0:
        return _first_error(err) if "internal error" not in err else "INTERNAL " + err.strip()
    module = Parser(import_context(), generic).parse_module()
    trace: dict = {}
    imported = import_shard(module, parse_grid_sizes([f"{n}={s}" for n, s in used.items()]), free_args=free,
                            trace=trace)
    func = next(op for op in module.ops if isinstance(op, FuncOp))
    keys: list[tuple[str, object]] = [(f"arg{a.index}", a) for a in func.body.block.args]
    ops = [op for op in func.body.block.ops if not isinstance(op, (ShardOp, ShardingOp))]
    keys += [(f"op{i}.{r.index} {op_name(op)}", r) for i, op in enumerate(ops) for r in op.results]
    marked: dict[str, list[str]] = {}  # name hint -> keys: inference rebuilds ops, name hints survive
    for n, (key, value) in enumerate(keys):
        annotation = next((u.operation for u in value.uses  # type: ignore[attr-defined]
                           if isinstance(u.operation, ShardOp) and u.operation.annotate_for_users is None), None)
        standing = trace.get(annotation.result if annotation is not None else value)
        if standing is not None and isinstance(standing.type, GlobalTensorType):
            if standing.name_hint not in marked:
                standing.name_hint = f"v{n}"
            marked.setdefault(standing.name_hint, []).append(key)
    try:
        checked_pipeline("infer-sbp{rule=global}" if free else "infer-sbp").apply(import_context(), imported)
    except DiagnosticException as error:  # located in sbp-opt; here its message
        return "infer-sbp: " + str(error).splitlines()[0]
    sbps: dict[str, str] = {}
    for op in imported.walk():
        for value in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            if value.name_hint in marked and isinstance(value.type, GlobalTensorType):
                sbps.update(dict.fromkeys(marked[value.name_hint], str(value.type.nd_sbp)))
    return Plan(program, func.sym_name.data, sbps)


def run_check(plan: Plan, tmp: Path, *, free: bool = False) -> str | None:
    """`sbp-run --check` of the plan's program (`free`: with `--rule global`); None if it passes, else
    the first error line."""
    from sbpc.tools.sbp_run import main as run

    path = tmp / "plan.mlir"
    path.write_text(plan.program)
    rc, out, err = _run_tool(run, [str(path), "--entry", plan.entry, "--check", *(["--rule", "global"] * free)])
    return None if rc == 0 else _first_error(err or out)


def compare(piece: Piece, tmp: Path, *, check: bool = True) -> Outcome:
    """Import, plan and compare one function (see the module docstring)."""
    dynamic = {name for name, shape in re.findall(r"shard\.grid\s+@([\w$.]+)\s*\(shape\s*=\s*([\w?]+)", piece.text)
               if "?" in shape}
    grids = {name: size for name, size in GRIDS.items() if name in dynamic}
    rc, generic, err = mlir_opt(piece.text)
    if rc != 0:
        return Outcome(piece, "refused", "mlir-opt-22 rejects it: " + _first_error(err))
    mine = planned_values(generic, grids, tmp)
    rc, propagated, err = mlir_opt(piece.text, PROPAGATION)
    if isinstance(mine, str):
        if mine.startswith("infer-sbp: ") and piece.expects_error:
            return Outcome(piece, "expected-error", mine)  # imported; planning fails as the test expects
        return Outcome(piece, "refused", mine + (" (MLIR's propagation fails too)" if rc != 0 else ""))
    if rc != 0:
        return Outcome(piece, "mlir-fails", "MLIR's propagation fails: " + _first_error(err))
    theirs = planned_values(propagated, grids, tmp)
    if isinstance(theirs, str):
        return Outcome(piece, "invalid", "MLIR's plan does not import: " + theirs)
    differ = [(name, theirs.sbps.get(name, "?"), sbp) for name, sbp in mine.sbps.items()
              if theirs.sbps.get(name) != sbp]
    if not check:
        return Outcome(piece, "differ" if differ else "agree", values=differ)
    for who, plan in (("sbpc", mine), ("MLIR", theirs)) if differ else (("sbpc", mine),):
        problem = run_check(plan, tmp)
        if problem is not None:
            return Outcome(piece, "invalid", f"{who}'s plan fails sbp-run --check: {problem}", differ)
    outcome = Outcome(piece, "differ-valid" if differ else "agree", values=differ)
    free = planned_values(generic, grids, tmp, free=True)  # the arguments decided with the program
    if isinstance(free, str) or run_check(free, tmp, free=True) is not None:
        outcome.status, outcome.reason = "invalid", f"the --free-args rule=global plan fails: {free}"
    else:
        outcome.free_agree = all(theirs.sbps.get(name) == sbp for name, sbp in free.sbps.items())
    return outcome


IMPORTED = ("agree", "differ-valid", "invalid", "differ", "expected-error", "mlir-fails")


def counts(outcomes: list[Outcome]) -> Counter[str]:
    """functions, imported and each status of `outcomes`."""
    found = Counter(o.status for o in outcomes)
    found["functions"] = len(outcomes)
    found["imported"] = sum(found[s] for s in IMPORTED)
    found["free-agree"] = sum(o.free_agree for o in outcomes)
    return found


def table(outcomes: list[Outcome]) -> str:
    """The README's table: per file, functions, imported, agree, differ-valid, expected errors, and
    the refusals with their reasons (anything else, e.g. an invalid plan, under notes)."""
    files: dict[str, list[Outcome]] = {}
    for o in outcomes:
        files.setdefault(o.piece.file, []).append(o)
    lines = ["| file | functions | imported | agree | differ-valid | expected error | agree with `--free-args` "
             "`rule=global` | refused (reasons) |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for file, group in [*files.items(), ("**all**", outcomes)]:
        c = counts(group)
        reasons = Counter(_reason(o.reason) for o in group if o.status == "refused")
        said = "; ".join(f"{r} ({n})" if n > 1 else r for r, n in reasons.items()) if file != "**all**" else ""
        notes = [f"{s}: {c[s]}" for s in ("invalid", "differ", "mlir-fails") if c[s]]
        said = "; ".join(x for x in (said, *notes) if x) or ("—" if file != "**all**" else f"{c['refused']}")
        lines.append(f"| {file.removesuffix('.mlir')} | {c['functions']} | {c['imported']} | {c['agree']} | "
                     f"{c['differ-valid']} | {c['expected-error']} | {c['free-agree']} | {said} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per function")
    parser.add_argument("--no-check", action="store_true",
                        help="compare only (no sbp-run --check of the plans that differ)")
    args = parser.parse_args(argv)
    if MLIR_OPT is None:
        print("mlir-opt-22 not found (apt install mlir-22-tools)", file=sys.stderr)
        return 1
    outcomes = []
    tmp = Path(tempfile.mkdtemp(prefix="upstream_shard_"))
    for piece in all_pieces():
        outcome = compare(piece, tmp, check=not args.no_check)
        outcomes.append(outcome)
        if args.verbose:
            print(f"{piece.file}@{piece.name}: {outcome.status} {outcome.reason} "
                  f"{' '.join(f'%{v}: MLIR {a} sbpc {b}' for v, a, b in outcome.values)}")
    print(table(outcomes))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
