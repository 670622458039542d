"""From PyTorch (SPEC §7): sbpc's rule=global plan of the example models against DTensor's Megatron plan.

    python bench/torch_frontend.py            # both examples on a 2x4 mesh: plans, modelled time, bytes
    python bench/torch_frontend.py --time     # capture + plan of the 4-layer GPT-2, whole process, by phase

For examples/torch/gpt2.py and examples/torch/llama.py on the mesh [[0, 1, 2, 3], [4, 5, 6, 7]] (axis 0
data parallel: the token ids are [S(0), B]; axis 1 of size 4):

* **sbpc, Megatron layout** — the weights fixed to Megatron's layout (q/k/v/fc/w1/w3 column-split:
  weight [B, S(0)], bias [B, S(0)]; proj/wo/w2 row-split: weight [B, S(1)]; the rest [B, B]) and
  planned by rule=global: its modelled time, bytes and per-device memory.
* **sbpc, free weights** — every weight free, rule=global with `mem` = that Megatron memory: the plan
  it chose (weights by SBP), modelled time, and bytes measured by the simulator (`sbp-run`'s count).
* **DTensor Megatron** — `parallelize_module` with ColwiseParallel / RowwiseParallel on the mesh's
  axis 1 (`init_device_mesh("cpu", (2, 4))["tp"]`), each data-parallel half of the batch on its row,
  run forward on 8 gloo ranks (spawned); its collectives recorded by a dispatch mode (the functional
  collectives DTensor issues, which torch's CommDebugMode counts) and their bytes counted as sbpc
  counts its own (direct algorithm: all-reduce 2(n-1)/n·B per rank, all-gather (n-1)·shard,
  reduce-scatter and all-to-all (n-1)/n·B); its output is checked against eager.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

START, CPU_START = time.perf_counter(), time.process_time()
ROOT = Path(__file__).resolve().parents[1]
MESH = [[0, 1, 2, 3], [4, 5, 6, 7]]
INPUT = {"gpt2": "idx", "llama": "tokens"}
COLWISE = {"gpt2": r"h\.\d+\.(attn\.[qkv]|fc)$", "llama": r"layers\.\d+\.(attn\.w[qkv]|w1|w3)$"}
ROWWISE = {"gpt2": r"h\.\d+\.(attn\.proj|proj)$", "llama": r"layers\.\d+\.(attn\.wo|w2)$"}


def load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / "torch" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def megatron_params(name: str, model: Any) -> dict[str, str]:
    """Megatron's layout on axis 1 of the mesh, as `from_torch(params=...)`; everything else [B, B]."""
    out = {}
    for pname, _ in model.named_parameters():
        module, _, kind = pname.rpartition(".")
        if re.match(COLWISE[name], module):
            out[pname] = "[B, S(0)]"
        elif re.match(ROWWISE[name], module):
            out[pname] = "[B, S(1)]" if kind == "weight" else "[B, B]"
        else:
            out[pname] = "[B, B]"
    return out


# ---------------------------------------------------------------------------
# sbpc
# ---------------------------------------------------------------------------


def sbpc_side(name: str) -> dict[str, Any]:
    import sbpc

    model, args = load(name).make()
    megatron = megatron_params(name, model)
    sbp = {INPUT[name]: "[S(0), B]"}
    fixed = sbpc.from_torch(model, args, mesh=MESH, sbp=sbp, params=megatron)
    fixed_report = sbpc.report(fixed, rule="global")["global"]
    free = sbpc.from_torch(model, args, mesh=MESH, sbp=sbp)
    mem = int(fixed_report["memory_bytes"])
    free_report = sbpc.report(free, rule="global", mem=mem)["global"]
    pipeline = f"infer-sbp{{rule=global mem={mem}}},materialize-boxing,lower-boxing,spmdize"
    run = sbpc.run(free, pipeline=pipeline)
    fixed_run = sbpc.run(fixed, pipeline="infer-sbp{rule=global},materialize-boxing,lower-boxing,spmdize")
    weights = {k.lstrip("%"): v for k, v in free_report["free_args"].items()}
    return {"megatron": fixed_report, "free": free_report, "free_bytes": run.bytes_sent, "free_ok": run.ok,
            "megatron_bytes": fixed_run.bytes_sent, "megatron_ok": fixed_run.ok, "weights": weights, "mem": mem}


