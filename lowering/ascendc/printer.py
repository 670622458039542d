"""Print the `ascendc` dialect as a CANN custom-op project (SPEC §5), in xDSL's printer style.

`AscendCPrinter.print(op)` dispatches on the op class (functools.singledispatchmethod, as
xdsl/backend/wgsl/wgsl_printer.py does): an `ascendc.kernel` prints the kernel source whose per-tile
compute comes from the kernel's region, one line per op. `emit_project` writes, per kernel, a complete
msOpGen-style project (its build files: `lowering/ascendc/cann_project.py`):

    DIR/<kernel>/op_kernel/<kernel>.cpp       the kernel: TILING_KEY_IS(0..4) branches, all four dtypes
    DIR/<kernel>/op_host/<kernel>_tiling.h    BEGIN_TILING_DATA_DEF(FmodTilingData) ... REGISTER_TILING_DATA_CLASS
    DIR/<kernel>/op_host/<kernel>.cpp         TilingFunc (a table of the launches' tilings), InferShape, OpDef
    DIR/<kernel>/op_host/aclnn_<kernel>.h     the aclnn two-stage API
    DIR/<kernel>/tiling.json                  the concrete tiling of every launch and rank
    DIR/<kernel>/CMakeLists.txt ...            the build files: CMakePresets.json, build.sh, the op prototype
                                              <kernel>.json, {framework,op_host,op_kernel}/CMakeLists.txt
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Operation

from sbpc.dialects import ascendc, dtypes
from sbpc.lowering.ascendc import kernel_template as tpl
from sbpc.lowering.ascendc.cann_project import CANN_PACKAGE_PATH, EXECUTABLE, project_files, write_atomic
from sbpc.lowering.ascendc.host_table import TilingCase, tiling_rows
from sbpc.lowering.ascendc.host_tiling_cpp import (
    host_includes,
    host_opdef_source,
    host_tiling_source,
    tiling_data_header,
)
from sbpc.lowering.ascendc.kernel_template_blocked import BLOCKED_METHODS
from sbpc.lowering.ascendc.soc import ALIGN_BYTES
from sbpc.lowering.ascendc.tiling_budget import STRIDED_RUN_CHUNK
from sbpc.lowering.ascendc.to_ascendc import launch_cases

KEYS = {"fmod_tensor": (0, 1, 2, 3, 4), "fmod_scalar": (0, 3)}


class AscendCPrinter:
    """Prints ascendc ops as Ascend C source."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.indent = 0

    def line(self, text: str) -> None:
        self.stream.write("  " * self.indent + text + "\n")

    @contextmanager
    def indented(self) -> Iterator[None]:
        self.indent += 1
        try:
            yield
        finally:
            self.indent -= 1

    @functools.singledispatchmethod
    def print(self, op: Operation) -> None:
        raise NotImplementedError(f"no Ascend C printer for {op.name}")

    @print.register
    def _(self, op: ascendc.KernelOp) -> None:
        name = op.sym_name.data
        scalar = op.scalar is not None
        body = _Capture()
        compute = AscendCPrinter(body)
        compute.indent = 2
        for inner in op.body.block.ops:
            compute.print(inner)
        cls = "Kernel" + op.op_type.data
        other_param = "" if scalar else "GM_ADDR other, "
        if scalar:
            scalar_init = "    scalar_ = td.scalarOther;\n"
            other_init = ""
        else:
            other_init = "    otherGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(other));\n"
            scalar_init = (
                "    if (ScalarLike()) {\n"
                "      scalar_ = static_cast<float>(otherGm_.GetValue(static_cast<uint64_t>(td.otherOffset)));\n"
                "    }\n"
            )
        branches = []
        for i, key in enumerate(KEYS[name]):
            head = "if" if i == 0 else "} else if"
            branches.append(f"  {head} (TILING_KEY_IS({key})) {{\n")
            branches.append(f"    {cls}<DTYPE_SELF> op;\n")
            branches.append(f"    op.Init(self, {'' if scalar else 'other, '}out, tilingData, {key});\n")
            branches.append("    op.Process();\n")
        branches.append("  }\n")
        self.stream.write(
            tpl.KERNEL.format(
                align_bytes=ALIGN_BYTES,
                cls=cls,
                other_param=other_param,
                other_init=other_init,
                scalar_init=scalar_init,
                copy_in_alloc="" if scalar else tpl.TENSOR_COPY_IN_ALLOC,
                other_methods="" if scalar else tpl.TENSOR_OTHER_METHODS,
                column_dispatch="" if scalar else tpl.TENSOR_COLUMN_DISPATCH,
                blocked_methods=BLOCKED_METHODS,
                run_chunk=STRIDED_RUN_CHUNK,
                copy_in_other="" if scalar else tpl.TENSOR_COPY_IN_OTHER,
                copy_in_enque="" if scalar else tpl.TENSOR_COPY_IN_ENQUE,
                compute_operands=tpl.SCALAR_COMPUTE_OPERANDS if scalar else tpl.TENSOR_COMPUTE_OPERANDS,
                compute=body.text,
                compute_free="" if scalar else tpl.TENSOR_COMPUTE_FREE,
                entry=name,
                branches="".join(branches),
            )
        )

    # -- the per-tile program: copies are the template's CopyIn/CopyOut; compute lines here ----------
    @print.register
    def _(self, op: ascendc.CopyInOp) -> None:
        self.line(f"// {op.dst.data} <- {op.src.data}: DataCopyPad in CopyIn (exact bytes, padded to 32 B in UB)")

    @print.register
    def _(self, op: ascendc.CopyOutOp) -> None:
        self.line(f"// {op.dst.data} <- {op.src.data}: DataCopyPad in CopyOut (exact bytes on tails)")

    @print.register
    def _(self, op: ascendc.DuplicateOp) -> None:
        self.line("if (ScalarLike()) {")
        with self.indented():
            self.line(f"Duplicate({op.dst.data}, scalar_, static_cast<int32_t>(count));")
        self.line("}")

    @print.register
    def _(self, op: ascendc.CastOp) -> None:
        dst, src = op.dst.data, op.src.data
        if op.mode is not None:
            self.line(f"Cast({dst}, {src}, RoundMode::{op.mode.data}, count);")
            return
        assert op.modes is not None
        guard = src in ("y",)  # the `other` tile exists only on the tensor path
        if guard:
            self.line("if (!ScalarLike()) {")
            self.indent += 1
        for i, (dtype, mode) in enumerate(op.modes.data.items()):
            assert isinstance(mode, StringAttr)
            head = "if constexpr" if i == 0 else "} else if constexpr"
            t = dtypes.lookup(dtype)
            assert t is not None  # the modes name kernel dtypes (lowering/ascendc/to_ascendc.py)
            self.line(f"{head} (std::is_same_v<T, {t.c_type}>) {{")
            with self.indented():
                self.line(f"Cast({dst}, {src}, RoundMode::{mode.data}, count);")
        self.line("}")
        if guard:
            self.indent -= 1
            self.line("}")

    def _binary(self, fn: str, op: ascendc.DivOp | ascendc.MulOp | ascendc.SubOp | ascendc.AddOp) -> None:
        self.line(f"{fn}({op.dst.data}, {op.src0.data}, {op.src1.data}, static_cast<int32_t>(count));")

    @print.register
    def _(self, op: ascendc.DivOp) -> None:
        self._binary("Div", op)

    @print.register
    def _(self, op: ascendc.MulOp) -> None:
        self._binary("Mul", op)

    @print.register
    def _(self, op: ascendc.SubOp) -> None:
        self._binary("Sub", op)

    @print.register
    def _(self, op: ascendc.AddOp) -> None:
        self._binary("Add", op)


