"""The compiled per-rank program on torch.distributed: one process per mesh rank (SPEC §4.1).

* Locally, `run_local` forks one child per rank after the parent has compiled the program and
  imported torch (fork costs ~0.2 s; spawn re-imports torch per child, 6–13 s). Children
  rendezvous on a FileStore in a fresh temporary directory, run with one thread each, create every
  process group of the program in one order (`torch_collectives.ProcessGroups`) and run the entry
  function: local ops through their torch implementations (`runtime.op_impls`), collectives through
  `torch_collectives.RankCollectives` (an executor of `dialects.collectives`, as the simulator is).
* Under torchrun (`RANK`/`WORLD_SIZE`/`MASTER_ADDR` set), `run_as_rank` runs this process's rank
  only; rank 0 gathers the outputs and the timings.

Faults: the parent watches the children. A rank that raises reports its op; a rank that dies (a
signal, `os._exit`) is seen by its process sentinel; if no rank advances for `timeout` seconds the
ranks that are furthest behind are the hanging ones. Then every child is terminated (SIGTERM, then
SIGKILL) and joined, and the failure is raised as an `OpError` at the op of the original rank
(`RankFailure`), so that drivers print it located. Errors raised by torch inside a collective
usually follow another rank's failure (a closed connection), so the parent waits a moment for the
first cause: a dead rank, then a failing local op, then a failing collective.

`SBPC_TORCH_FAULT=RANK:raise|hang|kill[:OP]` injects a fault on rank RANK before the OP-th op of the
entry block (default 0); tests use it to check the fault handling.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import shutil
import signal
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from multiprocessing.connection import Connection, wait
from multiprocessing.synchronize import Lock

import numpy as np
import torch
import torch.distributed as dist
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.collectives import Coord, InvalidStep, Shards, mesh_coords
from sbpc.dialects.errors import OpError
from sbpc.dialects.placement import lookup_placement_named
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import ReshapeOp
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.passes.cost.comm import DEFAULT_MODEL, placement_model, step_time
from sbpc.runtime import ops_numpy, ops_torch
from sbpc.runtime.op_impls import Overrides, impl_of, run_torch
from sbpc.runtime.simulator import (
    UNLOWERED,
    Step,
    check_signature,
    collective_step,
    collective_steps,
    find_function,
    function_signature,
    reshape_local_shapes,
    type_dist,
)
from sbpc.runtime.torch_collectives import ProcessGroups, RankCollectives

DIST_BACKENDS = ("gloo", "nccl", "hccl")
FAULT_ENV = "SBPC_TORCH_FAULT"
_GRACE_S = 1.0
"""How long the parent waits, after a first error, for the rank that caused it."""


@dataclass(frozen=True)
class TorchOptions:
    dist_backend: str = "gloo"
    timeout: float = 60.0
    """Seconds without progress on any rank after which the run is declared hung."""
    repeat: int = 1


@dataclass
class Job:
    """One compiled program and its distributed inputs (`shards[i][coord]`: input i on a rank)."""

    module: ModuleOp
    entry: str
    shards: Sequence[Shards]
    kernels: Overrides | None = None


@dataclass
class TorchRecord:
    """One collective as run on torch: bytes each rank sent, wall seconds per rank and run."""

    step: Step
    sent: dict[Coord, int]
    seconds: list[list[float]] = field(default_factory=list)
    """seconds[run][flat rank]."""

    def per_rank(self) -> list[int]:
        return [self.sent.get(c, 0) for c in mesh_coords(self.step.hierarchy)]

    def measured_s(self) -> float:
        """Median over runs of the median over ranks."""
        return statistics.median(statistics.median(run) for run in self.seconds) if self.seconds else 0.0

    def modelled_s(self) -> float:
        """The α-β time of the step on its placement's links (the defaults if it has none)."""
        step = self.step
        n = math.prod(step.hierarchy[d] for d in step.mesh_axes)
        placement = lookup_placement_named(step.op, step.placement)
        model = DEFAULT_MODEL if placement is None else placement_model(placement)
        return step_time(step.kind, max(step.modelled_bytes().values(), default=0), n, model, step.mesh_axes) * 1e-6

    def line(self) -> str:
        return (f"{self.step.describe()}: bytes sent per rank {self.per_rank()}; "
                f"measured {self.measured_s() * 1e3:.3f} ms, model {self.modelled_s() * 1e3:.3f} ms")


