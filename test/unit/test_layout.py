"""Tests of dialects/layout.py (the Shape:Stride algebra, `#sbp.layout`) and dialects/layout_formats.py
(the seed-004 formats)."""

import io
import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.ir import Dialect
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from sbpc.dialects.layout import (
    Layout,
    LayoutAttr,
    LayoutError,
    ceil_align,
    ceil_div,
    column_major,
    congruent,
    format_layout,
    parse_layout_text,
    row_major,
)
from sbpc.dialects.layout_formats import (
    FORMAT_NAMES,
    FP8_ONLY_FORMATS,
    c0_element,
    detect_format,
    make_format,
    verify_format,
)

HIER = Layout(((2, 3), (2, 4)), ((1, 4), (2, 12)))


# --- the algebra -------------------------------------------------------------------------------------------


def test_seed_row_and_column_major_example() -> None:
    rm, cm = Layout((2, 4), (4, 1)), Layout((2, 4), (1, 2))
    assert rm.offset_of((1, 0)) == 4
    assert cm.offset_of((1, 0)) == 1
    assert rm(1, 0) == 4
    assert cm(1, 0) == 1
    assert [rm(r, c) for r in range(2) for c in range(4)] == list(range(8))
    assert [cm(r, c) for c in range(4) for r in range(2)] == list(range(8))
    assert rm == row_major((2, 4))
    assert cm == column_major((2, 4))


def test_hierarchical_seed_example_is_a_bijection() -> None:
    coords = [
        ((r0, r1), (c0, c1)) for r0, r1, c0, c1 in itertools.product(range(2), range(3), range(2), range(4))
    ]
    assert len(coords) == 48
    offsets = [HIER.offset_of(c) for c in coords]
    assert set(offsets) == set(range(48))
    for c, o in zip(coords, offsets, strict=True):
        assert HIER.coord_of(o) == c
    assert sorted(HIER.coords()) == sorted(coords)
    assert HIER.is_injective()
    assert HIER.is_bijective()
    assert (HIER.size, HIER.cosize, HIER.rank, HIER.mode_sizes()) == (48, 48, 2, (6, 8))


def test_hierarchical_offsets_and_flat_mode_indices() -> None:
    # seed figure 3: inner 2x2 blocks column-major, then 3 row blocks (stride 4), then 4 column blocks.
    assert HIER.offset_of(((1, 0), (0, 0))) == 1
    assert HIER.offset_of(((0, 0), (1, 0))) == 2
    assert HIER.offset_of(((0, 1), (0, 0))) == 4
    assert HIER.offset_of(((0, 0), (0, 1))) == 12
    # a flat index into a hierarchical mode is decomposed colexicographically: row 5 = (1, 2), col 7 = (1, 3)
    assert HIER.offset_of((5, 0)) == 1 + 2 * 4
    assert HIER.offset_of((5, 7)) == 47
    assert HIER(3, 2) == HIER.offset_of(((1, 1), (0, 1)))
    assert HIER.offset_of(((1, 2), 7)) == 47
    # a bare int is a flat index into the whole layout (colexicographic over all modes)
    assert HIER.offset_of(6) == HIER.offset_of((0, 1))


def test_offset_and_out_of_range() -> None:
    lay = Layout((2, 4), (4, 1), offset=3)
    assert lay(1, 2) == 9
    assert lay.coord_of(9) == (1, 2)
    with pytest.raises(LayoutError, match="out of range"):
        lay.offset_of((2, 0))
    with pytest.raises(LayoutError, match="out of range"):
        HIER.offset_of(((2, 0), (0, 0)))
    with pytest.raises(LayoutError, match="does not match"):
        lay.offset_of((1, 0, 0))
    with pytest.raises(LayoutError, match="not in the image"):
        lay.coord_of(2)
    with pytest.raises(LayoutError, match="not in the image"):
        Layout((2, 2), (1, 4)).coord_of(2)


