"""Compile an Ascend C kernel with g++ against the CPU shim (`lowering/ascendc/cpu/shim/`) and run it through ctypes.

The kernel source (an emitted `op_kernel/fmod_*.cpp` or a hand-written one) is compiled together with
`lowering/ascendc/cpu/shim/launcher.cpp` into a shared library exporting

    extern "C" int sbp_launch(uint8_t* self, uint8_t* other, uint8_t* out, uint8_t* workspace,
                              uint8_t* tiling, uint32_t blockDim, uint64_t tilingKey, uint64_t* counters);

which runs the kernel entry (``-DSBP_KERNEL_ENTRY=fmod_tensor`` or ``fmod_scalar`` with
``-DSBP_KERNEL_SCALAR=1``) once per block index, sequentially, and returns 0 or nonzero after a shim
check failed (the message is on stderr and in ``sbp_last_error()``; here it becomes `KernelRunError`).

* `compile_kernel` caches libraries by the sha256 of (kernel source, tiling headers, shim sources, flags,
  compiler version) under ``$SBPC_KERNEL_CACHE`` or ``~/.cache/sbpc/kernels``.
* `run_kernel` passes raw storage buffers: for the contiguous keys (0, 1, 2) the arrays themselves; for
  the strided keys (3, 4) the caller passes the underlying storage (``self_storage=`` ...), and the kernel
  reads the views through the tiling's strides and offsets.
* The tiling bytes are `lowering.tiling_data.pack_tiling`'s (the one FmodTilingData layout).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sbpc.lowering.ascendc.tiling import kernel_dtype

__all__ = [
    "COUNTER_NAMES",
    "SHIM_DIR",
    "KernelCompileError",
    "KernelRunError",
    "c_type_of",
    "compile_kernel",
    "kernel_cache_dir",
    "numpy_dtype_of",
    "run_kernel",
]

SHIM_DIR = Path(__file__).resolve().parent / "shim"
LAUNCHER = SHIM_DIR / "launcher.cpp"

# The five ABI counters (sbp_launch's `counters`), then the extended ones (sbp_get_counters_ex).
COUNTER_NAMES = ("gmToUbBytes", "ubToGmBytes", "ubHighWater", "dataCopyCalls", "dataCopyNon32")
_EXTENDED_COUNTER_NAMES = ("gmScalarReadBytes", "gmScalarWriteBytes", "dataCopyPadCalls", "ubToUbBytes",
                           "gmBurstPadBytes", "ubGatherBytes", "ubGatherBusiest")

CXX = os.environ.get("CXX", "g++")
COMPILE_FLAGS = ("-std=c++17", "-Wall", "-Werror", "-O1", "-fPIC")


class KernelCompileError(RuntimeError):
    """g++ rejected the kernel; the message holds the command and g++'s stderr."""


class KernelRunError(RuntimeError):
    """A shim check failed while the kernel ran (UB overflow, bad Cast mode, queue misuse, ...)."""


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------


def c_type_of(dtype: str | np.dtype | type) -> str:
    """The C type the kernel is compiled with (-DDTYPE_SELF=...)."""
    c_type = kernel_dtype(dtype).c_type
    assert c_type is not None  # every kernel dtype has one
    return c_type


def numpy_dtype_of(dtype: str | np.dtype | type) -> np.dtype:
    return kernel_dtype(dtype).numpy_dtype()


# ---------------------------------------------------------------------------
# Compilation
# ---------------------------------------------------------------------------


