"""`ProgramVerifier`: what `module.verify()` checks, then every function signature against its
placements, with each `sbp` op's verification memoised by value.

Drivers verify a program after parsing and after every pass, and most ops of a program repeat one
another (the same op on the same types, with the same properties and `sbp.signature`): after
`--infer-sbp` a 10k-op program has a few hundred to a few thousand distinct ops. An op's
verification — xDSL's IRDL checks (operand, result, property and attribute constraints, traits) and
the op's own `verify_` (types against their placement, shapes, the collective's step) — reads only
its name, its operand and result types, its properties and attributes, and the placements its types
name, seen from its block. Those values are the memo key; an op equal to one already verified passes
without repeating the work. Everything else `Operation.verify` checks depends on where the op
stands (an erased operand, a block's last op that is no terminator), so those checks run for every
op, and the ops to which they would apply (the last op of a block, ops with regions or successors)
are never answered from the memo.

The walk is xDSL's (`Operation.verify`, `Region.verify`, `Block.verify`): nested ops first, every
other op through its own `verify(verify_nested_ops=False)`. The memo is an explicit object: a
driver run owns one (`tools/pipeline.Instrumentation`), bounded by `max_entries` (past it, it is
cleared before the next entry), keyed by attribute values (hashed and compared by value), never by
object identity.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, ErasedSSAValue, Operation, Region
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects.placement import lookup_placement_named, verify_signatures
from sbpc.dialects.sbp import GlobalTensorType
from sbpc.dialects.sbp_ops import SbpOp


class _BlockPlacements:
    """The placements the ops of one block see, looked up once per name: the ops of a block share
    their nearest symbol table (an `sbp` op is no symbol table), so one lookup answers them all.
    Each is named in keys by the verifier's number for its value (its properties, which is all an
    op's verification reads of it)."""

    __slots__ = ("numbers", "verifier")

    def __init__(self, verifier: ProgramVerifier) -> None:
        self.verifier = verifier
        self.numbers: dict[str, int | None] = {}

    def number(self, op: Operation, name: str) -> int | None:
        """The number of placement @name's value seen from `op`, or None if there is no such
        placement (the op's own verifier then reports it)."""
        if name in self.numbers:
            return self.numbers[name]
        placement = lookup_placement_named(op, name)
        found = None if placement is None else self.verifier.value_number(tuple(placement.properties.items()))
        self.numbers[name] = found
        return found


class ProgramVerifier:
    """Verifies modules as `module.verify()` followed by `verify_signatures` do, remembering the
    value of every `sbp` op it has verified (see the module docstring)."""

    def __init__(self, max_entries: int = 100_000):
        self.max_entries = max_entries
        """The bound: with this many ops remembered, the memo is cleared before the next one."""
        self.verified: set[Hashable] = set()
        self._values: dict[Hashable, int] = {}
        self._numbers = itertools.count()

    def clear(self) -> None:
        """Forget every op and placement value (handed-out numbers are never reused)."""
        self.verified = set()
        self._values = {}

    def value_number(self, value: Hashable) -> int:
        """A small int per distinct placement value (keys hold it rather than the value's tree)."""
        found = self._values.get(value)
        if found is None:
            found = self._values[value] = next(self._numbers)
        return found

    def size(self) -> int:
        return len(self.verified)

    def verify(self, module: ModuleOp) -> None:
        """Raise what `module.verify()` or `verify_signatures(module)` would raise, if anything."""
        self.verify_op(module)
        verify_signatures(module)

    def verify_op(self, op: Operation) -> None:
        """`op.verify()`: its nested ops (memoised), then its own checks."""
        if not op.regions:
            op.verify()
            return
        for region in op.regions:
            self._verify_region(region)
        op.verify(verify_nested_ops=False)

    def _verify_region(self, region: Region) -> None:
        # As `Region.verify`.
        for block in region.blocks:
            self._verify_block(block)
            if block.parent is not region:
                raise ValueError("Parent pointer of block does not refer to containing region")

    def _verify_block(self, block: Block) -> None:
        # As `Block.verify`, each op answered from the memo when an equal one has verified.
        placements = _BlockPlacements(self)
        for op in block.ops:
            if op.parent is not block:
                raise ValueError("Parent pointer of operation does not refer to containing region")
            key = self.key(op, placements)
            if key is not None and key in self.verified:
                continue
            self.verify_op(op)
            if key is not None:
                if len(self.verified) >= self.max_entries:
                    self.clear()
                self.verified.add(key)
        if block.first_op is None:
            region = block.parent
            parent_op = None if region is None else region.parent
            if region is not None and parent_op is not None and len(region.blocks) == 1 and not parent_op.has_trait(
                NoTerminator
            ):
                raise VerifyException(
                    f"Operation {parent_op.name} contains empty block in single-block region that expects "
                    "at least a terminator"
                )

    @staticmethod
    def key(op: Operation, placements: _BlockPlacements) -> Hashable | None:
        """Everything `op.verify()` reads of `op` and the placements it names, as values; None for
        an op the memo does not answer (not a global `sbp` op, or one whose verification depends on
        where it stands: the last op of its block, regions, successors, an erased operand)."""
        if not isinstance(op, SbpOp) or op.next_op is None or op.regions or op.successors:
            return None
        operand_types = []
        for v in op.operands:
            if type(v) is ErasedSSAValue:
                return None
            operand_types.append(v.type)
        types = (*operand_types, *[r.type for r in op.results])
        names: list[str] = []
        for t in types:
            if type(t) is not GlobalTensorType:
                return None  # per-rank types: the verifier reads placements named by properties
            if t.placement_name not in names:
                names.append(t.placement_name)
        numbers = []
        for name in names:
            number = placements.number(op, name)
            if number is None:
                return None
            numbers.append(number)
        return (
            op.name, types, len(operand_types), tuple(op.properties.items()), tuple(op.attributes.items()),
            tuple(numbers),
        )