@dataclass
class TorchResult:
    outputs: list[Shards]
    records: list[TorchRecord]
    seconds: float
    """Wall time of the whole launch (fork to join)."""


class TorchBackendError(Exception):
    """A problem of the run that no op is to blame for (bad options, missing devices)."""


class RankFailure(OpError):
    """A rank that failed at an op of the program (the op is the parent's copy)."""

    def __init__(self, op: Operation, rank: int, coord: Coord, message: str):
        super().__init__(op, f"rank {rank} {list(coord)}: {message}")
        self.rank = rank


# ---------------------------------------------------------------------------
# One rank
# ---------------------------------------------------------------------------


class _RankError(Exception):
    """Raised in a child: the op's index in `module.walk()` order, and whether torch raised it in a collective."""

    def __init__(self, position: int, message: str, in_collective: bool = False):
        super().__init__(message)
        self.position = position
        self.message = message
        self.in_collective = in_collective


@dataclass(frozen=True)
class _Fault:
    rank: int
    action: str
    at: int

    @staticmethod
    def from_env() -> _Fault | None:
        text = os.environ.get(FAULT_ENV)
        if not text:
            return None
        parts = text.split(":")
        return _Fault(int(parts[0]), parts[1], int(parts[2]) if len(parts) > 2 else 0)

    def strike(self, rank: int, at: int) -> None:
        if rank != self.rank or at != self.at:
            return
        if self.action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.action == "hang":
            while True:
                time.sleep(3600)
        raise RuntimeError(f"fault injected by {FAULT_ENV}")


class _Progress:
    """Shared counters: which op each rank is at and how many it has started (the parent reads them)."""

    def __init__(self, ctx: multiprocessing.context.BaseContext, world: int):
        self.position = ctx.Array("q", [-1] * world, lock=False)
        self.job = ctx.Array("q", [0] * world, lock=False)
        self.ticks = ctx.Array("q", [0] * world, lock=False)
        self.waiting = ctx.Array("b", [0] * world, lock=False)
        """1 while the rank is inside a collective (waiting for peers is not hanging)."""

    def at(self, rank: int, position: int, waiting: bool = False) -> None:
        self.position[rank] = position
        self.waiting[rank] = int(waiting)
        self.ticks[rank] += 1


def _local_shape_check(op: Operation, value: torch.Tensor, expected: tuple[int, ...], what: str, coord: Coord) -> None:
    if tuple(value.shape) != tuple(expected):
        raise OpError(op, f"{describe_op(op)}: {what} should have local shape {list(expected)} on rank {list(coord)}, "
                          f"but it has {list(value.shape)}")


def run_rank(job: Job, coord: Coord, comm: RankCollectives, rank: int, progress: _Progress | None = None,
             fault: _Fault | None = None) -> tuple[list[np.ndarray], list[tuple[int, float]]]:
    """Run the entry function on one rank: its output shards, and (bytes sent, seconds) per collective."""
    with np.errstate(all="ignore"):  # overflow and NaN are values here, as in the simulator
        return _run_rank(job, coord, comm, rank, progress, fault)