def kernel_cache_dir() -> Path:
    env = os.environ.get("SBPC_KERNEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "sbpc" / "kernels"


@functools.cache
def _compiler_version() -> str:
    try:
        res = subprocess.run([CXX, "--version"], capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise KernelCompileError(f"C++ compiler {CXX!r} not found") from exc
    return res.stdout.splitlines()[0] if res.stdout else CXX


def _shim_files() -> list[Path]:
    return sorted(p for p in SHIM_DIR.rglob("*") if p.is_file() and p.suffix in {".h", ".hpp", ".cpp"})


def compile_kernel(
    kernel_cpp: Path | str,
    tiling_header_dir: Path | str | None,
    dtype: str,
    scalar: bool,
    *,
    entry: str | None = None,
    extra_flags: Sequence[str] = (),
    cache_dir: Path | str | None = None,
) -> Path:
    """Compile `kernel_cpp` + the shim launcher into a cached shared library and return its path.

    Flags: ``g++ -std=c++17 -Wall -Werror -O1 -fPIC -I lowering/ascendc/cpu/shim -I <tiling_header_dir>
    -DDTYPE_SELF=<half|float|bfloat16_t|int16_t> (DTYPE_OTHER, DTYPE_OUT alike) -DSBP_KERNEL_ENTRY=<entry>
    -DSBP_KERNEL_SCALAR=<0|1> [-DSBP_OP_TILING_HEADER="<stem>_tiling.h"] <extra_flags>``. As the CANN
    build does for an msOpGen kernel (which includes only kernel_operator.h), the op's tiling header
    `<kernel stem>_tiling.h` in `tiling_header_dir`, when there is one, is compiled into the kernel
    (`shim/sbp_shim/op_tiling.h`), so GET_TILING_DATA knows the registered struct.
    `dtype` is bf16/f16/f32/i16 (or half, float, bfloat16, int16, a numpy dtype). `scalar` selects the
    fmod_scalar entry (no `other`); `entry` overrides the symbol.
    The kernel object, the launcher object (shared by all dtypes) and the library are cached by content
    hash; raises `KernelCompileError` with g++'s stderr.
    """
    kernel_cpp = Path(kernel_cpp).resolve()
    ctype = c_type_of(dtype)
    entry = entry or ("fmod_scalar" if scalar else "fmod_tensor")
    if not re.fullmatch(r"[A-Za-z_]\w*", entry):
        raise ValueError(f"bad kernel entry name {entry!r}")
    include_dirs = [SHIM_DIR]
    if tiling_header_dir is not None:
        include_dirs.append(Path(tiling_header_dir).resolve())
    entry_defines = [f"-DSBP_KERNEL_ENTRY={entry}", f"-DSBP_KERNEL_SCALAR={1 if scalar else 0}"]
    dtype_defines = [f"-DDTYPE_SELF={ctype}", f"-DDTYPE_OTHER={ctype}", f"-DDTYPE_OUT={ctype}"]
    op_tiling = f"{kernel_cpp.stem}_tiling.h"
    has_op_tiling = tiling_header_dir is not None and (Path(tiling_header_dir) / op_tiling).is_file()
    tiling_defines = [f'-DSBP_OP_TILING_HEADER="{op_tiling}"'] if has_op_tiling else []
    kernel_flags = [*COMPILE_FLAGS, *(f"-I{d}" for d in include_dirs), *dtype_defines, *tiling_defines,
                    *entry_defines, *extra_flags]  # fmt: skip
    launcher_flags = [*COMPILE_FLAGS, f"-I{SHIM_DIR}", *entry_defines, *extra_flags]

    # Keys cover contents, not paths: -I directories are represented by the headers they hold.
    shim = _digest([], [], _shim_files())
    headers = sorted(Path(tiling_header_dir).glob("*.h")) if tiling_header_dir is not None else []
    lib_key = _digest(kernel_flags, [shim], [kernel_cpp, *headers])
    launcher_key = _digest(launcher_flags, [shim], [])

    cache = Path(cache_dir) if cache_dir is not None else kernel_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    lib = cache / f"{kernel_cpp.stem}-{entry}-{kernel_dtype(dtype).name}-{lib_key}.so"
    if lib.exists():
        return lib
    launcher_obj = cache / f"launcher-{entry}-{launcher_key}.o"
    with tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as tmp:
        kernel_obj = Path(tmp) / "kernel.o"
        _run_cxx([*kernel_flags, "-c", str(kernel_cpp), "-o", str(kernel_obj)], f"compiling {kernel_cpp} for {ctype}")
        if not launcher_obj.exists():
            obj = Path(tmp) / "launcher.o"
            _run_cxx([*launcher_flags, "-c", str(LAUNCHER), "-o", str(obj)], "compiling the shim launcher")
            os.replace(obj, launcher_obj)  # atomic: concurrent builds of the same key are harmless
        out = Path(tmp) / "lib.so"
        _run_cxx(["-shared", "-o", str(out), str(kernel_obj), str(launcher_obj)], f"linking {lib.name}")
        os.replace(out, lib)
    return lib


def _digest(flags: Sequence[str], parts: Sequence[str], files: Sequence[Path]) -> str:
    h = hashlib.sha256()
    h.update(_compiler_version().encode())
    h.update("\0".join(f for f in flags if not f.startswith("-I")).encode())
    for part in parts:
        h.update(part.encode())
    for path in files:
        h.update(str(path.relative_to(SHIM_DIR) if path.is_relative_to(SHIM_DIR) else path.name).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:32]


def _run_cxx(args: Sequence[str], what: str) -> None:
    cmd = [CXX, *args]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise KernelCompileError(f"g++ failed ({res.returncode}) {what}:\n$ {' '.join(cmd)}\n{res.stderr}")


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

_load_lock = threading.Lock()


@functools.lru_cache(maxsize=64)
def _load(lib: str) -> ctypes.CDLL:
    with _load_lock:
        cdll = ctypes.CDLL(lib)
    u8p = ctypes.POINTER(ctypes.c_uint8)
    cdll.sbp_launch.argtypes = [u8p, u8p, u8p, u8p, u8p, ctypes.c_uint32, ctypes.c_uint64,
                                ctypes.POINTER(ctypes.c_uint64)]  # fmt: skip
    cdll.sbp_launch.restype = ctypes.c_int
    cdll.sbp_last_error.restype = ctypes.c_char_p
    cdll.sbp_last_error.argtypes = []
    cdll.sbp_kernel_entry_name.restype = ctypes.c_char_p
    cdll.sbp_kernel_entry_name.argtypes = []
    cdll.sbp_kernel_is_scalar.restype = ctypes.c_int
    cdll.sbp_kernel_is_scalar.argtypes = []
    cdll.sbp_get_counters_ex.restype = ctypes.c_uint32
    cdll.sbp_get_counters_ex.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint32]
    return cdll


def _registered_tiling_size(cdll: ctypes.CDLL, entry: str) -> int | None:
    op_type = "".join(part.capitalize() for part in entry.split("_"))
    try:
        fn = getattr(cdll, f"sbp_tiling_size_{op_type}")
    except AttributeError:
        return None
    fn.restype = ctypes.c_uint64
    fn.argtypes = []
    return int(fn())


def _as_buffer(arr: np.ndarray | None, name: str) -> tuple[np.ndarray | None, Any]:
    if arr is None:
        return None, None
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array, got {type(arr).__name__}")
    if not arr.flags.c_contiguous:
        raise ValueError(f"{name}: pass a C-contiguous storage buffer (use {name}_storage= for strided views)")
    ptr = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)) if arr.size else None
    return arr, ptr


