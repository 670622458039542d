"""Wrong plans on purpose, to prove that `--check` fails them (SPEC §4.3; `test_check`, `bench/check_sweep.py`).

A fault is injected into one run of a correct compiled program on the simulator, at one collective
(or one input), and the run is then judged by `engine.check` as any run is:

* `drop`: the collective's messages are lost (each rank receives zeros from its peers);
* `duplicate`: it runs twice (an all_reduce sums replicas again: n times the value, on every rank), or
  for a reduce_scatter one rank's piece arrives twice;
* `unreduced`: a partial sum left unreduced — every rank takes rank 0's piece as the reduced value;
* `wrong_boxing`: the collective exchanges with the wrong peers (its operand shards rotated by one
  rank first), so ranks end up with each other's data;
* `swap_shards`: two ranks holding different pieces of a split input exchange them.

`FAULTS` lists which collectives each fault applies to; `inject` runs the faulty plan and returns
the `RunResult` (None if the program offers no place for that fault). Faults go only where they can
show: into collectives and inputs that some function result depends on (a fault in dead code is no
wrong plan), a swap only between ranks that differ on a split mesh axis alone (two pieces of one
partial value may be exchanged harmlessly), and a fault whose run returns, on every rank, bit for bit
what the fault-free run returns is no place for it either (`inject` gives None).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import PassPipeline

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.collectives import Coord, Shards, execute_step
from sbpc.dialects.sbp import SplitAttr
from sbpc.runtime.distribute import distribute
from sbpc.runtime.engine import Located, RunResult, compile_module, reassemble
from sbpc.runtime.simulator import (
    collective_step,
    find_function,
    function_signature,
    modelled_bytes,
    simulate,
    total_sent,
)

FAULTS: dict[str, tuple[str, ...]] = {
    "drop": ("all_reduce", "reduce_scatter", "all_gather", "all_to_all"),
    "duplicate": ("all_reduce", "reduce_scatter"),
    "unreduced": ("all_reduce", "reduce_scatter"),
    "wrong_boxing": ("all_gather", "all_to_all", "reduce_scatter"),
    "swap_shards": (),
}


def _rotate(shards: Shards) -> Shards:
    """Every rank's piece moved to the next rank holding a piece of the same shape (uneven splits
    keep their shapes: a wrong exchange, not a malformed one)."""
    by_shape: dict[tuple[int, ...], list[Coord]] = {}
    for c in sorted(shards):
        by_shape.setdefault(shards[c].shape, []).append(c)
    return {c: shards[group[(i + 1) % len(group)]] for group in by_shape.values() for i, c in enumerate(group)}


def _live(fn: func.FuncOp) -> set[SSAValue]:
    """The values of `fn` that some returned value depends on."""
    block = fn.body.blocks.first
    assert block is not None and block.last_op is not None
    live: set[SSAValue] = set()
    todo = list(block.last_op.operands)
    while todo:
        value = todo.pop()
        if value in live:
            continue
        live.add(value)
        if isinstance(value.owner, Operation):  # not a block argument
            todo.extend(value.owner.operands)
    return live


def _split_neighbours(a: Coord, b: Coord, sbp: Sequence[object]) -> bool:
    """`a` and `b` differ on exactly one mesh axis, and that axis splits the value."""
    differ = [k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(differ) == 1 and isinstance(sbp[differ[0]], SplitAttr)


def _only(shards: Shards, keep: Coord, times: int = 1) -> Shards:
    """`shards` with every rank's piece but `keep`'s zeroed (`keep`'s multiplied by `times`)."""
    return {c: shards[c] * times if c == keep else np.zeros_like(shards[c]) for c in shards}


def _tampered(fault: str, op: CollectiveOp, operand: Shards, result: Shards) -> Shards | None:
    """The faulty result of `op`, None if it would not change anything or not fit the program."""
    step = collective_step(op)

    def run(shards: Shards) -> Shards:
        return execute_step(step.kind, shards, step.src, step.dst, step.mesh_axes, step.shape, step.hierarchy)[0]

    first = min(operand)
    if fault == "drop":
        out = {c: run(_only(operand, c))[c] for c in operand}
    elif fault == "duplicate" and step.kind == "all_reduce":
        out = run(result)
    elif fault == "duplicate":
        out = run({c: operand[c] * 2 if c == first else operand[c] for c in operand})
    elif fault == "unreduced":
        out = run(_only(operand, first))
    else:
        out = run(_rotate(operand))
    if any(out[c].shape != result[c].shape for c in result):
        return None
    if all(np.array_equal(out[c], result[c], equal_nan=True) for c in result):
        return None
    return out


def inject(ctx: Context, module: ModuleOp, located: Located, inputs: Sequence[np.ndarray], pipeline: PassPipeline,
           fault: str, rng: np.random.Generator, entry: str = "main", which: int = 0) -> RunResult | None:
    """Run `module` compiled by `pipeline` on the simulator with `fault` at the `which`-th place it fits."""
    compiled, located = compile_module(ctx, module, pipeline, located)
    arg_dists, res_dists = function_signature(compiled, entry)
    shards = [distribute(x, d.sbp, d.hierarchy, rng) for x, d in zip(inputs, arg_dists, strict=True)]
    seen = [0]
    done = [False]
    live = _live(find_function(compiled, entry))
    clean = [dict(s) for s in shards]
    if fault == "swap_shards":
        args = find_function(compiled, entry).body.blocks.first
        assert args is not None
        for i, dist in enumerate(arg_dists):
            if not any(isinstance(e, SplitAttr) for e in dist.sbp) or args.args[i] not in live:
                continue
            coords = sorted(shards[i])
            pair = next(((a, b) for a in coords for b in coords
                         if _split_neighbours(a, b, dist.sbp) and shards[i][a].shape == shards[i][b].shape
                         and not np.array_equal(shards[i][a], shards[i][b])), None)
            if pair is not None:
                a, b = pair
                shards[i][a], shards[i][b] = shards[i][b], shards[i][a]
                done[0] = True
                break

    def tamper(op: CollectiveOp, operand: Shards, result: Shards) -> Shards:
        if done[0] or op.KIND not in FAULTS[fault] or op.results[0] not in live:
            return result
        out = _tampered(fault, op, operand, result)
        if out is None:
            return result
        seen[0] += 1
        if seen[0] <= which:
            return result
        done[0] = True
        return out

    outputs, records = simulate(compiled, entry, shards, None, tamper)
    if not done[0]:
        return None
    unfaulted, _ = simulate(compiled, entry, clean)
    if all(np.array_equal(o[c], u[c], equal_nan=True) for o, u in zip(outputs, unfaulted, strict=True) for c in o):
        return None  # the program's results do not see the fault (e.g. a minimum it does not win)
    results, failures = reassemble(outputs, res_dists)
    sent = total_sent(records)
    return RunResult(entry, list(inputs), results, [r.line() for r in records], sent, modelled_bytes(compiled, entry),
                     [], compiled, res_dists, False, mismatches=failures)