def _run_rank(job: Job, coord: Coord, comm: RankCollectives, rank: int, progress: _Progress | None,
              fault: _Fault | None) -> tuple[list[np.ndarray], list[tuple[int, float]]]:
    fn = find_function(job.module, job.entry)
    args, _ = function_signature(job.module, job.entry)
    block = fn.body.blocks.first
    if block is None:
        raise OpError(fn, f"@{job.entry} has no body")
    positions = {op: i for i, op in enumerate(job.module.walk())}
    env: dict[SSAValue, torch.Tensor] = {}
    for i, (arg, dist_, shards) in enumerate(zip(block.args, args, job.shards, strict=True)):
        env[arg] = ops_torch.to_torch(shards[coord].copy())
        _local_shape_check(fn, env[arg], dist_.local_shape(coord), f"argument {i}", coord)
    log: list[tuple[int, float]] = []
    for index, op in enumerate(block.ops):
        position = positions[op]
        if progress is not None:
            progress.at(rank, position)
        try:
            if fault is not None:
                try:
                    fault.strike(rank, index)
                except RuntimeError as error:
                    raise OpError(op, f"{describe_op(op)}: {error}") from error
            if isinstance(op, func.ReturnOp):
                return [ops_torch.to_numpy(env[v]) for v in op.operands], log
            if isinstance(op, CollectiveOp):
                step = collective_step(op)
                value = env[op.operands[0]]
                _local_shape_check(op, value, step.source().local_shape(coord), "operand", coord)
                if progress is not None:
                    progress.at(rank, position, waiting=True)
                began = time.perf_counter()
                try:
                    env[op.results[0]], sent = comm.run(step, value)
                except (RuntimeError, dist.DistBackendError) as error:
                    raise _RankError(position, f"{describe_op(op)}: torch.distributed failed: {error}",
                                     True) from error
                except InvalidStep as error:  # the verifier rejects these; an unverified module may not
                    raise OpError(op, f"{describe_op(op)}: {error}") from error
                except Exception as error:  # the exchange itself failed on this rank
                    raise _RankError(position, f"{describe_op(op)}: {type(error).__name__}: {error}") from error
                log.append((sent, time.perf_counter() - began))
                continue
            if (todo := UNLOWERED.get(type(op))) is not None:
                if op.operands[0].type != op.results[0].type:
                    raise OpError(op, f"{describe_op(op)} is not lowered to collectives: {todo}")
                env[op.results[0]] = env[op.operands[0]]
                continue
            if impl_of(op) is None:
                raise OpError(op, f"{op.name} is not supported by the torch backend")
            check_signature(op)
            shape = reshape_local_shapes(op, [coord])[coord] if isinstance(op, ReshapeOp) else None
            try:
                out = run_torch(op, [env[v] for v in op.operands], shape, job.kernels, coord)
            except OpError:
                raise
            except Exception as error:
                raise OpError(op, f"{describe_op(op)}: local computation failed: {error}") from error
            ty = op.results[0].type
            if isinstance(ty, GlobalTensorType):
                _local_shape_check(op, out, type_dist(op, ty, "result").local_shape(coord), "result", coord)
            elif isinstance(ty, TensorType) and any(
                    s >= 0 and s != d for s, d in zip(ty.get_shape(), out.shape, strict=False)):
                raise OpError(op, f"{describe_op(op)}: result type {ty} does not match the local shape "
                                  f"{list(out.shape)}")
            env[op.results[0]] = out
        except OpError as error:
            raise _RankError(positions.get(error.op, position), error.message) from error
    raise _RankError(positions[fn], f"@{job.entry} has no func.return")


# ---------------------------------------------------------------------------
# The mesh of a launch
# ---------------------------------------------------------------------------


def job_hierarchy(job: Job) -> tuple[int, ...]:
    """The one mesh the job runs on (every argument, result and collective must use it)."""
    args, results = function_signature(job.module, job.entry)
    meshes = {d.hierarchy for d in (*args, *results)} | {s.hierarchy for s in collective_steps(job.module, job.entry)}
    if len(meshes) != 1:
        found = ", ".join(str(list(m)) for m in sorted(meshes)) or "none"
        raise TorchBackendError(f"the torch backend runs a program on one mesh; @{job.entry} uses: {found}")
    return meshes.pop()


def axes_sets(jobs: Sequence[Job]) -> list[tuple[int, ...]]:
    """The mesh-axis sets of every collective, in program order (the order groups are created in)."""
    found: list[tuple[int, ...]] = []
    for job in jobs:
        for step in collective_steps(job.module, job.entry):
            axes = tuple(sorted(step.mesh_axes))
            if axes not in found:
                found.append(axes)
    return found


