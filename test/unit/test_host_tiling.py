"""The emitted C++ host TilingFunc against lowering/ascendc/tiling.py, through the host shim.

The TilingFunc holds a table of the Python tiling's results (`lowering/ascendc/host_table.py`). One driver
binary (g++ -std=c++17 -Wall -Werror, cached by source hash) links the FmodTensor and FmodScalar op_host
sources, emitted with a table of every case of this file (TilingFunc + OpDef, found through OP_ADD's
registry), and reads cases from stdin; each case fills a gert::TilingContext (shapes, dtypes,
stride/offset/scalar attributes, platform cores and UB) and prints the tiling key, block dim, workspace
sizes and raw tiling bytes, which are decoded and compared with `compute_tiling(...).fields()`: the
TilingFunc must give exactly the Python tiling for every case, fail where Python raises, and fail (with
a message naming the operands) for operands the table was not made for.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import random
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.host_table import TilingCase, f32_bits
from sbpc.lowering.ascendc.host_tiling_cpp import (
    HOST_ATTRS,
    attr_index,
    snake_name,
    tiling_data_header,
)
from sbpc.lowering.ascendc.printer import host_source
from sbpc.lowering.ascendc.soc import UB_BYTES, SocInfo
from sbpc.lowering.ascendc.tiling import (
    TensorView,
    compute_tiling,
    row_major_strides,
)
from sbpc.lowering.ascendc.tiling_data import tiling_size, unpack_tiling

ROOT = Path(__file__).resolve().parents[2]
HOST_SHIM = ROOT / "lowering" / "ascendc" / "cpu" / "host_shim"
DEVICE_SHIM = ROOT / "lowering" / "ascendc" / "cpu" / "shim"  # register/tilingdata_base.h (shared with the kernel side)
CXX = os.environ.get("CXX", "g++")
FLAGS = ["-std=c++17", "-Wall", "-Werror", "-O1"]
DT_ENUM = {t.name: t.ge_value for t in dtypes.FMOD_KERNEL_TYPES}
UB = UB_BYTES

pytestmark = pytest.mark.skipif(shutil.which(CXX) is None, reason="needs g++")

DRIVER_MAIN = r"""
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace {
std::vector<int64_t> ReadList(std::istream& in) {
  size_t n = 0;
  in >> n;
  std::vector<int64_t> v(n);
  for (auto& x : v) {
    in >> x;
  }
  return v;
}

const char* KindName(ops::OpAttrDef::Kind k) {
  switch (k) {
    case ops::OpAttrDef::kFloat: return "Float";
    case ops::OpAttrDef::kInt: return "Int";
    case ops::OpAttrDef::kListInt: return "ListInt";
    default: return "Other";
  }
}
}  // namespace