class _Capture:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> None:
        self.text += s


# ---------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------


def tiling_header(name: str, op_type: str) -> str:
    """`op_host/<kernel>_tiling.h`: the FmodTilingData fields, shared by host and kernel."""
    return tiling_data_header(op_type)


def host_source(name: str, op_type: str, cases: Iterable[TilingCase]) -> str:
    """`op_host/<kernel>.cpp`: TilingFunc (the table of lowering/ascendc/tiling.py's results for `cases`),
    InferShape, OpDef."""
    return "\n".join(
        [
            "// Generated by sbpc: host side of the fmod custom op (tiling, shape inference, prototype).",
            host_includes(op_type),
            "namespace optiling {",
            host_tiling_source(op_type, tiling_rows(cases)),
            "}  // namespace optiling",
            "",
            host_opdef_source(op_type),
        ]
    )


def aclnn_header(name: str, op_type: str) -> str:
    other = "const aclScalar* other" if name == "fmod_scalar" else "const aclTensor* other"
    guard = f"ACLNN_{name.upper()}_H"
    return "\n".join(
        [
            "// Generated by sbpc: aclnn two-stage API of the fmod custom op.",
            f"#ifndef {guard}",
            f"#define {guard}",
            '#include "aclnn/aclnn_base.h"',
            "",
            '#ifdef __cplusplus\nextern "C" {\n#endif',
            "",
            f"aclnnStatus aclnn{op_type}GetWorkspaceSize(const aclTensor* self, {other}, aclTensor* out,",
            "                                            uint64_t* workspaceSize, aclOpExecutor** executor);",
            f"aclnnStatus aclnn{op_type}(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,",
            "                            aclrtStream stream);",
            "",
            "#ifdef __cplusplus\n}\n#endif",
            f"#endif  // {guard}",
            "",
        ]
    )


