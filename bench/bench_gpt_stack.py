"""The GPT stack of issue 13 under every inference rule: modelled plans, solve time, whole processes.

    python bench/bench_gpt_stack.py [--layers 1,4,12,24,48] [--variants oneflow,cost,global,...]
                                    [--runs 3] [--out bench/RESULTS_gpt_stack.md]

For each L (bench/gen_gpt.py: b=8, s=32, h=256, 8 heads, MLP 4h, f32, 2x4 "npu" mesh, x `[S(0), B]`,
the result converted to `[S(0), B]`) and each variant

    oneflow           Megatron-annotated weights, infer-sbp{rule=oneflow}
    cost              Megatron-annotated weights, infer-sbp{rule=cost}
    global            Megatron-annotated weights, infer-sbp{rule=global}
    global-free       free weights (no SBP),      infer-sbp{rule=global}
    global-free-mem   free weights,               infer-sbp{rule=global mem=¼ weight bytes + 3 MiB}
    global-free-tight free weights,               infer-sbp{rule=global mem=what Megatron's layout needs}

it records, in this process: the plan's modelled time (`sbpc.passes.infer_sbp.global_search.objective.plan_objective`
on the inferred module: compute + communication, and per-rank memory), the bytes the lowered plan
sends (materialize-boxing + lower-boxing, summed over ranks, what `sbp-run` counts), how many weights
end sharded >= 4 ways; from one `sbp-opt --sbp-report=json` process: the `"global"` section (solver,
solve_s, gap). Then, round after round (median of `--runs`, every process cold), the CPU time of
`sbp-opt FILE -o /dev/null` (parse + verify + print) and of `sbp-opt FILE --infer-sbp=OPTIONS -o
/dev/null` side by side, as bench/bench_sbp_opt_process.py does.

A variant that fails (e.g. `rule=global` on a checkout without it) is reported as failed, with its
exit status and first error line, in every column it could not fill; the script still writes the
report. The checks of issue 13 (L=24 whole process <= 4x parse+print, time(L=48)/time(L=24) <= 2.3,
gap 0 without mem and <= 1 % with, and the free-with-mem plan: weights sharded >= 4 ways, within mem,
<= 1.05x the Megatron volume) are listed as met, missed or not measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_sbp_opt_process import run_once, sbp_opt_command
from bench.gen_gpt import GptDims, gpt_stack, megatron_bytes

ROOT = Path(__file__).resolve().parent.parent
LAYERS = (1, 4, 12, 24, 48)
MIB = 1 << 20


@dataclass(frozen=True)
class Variant:
    weights: str
    rule: str
    mem: str | None = None
    """None, "issue" (`mem_budget`) or "megatron" (`megatron_memory`)."""

    def options(self, layers: int, dims: GptDims) -> str:
        if self.mem is None:
            return f"rule={self.rule}"
        budget = mem_budget(layers, dims) if self.mem == "issue" else megatron_memory(layers, dims)
        return f"rule={self.rule} mem={budget}"


VARIANTS = {
    "oneflow": Variant("megatron", "oneflow"),
    "cost": Variant("megatron", "cost"),
    "global": Variant("megatron", "global"),
    "global-free": Variant("free", "global"),
    "global-free-mem": Variant("free", "global", mem="issue"),
    "global-free-tight": Variant("free", "global", mem="megatron"),
}
BUDGETED = ("global-free-mem", "global-free-tight")


def mem_budget(layers: int, dims: GptDims) -> int:
    """Issue 13's budget: a quarter of the weights' bytes plus 3 MiB."""
    return dims.weight_bytes(layers) // 4 + 3 * MIB


def megatron_memory(layers: int, dims: GptDims) -> int:
    """The per-device memory of Megatron's own layout (weights annotated, rule=global): a quarter
    of the weights plus its activations — a budget that leaves no room for a whole weight."""
    import sbpc
    from sbpc.passes.infer_sbp.global_search.objective import plan_objective

    inferred = sbpc.compile(sbpc.parse(gpt_stack(layers, dims, "megatron")), "infer-sbp{rule=global}")
    return int(plan_objective(inferred.module).memory_bytes)


@dataclass
class Result:
    """One (L, variant): what was measured, or why not (`errors` per measurement)."""

    objective: dict[str, float] | None = None
    bytes_sent: int | None = None
    sharded_4way: tuple[int, int] | None = None
    report: dict[str, Any] | None = None
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


def first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "").strip()[:160]


def weights_sharded(module: Any, hierarchy: tuple[int, ...]) -> tuple[int, int]:
    """(weight matrices split over >= 4 ranks, weight matrices) among the function's arguments. The
    LayerNorm gamma and beta are left out: layer_norm needs them whole (`[B, B]`) wherever x is split
    on an axis other than the last, which it always is here."""
    from sbpc.dialects.sbp import SplitAttr
    from sbpc.runtime import simulator

    fn = simulator.find_function(module, "main")
    args = [a for a in list(fn.body.block.args)[1:] if len(a.type.get_shape()) == 2]
    ways = [math.prod(h for e, h in zip(a.type.nd_sbp, hierarchy, strict=True) if isinstance(e, SplitAttr))
            for a in args]
    return sum(1 for w in ways if w >= 4), len(ways)


def evaluate(path: Path, options: str, dims: GptDims, result: Result) -> None:
    """In-process: infer, plan_objective, lower and count bytes. Failures go to result.errors."""
    import sbpc
    from sbpc.runtime import simulator

    try:
        inferred = sbpc.compile(sbpc.parse_file(str(path)), f"infer-sbp{{{options}}}")
    except sbpc.Error as error:
        result.errors["infer"] = first_line(str(error))
        return
    result.sharded_4way = weights_sharded(inferred.module, dims.mesh)
    try:
        from sbpc.passes.infer_sbp.global_search.objective import plan_objective
    except ImportError as error:
        result.errors["objective"] = str(error)
    else:
        o = plan_objective(inferred.module)
        result.objective = {"total_s": o.total_s, "compute_s": o.compute_s, "comm_s": o.comm_s,
                            "memory_bytes": o.memory_bytes}
    lowered = sbpc.compile(inferred, "materialize-boxing,lower-boxing")
    result.bytes_sent = simulator.modelled_bytes(lowered.module, "main")


def json_report(command: list[str], path: Path, options: str, result: Result) -> None:
    proc = subprocess.run([*command, str(path), f"--infer-sbp={options}", "--sbp-report=json", "-o", os.devnull],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        result.errors["report"] = f"exit {proc.returncode}: {first_line(proc.stderr)}"
        return
    text = proc.stderr
    result.report = json.loads(text[text.index("{"):text.rindex("}") + 1])


def time_processes(command: list[str], paths: dict[str, Path], options: dict[str, str], runs: int,
                   base: Result, results: dict[str, Result]) -> None:
    """Rounds of cold processes: parse+print, then every variant that has not failed."""
    for r in range(runs):
        cpu, wall = run_once([*command, str(paths["megatron"]), "-o", os.devnull])
        base.cpu.append(cpu)
        base.wall.append(wall)
        for name, result in results.items():
            if "process" in result.errors:
                continue
            argv = [*command, str(paths[VARIANTS[name].weights]), f"--infer-sbp={options[name]}", "-o", os.devnull]
            try:
                cpu, wall = run_once(argv)
            except subprocess.CalledProcessError as error:
                result.errors["process"] = f"exit {error.returncode}"
                continue
            result.cpu.append(cpu)
            result.wall.append(wall)
        print(f"  round {r + 1}/{runs}: parse+print {base.cpu[-1]:.2f} s, "
              + ", ".join(f"{n} {res.cpu[-1]:.2f} s" for n, res in results.items() if res.cpu), file=sys.stderr)


def count_ops(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("%") and " = sbp." in line)


def run(layers: list[int], variants: list[str], runs: int, dims: GptDims) -> dict[int, Any]:
    command = sbp_opt_command()
    out: dict[int, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gpt_stack_") as tmp:
        for n in layers:
            paths = {}
            for weights in ("megatron", "free"):
                paths[weights] = Path(tmp) / f"gpt{n}_{weights}.mlir"
                paths[weights].write_text(gpt_stack(n, dims, weights), encoding="utf-8")
            options = {name: VARIANTS[name].options(n, dims) for name in variants}
            results = {name: Result() for name in variants}
            print(f"L={n}", file=sys.stderr)
            for name, result in results.items():
                start = time.perf_counter()
                evaluate(paths[VARIANTS[name].weights], options[name], dims, result)
                json_report(command, paths[VARIANTS[name].weights], options[name], result)
                print(f"  {name}: evaluated in {time.perf_counter() - start:.1f} s"
                      + (f" ({result.errors})" if result.errors else ""), file=sys.stderr)
            base = Result()
            time_processes(command, paths, options, runs, base, results)
            out[n] = {"ops": count_ops(paths["megatron"].read_text()), "base": base, "results": results,
                      "options": options}
    return out


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1e3:.3f}"


def _failed(result: Result, *keys: str) -> str | None:
    for key in keys:
        if key in result.errors:
            return f"failed: {result.errors[key]}"
    return None


def plan_rows(data: dict[int, Any], dims: GptDims) -> list[str]:
    lines = [
        "| L | ops | variant | modelled total (ms) | compute (ms) | comm (ms) | memory/rank (MiB) "
        "| report: comm (ms) | bytes sent | × Megatron | weight matrices ≥ 4-way | solver | solve (s) | gap |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for n, entry in data.items():
        mega = megatron_bytes(n, dims)
        for name, r in entry["results"].items():
            if (why := _failed(r, "infer")) is not None:
                lines.append(f"| {n} | {entry['ops']} | {name} | {why} |" + " |" * 10)
                continue
            obj = r.objective
            objective = (f"{_ms(obj['total_s'])} | {_ms(obj['compute_s'])} | {_ms(obj['comm_s'])} | "
                         f"{obj['memory_bytes'] / MIB:.2f}") if obj else f"{_failed(r, 'objective')} | – | – | –"
            g = (r.report or {}).get("global")
            solve = (f"{g.get('solver', '–')} | {g['solve_s']:.3f} | {g['gap']:.2%}" if g else
                     (_failed(r, "report") or "– (not rule=global)") + " | – | –")
            total = ((r.report or {}).get("totals") or {}).get(VARIANTS[name].rule)
            comm = f"{total['modelled_us'] / 1e3:.3f}" if total else (_failed(r, "report") or "–")
            lines.append(
                f"| {n} | {entry['ops']} | {name} | {objective} | {comm} | {r.bytes_sent:,} "
                f"| {r.bytes_sent / mega:.2f} | {r.sharded_4way[0]}/{r.sharded_4way[1]} | {solve} |")
    return lines


def process_rows(data: dict[int, Any]) -> list[str]:
    lines = [
        "| L | ops | variant | sbp-opt flags | CPU (s) | wall (s) | × parse+print (CPU) | added × parse+print |",
        "|---:|---:|---|---|---:|---:|---:|---:|",
    ]
    for n, entry in data.items():
        base: Result = entry["base"]
        b = statistics.median(base.cpu)
        lines.append(f"| {n} | {entry['ops']} | parse + verify + print | `-o /dev/null` | {b:.2f} | "
                     f"{statistics.median(base.wall):.2f} | 1.00 | – |")
        for name, r in entry["results"].items():
            if not r.cpu or "process" in r.errors:
                lines.append(f"| {n} | {entry['ops']} | {name} | `--infer-sbp={entry['options'][name]}` "
                             f"| failed ({r.errors.get('process', 'not run')}) | – | – | – |")
                continue
            ratio = statistics.median(c / p for c, p in zip(r.cpu, base.cpu, strict=False))
            lines.append(f"| {n} | {entry['ops']} | {name} | `--infer-sbp={entry['options'][name]}` | "
                         f"{statistics.median(r.cpu):.2f} | {statistics.median(r.wall):.2f} | {ratio:.2f} "
                         f"| {ratio - 1:.2f} |")
    return lines


def checks(data: dict[int, Any], dims: GptDims) -> list[tuple[str, bool | None, str]]:
    """(check, met / missed / None = not measured, figures)."""
    out: list[tuple[str, bool | None, str]] = []

    def cpu(n: int, name: str) -> float | None:
        r = data.get(n, {}).get("results", {}).get(name)
        return statistics.median(r.cpu) if r is not None and r.cpu and "process" not in r.errors else None

    for name in ("global", "global-free", *BUDGETED):
        if 24 in data and (t := cpu(24, name)) is not None:
            ratio = t / statistics.median(data[24]["base"].cpu)
            out.append((f"L=24 `{name}` whole process ≤ 4× parse+print", ratio <= 4.0, f"{ratio:.2f}×"))
        else:
            out.append((f"L=24 `{name}` whole process ≤ 4× parse+print", None, "not measured"))
        t24, t48 = cpu(24, name), cpu(48, name)
        if t24 is not None and t48 is not None:
            out.append((f"`{name}` time(L=48) / time(L=24) ≤ 2.3", t48 / t24 <= 2.3, f"{t48 / t24:.2f}"))
        else:
            out.append((f"`{name}` time(L=48) / time(L=24) ≤ 2.3", None, "not measured"))
    for name, limit in (("global", 0.0), ("global-free", 0.0), ("global-free-mem", 0.01), ("global-free-tight", 0.01)):
        gaps = [(n, e["results"][name].report["global"]["gap"]) for n, e in data.items()
                if name in e["results"] and (e["results"][name].report or {}).get("global")]
        label = f"`{name}` gap {'0' if limit == 0 else '≤ 1 %'}"
        out.append((label, all(g <= limit + 1e-12 for _, g in gaps), ", ".join(f"L={n}: {g:.2%}" for n, g in gaps))
                   if gaps else (label, None, "not measured"))
    for name, (n, e) in ((name, item) for name in BUDGETED for item in data.items()):
        r = e["results"].get(name)
        if r is None or r.objective is None or r.sharded_4way is None or r.bytes_sent is None:
            continue
        budget = int(e["options"][name].split("mem=")[1])
        ok = (r.sharded_4way[0] == r.sharded_4way[1] and r.objective["memory_bytes"] <= budget
              and r.bytes_sent <= 1.05 * megatron_bytes(n, dims))
        gap = (r.report or {}).get("global", {}).get("gap")
        proved = "" if gap is None else (", the plan proved optimal" if gap == 0 else f", gap {gap:.2%}")
        out.append((f"L={n} `{name}`: every weight matrix ≥ 4-way, within mem, ≤ 1.05× Megatron", ok,
                    f"{r.sharded_4way[0]}/{r.sharded_4way[1]} matrices, {r.objective['memory_bytes']:,} ≤ "
                    f"{budget:,} B, {r.bytes_sent / megatron_bytes(n, dims):.3f}×{proved}"))
    for n, e in data.items():
        r = e["results"].get("global")
        if r is not None and r.bytes_sent is not None and "infer" not in r.errors:
            out.append((f"L={n} `global` (annotated) ≤ Megatron volume", r.bytes_sent <= megatron_bytes(n, dims),
                        f"{r.bytes_sent:,} vs {megatron_bytes(n, dims):,}"))
    return out


def render(data: dict[int, Any], args: argparse.Namespace, dims: GptDims, seconds: float) -> str:
    marks = {True: "met", False: "**missed**", None: "not measured"}
    lines = [
        "# GPT stack: rule=oneflow, rule=cost, rule=global (annotated and free weights)",
        "",
        f"Generated by `python bench/bench_gpt_stack.py --layers {','.join(map(str, args.layers))} --variants "
        f"{','.join(args.variants)} --runs {args.runs}` in {seconds:.0f} s. Machine: {os.cpu_count()} cores "
        f"({platform.processor() or platform.machine()}), CPython {platform.python_version()}; load average "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} at the end. Program: bench/gen_gpt.py, b={dims.batch}, "
        f"s={dims.seq}, h={dims.hidden}, {dims.heads} heads, MLP {dims.ffn}, {dims.elt}, mesh "
        f"{dims.mesh[0]}×{dims.mesh[1]} (data × tensor), x `[S(0), B]`, result converted to `[S(0), B]`. "
        "Megatron volume = two ring all-reduces of the local b/d·s·h activation over the 4 tensor-parallel "
        f"ranks per block = {megatron_bytes(1, dims):,} B per block (all ranks). `mem` = ¼ of the weights' "
        "bytes + 3 MiB (`global-free-mem`, issue 13's budget) or the per-device memory of Megatron's own layout "
        "(`global-free-tight`: ¼ of the weights + its activations, no room for a whole weight).",
        "",
        "## Plans",
        "",
        "Modelled time and memory from `plan_objective` on the inferred module; bytes sent by the lowered plan "
        "(materialize-boxing + lower-boxing, all ranks, as `sbp-run` counts); solver, solve time and gap from "
        "the `--sbp-report=json` \"global\" section (rule=global only).",
        "",
        *plan_rows(data, dims),
        "",
        "## Whole `sbp-opt` processes",
        "",
        f"Median CPU time (user + system of the child) over {args.runs} rounds; in each round parse + verify + "
        "print runs first, then every variant, each a fresh (cold) process. `× parse+print` is the median over "
        "rounds of variant / baseline of the same round.",
        "",
        *process_rows(data),
        "",
        "## Checks (issue 13)",
        "",
        *(f"* {label}: {marks[ok]}" + (f" ({figures})" if ok is not None else "")
          for label, ok, figures in checks(data, dims)),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=lambda s: [int(v) for v in s.split(",")], default=list(LAYERS))
    parser.add_argument("--variants", type=lambda s: s.split(","), default=list(VARIANTS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "RESULTS_gpt_stack.md"))
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    dims = GptDims()
    start = time.perf_counter()
    data = run(args.layers, args.variants, args.runs, dims)
    publish(render(data, args, dims, time.perf_counter() - start), args.out)
    return 0


def publish(text: str, out: str) -> None:
    """Print the report; also write it to `out` unless that is `-`."""
    print(text, end="")
    if out != "-":
        Path(out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
