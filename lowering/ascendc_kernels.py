"""Run local fmod ops through the emitted Ascend C kernels on the CPU shim (`sbp-run --kernels ascendc-cpu`).

For each local `sbp.fmod` / `sbp.fmod_scalar` the simulator hands over a rank's local arrays; the
bridge computes that shard's tiling with `lowering/tiling.py`, prints the kernel exactly as
`sbp-translate --emit-ascendc` does (same IR, same printer), compiles it once per dtype with g++
against the shim (`lowering/ascendc_runtime.py`, cached) and runs it on every simulated core.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
from xdsl.ir import Operation

from sbpc.lowering.ascendc_printer import AscendCPrinter, tiling_header
from sbpc.lowering.ascendc_runtime import compile_kernel, run_kernel
from sbpc.lowering.tiling import TensorView, compute_tiling
from sbpc.lowering.to_ascendc import KERNELS, make_kernel

Kernel = Callable[[list[np.ndarray], Operation], np.ndarray]

DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int16": "i16"}


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
    (root / f"{name}.cpp").write_text(kernel.text, encoding="utf-8")
    (root / f"{name}_tiling.h").write_text(header, encoding="utf-8")
    return root


@cache
def library(name: str, dtype: str) -> Path:
    root = kernel_source_dir(name)
    return compile_kernel(root / f"{name}.cpp", root, dtype, name == "fmod_scalar")


def _dtype(x: np.ndarray) -> str:
    found = DTYPE_NAMES.get(x.dtype.name)
    if found is None:
        raise ValueError(f"fmod kernels support bf16, f16, f32 and i16, not {x.dtype}")
    return found


def run_fmod(self: np.ndarray, other: np.ndarray | float | int, soc: str = "ascend910b") -> np.ndarray:
    """fmod of one shard through the emitted kernel; `other` is a tensor or a scalar."""
    if self.ndim == 0 and (not isinstance(other, np.ndarray) or other.ndim == 0):
        # A 0-d shard is one element: the kernel's tiling and buffers are for 1-d and up.
        other = other.reshape(1) if isinstance(other, np.ndarray) else other
        return run_fmod(self.reshape(1), other, soc).reshape(())
    dtype = _dtype(self)
    self = np.ascontiguousarray(self)
    view = TensorView.row_major(self.shape)
    if isinstance(other, np.ndarray):
        other = np.ascontiguousarray(other.astype(self.dtype, copy=False))
        tiling = compute_tiling(view, TensorView.row_major(other.shape), view, dtype, soc)
        name, tensor = "fmod_tensor", other
    else:
        tiling = compute_tiling(view, other, view, dtype, soc)
        name, tensor = "fmod_scalar", None
    fields = tiling.fields()
    out, _ = run_kernel(
        library(name, dtype), self, tensor, self.shape, tiling.to_bytes(), int(fields["blockDim"]),  # type: ignore[arg-type]
        int(tiling.to_json()["tilingKey"]),
    )
    return out


def _fmod(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    return run_fmod(operands[0], operands[1])


def _fmod_scalar(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    from sbpc.runtime.ops_numpy import scalar_value

    return run_fmod(operands[0], scalar_value(op, "other"))


def _reference_fmod(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    from sbpc.lowering.fmod_reference import fmod_tensor_reference

    return fmod_tensor_reference(operands[0], operands[1].astype(operands[0].dtype, copy=False))


def _reference_fmod_scalar(operands: list[np.ndarray], op: Operation) -> np.ndarray:
    from sbpc.lowering.fmod_reference import fmod_scalar_reference
    from sbpc.runtime.ops_numpy import scalar_value

    return fmod_scalar_reference(operands[0], scalar_value(op, "other"))


def reference_overrides() -> dict[str, Kernel]:
    """The numpy TBE-formula emulation the kernels must match bit for bit (the global reference)."""
    return {"sbp.fmod": _reference_fmod, "sbp.fmod_scalar": _reference_fmod_scalar}


def kernel_overrides() -> dict[str, Kernel]:
    """op name -> kernel(local operands, op), the interface of `runtime.ops_numpy.KERNELS`."""
    return {"sbp.fmod": _fmod, "sbp.fmod_scalar": _fmod_scalar}
