"""`SbpOp`, the base of the `sbp` dialect's ops, and the verification they share (SPEC §2.3, §2.4).

Every op checks its `!sbp.tensor` operands and results the same way (the placement exists, the ND-SBP
fits its hierarchy, operands share a placement) before its own shape and element-type rules
(`verify_semantics`); ops on per-rank `tensor<...>` values (after `spmdize`) check `verify_local`.
Messages name the op with DTensor-style operand descriptions (`describe_op`), e.g.
`sbp.add(f32[4,4][S(0)] @p, f32[4,4][S(1)] @q): ...`, so that a user sees which value is wrong without
reading generic IR. The ops are in `dialects/sbp_ops.py` and `dialects/collective_ops.py`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.irdl import IRDLOperation, base
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects.placement import PlacementOp, check_placed_type, lookup_placement_named
from sbpc.dialects.tensor_type import GlobalTensorType

TensorT = base(GlobalTensorType) | base(TensorType)
"""Global `!sbp.tensor` values; after `spmdize`, per-rank builtin `tensor<...>` values."""

# ---------------------------------------------------------------------------
# Shared verification
# ---------------------------------------------------------------------------


def describe_op(op: Operation) -> str:
    """`sbp.add(f32[4,4][S(0)] @p, f32[4,4][S(1)] @p)` for diagnostics."""
    args = ", ".join(
        v.type.describe() if isinstance(v.type, GlobalTensorType) else str(v.type) for v in op.operands
    )
    return f"{op.name}({args})"


def verify_global_type(
    op: Operation, ty: GlobalTensorType, what: str, placement: PlacementOp | None = None,
    hierarchy: tuple[int, ...] | None = None,
) -> PlacementOp:
    """`check_placed_type`, its message prefixed with the op's description (a caller checking
    several types may pass the placement and its hierarchy, looked up once)."""
    try:
        return check_placed_type(op, ty, what, placement, hierarchy)
    except VerifyException as error:
        raise VerifyException(f"{describe_op(op)}: {error}") from None


class SbpOp(IRDLOperation, abc.ABC):
    """Base of the ops on global tensors: common type/placement checks, then `verify_semantics`.
    Ops customise `verify_semantics` / `verify_local`, never `verify_` itself: a verifier of many ops
    (`dialects/verifier.py`) calls `verify_placed` in its place, with placements it looked up once."""

    def verify_(self) -> None:
        self.verify_placed(self._placement_of)

    def _placement_of(self, name: str) -> tuple[PlacementOp, tuple[int, ...]] | None:
        placement = lookup_placement_named(self, name)
        return None if placement is None else (placement, placement.get_hierarchy())

    def verify_placed(self, placement_of: Callable[[str], tuple[PlacementOp, tuple[int, ...]] | None]) -> None:
        """`verify_`, finding each placement by name, with its hierarchy, through `placement_of` (as
        seen from this op)."""
        operand_types = [v.type for v in self.operands]
        result_types = [r.type for r in self.results]
        types = operand_types + result_types
        # Exact-type test first (isinstance against an attribute class goes through ABCMeta, and
        # every op is verified after parsing and after each pass); xDSL's operand and result
        # constraints have already admitted only !sbp.tensor and tensor<...> here.
        if not all(type(t) is GlobalTensorType for t in types):
            if any(isinstance(t, TensorType) for t in types):
                if not all(isinstance(t, TensorType) for t in types):
                    raise VerifyException(
                        f"{self.name}: cannot mix per-rank tensor<...> and global !sbp.tensor types")
                self.verify_local()
                return
        # Operands and results mostly share one placement, and after inference often one type
        # object: the placement is looked up once per op, each type object checked once.
        if not types:
            self.verify_semantics()
            return
        first = types[0]
        n_operands = len(operand_types)
        name = first.placement_name
        placement, hierarchy = self._placed(first, "operand 0" if n_operands else "result 0", placement_of)
        names_differ = False
        for j in range(1, len(types)):
            ty = types[j]
            same_name = ty.placement_name == name
            names_differ = names_differ or not same_name
            if any(ty is seen for seen in types[:j]):
                continue
            what = f"operand {j}" if j < n_operands else f"result {j - n_operands}"
            if same_name:
                verify_global_type(self, ty, what, placement, hierarchy)
            else:
                self._placed(ty, what, placement_of)
        if names_differ:
            self._verify_placement_names(operand_types, result_types)  # type: ignore[arg-type]
        self.verify_semantics()

    def _placed(
        self, ty: GlobalTensorType, what: str, placement_of: Callable[[str], tuple[PlacementOp, tuple[int, ...]] | None]
    ) -> tuple[PlacementOp, tuple[int, ...]]:
        """`ty`'s placement and hierarchy, after `verify_global_type` (which reports a missing one)."""
        found = placement_of(ty.placement_name)
        if found is None:
            verify_global_type(self, ty, what)  # raises: unknown placement, or not a placement
            raise AssertionError("unreachable")
        verify_global_type(self, ty, what, *found)
        return found

    ALLOWS_PLACEMENT_CHANGE: ClassVar[bool] = False

    def _verify_placement_names(
        self, operand_types: list[GlobalTensorType], result_types: list[GlobalTensorType]
    ) -> None:
        """The operands share one placement, and the results keep it unless the op may move them."""
        placements = {t.placement_name for t in operand_types}
        if len(placements) > 1:
            names = ", ".join(f"@{p}" for p in sorted(placements))
            raise VerifyException(f"{describe_op(self)}: operands are on different placements {names}")
        if placements and not self.ALLOWS_PLACEMENT_CHANGE:
            for t in result_types:
                if t.placement_name not in placements:
                    raise VerifyException(
                        f"{describe_op(self)}: result placement @{t.placement_name} differs "
                        f"from the operands' @{next(iter(placements))}"
                    )

    def verify_semantics(self) -> None:
        """Op-specific shape and element-type rules."""

    def verify_local(self) -> None:
        """Checks of the per-rank form produced by `spmdize` (shapes may be dynamic there)."""

    def fail(self, message: str) -> VerifyException:
        return VerifyException(f"{describe_op(self)}: {message}")

    def expect_float(self, t: GlobalTensorType) -> None:
        """Ops defined on real numbers only (gelu, layer_norm) reject integer tensors."""
        if not isinstance(t.element_type, AnyFloat):
            raise self.fail(f"{self.name.removeprefix('sbp.')} needs a floating-point tensor, got {t.element_type}")

    def expect_result(self, shape: Sequence[int], element_type: Attribute | None = None) -> None:
        result = self.results[0].type
        assert isinstance(result, GlobalTensorType)
        if result.get_shape() != tuple(shape):
            raise self.fail(f"result shape {list(result.get_shape())} should be {list(shape)}")
        if element_type is not None and result.element_type != element_type:
            raise self.fail(f"result element type {result.element_type} should be {element_type}")


def as_tensor_type(v: object) -> GlobalTensorType:
    """A global operand's type (`verify_` has checked it is one before the semantic checks run)."""
    assert isinstance(v, GlobalTensorType)
    return v
