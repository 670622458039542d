"""C++ text of the host side of the fmod ops: TilingFunc (a table of `tiling.py`'s results), tiling header, OpDef.

`host_tiling_source(op, rows)` is the TilingFunc the printer embeds, inside `namespace optiling { ... }`, into
`op_host/fmod_tensor.cpp` (or `fmod_scalar.cpp`) after `host_includes(op)` (<cstddef>, <cstdint>, <cstdio>,
<cstring>, the op's tiling header with `FmodTilingData`, `register/op_def_registry.h`,
`tiling/platform/platform_ascendc.h`). Its text is the template `templates/tiling_func.cpp` with the op's
slots and the rows of `host_table.tiling_rows` filled in: the TilingFunc computes nothing, it looks its
inputs up among the cases sbpc tiled (`lowering/ascendc/host_table.py`). `host_opdef_source(op)` is
InferShape / InferDataType / the OpDef with the attributes in the order the TilingFunc reads them
(`HOST_ATTRS`). Both compile (C++11) with g++ against `lowering/ascendc/cpu/host_shim/`.

What the TilingFunc reads (gert::TilingContext has no strides, reference/ascendc.md §2.2, so the aclnn
layer passes the views as attributes):
- platform: `PlatformAscendC(context->GetPlatformInfo())`: `GetCoreNumAiv()`, `GetCoreMemSize(UB, ub)`;
- dtype: `GetInputDesc(0)->GetDataType()` (other and out must have the same dtype);
- shapes: `GetInputShape(i)->GetStorageShape()` (self, other), `GetOutputShape(0)` (out);
- attributes (`HOST_ATTRS`): FmodScalar attr 0 `other` (Float, required): the scalar as the aclnn layer's
  `.Scalar().To("self")` produced it, or the program's value as a float32. `<x>_strides` (ListInt, element
  strides, one per dim; absent or empty = row-major) and `<x>_offset` (Int, elements; absent = 0).
Writes: FmodTilingData via `set_<field>()`, `SaveToBuffer` + `SetDataSize`, `SetBlockDim(blockDim)`,
`SetTilingKey(key)`, workspace size 0. Inputs no row has return `ge::GRAPH_FAILED` with a message on
stderr naming them (among them every input `compute_tiling` rejects).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Any, NamedTuple

from sbpc.dialects import dtypes
from sbpc.lowering.ascendc.host_table import TableRow, row_members, row_setters, rows_source
from sbpc.lowering.ascendc.soc import OPDEF_SOCS
from sbpc.lowering.ascendc.tiling_data import MAX_DIMS, tiling_header

OPS = ("FmodTensor", "FmodScalar")

# Attribute order = index for GetAttrs()->Get*(i). (name, kind) with kind Float / ListInt / Int.
HOST_ATTRS: dict[str, tuple[tuple[str, str], ...]] = {
    "FmodTensor": (
        ("self_strides", "ListInt"),
        ("other_strides", "ListInt"),
        ("out_strides", "ListInt"),
        ("self_offset", "Int"),
        ("other_offset", "Int"),
        ("out_offset", "Int"),
    ),
    "FmodScalar": (
        ("other", "Float"),
        ("self_strides", "ListInt"),
        ("out_strides", "ListInt"),
        ("self_offset", "Int"),
        ("out_offset", "Int"),
    ),
}


def _check_op(op: str) -> None:
    if op not in OPS:
        raise ValueError(f"unknown fmod op {op!r}; expected one of {', '.join(OPS)}")


def attr_index(op: str, name: str) -> int:
    _check_op(op)
    return [n for n, _ in HOST_ATTRS[op]].index(name)


def snake_name(op: str) -> str:
    """`FmodTensor` -> `fmod_tensor` (kernel and file names)."""
    _check_op(op)
    return "".join("_" + c.lower() if c.isupper() else c for c in op).lstrip("_")


def tiling_data_header(op: str) -> str:
    """`op_host/<op>_tiling.h`: the FmodTilingData definition (BEGIN_TILING_DATA_DEF ...)."""
    _check_op(op)
    return tiling_header(op, f"{snake_name(op).upper()}_TILING_H")


TEMPLATE = Path(__file__).resolve().parent / "templates" / "tiling_func.cpp"
"""The TilingFunc's C++ (package data), `string.Template` placeholders filled by `host_tiling_source`."""


def host_tiling_source(op: str, rows: Sequence[TableRow]) -> str:
    """C++ of `namespace <op>_host { the table, its lookup }` + `static ge::graphStatus TilingFunc(...)`.

    To be placed inside `namespace optiling { ... }` after `host_includes(op)`. Sets exactly the fields
    `compute_tiling` gave each row's case (`host_table.tiling_rows`), and fails for any other operands.
    """
    _check_op(op)
    slots = []
    for name in (*op_inputs(op), "out"):
        output, index = (name == "out", 0 if name == "out" else op_inputs(op).index(name))
        strides, offset = attr_index(op, f"{name}_strides"), attr_index(op, f"{name}_offset")
        slots.append(f'    {{"{name}", {str(output).lower()}, {index}, {strides}, {offset}}},')
    return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        OP=op,
        NAMESPACE=f"{snake_name(op)}_host",
        ATTRS=", ".join(f"{i} {name} ({kind})" for i, (name, kind) in enumerate(HOST_ATTRS[op])),
        MAX_DIMS=MAX_DIMS,
        VIEWS=len(slots),
        SLOTS="\n".join(slots),
        SCALAR_ATTR=attr_index(op, "other") if op == "FmodScalar" else -1,
        FIELDS=row_members(),
        ROWS=rows_source(rows),
        SETTERS=row_setters(),
    )


