"""The CANN custom-op project `sbp-translate --emit-ascendc` writes (SPEC §5), checked without a CANN toolkit.

What these tests prove:
* every file of msOpGen's layout is there for both op kinds (CMakeLists.txt at the top, in framework/,
  op_host/ and op_kernel/; CMakePresets.json; build.sh, executable; the op prototype JSON; the sources);
* the prototype JSON is what msOpGen reads (op, input_desc/output_desc with param_type, formats and the
  four dtypes in the OpDef's order, attr with FmodScalar's `other` float) and agrees with the OpDef;
  CMakePresets.json holds ASCEND_COMPUTE_UNIT of the pass's SoC and the toolkit of `--cann-path`;
* `bash -n build.sh` accepts the script, and `bash build.sh binary` configures through the preset with
  `$ASCEND_CANN_PACKAGE_PATH` replacing the preset's toolkit and builds;
* the CMake files parse and configure (`cmake --preset default`, CMake's file API read back) against a
  stand-in toolkit made here: the top level finds the op project template where the preset says (both
  `tools/` and `toolkit/tools/` layouts), copies its helpers in, and fails with a message naming the path
  when the toolkit is not there; op_host hands exactly op_host/<op>.cpp to opbuild() and builds the three
  host libraries from the right sources; op_kernel hands the kernel to add_kernels_compile() for the
  preset's compute unit;
* the kernel includes only kernel_operator.h and still compiles with g++ against the shim, which compiles
  in op_host/<op>_tiling.h the way the CANN build does (and fails without it); the host source registers
  its tiling with REGISTER_TILING_DATA_CLASS and compiles against lowering/host_shim.

What they cannot prove: the stand-in's config.cmake / func.cmake / intf.cmake only record what the
project hands them; no real opbuild, op_build, ascendc_compile_kernel.py, ccec/bisheng compiler or
makeself runs here, so nothing shows that the real toolkit accepts these files, compiles the kernel for
the device, or that the .run package installs and runs on an NPU.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.cann_project import CANN_PACKAGE_PATH, VENDOR_NAME
from sbpc.lowering.ascendc.cpu.runner import KernelCompileError, compile_kernel
from sbpc.tools.sbp_translate import main as translate

ROOT = Path(__file__).resolve().parents[2]
HOST_SHIM = ROOT / "lowering" / "ascendc" / "cpu" / "host_shim"
DEVICE_SHIM = ROOT / "lowering" / "ascendc" / "cpu" / "shim"
CXX = os.environ.get("CXX", "g++")
KINDS = {"fmod_tensor": "FmodTensor", "fmod_scalar": "FmodScalar"}
BUILD_FILES = ("CMakeLists.txt", "CMakePresets.json", "build.sh", "framework/CMakeLists.txt",
               "op_host/CMakeLists.txt", "op_kernel/CMakeLists.txt")  # fmt: skip

PROGRAM = """
sbp.placement @p "npu" [0, 1]
func.func @main(%a: !sbp.tensor<4x40xf16, @p, [S(0)]>, %b: !sbp.tensor<40xf16, @p, [B]>) {
  %0 = sbp.fmod %a, %b : !sbp.tensor<4x40xf16, @p, [S(0)]>, !sbp.tensor<40xf16, @p, [B]> -> !sbp.tensor<4x40xf16, @p>
  %1 = sbp.fmod_scalar %a, 2.5 : f16 : !sbp.tensor<4x40xf16, @p, [S(0)]> -> !sbp.tensor<4x40xf16, @p>
  func.return
}
"""

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake (installed by .ci/run)")

# --- the stand-in toolkit: the op project template's files, recording what the project hands them -------------

STANDIN_CONFIG = """\
if(NOT DEFINED vendor_name)
  set(vendor_name customize CACHE STRING "")
endif()
foreach(unit ${ASCEND_COMPUTE_UNIT})
  if(NOT unit IN_LIST SBPC_STANDIN_UNITS)
    message(FATAL_ERROR "stand-in: COMPUTE_UNIT ${unit} is not a SoC series")
  endif()
endforeach()
set(ASCEND_AUTOGEN_PATH ${CMAKE_BINARY_DIR}/autogen)
file(MAKE_DIRECTORY ${ASCEND_AUTOGEN_PATH})
file(WRITE ${CMAKE_BINARY_DIR}/standin.log "config ${CMAKE_CURRENT_LIST_DIR}\\n")
"""

STANDIN_FUNC = """\
function(get_system_info out)
  set(${out} standin_${CMAKE_SYSTEM_PROCESSOR} PARENT_SCOPE)