def device_for(backend: str, local_rank: int) -> torch.device:
    """The device a rank's collectives run on; an error if the backend's devices are absent."""
    if backend == "gloo":
        return torch.device("cpu")
    if backend == "nccl":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        kind = "cuda"
    elif backend == "hccl":
        try:
            import torch_npu  # type: ignore[import-not-found]  # noqa: F401
        except ImportError:
            raise TorchBackendError("--dist-backend hccl needs torch_npu and Ascend NPUs; torch_npu is not "
                                    "installed") from None
        count = torch.npu.device_count()  # type: ignore[attr-defined]
        kind = "npu"
    else:
        raise TorchBackendError(f"unknown --dist-backend {backend} (choose from {', '.join(DIST_BACKENDS)})")
    if local_rank >= count:
        raise TorchBackendError(f"--dist-backend {backend} needs a {kind} device for local rank {local_rank}; "
                                f"torch sees {count}")
    return torch.device(kind, local_rank)


# ---------------------------------------------------------------------------
# Local launch: one forked child per rank
# ---------------------------------------------------------------------------


def _child(rank: int, world: int, store: str, jobs: Sequence[Job], hierarchy: tuple[int, ...],
           options: TorchOptions, conn: Connection, progress: _Progress, kernel_lock: Lock) -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    torch.set_num_threads(1)
    coord = mesh_coords(hierarchy)[rank]
    job_index = 0
    try:
        # The parent detects hangs itself; torch's own timeout only stops a wait it has outlived.
        dist.init_process_group(options.dist_backend, init_method=f"file://{store}", rank=rank, world_size=world,
                                timeout=timedelta(seconds=2 * options.timeout + 5))
        comm = RankCollectives(ProcessGroups(hierarchy, axes_sets(jobs)), coord,
                               device_for(options.dist_backend, rank))
        fault = _Fault.from_env()
        results = []
        for job_index, job in enumerate(jobs):
            progress.job[rank] = job_index
            times: list[list[float]] = []
            for _ in range(options.repeat):
                dist.barrier()
                outputs, log = run_rank(_serialised(job, kernel_lock), coord, comm, rank, progress, fault)
                times.append([t for _, t in log])
            results.append((outputs, [s for s, _ in log], times))
        progress.at(rank, -1)
        conn.send(("ok", rank, results))
    except _RankError as error:
        conn.send(("error", rank, job_index, error.position, error.message, error.in_collective))
    except BaseException as error:  # reported to the parent, which prints it; the child must not unwind
        conn.send(("error", rank, job_index, None, f"{type(error).__name__}: {error}", False))
    finally:
        conn.close()
        os._exit(0)  # no atexit handlers of the parent (pytest), no destroy_process_group waiting on peers


def _serialised(job: Job, lock: Lock) -> Job:
    """The job with its `--kernels` overrides called one rank at a time: they may build and cache files on
    first use (the Ascend C kernels write their sources to a shared directory), which ranks must not race on."""
    if not job.kernels:
        return job

    def locked(kernel: ops_numpy.Kernel) -> ops_numpy.Kernel:
        def call(op: Operation, operands: list[np.ndarray]) -> np.ndarray:
            with lock:
                return kernel(op, operands)

        return call

    return Job(job.module, job.entry, job.shards, {cls: locked(k) for cls, k in job.kernels.items()})


def run_local(jobs: Sequence[Job], options: TorchOptions = TorchOptions()) -> list[TorchResult]:
    """Run every job on one set of forked ranks; raise `RankFailure` (located) or `TorchBackendError`."""
    if not jobs:
        return []
    meshes = {job_hierarchy(job) for job in jobs}
    if len(meshes) != 1:
        raise TorchBackendError("jobs of one launch must run on one mesh")
    hierarchy = meshes.pop()
    world = math.prod(hierarchy)
    for r in range(world):
        device_for(options.dist_backend, r)
    ctx = multiprocessing.get_context("fork")
    progress = _Progress(ctx, world)
    kernel_lock = ctx.Lock()
    tmp = tempfile.mkdtemp(prefix="sbpc-torch-")
    began = time.perf_counter()
    children: list[multiprocessing.process.BaseProcess] = []
    conns: list[Connection] = []
    try:
        for rank in range(world):
            receive, send = ctx.Pipe(duplex=False)
            child = ctx.Process(target=_child, args=(rank, world, os.path.join(tmp, "store"), jobs, hierarchy,
                                                     options, send, progress, kernel_lock), daemon=True)
            child.start()
            send.close()
            children.append(child)
            conns.append(receive)
        replies = _watch(children, conns, progress, options.timeout, jobs, hierarchy)
    finally:
        _stop(children)
        for c in conns:
            c.close()
        shutil.rmtree(tmp, ignore_errors=True)
    elapsed = time.perf_counter() - began
    return [_collect(job, hierarchy, [replies[r][j] for r in range(world)], elapsed) for j, job in enumerate(jobs)]


