"""Parse + verify + print with no pass, `sbp-opt FILE`, on the two 10k-op DAGs (run by hand).

    python bench/bench_parse.py [--old TREE] [--new TREE] [--ops 10000] [--runs 3]

For each program (`bench/gen_dag.py`'s seeded random DAG and its `--uniform` form) it measures

    process     the whole command `sbp-opt FILE -o /dev/null` (start-up, imports, parse, verify, print)
    in-process  `sbpc.tools.sbp_opt.main([FILE, "-o", os.devnull])` in a child that imported sbpc first

for the current tree (the `sbpc` Python imports) and, with `--old TREE`, for another checkout whose
`sbpc` package is importable from TREE (`PYTHONPATH=TREE`), e.g. a worktree of an older commit
(`--new TREE` measures such a checkout in place of the current tree). The
trees alternate within each round, so a burst of load on a shared machine hits both alike; every
figure is the median over the rounds of CPU time (process: the child's, user + system, from
`getrusage`; in-process: the call's, `time.process_time`), which load on the machine disturbs less
than wall time. With `--old` it also checks that both trees print
the same bytes, and reports new / old per figure (issue 21's target: ≤ 0.5).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_dag import generate

IN_PROCESS = """
import json, os, sys, time
from sbpc.tools.sbp_opt import main
started = time.process_time()
code = main([sys.argv[1], "-o", os.devnull])
print(json.dumps({"code": code, "seconds": time.process_time() - started}))
"""


def sbp_opt() -> str:
    """The `sbp-opt` console script next to this interpreter (not a version manager's shim)."""
    found = Path(sys.executable).with_name("sbp-opt")
    return str(found) if found.exists() else "sbp-opt"


def environment(tree: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = tree + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def process_seconds(path: str, tree: str | None) -> float:
    """CPU seconds (user + system) of one `sbp-opt FILE -o /dev/null` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sbp_opt(), path, "-o", os.devnull], check=True, env=environment(tree))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process_seconds(path: str, tree: str | None) -> float:
    """CPU seconds of `main([FILE])` in a child that has imported the driver."""
    # `-P`: no current directory on sys.path, which would put the checkout the bench runs in first.
    done = subprocess.run([sys.executable, "-P", "-c", IN_PROCESS, path], check=True, capture_output=True, text=True,
                          env=environment(tree))
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["code"] != 0:
        raise SystemExit(f"sbp-opt failed on {path}: {done.stderr}")
    return float(result["seconds"])


def printed(path: str, tree: str | None) -> bytes:
    return subprocess.run([sbp_opt(), path], check=True, capture_output=True, env=environment(tree)).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", metavar="TREE", help="a checkout to compare with (its sbpc on PYTHONPATH)")
    parser.add_argument("--new", metavar="TREE", help="measure this checkout instead of the imported sbpc")
    parser.add_argument("--ops", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    trees: dict[str, str | None] = {"new": None if args.new is None else str(Path(args.new).resolve())}
    if args.old is not None:
        trees["old"] = str(Path(args.old).resolve())
    with tempfile.TemporaryDirectory() as scratch:
        programs = {}
        for name, uniform in (("gen_dag", False), ("gen_dag --uniform", True)):
            path = Path(scratch) / f"{'uniform' if uniform else 'dag'}.mlir"
            path.write_text(generate(args.ops, uniform=uniform), encoding="utf-8")
            programs[name] = str(path)
        if "old" in trees:
            for name, path in programs.items():
                same = printed(path, trees["new"]) == printed(path, trees["old"])
                print(f"{name}: output {'byte-identical' if same else 'DIFFERS'} between the trees")
                if not same:
                    return 1
        times: dict[tuple[str, str, str], list[float]] = {}
        for r in range(args.runs):
            for name, path in programs.items():
                for tree, location in trees.items():
                    times.setdefault((name, "process", tree), []).append(process_seconds(path, location))
                    times.setdefault((name, "in-process", tree), []).append(in_process_seconds(path, location))
            print(f"  round {r + 1}/{args.runs} done ({time.strftime('%H:%M:%S')}, load "
                  f"{os.getloadavg()[0]:.1f})", file=sys.stderr)
    print(f"\n{args.ops} ops, median of {args.runs} rounds; load average {os.getloadavg()[0]:.1f} at the end")
    header = f"{'program':<20} {'measure':<11} {'new s':>7} {'µs/op':>7}"
    print(header + (f" {'old s':>7} {'µs/op':>7} {'new/old':>8}" if "old" in trees else ""))
    for name in programs:
        for measure in ("process", "in-process"):
            new = statistics.median(times[(name, measure, "new")])
            line = f"{name:<20} {measure:<11} {new:7.2f} {new / args.ops * 1e6:7.0f}"
            if "old" in trees:
                old = statistics.median(times[(name, measure, "old")])
                line += f" {old:7.2f} {old / args.ops * 1e6:7.0f} {new / old:8.2f}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
