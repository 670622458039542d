"""Stress run of the compiler on random programs: `python bench/stress_random_programs.py [N] [START]`.

Each program (runtime/random_programs.py) is compiled with both inference rules and both planners and
run by the mesh simulator with `--check`; measured bytes must equal the cost model's. Prints failures
(seed, configuration, output) and a summary line. Not a test: CI runs the 300-example property test.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sbpc.runtime.random_programs import random_program
from sbpc.tools.sbp_run import pipeline_for, run_captured


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    failures = 0
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prog.mlir"
        for seed in range(start, start + count):
            path.write_text(random_program(seed))
            for rule in ("oneflow", "cost"):
                for planner in ("optimal", "oneflow"):
                    code, output = run_captured([str(path), "--check", "--pipeline", pipeline_for(rule, planner)])
                    if code != 0 or "check: OK" not in output:
                        failures += 1
                        print(f"FAIL seed={seed} rule={rule} planner={planner}\n{output}", flush=True)
    elapsed = time.perf_counter() - began
    print(f"{count} programs x 4 configurations: {failures} failures in {elapsed:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