def test_coord_of_requires_injective() -> None:
    bcast = Layout((2, 4), (0, 1))
    assert not bcast.is_injective()
    assert not bcast.is_bijective()
    with pytest.raises(LayoutError, match="injective"):
        bcast.coord_of(1)
    assert not Layout((2, 2), (1, 1)).is_injective()
    assert Layout((2, 2), (2, 3)).is_injective()  # offsets 0, 2, 3, 5: injective, not compact
    assert not Layout((2, 2), (2, 3)).is_bijective()
    assert Layout((1, 4), (0, 1)).is_bijective()  # extent-1 modes may have any stride


def test_size_cosize_rank() -> None:
    assert (Layout(8, 1).size, Layout(8, 1).cosize, Layout(8, 1).rank) == (8, 8, 1)
    padded = Layout((2, 4), (8, 1))
    assert (padded.size, padded.cosize) == (8, 12)
    assert (Layout((3, 0), (1, 3)).size, Layout((3, 0), (1, 3)).cosize) == (0, 0)
    assert (Layout((), ()).size, Layout((), ()).rank, Layout((), ())()) == (1, 0, 0)
    assert Layout((2, (3, 4)), (12, (1, 3))).mode_sizes() == (2, 12)
    assert Layout((2, 4), (4, 1)).strides_for_flat_modes() == ((2, 4), (4, 1))
    assert Layout(8, 2).strides_for_flat_modes() == ((8, 2),)
    assert HIER.strides_for_flat_modes() is None


def test_row_major_contiguous() -> None:
    assert row_major((3, 5, 7)).is_row_major_contiguous((3, 5, 7))
    assert Layout((2, 4), (4, 1)).is_row_major_contiguous((2, 4))
    assert Layout((1, 4), (99, 1)).is_row_major_contiguous((1, 4))  # extent-1 mode: any stride
    assert Layout((2, (2, 2)), (4, (1, 2))).is_row_major_contiguous((2, 4))  # hierarchical, same map
    assert Layout(8, 1).is_row_major_contiguous((8,))
    assert Layout((), ()).is_row_major_contiguous(())
    assert not Layout((2, 4), (1, 2)).is_row_major_contiguous((2, 4))  # column-major
    assert not Layout((2, 4), (8, 1)).is_row_major_contiguous((2, 4))  # padded rows
    assert not Layout((2, 4), (4, 1), offset=1).is_row_major_contiguous((2, 4))
    assert not Layout((2, 4), (4, 1)).is_row_major_contiguous((4, 2))
    assert not Layout((2, (2, 2)), (4, (2, 1))).is_row_major_contiguous((2, 4))
    assert not HIER.is_row_major_contiguous((6, 8))


def test_congruence_and_validation_errors() -> None:
    assert congruent((1, (2, 3)), (4, (5, 6)))
    assert not congruent((1, (2, 3)), (4, 5))
    assert not congruent((1, 2), (1, 2, 3))
    assert not congruent(3, (3,))
    with pytest.raises(LayoutError, match=r"shape \(2,4\) and stride \(4\) are not congruent"):
        Layout((2, 4), (4,))
    with pytest.raises(LayoutError, match=r"not congruent"):
        Layout(((2, 3), 4), ((1, 4), (2, 12)))
    with pytest.raises(LayoutError, match="non-negative"):
        Layout((2, -1), (1, 1))
    with pytest.raises(LayoutError, match="non-negative"):
        Layout((2, 4), (4, -1))
    with pytest.raises(LayoutError, match="offset"):
        Layout((2, 4), (4, 1), offset=-1)
    with pytest.raises(LayoutError, match="integers or tuples"):
        Layout((2, True), (1, 1))
    assert Layout([2, [3, 4]], [12, [1, 3]]).shape == (2, (3, 4))  # lists become tuples


@pytest.mark.parametrize(
    ("text", "layout"),
    [
        ("(2,4):(4,1)", Layout((2, 4), (4, 1))),
        ("((2,3),(2,4)):((1,4),(2,12))", HIER),
        ("8:1", Layout(8, 1)),
        ("(8):(1)", Layout((8,), (1,))),
        ("():()", Layout((), ())),
        ("(2,4):(4,1), offset = 3", Layout((2, 4), (4, 1), 3)),
    ],
)
def test_text_round_trip(text: str, layout: Layout) -> None:
    assert parse_layout_text(text) == layout
    assert format_layout(layout) == text
    assert str(layout) == text


