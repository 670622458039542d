"""`sbp-solve` on the IOPDDL contest instances, against the contest's best team, XLA and the optima.

    python bench/iopddl.py [--data ../shared/data/iopddl] [--cap S] [--only B,G]
                           [--out bench/RESULTS_iopddl.md]

Each `asplos-2025-iopddl-X.json.gz` in `--data` is solved by one cold `sbp-solve` process at the
contest's time limit for X (`--cap S`: at most S seconds, for a quicker run); the solution file is
judged again here by the contest's rule (passes/solver/strategy.py: cost and peak usage against the
limit). The scores (best team, XLA, optimum) and limits are read from the data folder's README
table. The report lists per instance: nodes, limit, the time taken, cost, proved bound, gap to
that bound, and the cost's ratio to the best team, to XLA and to the optimum.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sbpc.passes.solver.iopddl import read_problem  # noqa: E402
from sbpc.passes.solver.strategy import evaluate  # noqa: E402

LINE = re.compile(r"^(?P<name>.+): cost=(?P<cost>\d+) bound=(?P<bound>-?\S+) gap=(?P<gap>\S+)% time=(?P<time>\S+) s$")


@dataclass
class Score:
    inst: str
    model: str
    nodes: int
    limit_s: float
    best: int | None
    xla: int | None
    optimum: int | None


def _number(text: str) -> int | None:
    digits = re.sub(r"[^\d]", "", text.split("(")[0])
    return int(digits) if digits else None


def scores(data: Path) -> dict[str, Score]:
    """The table of the data folder's README: inst | model | nodes | limit s | best | XLA | optimum."""
    out = {}
    for line in (data / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not re.fullmatch(r"[A-Z]", cells[0]):
            continue
        nodes = _number(cells[2])
        out[cells[0]] = Score(cells[0], cells[1], nodes or 0, float(cells[3]), _number(cells[4]), _number(cells[5]),
                              _number(cells[6]))
    return out


def run(path: Path, limit: float, solution: Path) -> dict[str, object]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sbpc.tools.sbp_solve", str(path), "--time-limit", str(limit),
                           "-o", str(solution)], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    last = (done.stdout.strip().splitlines() or [""])[-1]
    match = LINE.match(last)
    if done.returncode != 0 or match is None:
        return {"status": f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1][:120]}",
                "wall": wall}
    problem = read_problem(path)
    judged = evaluate(problem, json.loads(solution.read_text()))
    return {"status": "ok" if judged.feasible else "INFEASIBLE", "cost": judged.cost, "printed": int(match["cost"]),
            "bound": float(match["bound"]), "gap": float(match["gap"]), "time": float(match["time"]), "wall": wall}


def _ratio(cost: object, other: int | None) -> str:
    """cost / other to four decimals, or to the first that shows a difference (M: 1.0000099)."""
    if other is None or not isinstance(cost, int):
        return ""
    digits = 4
    while cost != other and f"{cost / other:.{digits}f}" == f"{1:.{digits}f}" and digits < 12:
        digits += 1
    return f"{cost / other:.{digits + (digits > 4)}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "iopddl")
    parser.add_argument("--cap", type=float, default=None, help="at most this many seconds per instance")
    parser.add_argument("--only", default=None, help="comma-separated instance letters")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS_iopddl.md")
    args = parser.parse_args()
    table = scores(args.data)
    wanted = None if args.only is None else set(args.only.split(","))
    rows = []
    for inst, score in sorted(table.items()):
        path = args.data / f"asplos-2025-iopddl-{inst}.json.gz"
        if not path.exists() or (wanted is not None and inst not in wanted):
            continue
        limit = score.limit_s if args.cap is None else min(score.limit_s, args.cap)
        result = run(path, limit, Path("/tmp") / f"sbp-solve-{inst}.json")
        print(inst, result, flush=True)
        rows.append((score, limit, result))
    lines = [
        "# sbp-solve on the IOPDDL contest instances",
        "",
        f"`python bench/iopddl.py{'' if args.cap is None else f' --cap {args.cap:g}'}` on {platform.machine()}, "
        f"{os.cpu_count()} cores (shared with other work), Python {platform.python_version()}; "
        "one cold `sbp-solve --time-limit L` process per instance, L = the contest's limit"
        f"{'' if args.cap is None else f' capped at {args.cap:g} s'}. Cost judged again by the contest's rule "
        "(passes/solver/strategy.py). Bound: proved lower bound (gap 0 = proved optimal). Ratios: cost / score "
        "(< 1: better than it).",
        "",
        "| inst | model | nodes | limit s | time s | cost | bound | gap % | / best team | / XLA | / optimum |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for score, limit, result in rows:
        if result["status"] != "ok":
            lines.append(f"| {score.inst} | {score.model} | {score.nodes:,} | {limit:g} | {result['wall']:.1f} | "
                         f"{result['status']} | | | | | |")
            continue
        cost = result["cost"]
        lines.append(f"| {score.inst} | {score.model} | {score.nodes:,} | {limit:g} | {result['time']:.1f} | "
                     f"{cost:,} | {result['bound']:,.0f} | {result['gap']:.4g} | {_ratio(cost, score.best)} | "
                     f"{_ratio(cost, score.xla)} | {_ratio(cost, score.optimum)} |")
    kept = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    notes = kept[kept.index("\n## "):] if "\n## " in kept else ""  # the findings written by hand stay
    args.out.write_text("\n".join(lines) + "\n" + notes, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
