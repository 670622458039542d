"""`!sbp.tensor`, the global tensor type of the `sbp` dialect (SPEC §2.3).

A global tensor type is a logical shape, an element type, a placement symbol, an optional ND-SBP
(absent = to be inferred; with `?` entries = left for `infer-sbp{rule=global}`) and an optional local
storage layout (`#sbp.layout`, SPEC §2.6). The SBP attributes it holds live in `dialects/sbp.py`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, IntAttr, NoneAttr, SymbolRefAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects import dtypes
from sbpc.dialects.layout import LayoutAttr
from sbpc.dialects.sbp import (
    NdSbpAttr,
    NdSbpPatternAttr,
    PartialAttr,
    SbpAttr,
    SplitAttr,
    memo_text,
    nd_sbp,
    parse_nd_sbp,
)

_ALLOWED_ELEMENT_TYPES = dtypes.names(dtypes.IR_TYPES)
_BOOL = dtypes.named("i1").xdsl


@irdl_attr_definition
class GlobalTensorType(ParametrizedAttribute, TypeAttribute):
    """`!sbp.tensor<4x8xf32, @p[, [S(0), B]][, layout = #sbp.layout<...>]>`."""

    name = "sbp.tensor"
    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    placement: SymbolRefAttr
    sbp: NdSbpAttr | NdSbpPatternAttr | NoneAttr
    layout: LayoutAttr | NoneAttr

    _NONE: ClassVar[NoneAttr] = NoneAttr()

    def __hash__(self) -> int:
        found = self.__dict__.get("_hash")  # `memo_hash`, its hit inlined (hashed per table use)
        if found is None:
            # xDSL hashes an attribute by its parameters alone, and the float types have none: f16
            # and f32 tensors of one shape and SBP would collide (and be compared in full at every
            # table lookup) without the element type's name.
            found = self.__dict__["_hash"] = hash((self.parameters, self.element_type.name))
        return found

    def __init__(
        self,
        shape: Sequence[int] | ArrayAttr[IntAttr],
        element_type: Attribute,
        placement: str | SymbolRefAttr,
        sbp: NdSbpAttr | NdSbpPatternAttr | Sequence[SbpAttr] | NoneAttr | None = None,
        layout: LayoutAttr | NoneAttr | None = None,
    ):
        if not isinstance(shape, ArrayAttr):
            shape = ArrayAttr(IntAttr(d) for d in shape)
        if isinstance(placement, str):
            placement = SymbolRefAttr(placement)
        if sbp is None:
            sbp = self._NONE
        elif not isinstance(sbp, NdSbpAttr | NdSbpPatternAttr | NoneAttr):
            sbp = nd_sbp(*sbp)
        super().__init__(shape, element_type, placement, sbp, self._NONE if layout is None else layout)

    # -- accessors ---------------------------------------------------------
    def get_shape(self) -> tuple[int, ...]:
        return tuple([d.data for d in self.shape.data])

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @property
    def placement_name(self) -> str:
        return self.placement.root_reference.data

    @property
    def nd_sbp(self) -> NdSbpAttr | None:
        sbp = self.sbp
        # Exact-type tests first: isinstance against an attribute class goes through ABCMeta.
        kind = type(sbp)
        if kind is NdSbpAttr:
            return sbp
        return None if kind is NoneAttr or not isinstance(sbp, NdSbpAttr) else sbp

    @property
    def sbp_pattern(self) -> NdSbpPatternAttr | None:
        """The ND-SBP with `?` entries this type was written with, if any."""
        return self.sbp if type(self.sbp) is NdSbpPatternAttr else None

    @property
    def local_layout(self) -> LayoutAttr | None:
        return self.layout if isinstance(self.layout, LayoutAttr) else None

    def element_count(self) -> int:
        n = 1
        for d in self.get_shape():
            n *= d
        return n

    def with_sbp(self, sbp: NdSbpAttr | NdSbpPatternAttr | None, keep_layout: bool = True) -> GlobalTensorType:
        """The same tensor with another ND-SBP. A layout describes the shards of one distribution, so
        boxing (which changes the shards) drops it with `keep_layout=False`."""
        layout = self.layout if keep_layout else None
        return GlobalTensorType(self.shape, self.element_type, self.placement, sbp, layout)

    def describe(self) -> str:
        """DTensor-style `f32[4,4][S(0)] @p`, used in diagnostics."""
        elt = dtypes.IR_NAMES.get(self.element_type) or str(self.element_type)
        dims = ",".join(str(d) for d in self.get_shape())
        sbp = self.sbp.short_str() if isinstance(self.sbp, NdSbpAttr | NdSbpPatternAttr) else "[?]"
        return f"{elt}[{dims}]{sbp} @{self.placement_name}"

    # -- verification ------------------------------------------------------
    def verify(self) -> None:
        if (problem := self.problem()) is not None:
            raise VerifyException(problem)

    def problem(self) -> str | None:
        """What is wrong with this type on its own (placement-independent checks)."""
        return type_problem(self.get_shape(), self.element_type, self.placement, self.sbp, self.layout)

    # -- syntax ------------------------------------------------------------
    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        parser.parse_punctuation("<")
        dims_start = parser.pos
        dims = parser.parse_dimension_list()
        if dims:
            parser.parse_shape_delimiter()
        if any(d < 0 for d in dims):
            parser.raise_error("!sbp.tensor dimensions must be static", dims_start, parser.pos)
        elt_start = parser.pos
        element_type = parser.parse_type()
        if element_type not in dtypes.IR_NAMES:
            parser.raise_error(f"element type must be one of {_ALLOWED_ELEMENT_TYPES}", elt_start, parser.pos)
        parser.parse_punctuation(",", " before the placement symbol")
        placement = parser.parse_symbol_name()
        sbp: Attribute = cls._NONE
        layout: Attribute = cls._NONE
        while parser.parse_optional_punctuation(",") is not None:
            if parser.parse_optional_keyword("layout") is not None:
                parser.parse_punctuation("=")
                layout_start = parser.pos
                layout = parser.parse_attribute()
                if not isinstance(layout, LayoutAttr):
                    parser.raise_error("expected #sbp.layout<...>", layout_start, parser.pos)
            elif isinstance(sbp, NoneAttr) and isinstance(layout, NoneAttr):
                sbp = parse_nd_sbp(parser, allow_free=True)
            else:
                parser.raise_error("expected `layout = #sbp.layout<...>` or `>`")
        parser.parse_punctuation(">")
        params = (ArrayAttr(IntAttr(d) for d in dims), element_type, SymbolRefAttr(placement), sbp, layout)
        problem = type_problem(tuple(dims), element_type, SymbolRefAttr(placement), sbp, layout)
        if problem is not None:
            parser.raise_error(problem, start, parser.pos)
        return params

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(self.parameters_text)

    @property
    def parameters_text(self) -> str:
        """What `print_parameters` prints, built once per type object (a printed module prints its
        types once per use; attributes are immutable, and the text lives and dies with the type)."""
        return memo_text(self, self._parameters_text)

    def _parameters_text(self) -> str:
        out = io.StringIO()
        printer = Printer(stream=out)
        printer.print_string("<")
        for d in self.get_shape():
            printer.print_string(f"{d}x")
        printer.print_attribute(self.element_type)
        printer.print_string(f", @{self.placement_name}")
        if isinstance(self.sbp, NdSbpAttr | NdSbpPatternAttr):
            printer.print_string(", " + self.sbp.short_str())
        if isinstance(self.layout, LayoutAttr):
            printer.print_string(", layout = ")
            printer.print_attribute(self.layout)
        printer.print_string(">")
        return out.getvalue()


def type_problem(
    shape: tuple[int, ...], element_type: Attribute, placement: SymbolRefAttr, sbp: Attribute, layout: Attribute
) -> str | None:
    """Placement-independent problems of `!sbp.tensor` parameters (None if fine)."""
    if any(d < 0 for d in shape):
        return f"!sbp.tensor dimensions must be static and non-negative, got {list(shape)}"
    if element_type not in dtypes.IR_NAMES:
        return f"!sbp.tensor element type must be one of {_ALLOWED_ELEMENT_TYPES}, got {element_type}"
    if placement.nested_references.data:
        return "!sbp.tensor placement must be a flat symbol such as @p"
    # Exact-type tests (the classes have no subclasses): isinstance goes through ABCMeta, and
    # every `!sbp.tensor` built or parsed runs this.
    entries = sbp if type(sbp) is NdSbpAttr else sbp.fixed() if type(sbp) is NdSbpPatternAttr else ()
    if entries:
        for entry in entries:
            if type(entry) is not SplitAttr:
                if type(entry) is PartialAttr and element_type == _BOOL:
                    return f"an i1 tensor cannot be partial (booleans do not add): {sbp.short_str()}"
                continue
            if not shape:
                return f"a 0-d tensor cannot be split: {sbp.short_str()}"
            if entry.dim >= len(shape):
                return f"split axis {entry.dim} out of range for a rank-{len(shape)} tensor in {sbp.short_str()}"
    if type(layout) is LayoutAttr and layout.layout.rank != len(shape):
        modes = layout.layout.rank
        return f"layout {layout.layout} has {modes} mode{'' if modes == 1 else 's'} for a rank-{len(shape)} tensor"
    return None