def test_text_whitespace_and_errors() -> None:
    assert parse_layout_text(" ( 2 , 4 ) : ( 4 , 1 ) ,offset=3 ") == Layout((2, 4), (4, 1), 3)
    for bad, msg in [
        ("(2,4):(4)", "not congruent"),
        ("(2,-1):(1,1)", "non-negative"),
        ("(2,4)(4,1)", "expected ':'"),
        ("(2,4:(4,1)", "expected '\\)'"),
        ("(2,4):(4,1) x", "unexpected 'x'"),
        ("(2,4):(4,1), offst = 1", "expected 'offset'"),
    ]:
        with pytest.raises(LayoutError, match=msg):
            parse_layout_text(bad)


def test_coord_of_large_layout() -> None:
    lay = make_format("NZ", 320, 320, "f16")  # 102400 elements
    assert lay.size == 102400
    assert lay.is_bijective()
    for crd in [((0, 0), (0, 0)), ((15, 19), (15, 19)), ((3, 7), (9, 2)), ((15, 0), (0, 19))]:
        assert lay.coord_of(lay.offset_of(crd)) == crd


# --- hypothesis: nested row-major layouts ------------------------------------------------------------------

_mode = st.one_of(st.integers(1, 5), st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))


def _nested_row_major(shape: tuple) -> Layout:
    """Row-major over top-level modes, compact colexicographic inside each mode (independent of the lib)."""
    strides: list = [None] * len(shape)
    step = 1
    for k in reversed(range(len(shape))):
        if isinstance(shape[k], int):
            strides[k], step = step, step * shape[k]
        else:
            inner = []
            for extent in shape[k]:
                inner.append(step)
                step *= extent
            strides[k] = tuple(inner)
    return Layout(shape, tuple(strides))


@settings(max_examples=60, deadline=None)
@given(st.lists(_mode, min_size=1, max_size=3).map(tuple))
def test_property_row_major_layouts_are_bijective(shape: tuple) -> None:
    lay = _nested_row_major(shape)
    assert lay.is_bijective()
    assert lay.is_row_major_contiguous(lay.mode_sizes())
    offsets = set()
    for crd in lay.coords():
        off = lay.offset_of(crd)
        offsets.add(off)
        assert lay.coord_of(off) == crd
    assert offsets == set(range(lay.size))
    flat = row_major(lay.mode_sizes())
    assert all(flat(idx) == lay(idx) for idx in range(lay.size))
    assert all(lay.offset_of(lay.coord_of(o)) == o for o in range(lay.size))


# --- named formats -----------------------------------------------------------------------------------------

