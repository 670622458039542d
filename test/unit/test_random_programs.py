"""Property: random programs (≤ 12 ops, size-1 and uneven dims, meshes up to 3-D, random input SBPs)
compiled with either inference rule and either planner run on the simulated mesh and match the global
computation (`sbp-run --check`). `bench/stress_random_programs.py` runs thousands more."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sbpc.runtime.random_programs import random_program
from sbpc.tools.sbp_run import pipeline_for, run_captured

PROGRAMS = given(
    seed=st.integers(0, 2**32 - 1),
    rule=st.sampled_from(["oneflow", "cost"]),
    planner=st.sampled_from(["optimal", "oneflow"]),
)


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@_settings(40)
@PROGRAMS
def test_random_program_runs_correctly(tmp_path: Path, seed: int, rule: str, planner: str) -> None:
    check_random_program(tmp_path, seed, rule, planner)


@pytest.mark.exhaustive
@_settings(300)
@PROGRAMS
def test_300_random_programs_run_correctly(tmp_path: Path, seed: int, rule: str, planner: str) -> None:
    check_random_program(tmp_path, seed, rule, planner)


def check_random_program(tmp_path: Path, seed: int, rule: str, planner: str) -> None:
    program = random_program(seed)
    path = tmp_path / "prog.mlir"
    path.write_text(program)
    code, output = run_captured([str(path), "--check", "--pipeline", pipeline_for(rule, planner)])
    assert code == 0 and "check: OK" in output, f"rule={rule} planner={planner}\n{program}\n{output}"
    measured = [line for line in output.splitlines() if line.startswith("total bytes sent:")]
    assert measured, output
    total, model = measured[0].removeprefix("total bytes sent: ").split(" (all ranks); cost model: ")
    assert int(total) == int(model), output
