"""Run local fmod ops through the emitted Ascend C kernels on the CPU shim (`sbp-run --kernels ascendc-cpu`).

For each local `sbp.fmod` / `sbp.fmod_scalar` the simulator hands over a rank's local arrays (the
overrides are keyed by op class, as `runtime.op_impls` is); the
bridge computes that shard's tiling with `lowering/ascendc/tiling.py`, prints the kernel exactly as
`sbp-translate --emit-ascendc` does (same IR, same printer), compiles it once per dtype with g++
against the shim (`lowering/ascendc/cpu/runner.py`, cached) and runs it on every simulated core.

Two meanings of fmod meet here (SPEC §2.4, §5): the IR's `sbp.fmod` is C fmod (`runtime.op_impls`),
the kernels compute the TBE formula (`lowering/ascendc/fmod_reference.py`). The global reference of a run with
these kernels uses the formula, so the kernels are checked bit for bit; `FmodDeviation` measures, on
the same operands, how far the formula lands from C fmod, which `sbp-run --check` reports.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
from xdsl.ir import Operation, SSAValue

from sbpc.dialects import dtypes
from sbpc.dialects.layout import LayoutAttr
from sbpc.dialects.sbp_ops import FmodOp, FmodScalarOp
from sbpc.lowering.ascendc.cann_project import write_atomic
from sbpc.lowering.ascendc.cpu.roofline import LaunchProfile, profile_launch
from sbpc.lowering.ascendc.cpu.runner import compile_kernel, run_kernel
from sbpc.lowering.ascendc.fmod_reference import fmod_scalar_reference, fmod_tensor_reference
from sbpc.lowering.ascendc.printer import AscendCPrinter, tiling_header
from sbpc.lowering.ascendc.soc import DEFAULT_SOC
from sbpc.lowering.ascendc.tiling import TensorView, compute_tiling
from sbpc.lowering.ascendc.to_ascendc import KERNELS, make_kernel
from sbpc.runtime.op_impls import Overrides, impl_of
from sbpc.runtime.ops_numpy import Kernel, scalar_value


class _Text:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> None:
        self.text += s


@cache
def kernel_source_dir(name: str) -> Path:
    """Print the kernel and its tiling header into a directory named by their content."""
    kernel = _Text()
    AscendCPrinter(kernel).print(make_kernel(name))  # type: ignore[arg-type]
    header = tiling_header(name, KERNELS[name])
    digest = hashlib.sha256((kernel.text + header).encode()).hexdigest()[:16]
    root = Path(tempfile.gettempdir()) / "sbpc-kernels" / f"{name}-{digest}"
    root.mkdir(parents=True, exist_ok=True)
    write_atomic(root / f"{name}.cpp", kernel.text)
    write_atomic(root / f"{name}_tiling.h", header)
    return root


@cache
def library(name: str, dtype: str) -> Path:
    root = kernel_source_dir(name)
    return compile_kernel(root / f"{name}.cpp", root, dtype, name == "fmod_scalar")


def _dtype(x: np.ndarray) -> str:
    found = dtypes.find(x.dtype)
    if found is None or not found.fmod_kernel:
        raise ValueError(f"fmod kernels support {dtypes.FMOD_KERNEL_SUPPORT}, not {x.dtype}")
    return found.name


def layout_view(value: SSAValue, shape: tuple[int, ...]) -> TensorView | None:
    """The storage view of a local operand whose type carries an `#sbp.layout` for this shape (a transposed
    or sliced local tensor), else None (row-major). Layouts that map several elements to one location
    (a stride-0 dim of extent > 1) cannot hold distinct values and are taken as row-major."""
    layout = getattr(value.type, "encoding", None)
    if not isinstance(layout, LayoutAttr):
        return None
    try:
        view = TensorView.from_layout(shape, layout.layout)
    except ValueError:
        return None
    if view.is_contiguous() or any(n > 1 and s == 0 for n, s in zip(view.shape, view.strides, strict=True)):
        return None
    return view


def _stored(a: np.ndarray, view: TensorView) -> np.ndarray:
    """A 1-d storage holding `a` at `view`'s strides and offset (zeros elsewhere)."""
    span = 1 + sum((n - 1) * s for n, s in zip(view.shape, view.strides, strict=True)) if a.size else 0
    storage = np.zeros(view.offset + span, a.dtype)
    strides = tuple(s * a.itemsize for s in view.strides)
    np.lib.stride_tricks.as_strided(storage[view.offset :], a.shape, strides)[...] = a
    return storage