# Written out by hand from the seed's table ("Layout分形结构数据表"): ((ShapeRow0, ShapeRow1), (ShapeColumn0,
# ShapeColumn1)) : ((StrideRow0, StrideRow1), (StrideColumn0, StrideColumn1)); C0 = 16 for f16, 8 for f32.
FORMAT_TABLE = [
    # NZ: (16, ceil(r/16)), (C0, ceil(c/C0)) : (C0, 16*C0), (1, C0*align(r,16))
    ("NZ", "f16", 16, 32, ((16, 1), (16, 2)), ((16, 256), (1, 256))),
    ("NZ", "f16", 33, 70, ((16, 3), (16, 5)), ((16, 256), (1, 768))),
    ("NZ", "f16", 64, 64, ((16, 4), (16, 4)), ((16, 256), (1, 1024))),
    ("NZ", "f32", 16, 32, ((16, 1), (8, 4)), ((8, 128), (1, 128))),
    ("NZ", "f32", 33, 70, ((16, 3), (8, 9)), ((8, 128), (1, 384))),
    ("NZ", "f32", 64, 64, ((16, 4), (8, 8)), ((8, 128), (1, 512))),
    # ZN: (C0, ceil(r/C0)), (16, ceil(c/16)) : (1, C0*align(c,16)), (C0, 16*C0)
    ("ZN", "f16", 16, 32, ((16, 1), (16, 2)), ((1, 512), (16, 256))),
    ("ZN", "f16", 33, 70, ((16, 3), (16, 5)), ((1, 1280), (16, 256))),
    ("ZN", "f16", 64, 64, ((16, 4), (16, 4)), ((1, 1024), (16, 256))),
    ("ZN", "f32", 16, 32, ((8, 2), (16, 2)), ((1, 256), (8, 128))),
    ("ZN", "f32", 33, 70, ((8, 5), (16, 5)), ((1, 640), (8, 128))),
    ("ZN", "f32", 64, 64, ((8, 8), (16, 4)), ((1, 512), (8, 128))),
    # ZZ: (16, ceil(r/16)), (C0, ceil(c/C0)) : (C0, 16*align(c,C0)), (1, 16*C0)
    ("ZZ", "f16", 16, 32, ((16, 1), (16, 2)), ((16, 512), (1, 256))),
    ("ZZ", "f16", 33, 70, ((16, 3), (16, 5)), ((16, 1280), (1, 256))),
    ("ZZ", "f16", 64, 64, ((16, 4), (16, 4)), ((16, 1024), (1, 256))),
    ("ZZ", "f32", 16, 32, ((16, 1), (8, 4)), ((8, 512), (1, 128))),
    ("ZZ", "f32", 33, 70, ((16, 3), (8, 9)), ((8, 1152), (1, 128))),
    ("ZZ", "f32", 64, 64, ((16, 4), (8, 8)), ((8, 1024), (1, 128))),
    # ZZ fp8_e8m0 row: (16, ceil(r/16)), (2, c/2) : (2, c*16), (1, 32)
    ("ZZ", "fp8_e8m0", 16, 32, ((16, 1), (2, 16)), ((2, 512), (1, 32))),
    ("ZZ", "fp8_e8m0", 33, 70, ((16, 3), (2, 35)), ((2, 1120), (1, 32))),
    ("ZZ", "fp8_e8m0", 64, 64, ((16, 4), (2, 32)), ((2, 1024), (1, 32))),
    # NN (fp8_e8m0): (2, r/2), (16, ceil(c/16)) : (1, 32), (2, r*16)
    ("NN", "fp8_e8m0", 16, 32, ((2, 8), (16, 2)), ((1, 32), (2, 256))),
    ("NN", "fp8_e8m0", 34, 70, ((2, 17), (16, 5)), ((1, 32), (2, 544))),
    ("NN", "fp8_e8m0", 64, 64, ((2, 32), (16, 4)), ((1, 32), (2, 1024))),
    # DNExt / NDExt: (1, r), (1, c) : (0, 1), (0, r)  /  (0, c), (0, 1)
    ("DNExt", "f16", 16, 32, ((1, 16), (1, 32)), ((0, 1), (0, 16))),
    ("DNExt", "f32", 33, 70, ((1, 33), (1, 70)), ((0, 1), (0, 33))),
    ("NDExt", "f16", 16, 32, ((1, 16), (1, 32)), ((0, 32), (0, 1))),
    ("NDExt", "f32", 33, 70, ((1, 33), (1, 70)), ((0, 70), (0, 1))),
    ("NDExt", "f16", 64, 64, ((1, 64), (1, 64)), ((0, 64), (0, 1))),
    # ND / DN: flat (r, c) : (c, 1) / (1, r)
    ("ND", "f16", 33, 70, (33, 70), (70, 1)),
    ("ND", "f32", 16, 32, (16, 32), (32, 1)),
    ("DN", "f16", 33, 70, (33, 70), (1, 33)),
    ("DN", "f32", 64, 64, (64, 64), (1, 64)),
    # Scale formats (fp8_e8m0)
    ("ScaleAND", "fp8_e8m0", 33, 70, ((1, 33), (1, 70)), ((0, 70), (0, 1))),
    ("ScaleAND", "fp8_e8m0", 16, 32, ((1, 16), (1, 32)), ((0, 32), (0, 1))),
    ("ScaleADN", "fp8_e8m0", 16, 32, ((1, 16), (2, 16)), ((0, 2), (1, 32))),
    ("ScaleADN", "fp8_e8m0", 33, 70, ((1, 33), (2, 35)), ((0, 2), (1, 66))),
    ("ScaleADN", "fp8_e8m0", 64, 64, ((1, 64), (2, 32)), ((0, 2), (1, 128))),
    ("ScaleBND", "fp8_e8m0", 16, 32, ((2, 8), (1, 32)), ((1, 64), (0, 2))),
    ("ScaleBND", "fp8_e8m0", 34, 70, ((2, 17), (1, 70)), ((1, 140), (0, 2))),
    ("ScaleBND", "fp8_e8m0", 64, 64, ((2, 32), (1, 64)), ((1, 128), (0, 2))),
    ("ScaleBDN", "fp8_e8m0", 33, 70, ((1, 33), (1, 70)), ((0, 1), (0, 33))),
    ("ScaleBDN", "fp8_e8m0", 64, 64, ((1, 64), (1, 64)), ((0, 1), (0, 64))),
    # other C0 values: i8 -> 32, fp4x2 -> 64, bf16 -> 16
    ("NZ", "i8", 16, 64, ((16, 1), (32, 2)), ((32, 512), (1, 512))),
    ("NZ", "fp4x2_e2m1", 16, 128, ((16, 1), (64, 2)), ((64, 1024), (1, 1024))),
    ("ZN", "fp4x2_e1m2", 64, 16, ((64, 1), (16, 1)), ((1, 1024), (64, 1024))),
    ("ZZ", "bf16", 33, 70, ((16, 3), (16, 5)), ((16, 1280), (1, 256))),
]