def run_kernel(
    lib: Path | str,
    self: np.ndarray,
    other: np.ndarray | None,
    out_shape: Sequence[int],
    tiling_bytes: bytes,
    block_dim: int,
    tiling_key: int,
    *,
    self_storage: np.ndarray | None = None,
    other_storage: np.ndarray | None = None,
    out_storage: np.ndarray | None = None,
    workspace_bytes: int = 0,
    out_fill: int = 0xA5,
) -> tuple[np.ndarray, dict[str, int]]:
    """Run the compiled kernel on `block_dim` simulated cores; return (out, counters).

    `self`/`other` are the operands; the kernel receives their raw storage: `self_storage` /
    `other_storage` when given (keys 3/4: the storage the strided views live in), else the arrays
    themselves (which must then be C-contiguous). `other` must be None for a scalar kernel. The output
    is a fresh C-contiguous array of `out_shape` filled with the byte `out_fill` (so unwritten elements
    show), or `out_storage` (written in place and returned) when the output view is strided.
    Counters: gmToUbBytes, ubToGmBytes, ubHighWater, dataCopyCalls, dataCopyNon32 (the ABI five) plus
    gmScalarReadBytes, gmScalarWriteBytes, dataCopyPadCalls, ubToUbBytes, gmBurstPadBytes (DataCopyPad blocks
    rounded up to whole 32-byte GM bursts, minus their bytes).
    """
    cdll = _load(str(Path(lib).resolve()))
    entry = cdll.sbp_kernel_entry_name().decode()
    is_scalar = bool(cdll.sbp_kernel_is_scalar())
    if is_scalar and (other is not None or other_storage is not None):
        raise ValueError(f"{entry} is a scalar kernel: pass other=None (the scalar lives in the tiling)")
    if not is_scalar and other is None and other_storage is None:
        raise ValueError(f"{entry} needs an `other` tensor")
    expected = _registered_tiling_size(cdll, entry)
    if expected is not None and len(tiling_bytes) != expected:
        raise ValueError(f"tiling is {len(tiling_bytes)} bytes but the kernel's registered struct is {expected}")
    if not 1 <= block_dim <= 65535:
        raise ValueError(f"block_dim must be in [1, 65535], got {block_dim}")

    dtype = np.asarray(self).dtype
    self_buf, self_ptr = _as_buffer(self_storage if self_storage is not None else np.asarray(self), "self")
    other_src = other_storage if other_storage is not None else (None if other is None else np.asarray(other))
    other_buf, other_ptr = _as_buffer(other_src, "other")
    if out_storage is not None:
        out, out_ptr = _as_buffer(out_storage, "out")
    else:
        out = np.empty(tuple(out_shape), dtype=dtype)
        out.view(np.uint8).fill(out_fill) if out.size else None
        out, out_ptr = _as_buffer(out, "out")
    tiling_buf = ctypes.create_string_buffer(bytes(tiling_bytes), max(len(tiling_bytes), 1))
    tiling_ptr = ctypes.cast(tiling_buf, ctypes.POINTER(ctypes.c_uint8))
    ws = ctypes.create_string_buffer(workspace_bytes) if workspace_bytes else None
    ws_ptr = ctypes.cast(ws, ctypes.POINTER(ctypes.c_uint8)) if ws is not None else None
    counters = (ctypes.c_uint64 * 5)()

    keep_alive = (self_buf, other_buf, out, tiling_buf, ws)
    rc = cdll.sbp_launch(self_ptr, other_ptr, out_ptr, ws_ptr, tiling_ptr, block_dim, tiling_key, counters)
    del keep_alive
    if rc != 0:
        msg = (cdll.sbp_last_error() or b"").decode(errors="replace")
        raise KernelRunError(f"{entry} (key {tiling_key}, blockDim {block_dim}) failed: {msg}")
    ext = (ctypes.c_uint64 * 16)()
    n = cdll.sbp_get_counters_ex(ext, 16)
    names = COUNTER_NAMES + _EXTENDED_COUNTER_NAMES
    result = {name: int(ext[i]) for i, name in enumerate(names[:n])}
    for i, name in enumerate(COUNTER_NAMES):
        result[name] = int(counters[i])
    assert out is not None
    return out, result