def run_fmod(
    self: np.ndarray, other: np.ndarray | float | int, soc: str = DEFAULT_SOC, profiler: KernelProfiler | None = None,
    self_view: TensorView | None = None, other_view: TensorView | None = None,
) -> np.ndarray:
    """fmod of one shard through the emitted kernel; `other` is a tensor or a scalar. `self_view` /
    `other_view` (from `layout_view`) store an operand at its declared layout, so the kernel reads it
    strided (keys 3/4); None: row-major."""
    if self.ndim == 0 and (not isinstance(other, np.ndarray) or other.ndim == 0):
        # A 0-d shard is one element: the kernel's tiling and buffers are for 1-d and up.
        other = other.reshape(1) if isinstance(other, np.ndarray) else other
        return run_fmod(self.reshape(1), other, soc, profiler).reshape(())
    dtype = _dtype(self)
    self = np.ascontiguousarray(self)
    out_view = TensorView.row_major(self.shape)
    sv = self_view or out_view
    if isinstance(other, np.ndarray):
        other = np.ascontiguousarray(other.astype(self.dtype, copy=False))
        ov = other_view or TensorView.row_major(other.shape)
        tiling = compute_tiling(sv, ov, out_view, dtype, soc)
        name, tensor = "fmod_tensor", other
    else:
        ov = None
        tiling = compute_tiling(sv, other, out_view, dtype, soc)
        name, tensor = "fmod_scalar", None
    fields = tiling.fields()
    key = int(tiling.to_json()["tilingKey"])

    def storage(a: np.ndarray | None, v: TensorView | None) -> np.ndarray | None:
        # keys 3/4 get the storage base (offsets in the tiling); keys 0-2 the view's first element
        if a is None or v is None or v.is_contiguous():
            return None
        whole = _stored(a, v)
        return whole if key >= 3 else whole[v.offset :]

    out, counters = run_kernel(
        library(name, dtype), self, tensor, self.shape, tiling.to_bytes(), int(fields["blockDim"]),  # type: ignore[arg-type]
        key, self_storage=storage(self, self_view), other_storage=storage(tensor, ov),
    )
    if profiler is not None:
        minimum = (2 * self.size + (0 if tensor is None else tensor.size)) * self.itemsize
        profiler.record(profile_launch(
            name, key, profiler.next_rank(), dtype, self.size, self.itemsize, minimum, counters,
            int(fields["blockDim"]), int(fields["blockLength"]), soc,
        ))  # fmt: skip
    return out


@dataclass
class KernelProfiler:
    """`sbp-run --profile`: one `LaunchProfile` per kernel launch, in launch order.

    The simulator runs a local op on each rank in turn (flat row-major order), so a launch's rank is
    its index among the consecutive launches of the same op. Owned by one run; holds its launches only.
    """

    launches: list[LaunchProfile] = field(default_factory=list)
    _op: Operation | None = None
    _rank: int = 0

    def overrides(self) -> Overrides:
        """`kernel_overrides()` that also record each launch."""

        def counted(run: Callable[[Operation, list[np.ndarray], KernelProfiler], np.ndarray]) -> Kernel:
            def kernel(op: Operation, operands: list[np.ndarray]) -> np.ndarray:
                self._rank = self._rank + 1 if op is self._op else 0
                self._op = op
                return run(op, operands, self)

            return kernel

        return {FmodOp: counted(_fmod), FmodScalarOp: counted(_fmod_scalar)}

    def next_rank(self) -> int:
        return self._rank

    def record(self, launch: LaunchProfile) -> None:
        self.launches.append(launch)