@pytest.mark.parametrize(("name", "dtype", "row", "col", "shape", "stride"), FORMAT_TABLE)
def test_format_matches_seed_table(
    name: str, dtype: str, row: int, col: int, shape: tuple, stride: tuple
) -> None:
    lay = make_format(name, row, col, dtype)
    assert lay == Layout(shape, stride)
    verify_format(name, lay, dtype)
    assert lay.is_bijective()  # the contiguous example layouts pack (padded) storage densely


def test_every_format_constructor_verifies() -> None:
    for name in FORMAT_NAMES:
        dtypes = ["fp8_e8m0"] if name in FP8_ONLY_FORMATS else ["f16", "f32"]
        if name == "ZZ":
            dtypes.append("fp8_e8m0")
        for dtype, (row, col) in itertools.product(dtypes, [(16, 32), (34, 70), (64, 64), (2, 2)]):
            verify_format(name, make_format(name, row, col, dtype), dtype)


def test_c0_and_helpers() -> None:
    assert [c0_element(t) for t in ("f16", "bf16", "f32", "i8", "i16", "i32")] == [16, 16, 8, 32, 16, 8]
    assert [c0_element(t) for t in ("fp4x2_e2m1", "fp4x2_e1m2", "fp8_e8m0", "fp8_e8m0_t")] == [64, 64, 2, 2]
    assert (ceil_div(33, 16), ceil_div(32, 16), ceil_align(33, 16), ceil_align(0, 16)) == (3, 2, 48, 0)
    with pytest.raises(LayoutError, match="unknown layout dtype"):
        c0_element("f64")
    with pytest.raises(LayoutError, match="unknown layout format"):
        make_format("NC1HWC0", 16, 16, "f16")


def test_format_divisibility_and_dtype_restrictions() -> None:
    with pytest.raises(LayoutError, match=r"NN row \(33\) must be divisible by 2"):
        make_format("NN", 33, 32, "fp8_e8m0")
    with pytest.raises(LayoutError, match=r"ZZ column \(33\) must be divisible by 2"):
        make_format("ZZ", 16, 33, "fp8_e8m0")
    with pytest.raises(LayoutError, match=r"ScaleADN column \(7\) must be divisible by 2"):
        make_format("ScaleADN", 4, 7, "fp8_e8m0")
    with pytest.raises(LayoutError, match=r"ScaleBND row \(7\) must be divisible by 2"):
        make_format("ScaleBND", 7, 4, "fp8_e8m0")
    for name in FP8_ONLY_FORMATS:
        with pytest.raises(LayoutError, match="only defined for fp8_e8m0, not f16"):
            make_format(name, 16, 32, "f16")
        with pytest.raises(LayoutError, match="only defined for fp8_e8m0, not f16"):
            verify_format(name, make_format(name, 16, 32, "fp8_e8m0"), "f16")
    with pytest.raises(LayoutError, match="NZ layout is not defined for fp8_e8m0"):
        make_format("NZ", 16, 32, "fp8_e8m0")