def host_includes(op: str) -> str:
    """The #include lines `host_tiling_source` + `host_opdef_source` need, for `op_host/<op>.cpp`."""
    return "\n".join(
        [
            "#include <cstddef>",
            "#include <cstdint>",
            "#include <cstdio>",
            "#include <cstring>",
            f'#include "{snake_name(op)}_tiling.h"',
            '#include "register/op_def_registry.h"',
            '#include "tiling/platform/platform_ascendc.h"',
            "",
        ]
    )


OPDEF_TYPES: tuple[dtypes.ElementType, ...] = tuple(sorted(dtypes.FMOD_KERNEL_TYPES, key=lambda t: t.name))
"""The dtypes of every input and output, in the order the OpDef (and the op prototype JSON) lists them:
the lists pair 1:1 across arguments, one kernel instance per column."""
OPDEF_FORMAT = "ND"


class AttrKind(NamedTuple):
    """How an attribute kind of `HOST_ATTRS` is declared: in the OpDef and in msOpGen's prototype JSON."""

    required: bool
    opdef: str
    """`OpAttrDef` call after `.AttrType(...)` (`Float()`, `ListInt({})`, `Int(0)`)."""
    msopgen: str
    """The JSON's attr `type` (`float`, `list_int`, `int`)."""
    default: Any
    """The JSON's `default_value` of an optional attribute (None: required, no default)."""


ATTR_KINDS: dict[str, AttrKind] = {
    "Float": AttrKind(True, "Float()", "float", None),
    "ListInt": AttrKind(False, "ListInt({})", "list_int", []),
    "Int": AttrKind(False, "Int(0)", "int", 0),
}


def op_inputs(op: str) -> tuple[str, ...]:
    """The op's tensor inputs in kernel-argument order (its one output is `out`)."""
    _check_op(op)
    return ("self", "other") if op == "FmodTensor" else ("self",)


_DTYPES = "{" + ", ".join(f"ge::{t.ge}" for t in OPDEF_TYPES) + "}"
_FORMATS = "{" + ", ".join(f"ge::FORMAT_{OPDEF_FORMAT}" for _ in OPDEF_TYPES) + "}"


def host_opdef_source(op: str, socs: tuple[str, ...] = OPDEF_SOCS) -> str:
    """InferShape (out = self's shape), InferDataType (out = self's dtype) and the OpDef registering TilingFunc."""
    _check_op(op)
    body = []
    for name in op_inputs(op):
        body.append(
            f'    this->Input("{name}").ParamType(REQUIRED).DataType({_DTYPES}).Format({_FORMATS})'
            f".UnknownShapeFormat({_FORMATS}).IgnoreContiguous();"
        )
    body.append(
        f'    this->Output("out").ParamType(REQUIRED).DataType({_DTYPES}).Format({_FORMATS})'
        f".UnknownShapeFormat({_FORMATS});"
    )
    for name, kind in HOST_ATTRS[op]:
        spec = ATTR_KINDS[kind]
        body.append(f'    this->Attr("{name}").AttrType({"REQUIRED" if spec.required else "OPTIONAL"}).{spec.opdef};')
    body.append("    this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);")
    body.append("    this->AICore().SetTiling(optiling::TilingFunc);")
    body += [f'    this->AICore().AddConfig("{s}");' for s in socs]
    return (
        "\nnamespace ge {\n"
        "static graphStatus InferShape(gert::InferShapeContext* context) {\n"
        "  const gert::Shape* selfShape = context->GetInputShape(0);\n"
        "  gert::Shape* outShape = context->GetOutputShape(0);\n"
        "  if (selfShape == nullptr || outShape == nullptr) {\n"
        "    return GRAPH_FAILED;\n"
        "  }\n"
        "  *outShape = *selfShape;\n"
        "  return GRAPH_SUCCESS;\n"
        "}\n\n"
        "static graphStatus InferDataType(gert::InferDataTypeContext* context) {\n"
        "  return context->SetOutputDataType(0, context->GetInputDataType(0));\n"
        "}\n"
        "}  // namespace ge\n\n"
        "namespace ops {\n"
        f"class {op} : public OpDef {{\n"
        " public:\n"
        f"  explicit {op}(const char* name) : OpDef(name) {{\n" + "\n".join(body) + "\n  }\n};\n\n"
        f"OP_ADD({op});\n"
        "}  // namespace ops\n"
    )
