"""The `--sbp-report` of `infer-sbp{rule=global}`: one solve per function for the report and the
pass together (the memo in `InferenceCache.solutions`, keyed by values), the program written as
without the report, and a `global` section whose numbers are those of the written program."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sbpc import api
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.global_search import search as global_search
from sbpc.passes.infer_sbp.global_search.objective import plan_objective
from sbpc.passes.infer_sbp.global_search.search import infer_module_global, problem_key
from sbpc.passes.infer_sbp.local import functions
from sbpc.tools.sbp_opt import main

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "test" / "passes" / "infer-sbp" / "global_free_args.mlir"
GPT = ROOT / "examples" / "gpt_block.mlir"

TWO_FUNCTIONS = """
sbp.placement @m "cpu" [[0, 1], [2, 3]]
func.func @f(%x: !sbp.tensor<64x64xf32, @m, [S(0), ?]>, %w: !sbp.tensor<64x64xf32, @m>) -> !sbp.tensor<64x64xf32, @m> {
  %y = sbp.matmul %x, %w : !sbp.tensor<64x64xf32, @m, [S(0), ?]>, !sbp.tensor<64x64xf32, @m>
      -> !sbp.tensor<64x64xf32, @m>
  func.return %y : !sbp.tensor<64x64xf32, @m>
}
func.func @g(%x: !sbp.tensor<64x32xf32, @m>, %w: !sbp.tensor<32x64xf32, @m>) -> !sbp.tensor<64x64xf32, @m, [S(0), B]> {
  %y = sbp.matmul %x, %w : !sbp.tensor<64x32xf32, @m>, !sbp.tensor<32x64xf32, @m> -> !sbp.tensor<64x64xf32, @m>
  %z = sbp.relu %y : !sbp.tensor<64x64xf32, @m> -> !sbp.tensor<64x64xf32, @m>
  %r = sbp.to_global %z : !sbp.tensor<64x64xf32, @m> -> !sbp.tensor<64x64xf32, @m, [S(0), B]>
  func.return %r : !sbp.tensor<64x64xf32, @m, [S(0), B]>
}
"""


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call of the solver rule=global uses, by the budget it was given."""
    calls: list[str] = []

    def counting(real: Callable[..., Any], budget_at: int) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            calls.append(repr(args[budget_at] if len(args) > budget_at else kwargs.get("budget")))
            return real(*args, **kwargs)
        return wrapped

    # `solve_function`: every method a function's search may take goes through it.
    monkeypatch.setattr(global_search, "solve_function", counting(global_search.solve_function, 1))
    return calls


def sbp_opt(path: Path, options: str, report: str | None, out: Path) -> tuple[int, str]:
    """`sbp-opt path --infer-sbp=options [--sbp-report=report] -o out`: (exit code, stderr)."""
    argv = [str(path), f"--infer-sbp={options}", "-o", str(out)]
    if report is not None:
        argv.append(f"--sbp-report={report}")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.parametrize("report", ["text", "json", "dot"])
@pytest.mark.parametrize("mem", [None, "4MiB"])
def test_the_report_and_the_pass_solve_each_function_once(
    solves: list[str], tmp_path: Path, report: str, mem: str | None,
) -> None:
    options = "rule=global" + ("" if mem is None else f" mem={mem}")
    code, err = sbp_opt(MLP, options, report, tmp_path / "with.mlir")
    assert code == 0, err
    assert len(solves) == 1  # the report solved it; the pass applied that solution
    code, _ = sbp_opt(MLP, options, None, tmp_path / "without.mlir")
    assert code == 0
    assert len(solves) == 2  # a run of its own solves again: the memo is the run's, not global state
    assert (tmp_path / "with.mlir").read_text() == (tmp_path / "without.mlir").read_text()


def test_a_module_of_two_functions_is_solved_twice_not_four_times(solves: list[str], tmp_path: Path) -> None:
    source = tmp_path / "two.mlir"
    source.write_text(TWO_FUNCTIONS, encoding="utf-8")
    code, err = sbp_opt(source, "rule=global", "json", tmp_path / "out.mlir")
    assert code == 0, err
    assert len(solves) == 2
    assert set(json.loads(err)["global"]["free_args"]) == {"@f:%x", "@f:%w", "@g:%x", "@g:%w"}


def test_the_key_is_made_of_values(tmp_path: Path) -> None:
    module = api.parse(TWO_FUNCTIONS).module
    f, g = functions(module)
    clone_f = next(functions(module.clone()))
    assert problem_key(clone_f, None) == problem_key(f, None)  # what the report solves is what the pass meets
    assert problem_key(f, None) != problem_key(g, None)
    assert problem_key(f, None) != problem_key(f, 1 << 20)
    linked = api.parse(TWO_FUNCTIONS.replace("[2, 3]]", "[2, 3]] links [(25.0, 10.0), (196.0, 1.5)]")).module
    assert problem_key(next(functions(linked)), None) != problem_key(f, None)  # the links price the plan