def _with(layout: Layout, field: str, value: int) -> Layout:
    """Replace one of the eight table fields of a hierarchical format layout."""
    fields = ["ShapeRow0", "ShapeRow1", "ShapeColumn0", "ShapeColumn1"]
    sfields = ["StrideRow0", "StrideRow1", "StrideColumn0", "StrideColumn1"]
    (a, b), (c, d) = layout.shape
    (e, f), (g, h) = layout.stride
    shape, stride = [a, b, c, d], [e, f, g, h]
    if field in fields:
        shape[fields.index(field)] = value
    else:
        stride[sfields.index(field)] = value
    return Layout(
        ((shape[0], shape[1]), (shape[2], shape[3])), ((stride[0], stride[1]), (stride[2], stride[3]))
    )


FRACTAL = "must be a multiple of ShapeRow0*ShapeColumn0"
BROKEN = [  # (format, dtype, field, new value, message after "<format> layout: ")
    ("NZ", "f16", "StrideColumn1", 100, f"StrideColumn1 (100) {FRACTAL} (256)"),
    ("NZ", "f32", "StrideColumn1", 200, f"StrideColumn1 (200) {FRACTAL} (128)"),
    ("NZ", "f16", "ShapeRow0", 8, "ShapeRow0 (8) must be 16"),
    ("NZ", "f16", "StrideColumn0", 2, "StrideColumn0 (2) must be 1"),
    ("ZN", "f16", "StrideRow1", 100, f"StrideRow1 (100) {FRACTAL} (256)"),
    ("ZN", "f32", "StrideColumn0", 16, "StrideColumn0 (16) must be 8"),
    ("ZZ", "f16", "StrideRow1", 100, f"StrideRow1 (100) {FRACTAL} (256)"),
    ("ZZ", "f16", "StrideColumn1", 512, "StrideColumn1 (512) must be 256"),
    ("ZZ", "fp8_e8m0", "StrideRow1", 48, f"StrideRow1 (48) {FRACTAL} (32)"),
    ("NN", "fp8_e8m0", "StrideColumn1", 48, f"StrideColumn1 (48) {FRACTAL} (32)"),
    ("NN", "fp8_e8m0", "StrideRow1", 64, "StrideRow1 (64) must be 32"),
    ("NDExt", "f16", "StrideColumn1", 2, "StrideColumn1 (2) must be 1"),
    ("NDExt", "f16", "StrideRow0", 1, "StrideRow0 (1) must be 0"),
    ("NDExt", "f16", "StrideRow1", 16, "StrideRow1 (16) must be >= ShapeColumn1 (32)"),
    ("DNExt", "f32", "StrideRow1", 2, "StrideRow1 (2) must be 1"),
    ("DNExt", "f32", "StrideColumn1", 8, "StrideColumn1 (8) must be >= ShapeRow1 (16)"),
    ("ScaleAND", "fp8_e8m0", "StrideColumn1", 2, "StrideColumn1 (2) must be 1"),
    (
        "ScaleADN",
        "fp8_e8m0",
        "StrideColumn1",
        33,
        "StrideColumn1 (33) must be a multiple of ShapeColumn0 (2)",
    ),
    ("ScaleADN", "fp8_e8m0", "StrideColumn1", 16, "StrideColumn1 (16) must be >= 2*ShapeRow1 (32)"),
    ("ScaleADN", "fp8_e8m0", "StrideRow1", 4, "StrideRow1 (4) must be 2"),
    ("ScaleBND", "fp8_e8m0", "StrideRow1", 65, "StrideRow1 (65) must be a multiple of ShapeRow0 (2)"),
    ("ScaleBND", "fp8_e8m0", "StrideRow1", 32, "StrideRow1 (32) must be >= 2*ShapeColumn1 (64)"),
    ("ScaleBND", "fp8_e8m0", "StrideColumn1", 1, "StrideColumn1 (1) must be 2"),
    ("ScaleBDN", "fp8_e8m0", "StrideRow1", 0, "StrideRow1 (0) must be 1"),
    ("ScaleBDN", "fp8_e8m0", "ShapeColumn0", 2, "ShapeColumn0 (2) must be 1"),
]