def _collect(job: Job, hierarchy: tuple[int, ...], per_rank: Sequence[tuple], elapsed: float) -> TorchResult:
    coords = mesh_coords(hierarchy)
    n_out = len(per_rank[0][0])
    outputs = [{coords[r]: per_rank[r][0][i] for r in range(len(coords))} for i in range(n_out)]
    steps = collective_steps(job.module, job.entry)
    records = []
    for k, step in enumerate(steps):
        sent = {coords[r]: per_rank[r][1][k] for r in range(len(coords))}
        runs = len(per_rank[0][2])
        seconds = [[per_rank[r][2][run][k] for r in range(len(coords))] for run in range(runs)]
        records.append(TorchRecord(step, sent, seconds))
    return TorchResult(outputs, records, elapsed)


def _watch(children: Sequence[multiprocessing.process.BaseProcess], conns: Sequence[Connection],
           progress: _Progress, timeout: float, jobs: Sequence[Job], hierarchy: tuple[int, ...]) -> dict[int, list]:
    """Wait for every rank's reply; on a failure, find its first cause and raise it."""
    world = len(children)
    replies: dict[int, list] = {}
    errors: dict[int, tuple] = {}
    dead: dict[int, int] = {}
    last_ticks = [-1] * world
    last_change = time.monotonic()
    first_failure: float | None = None
    while len(replies) < world:
        pending = [r for r in range(world) if r not in replies and r not in errors and r not in dead]
        if not pending or (first_failure is not None and time.monotonic() - first_failure > _GRACE_S):
            break
        ready = set(wait([conns[r] for r in pending] + [children[r].sentinel for r in pending], timeout=0.1))
        for r in pending:
            message = None
            if conns[r] in ready or children[r].sentinel in ready:
                try:
                    message = conns[r].recv() if conns[r].poll() else None
                except (EOFError, OSError):
                    message = None
                if message is None and children[r].sentinel in ready:
                    children[r].join(1)
                    dead[r] = children[r].exitcode if children[r].exitcode is not None else -signal.SIGKILL
            if message is not None and message[0] == "ok":
                replies[r] = message[2]
            elif message is not None:
                errors[r] = message
        if (errors or dead) and first_failure is None:
            first_failure = time.monotonic()
        ticks = list(progress.ticks)
        if ticks != last_ticks:
            last_ticks, last_change = ticks, time.monotonic()
        elif first_failure is None and time.monotonic() - last_change > timeout:
            _raise_hang(progress, [r for r in range(world) if r not in replies], timeout, jobs, hierarchy)
    if dead:
        r = min(dead)
        code = dead[r]
        how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
        _raise_at(jobs, hierarchy, r, progress.position[r], f"the rank process {how} while running this op",
                  progress.job[r])
    if errors:
        local = [r for r, e in errors.items() if not e[5]]
        r = min(local) if local else min(errors)
        _, _, job_index, position, message, _ = errors[r]
        _raise_at(jobs, hierarchy, r, position, message, job_index)
    return replies


def _raise_hang(progress: _Progress, ranks: Sequence[int], timeout: float, jobs: Sequence[Job],
                hierarchy: tuple[int, ...]) -> None:
    # The hanging ranks are the furthest behind (job, then op) and, among those, not waiting in a collective.
    behind = min((progress.job[r], progress.position[r]) for r in ranks)
    last = [r for r in ranks if (progress.job[r], progress.position[r]) == behind]
    stuck = [r for r in last if not progress.waiting[r]] or last
    others = [r for r in ranks if r not in stuck]
    waiting = f"; ranks {others} wait for it" if others else ""
    _raise_at(jobs, hierarchy, stuck[0], behind[1],
              f"no rank made progress for {timeout:g} s: rank(s) {stuck} hang in this op{waiting}", behind[0])