def _fmod(op: Operation, operands: list[np.ndarray], profiler: KernelProfiler | None = None) -> np.ndarray:
    self_view = layout_view(op.operands[0], operands[0].shape)
    other_view = layout_view(op.operands[1], operands[1].shape)
    return run_fmod(operands[0], operands[1], profiler=profiler, self_view=self_view, other_view=other_view)


def _fmod_scalar(op: Operation, operands: list[np.ndarray], profiler: KernelProfiler | None = None) -> np.ndarray:
    self_view = layout_view(op.operands[0], operands[0].shape)
    return run_fmod(operands[0], scalar_value(op, "other"), profiler=profiler, self_view=self_view)


def _reference_fmod(op: Operation, operands: list[np.ndarray]) -> np.ndarray:
    return fmod_tensor_reference(operands[0], operands[1].astype(operands[0].dtype, copy=False))


def _reference_fmod_scalar(op: Operation, operands: list[np.ndarray]) -> np.ndarray:
    return fmod_scalar_reference(operands[0], scalar_value(op, "other"))


def reference_overrides() -> Overrides:
    """The numpy TBE-formula emulation the kernels must match bit for bit (the global reference)."""
    return {FmodOp: _reference_fmod, FmodScalarOp: _reference_fmod_scalar}


def kernel_overrides() -> Overrides:
    """op class -> kernel(op, local operands), run in place of the op's `OpImpl.numpy`."""
    return {FmodOp: _fmod, FmodScalarOp: _fmod_scalar}


@dataclass
class FmodDeviation:
    """The TBE formula against C fmod over every fmod the global reference runs.

    Elements differ when their bits do (NaN equal to NaN; -0.0 and +0.0 differ, since C fmod keeps the
    sign of self). The deviation of a NaN where C fmod gives a number (other = ±inf) is infinite.
    """

    elements: int = 0
    differing: int = 0
    worst: float = 0.0
    worst_at: tuple[Operation, tuple[int, ...], str, str] | None = None

    def overrides(self) -> Overrides:
        """`reference_overrides()`, each also comparing its result with the IR's C fmod."""

        def measured(kernel: Kernel) -> Kernel:
            def run(op: Operation, operands: list[np.ndarray]) -> np.ndarray:
                got = kernel(op, operands)
                c_fmod = impl_of(op)
                assert c_fmod is not None
                self.record(op, got, c_fmod.numpy(op, operands))
                return got

            return run

        return {cls: measured(kernel) for cls, kernel in reference_overrides().items()}

    def record(self, op: Operation, got: np.ndarray, exact: np.ndarray) -> None:
        g, e = got.astype(np.float64), exact.astype(np.float64)
        nan_g, nan_e = np.isnan(g), np.isnan(e)
        with np.errstate(invalid="ignore"):
            same = (nan_g & nan_e) | ((g == e) & (np.signbit(g) == np.signbit(e)))
            deviation = np.where(nan_g != nan_e, np.inf, np.abs(g - e))
        deviation = np.where(same | (nan_g & nan_e), 0.0, deviation)
        self.elements += got.size
        self.differing += int(np.count_nonzero(~same))
        if got.size and float(deviation.max()) > self.worst:
            index = np.unravel_index(int(np.argmax(deviation)), got.shape)
            self.worst = float(deviation[index])
            self.worst_at = (op, tuple(int(i) for i in index), str(got[index]), str(exact[index]))

    def line(self, where: Callable[[Operation], str]) -> str:
        """`ascendc fmod vs C fmod: max abs deviation X (at LOC op index [i, j]: A vs B), N of M elements differ`."""
        at = ""
        if self.worst_at is not None:
            op, index, got, exact = self.worst_at
            at = f" (at {where(op)} {op.name} index {list(index)}: ascendc {got}, C fmod {exact})"
        return (f"ascendc fmod vs C fmod: max abs deviation {self.worst:.6g}{at}, {self.differing} of {self.elements} "
                "elements differ")