def test_the_memo_is_bounded_and_a_hit_writes_back_the_same_program(solves: list[str]) -> None:
    cache = InferenceCache(max_solutions=2)
    first, second = api.parse(TWO_FUNCTIONS).module, api.parse(TWO_FUNCTIONS).module
    keys = [problem_key(f, None) for f in functions(first)]
    infer_module_global(first, None, cache)
    assert len(solves) == 2 and list(cache.solutions) == keys
    infer_module_global(second, None, cache)
    assert len(solves) == 2  # both from the memo
    assert str(first) == str(second)
    small = InferenceCache(max_solutions=1)
    infer_module_global(api.parse(TWO_FUNCTIONS).module, None, small)
    assert len(solves) == 4 and list(small.solutions) == keys[1:]  # @g's solution pushed out @f's
    small.clear()
    assert small.solutions == {}


@pytest.mark.parametrize(("path", "mem"), [(GPT, None), (MLP, None), (MLP, "4MiB")])
def test_the_global_section_is_the_written_programs_objective(tmp_path: Path, path: Path, mem: str | None) -> None:
    out = tmp_path / "out.mlir"
    code, err = sbp_opt(path, "rule=global" + ("" if mem is None else f" mem={mem}"), "json", out)
    assert code == 0, err
    report = json.loads(err)
    section = report["global"]
    written = api.parse_file(str(out)).module
    objective = plan_objective(written)
    assert section["compute_s"] == pytest.approx(objective.compute_s, rel=1e-9, abs=1e-15)
    assert section["comm_s"] == pytest.approx(objective.comm_s, rel=1e-9, abs=1e-15)
    assert section["objective_s"] == pytest.approx(objective.total_s, rel=1e-9)
    assert section["memory_bytes"] == objective.memory_bytes
    assert report["totals"]["global"]["modelled_us"] == pytest.approx(objective.comm_s * 1e6, abs=1e-6)
    assert section["lower_bound_s"] <= section["objective_s"] * (1 + 1e-12)
    assert section["gap"] == pytest.approx((section["objective_s"] - section["lower_bound_s"]) / section["objective_s"],
                                           abs=1e-12)
    assert section["solve_s"] > 0
    if mem is not None:
        assert section["mem_budget"] == 4 << 20 and section["memory_bytes"] <= section["mem_budget"]
    f = next(functions(written))
    args = {f"%{a.name_hint}": a.type.nd_sbp.short_str() for a in f.body.block.args}  # type: ignore[attr-defined]
    assert section["free_args"] and all(args[name] == sbp for name, sbp in section["free_args"].items())
    for entry in section["differs"]:  # the global choice costs more there, by compute + communication
        assert entry["chosen"] != entry["best_local"] and entry["local_extra_us"] > 0
        assert entry["local_extra_us"] == pytest.approx(entry["compute_extra_us"] + entry["comm_extra_us"], abs=2e-6)
    text = api.report_text(api.parse_file(str(path)), "global", mem=None if mem is None else 4 << 20)
    assert f"global: objective {objective.total_s * 1e6:.3f} us = compute {objective.compute_s * 1e6:.3f} us " \
           f"+ communication {objective.comm_s * 1e6:.3f} us; memory {objective.memory_bytes} bytes" in text


def test_api_report_compile_and_run_share_one_solve(solves: list[str]) -> None:
    """The Python API: `report`, `compile` and `run` of one `Program` under rule=global solve it once
    (the program owns the cache); a program parsed again starts afresh."""
    program = api.parse_file(str(GPT))
    pipeline = "infer-sbp{rule=global mem=3932160},materialize-boxing,lower-boxing,spmdize"
    found = api.report(program, "global", 3932160)
    searched = len(solves)  # one search (with its lower-bound twin where a shared value is bounded)
    assert searched >= 1
    compiled = api.compile(program, pipeline)
    result = api.run(program, pipeline=pipeline)
    assert len(solves) == searched
    assert result.ok and result.bytes_sent == 786432
    inferred = api.compile(program, "infer-sbp{rule=global mem=3932160}")
    assert found["global"]["objective_s"] == pytest.approx(plan_objective(inferred.module).total_s)
    assert "sbp.all_gather" in str(compiled)
    api.report(api.parse_file(str(GPT)), "global", 3932160)
    assert len(solves) == 2 * searched


@pytest.mark.parametrize(("report_mem", "solved"), [("4MiB", 1), ("5MiB", 2)])
def test_a_report_pass_shares_the_next_infer_sbp_of_the_same_options(
    solves: list[str], tmp_path: Path, report_mem: str, solved: int,
) -> None:
    """`-p report{…},infer-sbp{…}`: with the same rule and mem the report's search is the pass's
    (one solve, and the same text as `--sbp-report`); with another budget each solves its own."""
    pipeline = f"report{{rule=global mem={report_mem} format=json}},infer-sbp{{rule=global mem=4MiB}}"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(MLP), "-p", pipeline, "-o", str(tmp_path / "out.mlir")])
    assert code == 0, err.getvalue()
    assert len(solves) == solved
    if report_mem == "4MiB":
        code, flag = sbp_opt(MLP, "rule=global mem=4MiB", "json", tmp_path / "flag.mlir")
        assert code == 0
        by_pass, by_flag = json.loads(err.getvalue()), json.loads(flag)
        by_pass["global"].pop("solve_s"), by_flag["global"].pop("solve_s")  # wall clock
        assert by_pass == by_flag
        assert (tmp_path / "out.mlir").read_text() == (tmp_path / "flag.mlir").read_text()