endfunction()
function(opbuild)
  cmake_parse_arguments(OPBUILD "" "OUT_DIR" "OPS_SRC" ${ARGN})
  file(APPEND ${CMAKE_BINARY_DIR}/standin.log "opbuild ${OPBUILD_OPS_SRC} -> ${OPBUILD_OUT_DIR}\\n")
  foreach(generated op_proto.cc op_proto.h aclnn_standin.cpp aclnn_standin.h)
    file(WRITE ${OPBUILD_OUT_DIR}/${generated} "// stand-in for op_build's output\\n")
  endforeach()
endfunction()
function(add_ops_compile_options op)
  file(APPEND ${CMAKE_BINARY_DIR}/standin.log "options ${op} ${ARGN}\\n")
endfunction()
function(add_kernels_compile)
  file(GLOB kernels RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  file(APPEND ${CMAKE_BINARY_DIR}/standin.log "kernels ${ASCEND_COMPUTE_UNIT}: ${kernels}\\n")
  add_custom_target(binary COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_BINARY_DIR}/binary.stamp)
endfunction()
"""

STANDIN_INTF = """\
add_library(intf_pub INTERFACE)
target_include_directories(intf_pub INTERFACE ${ASCEND_CANN_PACKAGE_PATH}/include)
"""


def make_toolkit(root: Path, tools: str = "tools") -> Path:
    """A stand-in CANN toolkit at `root`: only the op project template the emitted CMake files look for."""
    templates = root / tools / "op_project_templates" / "ascendc"
    cmake = templates / "customize" / "cmake"
    (cmake / "util").mkdir(parents=True)
    units = " ".join(sorted({"ascend910b", "ascend910_93"}))
    (cmake / "config.cmake").write_text(f"set(SBPC_STANDIN_UNITS {units})\n" + STANDIN_CONFIG)
    (cmake / "func.cmake").write_text(STANDIN_FUNC)
    (cmake / "intf.cmake").write_text(STANDIN_INTF)
    (cmake / "makeself.cmake").write_text('message(STATUS "stand-in makeself")\n')
    (cmake / "util" / "gen_version_info.sh").write_text('echo "Version=standin" > "$2/version.info"\n')
    (templates / "common" / "util").mkdir(parents=True)
    (templates / "common" / "util" / "gen_version_info.sh").write_text("exit 1  # customize/ must win\n")
    (templates / "common" / "util" / "preset_parse.py").write_text("# common-only utility\n")
    scripts = templates / "customize" / "scripts"
    scripts.mkdir()
    for script in ("install.sh", "upgrade.sh"):
        (scripts / script).write_text("vendor_name=customize\n")
    (root / "include").mkdir()
    return root


def emit(out: Path, *args: str) -> Path:
    src = out.parent / "p.mlir"
    src.write_text(PROGRAM)
    assert translate([str(src), "--emit-ascendc", "-o", str(out), *args]) == 0
    return out


@pytest.fixture
def project(tmp_path, capsys) -> Path:
    out = emit(tmp_path / "out")
    capsys.readouterr()
    return out


# --- structure -------------------------------------------------------------------------------------------------


def test_every_file_is_there(project) -> None:
    for name in KINDS:
        root = project / name
        expected = {*BUILD_FILES, f"{name}.json", "tiling.json", f"op_kernel/{name}.cpp",
                    f"op_host/{name}.cpp", f"op_host/{name}_tiling.h", f"op_host/aclnn_{name}.h"}  # fmt: skip
        present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
        assert present == expected
        assert os.access(root / "build.sh", os.X_OK)
        assert not os.access(root / "CMakeLists.txt", os.X_OK)


def test_prototype_json_is_msopgen_input_and_matches_the_opdef(project) -> None:
    for name, op in KINDS.items():
        (proto,) = json.loads((project / name / f"{name}.json").read_text())
        assert proto["op"] == op and proto["language"] == "cpp"
        inputs = ["self", "other"] if op == "FmodTensor" else ["self"]
        assert [d["name"] for d in proto["input_desc"]] == inputs
        assert [d["name"] for d in proto["output_desc"]] == ["out"]
        for desc in proto["input_desc"] + proto["output_desc"]:
            assert desc["param_type"] == "required"
            assert desc["type"] == ["bf16", "float16", "float", "int16"]
            assert desc["format"] == ["ND"] * 4
        # The JSON's dtype columns are the OpDef's DataType lists, in order.
        host = (project / name / "op_host" / f"{name}.cpp").read_text()
        lists = re.findall(r"DataType\(\{([^}]*)\}\)", host)
        assert len(lists) == len(inputs) + 1
        by_msopgen = {t.msopgen: t.ge for t in dtypes.FMOD_KERNEL_TYPES}
        for listed in lists:
            assert [s.strip() for s in listed.split(",")] == [f"ge::{by_msopgen[t]}" for t in desc["type"]]
        attrs = {a["name"]: a for a in proto["attr"]}
        assert set(attrs) == set(re.findall(r'this->Attr\("(\w+)"\)', host))
        if op == "FmodScalar":
            assert attrs["other"] == {"name": "other", "param_type": "required", "type": "float"}
        else:
            assert "other" not in attrs
        assert attrs["self_strides"] == {"name": "self_strides", "param_type": "optional", "type": "list_int",
                                         "default_value": []}  # fmt: skip
        assert attrs["self_offset"]["type"] == "int" and attrs["self_offset"]["default_value"] == 0


def preset_vars(root: Path) -> dict[str, str]:
    presets = json.loads((root / "CMakePresets.json").read_text())
    assert presets["version"] == 1
    (default,) = presets["configurePresets"]
    assert default["name"] == "default" and default["binaryDir"] == "${sourceDir}/build_out"
    return {k: v["value"] for k, v in default["cacheVariables"].items()}


@pytest.mark.parametrize(("soc", "unit"), [("ascend910b", "ascend910b"), ("ascend910b3", "ascend910b"),
                                           ("ascend910_93", "ascend910_93")])  # fmt: skip
def test_presets_hold_the_soc_series_and_the_toolkit(tmp_path, capsys, soc, unit) -> None:
    out = emit(tmp_path / "out", "--soc", soc, "--cann-path", "/opt/cann")
    capsys.readouterr()
    for name in KINDS:
        values = preset_vars(out / name)
        assert values["ASCEND_COMPUTE_UNIT"] == unit
        assert values["ASCEND_CANN_PACKAGE_PATH"] == "/opt/cann"
        assert values["vendor_name"] == VENDOR_NAME
        assert values["ENABLE_BINARY_PACKAGE"] == "True" and values["ENABLE_CROSS_COMPILE"] == "False"


def test_default_toolkit_path(project) -> None:
    assert preset_vars(project / "fmod_scalar")["ASCEND_CANN_PACKAGE_PATH"] == CANN_PACKAGE_PATH


def test_build_sh_parses(project) -> None:
    for name in KINDS:
        res = subprocess.run(["bash", "-n", str(project / name / "build.sh")], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr


# --- sources: what a kernel may include, the tiling registration -----------------------------------------------


def test_kernel_includes_only_kernel_operator_and_reads_its_tiling(project) -> None:
    for name, op in KINDS.items():
        kernel = (project / name / "op_kernel" / f"{name}.cpp").read_text()
        assert re.findall(r"^\s*#\s*include\s*(\S+)", kernel, re.M) == ['"kernel_operator.h"']
        assert "GET_TILING_DATA(tilingData, tiling);" in kernel
        assert re.search(rf'extern "C" __global__ __aicore__ void {name}\(GM_ADDR self, ', kernel)
        header = (project / name / "op_host" / f"{name}_tiling.h").read_text()
        assert f"REGISTER_TILING_DATA_CLASS({op}, FmodTilingData)" in header
        assert f'#include "{name}_tiling.h"' in (project / name / "op_host" / f"{name}.cpp").read_text()


@pytest.mark.skipif(shutil.which(CXX) is None, reason="needs g++")
def test_emitted_kernel_compiles_with_the_shim_only_through_the_tiling_header(project, tmp_path) -> None:
    root = project / "fmod_tensor"
    lib = compile_kernel(root / "op_kernel" / "fmod_tensor.cpp", root / "op_host", "f16", False,
                         cache_dir=tmp_path / "cache")  # fmt: skip
    assert lib.is_file()
    # Without op_host/fmod_tensor_tiling.h nothing declares the registered struct: the kernel names no header.
    with pytest.raises(KernelCompileError, match=r"SbpRegisteredTilingData|FmodTilingData"):
        compile_kernel(root / "op_kernel" / "fmod_tensor.cpp", None, "f16", False, cache_dir=tmp_path / "cache")


@pytest.mark.skipif(shutil.which(CXX) is None, reason="needs g++")
def test_emitted_host_source_compiles_with_the_host_shim(project) -> None:
    """op_host/<op>.cpp as it lies in the project, in C++11: the toolkit's intf_pub compiles host code so."""
    for name in KINDS:
        host = project / name / "op_host"
        cmd = [CXX, "-std=c++11", "-Wall", "-Werror", "-fsyntax-only", f"-I{HOST_SHIM}", f"-I{DEVICE_SHIM}",
               str(host / f"{name}.cpp")]  # fmt: skip
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr


# --- CMake against the stand-in toolkit ------------------------------------------------------------------------


def configure(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    query = root / "build_out" / ".cmake" / "api" / "v1" / "query"
    query.mkdir(parents=True, exist_ok=True)
    (query / "codemodel-v2").touch()
    return subprocess.run(["cmake", "--preset", "default", *extra], cwd=root, capture_output=True, text=True)


def target_sources(build: Path) -> dict[str, list[str]]:
    """Target name -> its source paths, from CMake's file API reply."""
    reply = build / ".cmake" / "api" / "v1" / "reply"
    index = json.loads(next(reply.glob("index-*.json")).read_text())
    codemodel = json.loads((reply / index["reply"]["codemodel-v2"]["jsonFile"]).read_text())
    sources = {}
    for ref in codemodel["configurations"][0]["targets"]:
        target = json.loads((reply / ref["jsonFile"]).read_text())
        sources[target["name"]] = [s["path"] for s in target.get("sources", [])]
    return sources


@needs_cmake
@pytest.mark.parametrize("tools", ["tools", "toolkit/tools"])
def test_cmake_configures_against_a_standin_toolkit(tmp_path, capsys, tools) -> None:
    toolkit = make_toolkit(tmp_path / "cann", tools)
    out = emit(tmp_path / "out", "--cann-path", str(toolkit))
    capsys.readouterr()
    for name in KINDS:
        root = out / name
        res = configure(root)
        assert res.returncode == 0, res.stdout + res.stderr
        build = root / "build_out"
        template = toolkit / tools / "op_project_templates" / "ascendc"
        assert f"sbpc: op project helpers from {template}" in res.stdout
        log = (build / "standin.log").read_text().splitlines()
        # config.cmake ran from the project's copy of the toolkit's helpers.
        assert log[0] == f"config {root / 'cmake'}"
        assert f"opbuild {root / 'op_host' / f'{name}.cpp'} -> {build / 'autogen'}" in log
        assert f"kernels ascend910b: {name}.cpp" in log
        assert (root / "cmake" / "util" / "gen_version_info.sh").read_text().startswith("echo")  # customize won
        assert (root / "cmake" / "util" / "preset_parse.py").is_file()  # common utilities copied too
        assert (root / "scripts" / "install.sh").is_file()
        cache = (build / "CMakeCache.txt").read_text()
        assert f"ASCEND_CANN_PACKAGE_PATH:PATH={toolkit}" in cache
        assert f"vendor_name:STRING={VENDOR_NAME}" in cache
        sources = target_sources(build)
        assert sources["cust_op_proto"] == [f"op_host/{name}.cpp", "build_out/autogen/op_proto.cc"]
        assert sources["cust_optiling"] == [f"op_host/{name}.cpp"]
        assert sources["cust_opapi"] == ["build_out/autogen/aclnn_standin.cpp"]
        assert {"binary", "modify_vendor", "gen_version_info", "optiling_compat"} <= set(sources)


@needs_cmake
def test_cmake_names_the_missing_toolkit(tmp_path, capsys) -> None:
    empty = tmp_path / "no-cann"
    empty.mkdir()
    out = emit(tmp_path / "out", "--cann-path", str(empty))
    capsys.readouterr()
    res = configure(out / "fmod_scalar")
    assert res.returncode != 0
    assert "no Ascend C op project template" in res.stderr and str(empty) in res.stderr
    assert not (out / "fmod_scalar" / "cmake").exists()


@needs_cmake
@pytest.mark.parametrize("old_cmake", [False, True])
def test_build_sh_runs_with_the_toolkit_from_the_environment(tmp_path, project, old_cmake) -> None:
    """`bash build.sh binary` with $ASCEND_CANN_PACKAGE_PATH; with a CMake that reports 3.16 (no presets), the
    script passes the preset's cache variables as -D options instead."""
    toolkit = make_toolkit(tmp_path / "cann")
    root = project / "fmod_tensor"  # its preset names the default toolkit path, absent here
    env = {**os.environ, "ASCEND_CANN_PACKAGE_PATH": str(toolkit)}
    if old_cmake:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        wrapper = bin_dir / "cmake"
        wrapper.write_text(
            '#!/bin/bash\n[ "$1" = --version ] && { echo "cmake version 3.16.3"; exit 0; }\n'
            '[[ " $* " == *" --preset"* ]] && exit 3  # a 3.16 has no presets\n'
            f'exec {shutil.which("cmake")} "$@"\n'
        )
        wrapper.chmod(0o755)
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
    res = subprocess.run(["bash", "build.sh", "binary"], cwd=root, capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (root / "build_out" / "binary.stamp").is_file()
    cache = (root / "build_out" / "CMakeCache.txt").read_text()
    assert f"ASCEND_CANN_PACKAGE_PATH:PATH={toolkit}" in cache
    assert re.search(rf"^CMAKE_INSTALL_PREFIX:\w+={re.escape(str(root))}/build_out$", cache, re.M)
    assert re.search(rf"^vendor_name:\w+={VENDOR_NAME}$", cache, re.M)
