"""One AdamW training step planned by `infer-sbp{rule=global}` under three memory budgets (issue 24 item 5).

    python bench/train_step.py [--layers 1,4,12,24] [--models stack,gpt2] [--time-limit S]
                               [--process-layers 24] [--out bench/RESULTS_train_step.md]

Models, each made one AdamW step (lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay) on the 2x4
"npu" mesh [[0, 1, 2, 3], [4, 5, 6, 7]] (axis 0 data parallel: the batch `[S(0), B]`):

* `stack` — the GPT stack of bench/gen_gpt.py (b=8, s=32, h=256, 8 heads, MLP 4h, f32; the generator
  bench/bench_gpt_stack.py and test_gpt_stack.py use), its output `y` given the loss `sum(y * y)`, made
  a step by the `autodiff` pass (every weight a parameter);
* `gpt2` — examples/torch/gpt2.py (vocab 1024, context 64, width 256, 8 heads, tied head; batch 2 x 16
  tokens) by `sbpc.from_torch(..., loss=next-token cross-entropy, targets=(next tokens,), optimizer=adamw)`.

For each L, two layouts are priced by writing them as given SBPs (every argument fixed), planning the
ops by `rule=cost` and reading the plan's per-device memory from rule=global's objective
(`plan_objective`, what the report prints): "Megatron TP x plain DP" (weights column / row split on axis
1 as Megatron — the GPT stack's wq/wk/wv/w1 `[B, S(1)]`, wo/w2 `[B, S(0)]`, LayerNorms `[B, B]`; GPT-2
as bench/torch_frontend.py — and every m, v in its weight's SBP, replicated over the data axis) and
"Megatron TP x ZeRO-1" (the same weights, every m and v also split over the data axis 0 on a tensor axis
axis 1 does not split). Each is a concrete plan of its layout, so its memory is a budget the free search
can meet (that plan is one of its points). Then the free step (every weight and state SBP left to the
search) is planned with no `mem`, with `mem` = the plain-DP layout's memory and with `mem` = the ZeRO-1
layout's memory: modelled time (compute + communication), per-device memory, the bytes the lowered plan
sends (summed over ranks, sbp-run's count), the solver, its time and gap, and which layout came out (the
weights' and the m/v's SBPs, counted). Last, the whole-process time of planning the L=`--process-layers`
step: `sbp-opt STEP.mlir --infer-sbp=rule=global -o /dev/null` (CPU and wall, one cold process).

`--time-limit` is rule=global's time limit per HiGHS run (the report states the bound and gap it
reached); 0 leaves the solver unlimited. Measured in this process, on the checkout as it stands.
"""

from __future__ import annotations

import argparse
import collections
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_sbp_opt_process import run_once, sbp_opt_command
from bench.gen_gpt import GptDims, gpt_stack