# ---------------------------------------------------------------------------
# DTensor
# ---------------------------------------------------------------------------


def _recorder() -> Any:
    """A dispatch mode recording (collective, bytes this rank sends) of every functional collective."""
    import torch
    from torch.distributed.distributed_c10d import _resolve_process_group
    from torch.utils._python_dispatch import TorchDispatchMode

    funcol = torch.ops._c10d_functional

    class Recorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.sent: list[tuple[str, int]] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            packet = getattr(func, "overloadpacket", None)
            if packet in (funcol.all_reduce, funcol.all_gather_into_tensor, funcol.reduce_scatter_tensor,
                          funcol.all_to_all_single):
                group = _resolve_process_group(args[-1])
                n, nbytes = group.size(), args[0].numel() * args[0].element_size()
                kind = packet.__name__
                share = {"all_reduce": 2 * (n - 1) * nbytes // n, "all_gather_into_tensor": (n - 1) * nbytes}
                self.sent.append((kind, share.get(kind, (n - 1) * nbytes // n)))
            return func(*args, **(kwargs or {}))

    return Recorder()


def _dtensor_rank(name: str, rank: int, port: int, queue: Any) -> None:
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.debug import CommDebugMode
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=8)
    try:
        mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
        model, (ids,) = load(name).make()
        with torch.no_grad():
            want = model(ids)
        plan: dict[str, Any] = {}
        for module_name, _ in model.named_modules():
            if re.match(COLWISE[name], module_name):
                plan[module_name] = ColwiseParallel()
            elif re.match(ROWWISE[name], module_name):
                plan[module_name] = RowwiseParallel()
        parallelize_module(model, mesh["tp"], plan)
        row = mesh.get_coordinate()[0]
        half = ids.shape[0] // 2
        recorder, counter = _recorder(), CommDebugMode()
        with torch.no_grad(), counter, recorder:
            out = model(ids[row * half:(row + 1) * half])
        error = float((out - want[row * half:(row + 1) * half]).abs().max())
        queue.put((rank, recorder.sent, counter.get_total_counts(), error))
    finally:
        dist.destroy_process_group()


def dtensor_side(name: str) -> dict[str, Any]:
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")  # forking after this process ran torch ops can hang in its thread pools
    queue = ctx.Queue()
    procs = [ctx.Process(target=_dtensor_rank, args=(name, r, port, queue)) for r in range(8)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join()
    sent = sum(b for _, rec, _, _ in results for _, b in rec)
    kinds = sorted({k for _, rec, _, _ in results for k, _ in rec})
    return {"bytes": sent, "collectives": sum(len(rec) for _, rec, _, _ in results) // 8,
            "comm_debug_counts": max(c for _, _, c, _ in results), "kinds": kinds,
            "max_error": max(e for *_, e in results)}


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _summary(weights: dict[str, str], model: Any) -> str:
    """The chosen weights' SBPs, grouped (`[B, S(0)]: 12 (h_0_attn_q_weight, ...)`)."""
    groups: dict[str, list[str]] = {}
    names = {n.replace(".", "_") for n, _ in model.named_parameters()}
    for arg, sbp in weights.items():
        if arg in names:
            groups.setdefault(sbp, []).append(arg)
    return "; ".join(f"{sbp} ×{len(v)} ({', '.join(v[:4])}{', …' if len(v) > 4 else ''})"
                     for sbp, v in sorted(groups.items(), key=lambda kv: -len(kv[1])))


def compare() -> None:
    for name in ("gpt2", "llama"):
        model, _ = load(name).make()
        ours = sbpc_side(name)
        theirs = dtensor_side(name)
        meg, free = ours["megatron"], ours["free"]
        print(f"## {name} (2x4, {sum(p.numel() for p in model.parameters())} parameters)")
        print(f"rule=global, free weights, mem={ours['mem']} (the Megatron layout's memory): "
              f"modelled {free['objective_s'] * 1e6:.1f} us (compute {free['compute_s'] * 1e6:.1f}, comm "
              f"{free['comm_s'] * 1e6:.1f}), gap {free['gap']}, solve {free['solve_s']:.2f} s, "
              f"memory {free['memory_bytes']} B, bytes sent (simulator) {ours['free_bytes']} "
              f"(check {'OK' if ours['free_ok'] else 'FAILED'})")
        print(f"  weights: {_summary(ours['weights'], model)}")
        print(f"Megatron layout priced in sbpc (rule=global, weights fixed): modelled "
              f"{meg['objective_s'] * 1e6:.1f} us (compute {meg['compute_s'] * 1e6:.1f}, comm "
              f"{meg['comm_s'] * 1e6:.1f}), memory {meg['memory_bytes']} B, bytes sent (simulator) "
              f"{ours['megatron_bytes']} (check {'OK' if ours['megatron_ok'] else 'FAILED'})")
        print(f"DTensor parallelize_module Megatron plan on gloo: bytes sent {theirs['bytes']} "
              f"({theirs['collectives']} collectives per rank: {', '.join(theirs['kinds'])}; CommDebugMode counts "
              f"{theirs['comm_debug_counts']} per rank), max |out - eager| {theirs['max_error']:.2e}")
        print()


def timing() -> None:
    """Capture + plan of the 4-layer GPT-2 on 2x4 (ids [S(0), B], weights free), by phase: wall and
    CPU seconds (the machine may be shared: CPU time is what this process spent)."""
    marks = [("interpreter start", START, CPU_START)]

    def mark(what: str) -> None:
        marks.append((what, time.perf_counter(), time.process_time()))

    import torch

    mark("import torch")
    import sbpc
    from sbpc import torch_api  # noqa: F401  (the API layer from_torch loads)
    from sbpc.translate import from_torch

    mark("import sbpc (API, engine, translation)")
    model, args = load("gpt2").make(layers=4)
    mark("build the model (random init)")
    capture = from_torch.capture

    def timed_capture(*a: Any) -> Any:
        exported = capture(*a)
        mark("torch.export.export (with its dynamo imports)")
        return exported

    from_torch.capture = timed_capture  # type: ignore[assignment]
    prog = sbpc.from_torch(model, args, mesh=MESH, sbp={"idx": "[S(0), B]"})
    mark("translate to sbp, print, parse + verify")
    report = sbpc.report(prog, rule="global")["global"]
    mark("infer-sbp{rule=global}")
    print(f"torch {torch.__version__}; {len(list(prog.module.walk()))} ops")
    for (_, wall0, cpu0), (what, wall, cpu) in itertools.pairwise(marks):
        print(f"| {what} | {wall - wall0:.2f} | {cpu - cpu0:.2f} |")
    print(f"| total since the interpreter started | {marks[-1][1] - START:.2f} | {marks[-1][2] - CPU_START:.2f} |")
    print(f"solver: {report['solve_s']:.2f} s wall, {report['solver']}, gap {report['gap']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", action="store_true", help="time capture + plan of the 4-layer GPT-2")
    parser.add_argument("--dtensor", choices=["gpt2", "llama"], help="only DTensor's Megatron plan of this model")
    args = parser.parse_args()
    if args.time:
        timing()
    elif args.dtensor:
        print(dtensor_side(args.dtensor))
    else:
        compare()


if __name__ == "__main__":
    sys.exit(main())