@pytest.mark.parametrize(("name", "dtype", "field", "value", "msg"), BROKEN)
def test_verify_format_rejects_broken_rule(name: str, dtype: str, field: str, value: int, msg: str) -> None:
    good = make_format(name, 16, 32, dtype)
    verify_format(name, good, dtype)
    with pytest.raises(LayoutError, match=re.escape(f"{name} layout: {msg}")):
        verify_format(name, _with(good, field, value), dtype)


def test_verify_flat_formats_and_structure() -> None:
    verify_format("ND", Layout((4, 8), (16, 1)), "f16")  # padded rows are fine
    verify_format("DN", Layout((4, 8), (1, 4)), "f32")
    with pytest.raises(LayoutError, match=r"ND layout: row stride \(4\) must be >= the column extent \(8\)"):
        verify_format("ND", Layout((4, 8), (4, 1)), "f16")
    with pytest.raises(LayoutError, match=r"ND layout: column stride \(2\) must be 1"):
        verify_format("ND", Layout((4, 8), (16, 2)), "f16")
    with pytest.raises(LayoutError, match=r"DN layout: row stride \(8\) must be 1"):
        verify_format("DN", Layout((4, 8), (8, 1)), "f16")
    with pytest.raises(LayoutError, match=r"DN layout: column stride \(3\) must be >= the row extent \(4\)"):
        verify_format("DN", Layout((4, 8), (1, 3)), "f16")
    with pytest.raises(LayoutError, match="expected a flat 2-mode layout"):
        verify_format("ND", HIER, "f16")
    with pytest.raises(LayoutError, match=r"NZ layout: expected shape \(\(ShapeRow0,ShapeRow1\)"):
        verify_format("NZ", Layout((16, 16), (16, 1)), "f16")
    with pytest.raises(LayoutError, match="NZ layout is not defined for fp8_e8m0"):
        verify_format("NZ", make_format("NZ", 16, 32, "f16"), "fp8_e8m0")


def test_verify_format_padding_and_overlap() -> None:
    # padded outer strides that keep the alignment are accepted
    verify_format("NZ", Layout(((16, 3), (16, 5)), ((16, 256), (1, 1024))), "f16")
    verify_format("ZN", Layout(((16, 3), (16, 5)), ((1, 2048), (16, 256))), "f16")
    # aligned, but the column blocks overlap the row blocks
    with pytest.raises(LayoutError, match="overlap"):
        verify_format("NZ", Layout(((16, 3), (16, 5)), ((16, 256), (1, 256))), "f16")


def test_detect_format() -> None:
    assert detect_format(row_major((4, 8)), "f16") == "ND"
    assert detect_format(column_major((4, 8)), "f16") == "DN"
    assert detect_format(make_format("NZ", 64, 64, "f16"), "f16") == "NZ"
    assert detect_format(make_format("ZN", 64, 64, "f32"), "f32") == "ZN"
    assert detect_format(make_format("ZZ", 64, 64, "f16"), "f16") == "ZZ"
    assert detect_format(make_format("NDExt", 4, 8, "f16"), "f16") == "NDExt"
    assert detect_format(make_format("ScaleAND", 4, 8, "fp8_e8m0"), "fp8_e8m0") == "ScaleAND"
    assert detect_format(make_format("ScaleADN", 4, 8, "fp8_e8m0"), "fp8_e8m0") == "ScaleADN"
    assert detect_format(make_format("NN", 4, 32, "fp8_e8m0"), "fp8_e8m0") == "NN"
    assert detect_format(HIER, "f16") is None


# --- #sbp.layout attribute ---------------------------------------------------------------------------------


@pytest.fixture
def ctx() -> Context:
    context = Context()
    context.load_dialect(Builtin)
    context.load_dialect(Dialect("sbp", [], [LayoutAttr]))
    return context


def _print(attr: LayoutAttr) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_attribute(attr)
    return stream.getvalue()