ROOT = Path(__file__).resolve().parents[1]
MESH = [[0, 1, 2, 3], [4, 5, 6, 7]]
ADAMW = {"kind": "adamw", "lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0}
STEP_PASS = "autodiff{optimizer=adamw lr=0.001 beta1=0.9 beta2=0.999 eps=0.00000001}"
LAYOUTS = ("megatron-dp", "megatron-zero1")
MIB = 1 << 20


# ---------------------------------------------------------------------------
# The step programs
# ---------------------------------------------------------------------------


@dataclass
class Step:
    """A training step program and, by argument index, Megatron's SBP of its inputs and weights."""

    program: Any
    megatron: dict[int, str]
    """Every argument but the optimizer state: its SBP in the Megatron layout."""


def stack_loss_text(layers: int, dims: GptDims = GptDims()) -> str:
    """bench/gen_gpt.py's free-weight stack, its output `y` given the loss `sum(y * y)` (a 0-d result)."""
    text = gpt_stack(layers, dims, "free")
    match = re.search(r"  %res = sbp.to_global (%\S+) : (.+?) -> (.+)\n  func.return %res : .+\n", text)
    assert match is not None, "gen_gpt's result conversion moved"
    y, ty, x_ty = match.group(1), match.group(2), match.group(3)
    loss = "!sbp.tensor<f32, @mesh>"
    tail = (f"  %sq = sbp.mul {y}, {y} : {ty}, {ty} -> {ty}\n"
            f"  %loss = sbp.reduce_sum %sq {{axes = array<i64: 0, 1, 2>}} : {ty} -> {loss}\n"
            f"  func.return %loss : {loss}\n")
    text = text[:match.start()] + tail + text[match.end():]
    return text.replace(f") -> {x_ty} {{", f") -> {loss} {{", 1)


def stack_step(layers: int, dims: GptDims = GptDims()) -> Step:
    import sbpc

    program = sbpc.compile(sbpc.parse(stack_loss_text(layers, dims), f"<gpt stack L={layers}>"), STEP_PASS)
    megatron = {0: "[S(0), B]"}
    k = 1
    for _ in range(layers):
        for _, _, sbp in dims.weight_shapes():
            megatron[k] = sbp
            k += 1
    return Step(program, megatron)


def next_token_loss(logits: Any, targets: Any) -> Any:
    from torch.nn import functional as F

    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def gpt2_step(layers: int) -> Step:
    import torch

    import sbpc
    from bench.torch_frontend import load, megatron_params

    torch.manual_seed(0)
    model = load("gpt2").GPT2(layers=layers)
    tokens = torch.randint(0, 1024, (2, 17))
    args, targets = (tokens[:, :-1].contiguous(),), (tokens[:, 1:].contiguous(),)
    data = {"idx": "[S(0), B]", "target0": "[S(0), B]"}
    program = sbpc.from_torch(model, args, mesh=MESH, device="npu", sbp=data, loss=next_token_loss,
                              targets=targets, optimizer=ADAMW)
    by_name = megatron_params("gpt2", model)
    fn = _function(program)
    megatron = {}
    names = [a.name_hint for a in fn.body.block.args]
    torch_names = {re.sub(r"[^A-Za-z0-9_]", "_", n): n for n, _ in model.named_parameters()}
    spec = _spec(program)
    state = set(spec.state)
    for i, name in enumerate(names):
        if i in state:
            continue
        megatron[i] = by_name.get(torch_names.get(name, ""), data.get(name, "[B, B]"))
    return Step(program, megatron)


MODELS: dict[str, Callable[[int], Step]] = {"stack": stack_step, "gpt2": gpt2_step}


def _function(program: Any) -> Any:
    from sbpc.runtime import simulator

    return simulator.find_function(program.module, "main")


def _spec(program: Any) -> Any:
    from sbpc.runtime import train_step

    spec = train_step.spec_of(_function(program))
    assert spec is not None
    return spec


# ---------------------------------------------------------------------------
# Layouts written as given SBPs
# ---------------------------------------------------------------------------


def zero1(weight_sbp: str, shape: tuple[int, ...], data: int) -> str:
    """A weight's SBP with axis 0 (data parallel) also split, on the first tensor axis axis 1 does not
    split and `data` divides (ZeRO-1's shard of m and v); the weight's own SBP where there is none."""
    entries = [e.strip() for e in weight_sbp.strip("[]").split(",")]
    taken = {int(m.group(1)) for m in re.finditer(r"S\((\d+)\)", entries[1])}
    for k, n in enumerate(shape):
        if k not in taken and n % data == 0:
            return f"[S({k}), {entries[1]}]"
    return weight_sbp


def layout(step: Step, kind: str) -> dict[int, str]:
    """Every argument's SBP in the layout `kind` (`megatron-dp` or `megatron-zero1`)."""
    spec = _spec(step.program)
    fn = _function(step.program)
    out = dict(step.megatron)
    for k, p in enumerate(spec.params):
        shape = fn.function_type.inputs.data[p].get_shape()
        sbp = zero1(step.megatron[p], shape, len(MESH)) if kind == "megatron-zero1" else step.megatron[p]
        out[spec.state[2 * k]] = out[spec.state[2 * k + 1]] = sbp
    return out


def with_arguments(program: Any, sbps: dict[int, str]) -> Any:
    """`program` with the arguments of `sbps` typed with those SBPs (the function type updated)."""
    from xdsl.dialects.builtin import FunctionType

    import sbpc
    from sbpc.dialects.sbp import parse_sbp_text
    from sbpc.dialects.tensor_type import GlobalTensorType
    from sbpc.runtime import simulator

    module = program.module.clone()
    fn = simulator.find_function(module, "main")
    block = fn.body.block
    for i, text in sorted(sbps.items()):
        old = block.args[i]
        ty = old.type
        new = block.insert_arg(GlobalTensorType(ty.get_shape(), ty.element_type, ty.placement, parse_sbp_text(text)), i)
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
        block.erase_arg(old)
    fn.function_type = FunctionType.from_lists([a.type for a in block.args], list(fn.function_type.outputs.data))
    return sbpc.parse(str(sbpc.Program(module, program.source, {}, program.ctx)), "<layout>")


# ---------------------------------------------------------------------------
# Planning and measuring
# ---------------------------------------------------------------------------


@dataclass
class Plan:
    """One rule=global plan of a step: the report's figures, the bytes sent, the layout chosen."""

    options: str
    total_s: float | None = None
    compute_s: float | None = None
    comm_s: float | None = None
    memory: int | None = None
    bytes_sent: int | None = None
    solver: str = "–"
    solve_s: float | None = None
    wall_s: float | None = None
    gap: float | None = None
    weights: str = "–"
    state: str = "–"
    error: str | None = None
    bytes_note: str | None = None
    """Why the bytes are the report's count rather than the lowered plan's (lowering failed)."""


def pattern(sbps: list[str]) -> str:
    """`[B, S(1)]`×48, `[B, B]`×24 — the SBPs of a class of values, most frequent first."""
    counts = collections.Counter(sbps).most_common()
    return ", ".join(f"`{s}`×{n}" for s, n in counts)


def plan(program: Any, options: str, given: dict[int, str] | None = None) -> Plan:
    """rule=global with `options` on `program` (`given`: the SBPs written on its arguments): the report's
    figures and chosen layout, and the bytes the lowered plan sends (the report's count where lowering
    fails, marked †)."""
    import sbpc
    from sbpc.runtime import simulator

    found = Plan(options)
    mem = re.search(r"mem=(\d+)", options)
    limit = re.search(r"time-limit=([\d.]+)", options)
    start = time.perf_counter()
    try:
        report = sbpc.report(program, "global", int(mem.group(1)) if mem else None,
                             float(limit.group(1)) if limit else None)
    except sbpc.Error as error:
        found.error = str(error).strip().splitlines()[0][:240]
        found.wall_s = time.perf_counter() - start
        return found
    except Exception as error:  # an internal error of the search: reported in the table, the bench goes on
        found.error = f"internal error {type(error).__name__}: {str(error).strip()[:200]}"
        found.wall_s = time.perf_counter() - start
        return found
    found.wall_s = time.perf_counter() - start
    section = report["global"]
    found.total_s, found.compute_s, found.comm_s = section["objective_s"], section["compute_s"], section["comm_s"]
    found.memory, found.solver, found.solve_s, found.gap = (section["memory_bytes"], section["solver"],
                                                            section["solve_s"], section["gap"])
    fn = _function(program)
    spec = _spec(program)
    names = [f"%{a.name_hint}" for a in fn.body.block.args]
    chosen = {i: section["free_args"].get(names[i]) or (given or {}).get(i, "?") for i in range(len(names))}
    found.weights = pattern([chosen[i] for i in spec.params])
    found.state = pattern([chosen[i] for i in spec.state])
    try:
        lowered = sbpc.compile(program, f"infer-sbp{{{options}}},materialize-boxing,lower-boxing")
        found.bytes_sent = simulator.modelled_bytes(lowered.module, "main")
    except sbpc.Error as error:
        found.bytes_sent = int(report["totals"]["global"]["bytes_sent_all_ranks"])
        found.bytes_note = str(error).strip().splitlines()[0][:160]
    return found


def price(program: Any, given: dict[int, str]) -> Plan:
    """A layout written as given SBPs (every argument), planned op by op (`rule=cost`: each op's cheapest
    signature given its inputs) and priced by rule=global's objective (`plan_objective`: compute +
    communication, the return's conversions, per-device memory) — fast and deterministic where a
    rule=global search of the fixed layout is a whole solve; the bytes are the lowered plan's."""
    import sbpc
    from sbpc.passes.infer_sbp.global_search.objective import plan_objective
    from sbpc.runtime import simulator

    found = Plan("rule=cost", solver="rule=cost", gap=None)
    start = time.perf_counter()
    try:
        inferred = sbpc.compile(program, "infer-sbp{rule=cost}")
        objective = plan_objective(inferred.module)
        lowered = sbpc.compile(inferred, "materialize-boxing,lower-boxing")
    except sbpc.Error as error:
        found.error = str(error).strip().splitlines()[0][:240]
        return found
    found.wall_s = found.solve_s = time.perf_counter() - start
    found.total_s, found.compute_s, found.comm_s = objective.total_s, objective.compute_s, objective.comm_s
    found.memory = int(objective.memory_bytes)
    found.bytes_sent = simulator.modelled_bytes(lowered.module, "main")
    spec = _spec(program)
    found.weights = pattern([given[i] for i in spec.params])
    found.state = pattern([given[i] for i in spec.state])
    return found


@dataclass
class Row:
    """One (model, L): the step's size, the priced layouts, the three free plans."""

    model: str
    layers: int
    ops: int = 0
    build_s: float = 0.0
    priced: dict[str, Plan] = field(default_factory=dict)
    plans: dict[str, Plan] = field(default_factory=dict)
    error: str | None = None


def measure(model: str, layers: int, limit: float) -> Row:
    row = Row(model, layers)
    start = time.perf_counter()
    try:
        step = MODELS[model](layers)
    except Exception as error:  # a model the frontend or autodiff cannot take yet: reported, not fatal
        row.error = f"{type(error).__name__}: {str(error).strip().splitlines()[-1][:200]}"
        return row
    row.build_s = time.perf_counter() - start
    row.ops = sum(1 for op in _function(step.program).body.block.ops)
    extra = f" time-limit={limit:g}" if limit else ""
    for kind in LAYOUTS:
        given = layout(step, kind)
        row.priced[kind] = price(with_arguments(step.program, given), given)
        print(f"  {model} L={layers} {kind}: {_summary(row.priced[kind])}", file=sys.stderr, flush=True)
    budgets = {"no mem": None, **{kind: row.priced[kind].memory for kind in LAYOUTS}}
    for name, mem in budgets.items():
        if name != "no mem" and mem is None:
            row.plans[name] = Plan("–", error=f"the {name} layout was not priced")
            continue
        options = f"rule=global{extra}" + (f" mem={mem}" if mem is not None else "")
        row.plans[name] = plan(step.program, options)
        print(f"  {model} L={layers} free, {name}: {_summary(row.plans[name])}", file=sys.stderr, flush=True)
    return row


def _summary(p: Plan) -> str:
    if p.error:
        return f"failed: {p.error}"
    return (f"{_us(p.total_s)} µs, {_mib(p.memory)} MiB, {p.bytes_sent} B, {p.solver} {p.solve_s:.1f} s "
            f"(wall {p.wall_s:.1f} s), gap {_gap(p.gap)}")


def process_time(layers: int, limit: float) -> dict[str, Any]:
    """CPU and wall seconds of `sbp-opt STEP --infer-sbp=rule=global -o /dev/null` on the stack's step."""
    out: dict[str, Any] = {"layers": layers, "limit": limit}
    with tempfile.TemporaryDirectory(prefix="train_step_") as tmp:
        path = Path(tmp) / f"stack{layers}_step.mlir"
        path.write_text(str(stack_step(layers).program), encoding="utf-8")
        options = "rule=global" + (f" time-limit={limit:g}" if limit else "")
        argv = [*sbp_opt_command(), str(path), f"--infer-sbp={options}", "-o", "/dev/null"]
        out["options"] = options
        try:
            out["cpu"], out["wall"] = run_once(argv)
        except subprocess.CalledProcessError as error:
            out["error"] = f"exit {error.returncode}"
        base = [*sbp_opt_command(), str(path), "-o", "/dev/null"]
        out["parse_cpu"], out["parse_wall"] = run_once(base)
    return out


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _us(s: float | None) -> str:
    return "–" if s is None else f"{s * 1e6:.1f}"


def _mib(b: int | None) -> str:
    return "–" if b is None else f"{b / MIB:.2f}"


def _gap(g: float | None) -> str:
    return "–" if g is None else f"{g:.2%}"


def table(rows: list[Row]) -> list[str]:
    lines = [
        "| model | L | ops | plan | `mem` | modelled (µs) | compute + comm (µs) | memory/device (MiB) | bytes sent "
        "| solver | solve (s) | gap | weights' SBP | m, v SBP |",
        "|---|---:|---:|---|---:|---:|---|---:|---:|---|---:|---:|---|---|",
    ]
    for row in rows:
        head = f"| {row.model} | {row.layers} | {row.ops}"
        if row.error:
            lines.append(f"{head} | failed: {row.error} |" + " |" * 11)
            continue
        entries = [(f"priced: {k}", "(given)", p) for k, p in row.priced.items()]
        entries += [(f"free, {k}", _mib(row.priced[k].memory) if k in row.priced else "∞", p)
                    for k, p in row.plans.items()]
        for name, mem, p in entries:
            if p.error:
                lines.append(f"{head} | {name} | {mem} | failed: {p.error} |" + " |" * 9)
                continue
            sent = f"{p.bytes_sent:,}" + (" †" if p.bytes_note else "")
            lines.append(f"{head} | {name} | {mem} | {_us(p.total_s)} | {_us(p.compute_s)} + {_us(p.comm_s)} "
                         f"| {_mib(p.memory)} | {sent} | {p.solver} | {p.solve_s:.1f} | {_gap(p.gap)} "
                         f"| {p.weights} | {p.state} |")
    return lines


def write(rows: list[Row], process: dict[str, Any] | None, args: argparse.Namespace, out: Path) -> None:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [
        "# One AdamW training step under rule=global (`python bench/train_step.py`)",
        "",
        f"Checkout {commit} (working tree as it stood), {platform.machine()} {platform.python_version()}, "
        f"`--layers {args.layers} --models {args.models} --time-limit {args.time_limit:g}`; "
        "2x4 mesh, axis 0 data parallel. See the script's docstring for the models and layouts.",
        "",
        *table(rows),
        "",
    ]
    notes = sorted({p.bytes_note for row in rows for p in [*row.priced.values(), *row.plans.values()] if p.bytes_note})
    if notes:
        lines += ["† the report's count of the plan's bytes: compiling the plan to collectives failed with "
                  + "; ".join(f"`{n}`" for n in notes), ""]
    if process is not None:
        lines += [f"Whole process, `sbp-opt stack{process['layers']}_step.mlir --infer-sbp='{process.get('options')}'"
                  f" -o /dev/null`: " + (f"failed ({process['error']})" if "error" in process else
                                         f"CPU {process['cpu']:.1f} s, wall {process['wall']:.1f} s")
                  + f" (parse + print alone: CPU {process['parse_cpu']:.1f} s, wall {process['parse_wall']:.1f} s).",
                  ""]
    out.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="1,4,12,24")
    parser.add_argument("--models", default="stack,gpt2")
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--process-layers", type=int, default=24)
    parser.add_argument("--out", default=str(ROOT / "bench" / "RESULTS_train_step.md"))
    args = parser.parse_args()
    rows: list[Row] = []
    out = Path(args.out)
    for model in args.models.split(","):
        for layers in (int(n) for n in args.layers.split(",")):
            print(f"{model} L={layers}", file=sys.stderr, flush=True)
            rows.append(measure(model, layers, args.time_limit))
            write(rows, None, args, out)  # what is measured so far, should a later size not finish
    process = process_time(args.process_layers, args.time_limit) if args.process_layers else None
    write(rows, process, args, out)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