// stdin, one command per line:
//   DESCRIBE <op>
//   CASE <op> <cores> <ub> <nviews>
//        {<out?0|1> <io index> <dtype> <dims list> <stride attr> <mode 0 absent|1 empty|2 list>
//         [<strides list>] <offset attr> <has offset> <offset>}...
//        <scalar attr or -1> <scalar f32 bits>
int main() {
  std::string cmd;
  while (std::cin >> cmd) {
    std::string op;
    std::cin >> op;
    ops::OpDef* def = ops::ShimFindOpDef(op);
    if (def == nullptr) {
      std::cout << "NOOP" << std::endl;
      return 1;
    }
    if (cmd == "DESCRIBE") {
      std::cout << "DESC";
      for (const auto& in : def->GetInputs()) std::cout << " in:" << in->GetName();
      for (const auto& out : def->GetOutputs()) std::cout << " out:" << out->GetName();
      for (const auto& a : def->GetAttrs()) std::cout << " attr:" << a->GetName() << ":" << KindName(a->GetKind());
      for (const auto& c : def->AICore().GetConfigs()) std::cout << " soc:" << c;
      std::cout << "\n";
      continue;
    }
    uint32_t cores = 0;
    uint64_t ub = 0;
    size_t nviews = 0;
    std::cin >> cores >> ub >> nviews;
    const size_t nin = def->GetInputs().size();
    gert::TilingContext ctx(op.c_str(), nin, 1);
    fe::PlatFormInfos plat;
    plat.coreNumAiv = cores;
    plat.ubSize = ub;
    ctx.ShimSetPlatformInfo(&plat);
    gert::RuntimeAttrs& attrs = ctx.ShimMutableAttrs();
    std::vector<int64_t> selfDims;
    int selfDtype = 0;
    for (size_t v = 0; v < nviews; ++v) {
      int isOut = 0, dtype = 0, mode = 0, hasOffset = 0;
      size_t io = 0, strideAttr = 0, offsetAttr = 0;
      int64_t offset = 0;
      std::cin >> isOut >> io >> dtype;
      std::vector<int64_t> dims = ReadList(std::cin);
      std::cin >> strideAttr >> mode;
      if (mode == 2) {
        attrs.ShimSetListInt(strideAttr, ReadList(std::cin));
      } else if (mode == 1) {
        attrs.ShimSetListInt(strideAttr, {});
      }
      std::cin >> offsetAttr >> hasOffset >> offset;
      if (hasOffset) {
        attrs.ShimSetInt(offsetAttr, offset);
      }
      if (isOut) {
        ctx.ShimSetOutput(io, dims, static_cast<ge::DataType>(dtype));
      } else {
        ctx.ShimSetInput(io, dims, static_cast<ge::DataType>(dtype));
        if (io == 0) {
          selfDims = dims;
          selfDtype = dtype;
        }
      }
    }
    long scalarAttr = -1;
    uint32_t bits = 0;
    std::cin >> scalarAttr >> bits;
    if (scalarAttr >= 0) {
      float f = 0.0f;
      std::memcpy(&f, &bits, sizeof(f));
      attrs.ShimSetFloat(static_cast<size_t>(scalarAttr), f);
    }
    if (def->AICore().GetTiling()(&ctx) != ge::GRAPH_SUCCESS) {
      std::cout << "FAIL\n";
      continue;
    }
    // Shape and dtype inference of the same OpDef: out = self.
    gert::InferShapeContext ishape(nin, 1);
    for (int64_t d : selfDims) ishape.ShimInput(0).AppendDim(d);
    gert::InferDataTypeContext itype(nin, 1);
    itype.ShimSetInputDataType(0, static_cast<ge::DataType>(selfDtype));
    bool inferOk = def->GetInferShape()(&ishape) == ge::GRAPH_SUCCESS &&
                   def->GetInferDataType()(&itype) == ge::GRAPH_SUCCESS &&
                   ishape.ShimOutput(0) == ishape.ShimInput(0) &&
                   itype.GetOutputDataType(0) == static_cast<ge::DataType>(selfDtype);
    std::cout << "OK " << ctx.GetTilingKey() << " " << ctx.GetBlockDim() << " " << inferOk << " "
              << ctx.GetWorkspaceNum();
    for (size_t w : ctx.ShimWorkspaceSizes()) std::cout << " " << w;
    const auto* raw = ctx.GetRawTilingData();
    const auto* p = static_cast<const uint8_t*>(raw->GetData());
    std::cout << " " << raw->GetDataSize() << " ";
    for (size_t i = 0; i < raw->GetDataSize(); ++i) {
      static const char* hex = "0123456789abcdef";
      std::cout << hex[p[i] >> 4] << hex[p[i] & 15];
    }
    std::cout << "\n";
  }
  return 0;
}
"""


def _op_source(op: str, cases: list[Case]) -> str:
    """The host source `sbp-translate` emits (`op_host/<op>.cpp`), its table made for `cases`."""
    return host_source(snake_name(op), op, [c.tiling_case() for c in cases if c.op == op])


def _shim_files() -> list[Path]:
    files = sorted(p for p in HOST_SHIM.rglob("*.h"))
    return [*files, DEVICE_SHIM / "register" / "tilingdata_base.h"]


def _cache_base() -> Path:
    return Path(os.environ.get("SBPC_CACHE_DIR", Path(tempfile.gettempdir()) / "sbpc-cache"))


def build_driver(cases: list[Case]) -> Path:
    """Compile the driver, with a table made for `cases`, once per distinct source/shim/flags/compiler;
    return the binary's path."""
    sources = {
        "main.cpp": DRIVER_MAIN,
        "fmod_tensor_host.cpp": _op_source("FmodTensor", cases),
        "fmod_scalar_host.cpp": _op_source("FmodScalar", cases),
        "fmod_tensor_tiling.h": tiling_data_header("FmodTensor"),
        "fmod_scalar_tiling.h": tiling_data_header("FmodScalar"),
    }
    version = subprocess.run([CXX, "--version"], capture_output=True, text=True, check=True).stdout
    h = hashlib.sha256()
    for blob in [version, " ".join(FLAGS), *(f"{k}\0{v}" for k, v in sorted(sources.items()))]:
        h.update(blob.encode())
    for f in _shim_files():
        h.update(f.read_bytes())
    out_dir = _cache_base() / "host_tiling" / h.hexdigest()[:20]
    binary = out_dir / "driver"
    if binary.exists():
        return binary
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        (out_dir / name).write_text(text)
    tmp = out_dir / f"driver.{os.getpid()}.tmp"
    cmd = [CXX, *FLAGS, f"-I{out_dir}", f"-I{HOST_SHIM}", f"-I{DEVICE_SHIM}"]
    cmd += [str(out_dir / n) for n in ("main.cpp", "fmod_tensor_host.cpp", "fmod_scalar_host.cpp")]
    cmd += ["-o", str(tmp)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise AssertionError(f"host driver failed to compile:\n{' '.join(cmd)}\n{res.stderr}")
    os.replace(tmp, binary)
    return binary


# --- cases -----------------------------------------------------------------------------------------------


@dataclass
class Case:
    op: str
    dtype: str
    cores: int
    ub: int
    self_view: TensorView
    other: TensorView | float
    out_view: TensorView
    stride_modes: tuple[int, int, int]  # per view: 0 absent, 1 empty list, 2 explicit (only for row-major 0/1)
    offset_flags: tuple[bool, bool, bool]
    other_dtype: str | None = None  # a mismatching dtype for other (C++ must fail; no Python counterpart)

    def tiling_case(self) -> TilingCase:
        return TilingCase(self.self_view, self.other, self.out_view, self.dtype, SocInfo("t", self.cores, self.ub))

    def python(self) -> dict | None:
        if self.other_dtype is not None:
            return None
        try:
            t = compute_tiling(self.self_view, self.other, self.out_view, self.dtype, SocInfo("t", self.cores, self.ub))
        except ValueError:
            return None
        return {"key": t.tilingKey, "blockDim": t.blockDim, "fields": t.fields()}

    def line(self) -> str:
        tensor = self.op == "FmodTensor"
        views: list[tuple[str, int, int, TensorView | float]] = [("self", 0, 0, self.self_view)]
        if tensor:
            views.append(("other", 0, 1, self.other))
        views.append(("out", 1, 0, self.out_view))
        parts = ["CASE", self.op, str(self.cores), str(self.ub), str(len(views))]
        for k, (name, is_out, io, v) in enumerate(views):
            assert isinstance(v, TensorView)
            dtype = self.other_dtype if (name == "other" and self.other_dtype) else self.dtype
            parts += [str(is_out), str(io), str(DT_ENUM[dtype]), str(len(v.shape)), *map(str, v.shape)]
            mode = self.stride_modes[k]
            parts += [str(attr_index(self.op, f"{name}_strides")), str(mode)]
            if mode == 2:
                parts += [str(len(v.strides)), *map(str, v.strides)]
            parts += [str(attr_index(self.op, f"{name}_offset")), str(int(self.offset_flags[k])), str(v.offset)]
        if tensor:
            parts += ["-1", "0"]
        else:
            assert not isinstance(self.other, TensorView)
            bits = struct.unpack("<I", struct.pack("<f", float(self.other)))[0]
            parts += [str(attr_index(self.op, "other")), str(bits)]
        return " ".join(parts)


def _dims(rng: random.Random, rank: int) -> tuple[int, ...]:
    out = []
    for _ in range(rank):
        r = rng.random()
        if r < 0.03:
            out.append(0)
        elif r < 0.28:
            out.append(1)
        elif r < 0.6:
            out.append(rng.randint(2, 7))
        elif r < 0.85:
            out.append(rng.choice([13, 37, 64, 100, 127, 255, 1000, 1023]))
        else:
            out.append(rng.randint(1000, 50000))
    return tuple(out)


def _view(rng: random.Random, shape: tuple[int, ...], role: str) -> TensorView:
    """A random strided view of `shape`: contiguous, transposed, sliced, expanded (not for out), offset."""
    weights = [4, 2, 2, 1 if role != "out" else 0, 1]
    mode = rng.choices(["contig", "perm", "slice", "expand", "rowslice"], weights=weights)[0]
    offset = rng.choice([0, 0, 0, 3, 64, 1001])
    rank = len(shape)
    if mode == "perm" and rank > 1:
        perm = list(range(rank))
        rng.shuffle(perm)
        base = row_major_strides([shape[p] for p in perm])
        strides = [0] * rank
        for i, p in enumerate(perm):
            strides[p] = base[i]
        return TensorView(shape, tuple(strides), offset)
    if mode == "slice" and rank > 0:
        steps = [rng.choice([1, 1, 2, 3]) for _ in shape]
        parent = [n * s + rng.choice([0, 0, 1, 5]) for n, s in zip(shape, steps, strict=True)]
        base = row_major_strides(parent)
        return TensorView(shape, tuple(b * s for b, s in zip(base, steps, strict=True)), offset)
    if mode == "rowslice" and rank > 0:
        parent = (shape[0] + rng.randint(1, 4), *shape[1:])  # whole rows: still contiguous
        return TensorView(shape, row_major_strides(parent), offset + rng.randint(0, 2) * math.prod(parent[1:]))
    if mode == "expand" and rank > 0:
        strides = list(row_major_strides(shape))
        for d in range(rank):
            if rng.random() < 0.4:
                strides[d] = 0
        return TensorView(shape, tuple(strides), offset)
    return TensorView.row_major(shape, offset)


SCALARS_F = [2.5, -3.0, 0.1, 1e-5, 3e-8, -6.1e-5, 65504.0, 65519.0, 65520.0, 70000.0, 1 + 2**-8, 1 + 3 * 2**-8,
             1 + 2**-11, 1 + 3 * 2**-11, 3.4e38, -0.0, 0.0, math.inf, -math.inf, math.nan, 7.0, 1e-40, 2**-25,
             3 * 2**-26, 2**-24 * 1.5]  # fmt: skip
SCALARS_I16 = [3, -7, 1, 0, 32767, -32768, 2.7, -3.9, 32767.5, -32768.9, 40000, -40000, math.nan, math.inf, 100.0]


def _scalar(rng: random.Random, dtype: str) -> float:
    if rng.random() < 0.5:
        v = rng.choice(SCALARS_I16 if dtype == "i16" else SCALARS_F)
    elif dtype == "i16":
        v = rng.choice([rng.randint(-32768, 32767), rng.uniform(-33000, 33000)])
    else:
        v = rng.choice([rng.uniform(-1000, 1000), rng.gauss(0, 1) * 10 ** rng.randint(-10, 10)])
    return float(np.float32(v))  # the attribute is a float32


def random_case(rng: random.Random) -> Case:
    op = rng.choice(["FmodTensor", "FmodScalar"])
    dtype = rng.choice(list(DT_ENUM))
    cores, ub = rng.choice([(48, UB), (48, UB), (40, UB), (40, UB), (1, UB), (7, 65536), (24, 131072)])
    rank = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8])
    shape = _dims(rng, rank)
    while math.prod(shape) > 1 << 42:
        shape = _dims(rng, rank)
    self_view = _view(rng, shape, "self")
    out_view = _view(rng, shape, "out")
    if op == "FmodTensor":
        drop = rng.randint(0, rank) if rng.random() < 0.5 else 0
        oshape = tuple(1 if rng.random() < 0.3 else n for n in shape[drop:])
        other: TensorView | float = _view(rng, oshape, "other")
    else:
        other = _scalar(rng, dtype)
    views = [self_view, other, out_view] if op == "FmodTensor" else [self_view, out_view]
    modes, flags = [], []
    for v in views:
        assert isinstance(v, TensorView)
        rm = v.strides == row_major_strides(v.shape)
        modes.append(rng.choice([0, 1, 2]) if rm else 2)
        flags.append(v.offset != 0 or rng.random() < 0.3)
    modes += [2] * (3 - len(modes))
    flags += [False] * (3 - len(flags))
    return Case(op, dtype, cores, ub, self_view, other, out_view, tuple(modes), tuple(flags))  # type: ignore[arg-type]


