"""The `--sbp-report` of `infer-sbp{rule=global}` (SPEC §3, §3.1).

Per op, like the other rules: the candidates and their modelled local cost — compute plus the
boxing of its inputs, with its producers as the search chose them — the choice and why. Then the
`global` section: the objective split into compute and communication, the memory per device and
the budget, the solver with its lower bound, gap and time, the SBP chosen for every free argument,
and every op where the whole-program choice differs from the best local (greedy, op-by-op) one,
with what it costs there — the price paid locally for a cheaper program; and every value whose
shared boxing had no exact factor (too big, `passes/infer_sbp/global_search/shared.py`): the search optimised per-edge
upper and lower bounds there, so the objective is exact and the gap may be non-zero.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import ModuleOp

from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.dialects.units import US_PER_SECOND, human_bytes
from sbpc.passes.infer_sbp.cache import InferenceCache
from sbpc.passes.infer_sbp.candidates import format_nd_sig
from sbpc.passes.infer_sbp.global_search import shared as global_shared
from sbpc.passes.infer_sbp.global_search.objective import plan_objective
from sbpc.passes.infer_sbp.global_search.problem import Pricer
from sbpc.passes.infer_sbp.global_search.search import FunctionResult, free_arguments, infer_module_global
from sbpc.passes.infer_sbp.local import OpRecord
from sbpc.passes.infer_sbp.scoring import Candidate, Decision


def global_records(
    module: ModuleOp, budget: int | None, cache: InferenceCache | None = None, time_limit: float | None = None,
) -> tuple[list[OpRecord], dict[str, Any]]:
    """Run rule=global on `module` (a clone the caller owns; `time_limit`: seconds per HiGHS run,
    None for none): the per-op records and the `global` section of the report. Given the pass's
    `cache`, the pass then reuses the report's solutions."""
    cache = InferenceCache() if cache is None else cache
    pricer = Pricer(cache.planner)
    results = infer_module_global(module, budget, cache, pricer, time_limit)
    objective = plan_objective(module, pricer)
    records: list[OpRecord] = []
    differs: list[dict[str, Any]] = []
    free: dict[str, str] = {}
    several = len(results) > 1
    for result in results:
        records.extend(_records(result, differs))
        name = result.problem.function.sym_name.data
        for arg, nd in free_arguments(result).items():
            free[f"@{name}:{arg}" if several else arg] = nd.short_str()
    total = sum(r.solution.objective for r in results)
    bound = sum(r.solution.lower_bound for r in results)
    section = {
        "objective_s": total,
        "compute_s": objective.compute_s,
        "comm_s": objective.comm_s,
        "memory_bytes": objective.memory_bytes,
        "mem_budget": budget,
        "lower_bound_s": bound,
        "gap": 0.0 if total <= 0 else max(0.0, (total - bound) / total),
        "solver": "+".join(dict.fromkeys(r.solution.solver for r in results)) or "elimination",
        "solve_s": sum(r.solution.solve_s for r in results),
        "free_args": free,
        "differs": differs,
        "per_edge": [v for r in results for v in r.problem.per_edge()],
    }
    return records, section


def _records(result: FunctionResult, differs: list[dict[str, Any]]) -> list[OpRecord]:
    problem, choice = result.problem, result.solution.choice
    records = []
    for v, var in enumerate(problem.variables):
        if var.kind != "op":
            continue
        op = var.anchor
        local = problem.local_costs(v, choice)
        chosen = choice[v]
        greedy = int(local.argmin())
        candidates = [Candidate(sig, 0.0, 0.0, float(cost) * US_PER_SECOND)
                      for sig, cost in zip(var.choices, local, strict=True)]
        delta = float(local[chosen] - local[greedy])
        compute_delta = float(var.compute[chosen] - var.compute[greedy])
        in_types: tuple[GlobalTensorType, ...] = tuple([o.type for o in op.operands])  # type: ignore[misc]
        record = OpRecord(op, Decision(candidates, var.choices[chosen], "", float(local[chosen]) * US_PER_SECOND),  # type: ignore[arg-type]
                          in_types, tuple([t.nd_sbp for t in in_types]))  # type: ignore[misc]
        if delta > 0:
            best = format_nd_sig(var.choices[greedy])  # type: ignore[arg-type]
            record.decision.reason = (f"whole-program optimum; locally {best} would be "
                                      f"{delta * US_PER_SECOND:.3f} us cheaper, and the program dearer")
            differs.append({"op": record.description, "chosen": format_nd_sig(var.choices[chosen]),  # type: ignore[arg-type]
                            "best_local": best, "local_extra_us": round(delta * US_PER_SECOND, 6),
                            "compute_extra_us": round(compute_delta * US_PER_SECOND, 6),
                            "comm_extra_us": round((delta - compute_delta) * US_PER_SECOND, 6)})
        else:
            record.decision.reason = "whole-program optimum (also the best local choice)"
        records.append(record)
    return records


def render_global(section: dict[str, Any]) -> list[str]:
    """The text lines of the `global` section."""
    budget = section["mem_budget"]
    lines = [
        f"global: objective {section['objective_s'] * US_PER_SECOND:.3f} us = "
        f"compute {section['compute_s'] * US_PER_SECOND:.3f} us "
        f"+ communication {section['comm_s'] * US_PER_SECOND:.3f} us; memory {section['memory_bytes']} bytes "
        f"({human_bytes(section['memory_bytes'])}) per device, budget "
        + ("none" if budget is None else f"{budget} bytes ({human_bytes(budget)})"),
        f"global: solver {section['solver']} in {section['solve_s']:.3f} s; lower bound "
        f"{section['lower_bound_s'] * US_PER_SECOND:.3f} us, gap {section['gap'] * 100:.4f} %",
    ]
    lines.extend(f"global: free argument {name} = {sbp}" for name, sbp in section["free_args"].items())
    lines.extend(f"global: {value}'s shared boxing has no exact factor (it would exceed "
                 f"{global_shared.MAX_SHARED_TABLE} entries): bounded per consuming edge, see the gap"
                 for value in section["per_edge"])
    for entry in section["differs"]:
        lines.append(f"global: op {entry['op']}: chose {entry['chosen']}; best local {entry['best_local']} is "
                     f"{entry['local_extra_us']:.3f} us cheaper there (compute {entry['compute_extra_us']:+.3f} us, "
                     f"communication {entry['comm_extra_us']:+.3f} us)")
    return lines
