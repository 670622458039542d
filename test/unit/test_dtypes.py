"""dialects/dtypes.py, the one table of element types: each row agrees with numpy, xDSL and CANN."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import IntegerType

from sbpc.dialects import dtypes

ROOT = Path(__file__).resolve().parents[2]


def test_rows_agree_with_numpy_and_xdsl():
    for t in dtypes.ELEMENT_TYPES:
        if t.numpy_name is not None:
            d = t.numpy_dtype()
            assert d.itemsize == t.size and (d.kind in "fV") == t.is_float, t.name
            assert dtypes.of_numpy(d) is t and dtypes.find(d) is t
        if isinstance(t.xdsl, IntegerType):
            assert t.xdsl.width.data in (8 * t.size, 1) and not t.is_float  # i1 is stored in a byte
        if t.xdsl is not None:
            assert dtypes.of_xdsl(t.xdsl) is t and dtypes.size_of(t.xdsl) == t.size
        for spelling in (t.name, *t.aliases):
            assert dtypes.lookup(spelling) is t
    # SPEC §2.3, §7
    assert [t.name for t in dtypes.IR_TYPES] == ["f32", "f16", "bf16", "i16", "i32", "i64", "i8", "ui8", "i1"]
    assert [t.name for t in dtypes.FMOD_KERNEL_TYPES] == ["f32", "f16", "bf16", "i16"]  # SPEC §5
    assert dtypes.FMOD_KERNEL_SUPPORT == "bf16, f16, f32 and i16"
    assert dtypes.find(np.float64) is None and dtypes.lookup("f64") is None


def test_ge_enumerators_are_cann_values():
    header = (ROOT / "lowering" / "ascendc" / "cpu" / "host_shim" / "graph" / "types.h").read_text()
    values = {name: int(v) for name, v in re.findall(r"\b(DT_\w+) = (\d+)", header)}
    for t in dtypes.ELEMENT_TYPES:
        if t.ge is not None:
            assert values[t.ge] == t.ge_value, t.name


def test_kernel_rows_carry_the_kernel_facts():
    for t in dtypes.FMOD_KERNEL_TYPES:
        assert t.c_type is not None and t.ge is not None
        assert (t.cast_up is None) == (t.name == "f32") == (t.cast_down is None)  # f32 computes uncast
