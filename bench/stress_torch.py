"""Random programs on the torch backend against the simulator: `python bench/stress_torch.py [N] [START]`.

Each of N random programs (runtime/random_programs.py; default 300) is compiled with both inference
rules and both planners; all 4·N compiled programs run on forked gloo ranks (one launch per mesh,
`runtime.torch_conformance`) and on the simulator. Every collective's bytes must equal the cost
model's, every rank's results the simulator's (bit for bit, or within --check's tolerance where torch
rounds a float op differently). Prints the mismatches, the number of collectives compared and the time.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xdsl.context import Context

from sbpc.dialects.context import register_dialects
from sbpc.runtime.random_programs import random_program
from sbpc.runtime.torch_conformance import check_cases, compile_case
from sbpc.tools.sbp_run import pipeline_for


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    ctx = Context()
    register_dialects(ctx)
    began = time.perf_counter()
    cases = [compile_case(ctx, f"seed={seed} rule={rule} planner={planner}", random_program(seed),
                          pipeline_for(rule, planner), seed)
             for seed in range(start, start + count) for rule in ("oneflow", "cost")
             for planner in ("optimal", "oneflow")]
    compiled = time.perf_counter() - began
    failures, compared = check_cases(cases)
    elapsed = time.perf_counter() - began
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"{count} programs x 4 configurations on torch: {compared} collectives compared, {len(failures)} "
          f"mismatches; {elapsed:.0f} s ({compiled:.0f} s compiling, {elapsed - compiled:.0f} s running both)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