def special_cases() -> list[Case]:
    """Hand-picked edges: keys 0-4, coalescing, 0-d, empty, invalid inputs."""
    rm = TensorView.row_major
    f2 = (2, 2, 2)
    no = (False, False, False)
    cases = []

    def add(op, dtype, s, o, out, cores=48, ub=196608, other_dtype=None):
        cases.append(Case(op, dtype, cores, ub, s, o, out, f2, (True, True, True), other_dtype))

    for dt in DT_ENUM:
        add("FmodScalar", dt, rm((10,)), 2.0, rm((10,)))
        add("FmodScalar", dt, rm((1 << 20,)), 3.0, rm((1 << 20,)), cores=40)
        add("FmodScalar", dt, rm(()), 3.0, rm(()))
        add("FmodScalar", dt, rm((0, 5)), 3.0, rm((0, 5)))
        add("FmodTensor", dt, rm((0,)), rm((1,)), rm((0,)))
        add("FmodTensor", dt, rm((1 << 14, 64)), rm((64,)), rm((1 << 14, 64)))
        add("FmodTensor", dt, rm((64, 1 << 14)), rm((64, 1)), rm((64, 1 << 14)))
        add("FmodTensor", dt, rm((1000,)), rm((1,)), rm((1000,)))
        # key 2 row broadcasts split by columns (colBlock): small rows, 40 cores, > 4095 rows a tile, 3-d
        add("FmodTensor", dt, rm((100, 1000)), rm((1000,)), rm((100, 1000)))
        add("FmodTensor", dt, rm((100, 1000)), rm((1000,)), rm((100, 1000)), cores=40)
        add("FmodTensor", dt, rm((9000, 40000)), rm((40000,)), rm((9000, 40000)))
        add("FmodTensor", dt, rm((2, 10**6)), rm((10**6,)), rm((2, 10**6)))
        add("FmodTensor", dt, rm((4, 25, 1000)), rm((1, 1000)), rm((4, 25, 1000)))
        add("FmodTensor", dt, TensorView((64, 32), (1, 64)), rm((64, 32)), rm((64, 32)))
        add("FmodScalar", dt, TensorView((3, 1 << 20), (1, 3)), 0.5, rm((3, 1 << 20)))
        add("FmodTensor", dt, rm((2,) * 9), rm((2,)), rm((2,) * 9))  # > 8 dims
        add("FmodTensor", dt, rm((4, 5)), rm((4,)), rm((4, 5)))  # not broadcastable
        add("FmodTensor", dt, rm((4, 5)), rm((1, 4, 5)), rm((4, 5)))  # more dims than self
        add("FmodScalar", dt, rm((4, 5)), 1.0, rm((5, 4)))  # out shape
        add("FmodScalar", dt, rm((4, 5)), 1.0, TensorView((4, 5), (0, 1)))  # overlapping out
        add("FmodTensor", dt, rm((4, 5)), rm((4, 5)), rm((4, 5)), other_dtype="f32" if dt != "f32" else "f16")
        add("FmodScalar", dt, rm((1 << 30, 1 << 30, 1 << 30)), 1.0, rm((1 << 30, 1 << 30, 1 << 30)))  # > int64
    # Strides absent vs explicit vs empty, offsets absent.
    for modes in [(0, 0, 0), (1, 1, 1), (2, 1, 0)]:
        cases.append(Case("FmodTensor", "f16", 48, 196608, rm((7, 300)), rm((300,)), rm((7, 300)), modes, no))
    return cases


