"""Element types: the one table of what every backend needs to know about a dtype.

One row per element type: its IR spelling, the xDSL type, the numpy (ml_dtypes) dtype, the C++ /
Ascend C type name, CANN's `ge::DataType`, its size, whether it is a float, and the facts each
backend keys on (allowed in `!sbp.tensor`, supported by the Ascend C fmod kernels and their Cast
modes, the simulator's comparison tolerance). The IR, the passes, the lowering, the runtime, the
tools and the benchmarks all read this table; none keeps its own map.

numpy and ml_dtypes are imported only when a numpy dtype is asked for, so that parsing and printing
do not pay for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType, Signedness
from xdsl.ir import Attribute

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ElementType:
    """One element type and its spelling in every backend."""

    name: str
    """IR spelling (`f32`), also the canonical name everywhere else."""
    size: int
    """Bytes per element (the fp4x2 types pack two 4-bit values in one byte)."""
    is_float: bool
    xdsl: Attribute | None
    """The xDSL type, None for storage-only types that no IR value has."""
    numpy_name: str | None
    """numpy dtype name (`bfloat16` and the fp8 types come from ml_dtypes), None where numpy has none."""
    c_type: str | None
    """C++ / Ascend C type (`-DDTYPE_SELF=`), None where the kernels have none."""
    ge: str | None
    """CANN `ge::DataType` enumerator and its value in graph/types.h."""
    ge_value: int | None
    aliases: tuple[str, ...] = ()
    """Other spellings accepted where users name a dtype (numpy, C++, CANN short names)."""
    in_ir: bool = False
    """Allowed as the element type of `!sbp.tensor` (SPEC §2.3)."""
    fmod_kernel: bool = False
    """Supported by the Ascend C fmod kernels (SPEC §5)."""
    cast_up: str | None = None
    cast_down: str | None = None
    """The kernel's Cast round modes T -> fp32 and fp32 -> T (None: T is fp32, no cast)."""
    tolerance: tuple[float, float] | None = None
    """(rtol, atol) of the simulator's check when float sums are reordered (None: exact)."""
    msopgen: str | None = None
    """Spelling in an msOpGen op prototype JSON's `type` lists (the emitted CANN project's `<op>.json`)."""

    def numpy_dtype(self) -> np.dtype:
        """The numpy dtype (ml_dtypes for bfloat16 and the fp8 types)."""
        import numpy as np

        if self.numpy_name is None:
            raise ValueError(f"{self.name} has no numpy dtype")
        if not hasattr(np, self.numpy_name):
            import ml_dtypes

            return np.dtype(getattr(ml_dtypes, self.numpy_name))
        return np.dtype(self.numpy_name)


ELEMENT_TYPES: tuple[ElementType, ...] = (
    ElementType("f32", 4, True, Float32Type(), "float32", "float", "DT_FLOAT", 0, ("float32", "float", "fp32"),
                in_ir=True, fmod_kernel=True, tolerance=(1e-5, 1e-5), msopgen="float"),
    ElementType("f16", 2, True, Float16Type(), "float16", "half", "DT_FLOAT16", 1, ("float16", "half", "fp16"),
                in_ir=True, fmod_kernel=True, cast_up="CAST_NONE", cast_down="CAST_NONE", tolerance=(1e-2, 1e-2),
                msopgen="float16"),
    ElementType("bf16", 2, True, BFloat16Type(), "bfloat16", "bfloat16_t", "DT_BF16", 27, ("bfloat16", "bfloat16_t"),
                in_ir=True, fmod_kernel=True, cast_up="CAST_NONE", cast_down="CAST_RINT", tolerance=(3e-2, 3e-2),
                msopgen="bf16"),
    ElementType("i16", 2, False, IntegerType(16), "int16", "int16_t", "DT_INT16", 6, ("int16", "int16_t"),
                in_ir=True, fmod_kernel=True, cast_up="CAST_NONE", cast_down="CAST_RINT", msopgen="int16"),
    ElementType("i32", 4, False, IntegerType(32), "int32", "int32_t", "DT_INT32", 3, ("int32", "int32_t"), in_ir=True),
    ElementType("i64", 8, False, IntegerType(64), "int64", "int64_t", "DT_INT64", 9, ("int64", "int64_t"), in_ir=True),
    ElementType("i8", 1, False, IntegerType(8), "int8", "int8_t", "DT_INT8", 2, ("int8", "int8_t"), in_ir=True),
    ElementType("ui8", 1, False, IntegerType(8, Signedness.UNSIGNED), "uint8", "uint8_t", "DT_UINT8", 4,
                ("uint8", "uint8_t"), in_ir=True),
    ElementType("i1", 1, False, IntegerType(1), "bool", "bool", "DT_BOOL", 12, ("bool",), in_ir=True),
    # Storage-only types of the seed-004 layout table (no IR value, no kernel).
    ElementType("fp8_e8m0", 1, True, None, "float8_e8m0fnu", None, None, None),
    ElementType("fp4x2_e2m1", 1, True, None, None, None, None, None),
    ElementType("fp4x2_e1m2", 1, True, None, None, None, None, None),
)  # fmt: skip