def _raise_at(jobs: Sequence[Job], hierarchy: tuple[int, ...], rank: int, position: int | None, message: str,
              job_index: int = 0) -> None:
    coord = mesh_coords(hierarchy)[rank]
    job = jobs[job_index] if 0 <= job_index < len(jobs) else jobs[0]
    ops = list(job.module.walk())
    if position is None or not 0 <= position < len(ops):
        raise TorchBackendError(f"rank {rank} {list(coord)}: {message}")
    raise RankFailure(ops[position], rank, coord, message)


def _stop(children: Sequence[multiprocessing.process.BaseProcess]) -> None:
    """Terminate and reap every child (SIGTERM, then SIGKILL): no process is left behind."""
    for child in children:
        if child.is_alive():
            child.terminate()
    deadline = time.monotonic() + 2.0
    for child in children:
        child.join(max(0.0, deadline - time.monotonic()))
        if child.is_alive():
            child.kill()
            child.join()


# ---------------------------------------------------------------------------
# torchrun: this process is one rank
# ---------------------------------------------------------------------------


def launched_by_torchrun() -> bool:
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR"))


def run_as_rank(job: Job, options: TorchOptions = TorchOptions()) -> TorchResult | None:
    """Run this process's rank of `job` (rank and world from torchrun's environment); rank 0 gets the
    gathered result, the others None."""
    hierarchy = job_hierarchy(job)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if world != math.prod(hierarchy):
        raise TorchBackendError(f"WORLD_SIZE is {world} but the program's mesh {list(hierarchy)} has "
                                f"{math.prod(hierarchy)} ranks")
    torch.set_num_threads(1)
    device = device_for(options.dist_backend, int(os.environ.get("LOCAL_RANK", "0")))
    began = time.perf_counter()
    dist.init_process_group(options.dist_backend, init_method="env://", rank=rank, world_size=world,
                            timeout=timedelta(seconds=options.timeout))
    try:
        comm = RankCollectives(ProcessGroups(hierarchy, axes_sets([job])), mesh_coords(hierarchy)[rank], device)
        times: list[list[float]] = []
        for _ in range(options.repeat):
            dist.barrier()
            try:
                outputs, log = run_rank(job, mesh_coords(hierarchy)[rank], comm, rank, fault=_Fault.from_env())
            except _RankError as error:
                _raise_at([job], hierarchy, rank, error.position, error.message)
            times.append([t for _, t in log])
        mine = (outputs, [s for s, _ in log], times)
        gathered: list | None = [None] * world if rank == 0 else None
        dist.gather_object(mine, gathered, dst=0)
    finally:
        dist.destroy_process_group()
    if gathered is None:
        return None
    return _collect(job, hierarchy, gathered, time.perf_counter() - began)


def rounds_differently(module: ModuleOp, entry: str) -> bool:
    """Whether a float op of the compiled program rounds differently in torch than in numpy
    (`OpImpl.torch_rounds_differently`): then `--check` compares within its tolerance."""
    for op in find_function(module, entry).walk():
        if (found := impl_of(op)) is not None and found.torch_rounds_differently and op.results:
            ty = op.results[0].type
            if isinstance(ty, GlobalTensorType | TensorType) and not isinstance(ty.element_type, IntegerType):
                return True
    return False


def report_lines(records: Sequence[TorchRecord], modelled_total: int, repeat: int) -> list[str]:
    """Per collective: bytes, measured time (median over ranks and runs) and the α-β model's; totals."""
    lines = [r.line() for r in records]
    sent = sum(sum(r.sent.values()) for r in records)
    measured = sum(r.measured_s() for r in records)
    model = sum(r.modelled_s() for r in records)
    runs = f"median of {repeat} runs" if repeat > 1 else "1 run"
    lines.append(f"total bytes sent: {sent} (all ranks); cost model: {modelled_total}")
    lines.append(f"total collective time: measured {measured * 1e3:.3f} ms, model {model * 1e3:.3f} ms "
                 f"({len(records)} collectives, {runs}, median over ranks)")
    return lines