def run_driver(driver: Path, lines: list[str]) -> list[str]:
    return _run(driver, lines).stdout.splitlines()


def _run(driver: Path, lines: list[str]) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([str(driver)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return res


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return struct.pack("<f", a) == struct.pack("<f", b)
    return a == b


def check_cases(driver: Path, cases: list[Case], in_table: bool = True) -> tuple[int, int]:
    """(accepted, failed) of `cases`, each checked against Python; `in_table` False: the table was not
    made for them, so every one must fail."""
    out = run_driver(driver, [c.line() for c in cases])
    assert len(out) == len(cases)
    size = tiling_size()
    ok = fail = 0
    for case, line in zip(cases, out, strict=True):
        want = case.python() if in_table else None
        tok = line.split()
        if want is None:
            assert tok == ["FAIL"], f"C++ accepted what Python rejects: {case}\n{line}"
            fail += 1
            continue
        assert tok[0] == "OK", f"C++ rejected a valid case: {case}"
        key, block_dim, infer_ok, nws = map(int, tok[1:5])
        ws = list(map(int, tok[5 : 5 + nws]))
        data_size = int(tok[5 + nws])
        raw = bytes.fromhex(tok[6 + nws])
        assert (key, block_dim) == (want["key"], want["blockDim"]), case
        assert infer_ok == 1 and ws == [0] and data_size == size == len(raw), case
        got = unpack_tiling(raw)
        for name, value in want["fields"].items():
            assert _same(got[name], value), f"{name}: C++ {got[name]!r} != Python {value!r} for {case}"
        ok += 1
    return ok, fail


def blocked_cases() -> list[Case]:
    """Keys 3/4 moved as 2-d blocks (tiling rule 8): transposed, 3-d permuted (batched and not), broadcast
    other rows / columns / elements against a transposed self, a transposed other, tiny UB and 40 cores."""
    rm = TensorView.row_major
    f2, yes = (2, 2, 2), (True, True, True)
    cases = []
    for dt in DT_ENUM:
        t = TensorView((1000, 1000), (1, 1000), 7)
        for cores, ub in ((48, 196608), (40, 196608), (48, 24576)):
            cases.append(Case("FmodScalar", dt, cores, ub, t, 2.0, rm((1000, 1000)), f2, yes))
            cases.append(Case("FmodTensor", dt, cores, ub, t, t, rm((1000, 1000)), f2, yes))
        for s, o in [
            (TensorView((100, 20, 50), (1, 5000, 100)), rm((50,))),  # coalesces to a 2-d transpose
            (TensorView((20, 100, 50), (5000, 1, 100)), rm((20, 1, 50))),  # batched transpose
            (TensorView((50, 100, 20), (100, 1, 5000)), TensorView((100, 1), (1, 1))),  # column broadcast
            (TensorView((100, 50, 20), (1, 100, 5000)), rm((1,))),  # full reversal, one-element other
            (TensorView((3, 4096, 129), (129 * 4096, 1, 4096)), TensorView((3, 4096, 129), (129 * 4096, 1, 4096))),
            (rm((257, 129)), TensorView((257, 129), (1, 257))),  # only other strided
        ]:
            cases.append(Case("FmodTensor", dt, 48, 196608, s, o, rm(s.shape), f2, yes))
            cases.append(Case("FmodScalar", dt, 48, 196608, s, 3.0, rm(s.shape), f2, yes))
        for s, o in [  # out transposed: it leaves by columns
            (rm((240, 410)), rm((240, 410))),
            (TensorView((240, 410), (1, 240)), TensorView((240, 410), (1, 240))),
        ]:
            out = TensorView((240, 410), (1, 240), 3)
            cases.append(Case("FmodTensor", dt, 48, 196608, s, o, out, f2, yes))
            cases.append(Case("FmodScalar", dt, 48, 196608, s, 3.0, out, f2, yes))
    return cases


def strided_run_cases() -> list[Case]:
    """Tiling rule 9 (no unit-stride dim): one column, stepped columns, a broadcast self, a small UB."""
    rm = TensorView.row_major
    f2, yes = (2, 2, 2), (True, True, True)
    cases = []
    for dt in DT_ENUM:
        for s, o in [
            (TensorView((400,), (250,), 7), TensorView((400,), (250,), 3)),
            (TensorView((200, 300), (600, 2), 1), TensorView((200, 300), (600, 2))),
            (TensorView((300, 200), (1, 0)), rm((300, 200))),
        ]:
            for ub in (196608, 12000):
                cases.append(Case("FmodTensor", dt, 48, ub, s, o, rm(s.shape), f2, yes))
                cases.append(Case("FmodScalar", dt, 48, ub, s, 3.0, rm(s.shape), f2, yes))
        column = TensorView((20000,), (16,), 2)  # an output column
        for ub in (196608, 12000):
            cases.append(Case("FmodTensor", dt, 48, ub, rm((20000,)), rm((20000,)), column, f2, yes))
            cases.append(Case("FmodScalar", dt, 48, ub, rm((20000,)), 3.0, column, f2, yes))
    return cases


def random_cases() -> list[Case]:
    rng = random.Random(20240605)
    return [random_case(rng) for _ in range(1500)]


def _scalar_values() -> list[float]:
    """float32 scalars: random bits and the rounding edges of f16 / bf16 (ties, subnormal and overflow
    boundaries, around 2^-25)."""
    rng = np.random.default_rng(7)
    bits = np.concatenate(
        [
            rng.integers(0, 1 << 32, 150, dtype=np.uint64),
            np.arange(0x33000000 - 4, 0x33000000 + 4),  # around 2^-25
            np.arange(0x387FC000, 0x38804000, 1997),  # the half normal/subnormal boundary
            np.arange(0x477FE000, 0x47800000, 1031),  # the half overflow boundary
            (rng.integers(0, 1 << 16, 20, dtype=np.uint64) << 16) | 0x8000,  # bf16 ties
            (rng.integers(0x1C400, 0x23C00, 20, dtype=np.uint64) << 13) | 0x1000,  # half ties (normal range)
        ]
    ).astype(np.uint32)
    return [float(v) for v in bits.view(np.float32)]


SCALAR_VIEW = TensorView.row_major((3,))


def scalar_cases() -> list[Case]:
    none = (False, False, False)
    return [Case("FmodScalar", dt, 48, UB, SCALAR_VIEW, v, SCALAR_VIEW, (2, 2, 2), none)
            for dt in DT_ENUM for v in _scalar_values()]  # fmt: skip


def table_cases() -> list[Case]:
    """Every case the driver's table is made for."""
    return special_cases() + blocked_cases() + strided_run_cases() + random_cases() + scalar_cases()


@pytest.fixture(scope="module")
def driver() -> Path:
    return build_driver(table_cases())


def test_driver_describes_the_opdefs(driver):
    out = run_driver(driver, ["DESCRIBE FmodTensor", "DESCRIBE FmodScalar"])
    for op, line in zip(("FmodTensor", "FmodScalar"), out, strict=True):
        attrs = [tuple(t.split(":")[1:]) for t in line.split() if t.startswith("attr:")]
        assert attrs == list(HOST_ATTRS[op])
        assert "soc:ascend910b" in line and "soc:ascend910_93" in line
        assert ("in:other" in line) == (op == "FmodTensor")


def test_special_cases_match_python(driver):
    ok, fail = check_cases(driver, special_cases())
    assert (ok, fail) == (63, 28)


def test_strided_run_cases_match_python(driver):
    ok, fail = check_cases(driver, strided_run_cases())
    assert (ok, fail) == (8 * len(DT_ENUM), 8 * len(DT_ENUM))  # the 12000-byte UB cannot hold the chunk


def test_blocked_cases_match_python(driver):
    cases = blocked_cases()
    ok, fail = check_cases(driver, cases)
    assert (ok, fail) == (len(cases), 0)
    blocked = [c for c in cases if c.python()["fields"]["tileRows"]]  # type: ignore[index]
    assert len(blocked) == len(cases) - len(DT_ENUM)  # all but the scalar of "only other strided"


def test_random_cases_match_python(driver):
    cases = random_cases()
    ok, fail = check_cases(driver, cases)
    assert ok >= 1000, (ok, fail)
    keys = {c.python()["key"] for c in cases if c.python() is not None}  # type: ignore[index]
    assert keys == {0, 1, 2, 3, 4}


def test_scalar_key_takes_the_programs_value_or_it_rounded(driver):
    """FmodScalar's row matches the Float attribute as the program gave it (float32) and as the aclnn layer
    passes it (rounded to the dtype), both giving Python's scalarOther; any other value has no row."""
    cases = [c for c in scalar_cases() if c.python() is not None]
    ok, fail = check_cases(driver, cases)
    assert (ok, fail) == (len(cases), 0)
    rounded = [dataclasses.replace(c, other=c.python()["fields"]["scalarOther"]) for c in cases]  # type: ignore[index]
    out = run_driver(driver, [c.line() for c in rounded])
    for case, want, line in zip(rounded, cases, out, strict=True):
        tok = line.split()
        assert tok[0] == "OK", case
        got = unpack_tiling(bytes.fromhex(tok[-1]))["scalarOther"]
        assert _same(got, want.python()["fields"]["scalarOther"]), case  # type: ignore[index]
    accepted = {(c.dtype, f32_bits(c.other)) for c in cases + rounded}  # type: ignore[arg-type]
    others = []
    for case in cases:
        bits = f32_bits(case.other) ^ 1  # type: ignore[arg-type]
        if (case.dtype, bits) not in accepted:
            others.append(dataclasses.replace(case, other=struct.unpack("<f", struct.pack("<I", bits))[0]))
    assert len(others) > len(cases) // 2
    assert check_cases(driver, others, in_table=False) == (0, len(others))


def missing_cases() -> list[Case]:
    """Valid operands the table was not made for: another length, another platform, transposed strides,
    an offset, another dtype, another scalar."""
    rm = TensorView.row_major
    f2, yes = (2, 2, 2), (True, True, True)
    return [
        Case("FmodScalar", "f32", 48, UB, rm((11,)), 2.0, rm((11,)), f2, yes),
        Case("FmodScalar", "f32", 13, UB, rm((10,)), 2.0, rm((10,)), f2, yes),
        Case("FmodScalar", "f32", 48, UB, rm((10,)), 2.25, rm((10,)), f2, yes),
        Case("FmodTensor", "f16", 48, UB, rm((7, 301)), rm((301,)), rm((7, 301)), f2, yes),
        Case("FmodTensor", "f16", 48, UB, TensorView((7, 300), (1, 7)), rm((300,)), rm((7, 300)), f2, yes),
        Case("FmodTensor", "f16", 48, UB, rm((7, 300), 5), rm((300,)), rm((7, 300)), f2, yes),
        Case("FmodTensor", "f32", 48, UB, rm((7, 300)), rm((300,)), rm((7, 300)), f2, yes),
    ]


def test_operands_without_a_row_fail_naming_them(driver):
    cases = missing_cases()
    table = {case.tiling_case() for case in table_cases()}
    assert all(c.python() is not None and c.tiling_case() not in table for c in cases)
    res = _run(driver, [c.line() for c in cases])
    assert res.stdout.split() == ["FAIL"] * len(cases)
    messages = res.stderr.splitlines()
    assert len(messages) == len(cases)
    assert messages[0].startswith("FmodScalar TilingFunc: no tiling for dtype 0 on 48 AIV cores")
    assert "self shape [11] strides [1] offset 0" in messages[0]
    assert "on 13 AIV cores with 196608 bytes of UB" in messages[1]
    assert "scalar 2.25 (bits 0x40100000)" in messages[2]
    assert "other shape [301] strides [1] offset 0" in messages[3]
    assert "self shape [7, 300] strides [1, 7]" in messages[4] and "offset 5" in messages[5]
    assert all("emit the project again" in m for m in messages)


def test_printer_host_source_compiles_with_host_shim(tmp_path):
    """The printer's op_host/<op>.cpp (which embeds host_tiling_source) compiles against the host shim."""
    printer = pytest.importorskip("sbpc.lowering.ascendc.printer")
    if not hasattr(printer, "host_source"):
        pytest.skip("printer has no host_source")
    for op in ("FmodTensor", "FmodScalar"):
        name = snake_name(op)
        cases = [c.tiling_case() for c in special_cases() if c.op == op]
        header, source = tiling_data_header(op), printer.host_source(name, op, cases)
        h = hashlib.sha256("\0".join([header, source, " ".join(FLAGS)]).encode())
        for f in _shim_files():
            h.update(f.read_bytes())
        stamp = _cache_base() / "host_syntax" / h.hexdigest()[:20]
        if stamp.exists():
            continue
        (tmp_path / f"{name}_tiling.h").write_text(header)
        (tmp_path / f"{name}.cpp").write_text(source)
        cmd = [CXX, *FLAGS, "-fsyntax-only", f"-I{tmp_path}", f"-I{HOST_SHIM}", f"-I{DEVICE_SHIM}"]
        cmd.append(str(tmp_path / f"{name}.cpp"))
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