@pytest.mark.parametrize(
    "text",
    [
        "#sbp.layout<(2,4):(4,1)>",
        "#sbp.layout<(2,4):(1,2)>",
        "#sbp.layout<((2,3),(2,4)):((1,4),(2,12))>",
        "#sbp.layout<(2,4):(4,1), offset = 3>",
        "#sbp.layout<8:1>",
        "#sbp.layout<((16,4),(16,4)):((16,256),(1,1024))>",
    ],
)
def test_attr_round_trip(ctx: Context, text: str) -> None:
    attr = Parser(ctx, text).parse_attribute()
    assert isinstance(attr, LayoutAttr)
    assert _print(attr) == text
    assert LayoutAttr.from_layout(attr.layout) == attr
    assert hash(LayoutAttr.from_layout(attr.layout)) == hash(attr)
    assert Parser(ctx, _print(attr)).parse_attribute() == attr


def test_attr_values_and_whitespace(ctx: Context) -> None:
    attr = Parser(ctx, "#sbp.layout< ((2, 3), (2, 4)) : ((1, 4), (2, 12)) , offset = 7 >").parse_attribute()
    assert isinstance(attr, LayoutAttr)
    assert attr.layout == Layout(((2, 3), (2, 4)), ((1, 4), (2, 12)), 7)
    assert attr == LayoutAttr(((2, 3), (2, 4)), ((1, 4), (2, 12)), 7)
    assert attr != LayoutAttr(((2, 3), (2, 4)), ((1, 4), (2, 12)))
    assert {attr: 1}[LayoutAttr.from_layout(Layout(((2, 3), (2, 4)), ((1, 4), (2, 12)), 7))] == 1
    assert attr.layout(1, 0) == 8
    assert str(attr) == "#sbp.layout<((2,3),(2,4)):((1,4),(2,12)), offset = 7>"


def test_attr_generic_module_round_trip(ctx: Context) -> None:
    text = "builtin.module attributes {l0 = #sbp.layout<(4,8):(1,4)>, l1 = #sbp.layout<8:2, offset = 1>} {\n}"
    module = Parser(ctx, text).parse_module()
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    assert "#sbp.layout<(4,8):(1,4)>" in stream.getvalue()
    assert "#sbp.layout<8:2, offset = 1>" in stream.getvalue()
    again = Parser(ctx, stream.getvalue()).parse_module()
    assert isinstance(again, ModuleOp)
    assert again.attributes == module.attributes


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("#sbp.layout<(2,4):(4)>", "not congruent"),
        ("#sbp.layout<(2,-1):(1,1)>", "must be non-negative"),
        ("#sbp.layout<(2,4)(4,1)>", "':' between the layout shape and stride"),
        ("#sbp.layout<(2,4:(4,1)>", "expected ',' or '\\)'"),
        ("#sbp.layout<(2,4):(4,1), offset = -2>", "offset must be non-negative"),
        ("#sbp.layout<(2,4):(4,1), size = 2>", "Expected 'offset'"),
        ("#sbp.layout<(2,4):(4,1)", "'>'"),
        ("#sbp.layout<(2,x):(4,1)>", "expected an integer or '\\('"),
        ("#sbp.layout<((2,3),4):((1,4),(2,12))>", "not congruent"),
    ],
)
def test_attr_parse_errors(ctx: Context, text: str, msg: str) -> None:
    with pytest.raises(ParseError, match=msg):
        Parser(ctx, text).parse_attribute()


def test_attr_error_is_located(ctx: Context) -> None:
    with pytest.raises(ParseError) as info:
        Parser(ctx, "#sbp.layout<(2,4):(4)>").parse_attribute()
    assert "1:13" in str(info.value)  # points at the shape, not at a bare verifier message


def test_attr_programmatic_verify() -> None:
    assert LayoutAttr((2, 4), (4, 1)).layout == Layout((2, 4), (4, 1))
    with pytest.raises(VerifyException, match="not congruent"):
        LayoutAttr((2, 4), (4,))
    with pytest.raises(VerifyException, match="non-negative"):
        LayoutAttr((2, 4), (4, -1))
    with pytest.raises(VerifyException, match="offset"):
        LayoutAttr((2, 4), (4, 1), -3)