_BY_NAME: dict[str, ElementType] = {
    spelling: t for t in ELEMENT_TYPES for spelling in (t.name, *t.aliases)
}
_BY_XDSL: dict[Attribute, ElementType] = {t.xdsl: t for t in ELEMENT_TYPES if t.xdsl is not None}

IR_TYPES: tuple[ElementType, ...] = tuple(t for t in ELEMENT_TYPES if t.in_ir)
IR_NAMES: dict[Attribute, str] = {t.xdsl: t.name for t in IR_TYPES if t.xdsl is not None}
"""xDSL type -> IR name of the types allowed in `!sbp.tensor` (a membership test on every type built)."""
FMOD_KERNEL_TYPES: tuple[ElementType, ...] = tuple(t for t in ELEMENT_TYPES if t.fmod_kernel)


def lookup(name: str) -> ElementType | None:
    """The element type spelled `name` (IR name or an alias such as `float16`, `half`), or None."""
    return _BY_NAME.get(name)


def named(name: str) -> ElementType:
    """The element type spelled `name`; KeyError if the table has none."""
    return _BY_NAME[name]


def of_xdsl(attr: Attribute) -> ElementType | None:
    """The row of an xDSL element type, or None for a type the table does not know."""
    return _BY_XDSL.get(attr)


def of_numpy(dtype: object) -> ElementType | None:
    """The row of a numpy dtype (or anything `numpy.dtype` accepts), or None."""
    import numpy as np

    try:
        d = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError:
        return None
    for t in ELEMENT_TYPES:
        if t.numpy_name is not None and t.numpy_dtype() == d:
            return t
    return None


def size_of(attr: Attribute) -> int:
    """Bytes per element of an xDSL element type; ValueError for a type the table does not know."""
    t = _BY_XDSL.get(attr)
    if t is None:
        raise ValueError(f"unknown element type {attr}")
    return t.size


def find(spelling: object) -> ElementType | None:
    """The element type of a name or alias (`f16`, `half`) or of a numpy dtype, or None."""
    return lookup(spelling) if isinstance(spelling, str) else of_numpy(spelling)


def names(types: Iterable[ElementType]) -> str:
    """`a, b, c` of the types' IR names, in the order given."""
    return ", ".join(t.name for t in types)


def names_and(types: Iterable[ElementType]) -> str:
    """`a, b and c` of the types' IR names, in the order given."""
    spelled = [t.name for t in types]
    return spelled[0] if len(spelled) == 1 else ", ".join(spelled[:-1]) + " and " + spelled[-1]


FMOD_KERNEL_SUPPORT = names_and(sorted(FMOD_KERNEL_TYPES, key=lambda t: t.name))
"""`bf16, f16, f32 and i16`: what error messages say the fmod kernels support."""
