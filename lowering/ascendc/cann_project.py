"""The build files of an emitted CANN custom-op project, as msOpGen lays a project out (SPEC §5).

`project_files(name, op_type, socs, cann_path)` gives, relative to the project root `DIR/<name>/`:

    CMakeLists.txt                includes the toolkit's cmake helpers; adds framework/, op_host/, op_kernel/
    CMakePresets.json             preset "default": ASCEND_COMPUTE_UNIT, ASCEND_CANN_PACKAGE_PATH, vendor_name ...
    build.sh                      configure with the preset, build the kernel binaries and the .run package
    <name>.json                   the op prototype msOpGen takes (-i): inputs, output, dtypes, formats, attrs
    framework/CMakeLists.txt      (AI-framework plugins; none emitted)
    op_host/CMakeLists.txt        cust_op_proto, cust_optiling, cust_opapi around the toolkit's opbuild()
    op_kernel/CMakeLists.txt      the toolkit's add_kernels_compile()

The kernel, host and tiling sources are the printer's (`lowering/ascendc/printer.py`); the text of the
CMake files and build.sh is `lowering/ascendc/cann_templates.py`; the SoC series come from `lowering/ascendc/soc.py`,
the dtypes and attributes from the OpDef's own tables (`lowering/ascendc/host_tiling_cpp.py`), so the JSON and
the OpDef cannot disagree. `write_atomic` writes each file through a temporary file and a rename.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sbpc.lowering.ascendc import cann_templates as tpl
from sbpc.lowering.ascendc.host_tiling_cpp import ATTR_KINDS, HOST_ATTRS, OPDEF_FORMAT, OPDEF_TYPES, op_inputs
from sbpc.lowering.ascendc.soc import DEFAULT_SOC, SOCS

CANN_PACKAGE_PATH = "/usr/local/Ascend/ascend-toolkit/latest"
"""The toolkit CMakePresets.json names when the user gives none (`sbp-translate --cann-path`): the
toolkit's default install path. build.sh takes `$ASCEND_CANN_PACKAGE_PATH` / `$ASCEND_HOME_PATH` instead."""
VENDOR_NAME = "sbpc"
"""`vendor_name` of the package (`packages/vendors/sbpc/`), kept apart from other vendors' `customize`."""
EXECUTABLE = frozenset({"build.sh"})


def compute_units(socs: Iterable[str]) -> list[str]:
    """ASCEND_COMPUTE_UNIT of the SoCs the kernel's launches were tiled for (the series, sorted, once each)."""
    units = sorted({SOCS[soc].compute_unit for soc in socs})
    return units or [SOCS[DEFAULT_SOC].compute_unit]


def op_prototype(op_type: str) -> list[dict[str, Any]]:
    """msOpGen's op prototype JSON (`msopgen gen -i <name>.json`): the OpDef's inputs, output and attributes,
    each tensor with its dtype and format columns (one kernel instance per column)."""
    types = [t.msopgen for t in OPDEF_TYPES]
    formats = [OPDEF_FORMAT] * len(types)

    def tensor(name: str) -> dict[str, Any]:
        return {"name": name, "param_type": "required", "format": formats, "type": types}

    attrs = []
    for name, kind in HOST_ATTRS[op_type]:
        spec = ATTR_KINDS[kind]
        attr: dict[str, Any] = {"name": name, "param_type": "required" if spec.required else "optional",
                                "type": spec.msopgen}  # fmt: skip
        if not spec.required:
            attr["default_value"] = spec.default
        attrs.append(attr)
    return [
        {
            "op": op_type,
            "language": "cpp",
            "input_desc": [tensor(name) for name in op_inputs(op_type)],
            "output_desc": [tensor("out")],
            "attr": attrs,
        }
    ]


def cmake_presets(units: list[str], cann_path: str) -> dict[str, Any]:
    """CMakePresets.json: msOpGen's preset "default" (version 1, build_out/), for this SoC and toolkit."""

    def var(kind: str, value: str) -> dict[str, str]:
        return {"type": kind, "value": value}

    return {
        "version": 1,
        "cmakeMinimumRequired": {"major": 3, "minor": 19, "patch": 0},
        "configurePresets": [
            {
                "name": "default",
                "displayName": "Default Config",
                "description": "Default build using Unix Makefiles generator",
                "generator": "Unix Makefiles",
                "binaryDir": "${sourceDir}/build_out",
                "cacheVariables": {
                    "CMAKE_BUILD_TYPE": var("STRING", "Release"),
                    "ENABLE_SOURCE_PACKAGE": var("BOOL", "True"),
                    "ENABLE_BINARY_PACKAGE": var("BOOL", "True"),
                    "ASCEND_COMPUTE_UNIT": var("STRING", ";".join(units)),
                    "ENABLE_TEST": var("BOOL", "False"),
                    "vendor_name": var("STRING", VENDOR_NAME),
                    "ASCEND_CANN_PACKAGE_PATH": var("PATH", cann_path),
                    "ASCEND_PYTHON_EXECUTABLE": var("STRING", "python3"),
                    "CMAKE_INSTALL_PREFIX": var("PATH", "${sourceDir}/build_out"),
                    "ENABLE_CROSS_COMPILE": var("BOOL", "False"),
                    "ASCEND_PACK_SHARED_LIBRARY": var("BOOL", "False"),
                },
            }
        ],
    }


def project_files(name: str, op_type: str, socs: Iterable[str], cann_path: str = CANN_PACKAGE_PATH) -> dict[str, str]:
    """The build files of the project `DIR/<name>/`: relative path -> text."""
    fill = {"name": name, "op_type": op_type}
    return {
        "CMakeLists.txt": tpl.TOP_CMAKE.format(**fill),
        "CMakePresets.json": json.dumps(cmake_presets(compute_units(socs), cann_path), indent=4) + "\n",
        "build.sh": tpl.BUILD_SH.format(**fill),
        f"{name}.json": json.dumps(op_prototype(op_type), indent=4) + "\n",
        "framework/CMakeLists.txt": tpl.FRAMEWORK_CMAKE.format(**fill),
        "op_host/CMakeLists.txt": tpl.HOST_CMAKE.format(**fill),
        "op_kernel/CMakeLists.txt": tpl.KERNEL_CMAKE.format(**fill),
    }


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    """Write through a private temp file and rename it in place, so a reader (another rank compiling the
    same kernel, a build started on the old project) never sees a half-written file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