def attr_to_json(attr: Attribute) -> Any:
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        value = attr.value.data
        return value if math.isfinite(value) else repr(value)  # "inf"/"nan": JSON has no Infinity/NaN
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return list(attr.get_values())
    if isinstance(attr, ArrayAttr):
        return [attr_to_json(a) for a in attr.data]
    if isinstance(attr, DictionaryAttr):
        return {k: attr_to_json(v) for k, v in attr.data.items()}
    return str(attr)


def emit_project(module: ModuleOp, out_dir: Path, cann_path: str = CANN_PACKAGE_PATH) -> list[Path]:
    """Write the CANN project of every kernel in `module` (each file atomically); return the files written.
    `cann_path` is the toolkit CMakePresets.json names (ASCEND_CANN_PACKAGE_PATH)."""
    written: list[Path] = []
    kernels = [op for op in module.walk() if isinstance(op, ascendc.KernelOp)]
    launches = [op for op in module.walk() if isinstance(op, ascendc.LaunchOp)]
    for kernel in kernels:
        name, op_type = kernel.sym_name.data, kernel.op_type.data
        root = out_dir / name
        stream = _Capture()
        AscendCPrinter(stream).print(kernel)  # type: ignore[arg-type]
        files = {
            f"op_kernel/{name}.cpp": stream.text,
            f"op_host/{name}_tiling.h": tiling_header(name, op_type),
        }
        mine = [launch for launch in launches if launch.kernel.root_reference.data == name]
        files[f"op_host/{name}.cpp"] = host_source(name, op_type, (c for launch in mine for c in launch_cases(launch)))
        files[f"op_host/aclnn_{name}.h"] = aclnn_header(name, op_type)
        ranks = [[attr_to_json(t) for t in launch.tilings.data] for launch in mine]
        files["tiling.json"] = json.dumps(
            {
                "kernel": name,
                "op_type": op_type,
                "launches": [{"index": i, "ranks": tilings} for i, tilings in enumerate(ranks)],
            },
            indent=2,
        ) + "\n"
        socs = {t["soc"] for tilings in ranks for t in tilings if isinstance(t, dict) and "soc" in t}
        files.update(project_files(name, op_type, socs, cann_path))
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text, 0o755 if relative in EXECUTABLE else 0o644)
            written.append(path)
    return written
