"""`ProgramVerifier`: what `module.verify()` checks, then every function signature against its
placements, with each `sbp` op's verification memoised by value.

Drivers verify a program after parsing and after every pass, and most ops of a program repeat one
another (the same op on the same types, with the same properties and `sbp.signature`): after
`--infer-sbp` a 10k-op program has a few hundred to a few thousand distinct ops. An `sbp` op's
verification — xDSL's IRDL checks (operand, result, property and attribute constraints, traits) and
`SbpOp.verify_` (types against their placement, shapes, the collective's step) — reads only its
name, its operand and result types, its properties and attributes, and the placements its types
name, seen from its block. Those values are the memo key (`key`): an op equal to one already
verified passes without repeating the work. The rest of `Operation.verify` depends on where the
op stands (an erased operand, a block's last op that is no terminator, regions, successors); ops
to which any of it applies are never answered from the memo and are verified by xDSL in full.

A second memo holds the IRDL checks alone, where they read less than the whole op: when every
operand and result constraint of an op's definition tests only the class of a type (`base(...)`
and unions of them, as all `sbp` ops' `TensorT`) and no trait has a verifier, those checks read
the names of the types' classes, the operand and result counts, the properties and the
attributes the definition declares (`irdl_key`; discardable ones such as `sbp.signature` are not
read). An op that misses the first memo then runs only `SbpOp.verify_placed`, with the
placements its block's ops share, looked up once per block (an `sbp` op is no symbol table, so
the ops of a block see one). If anything fails, the op is verified again by `op.verify()`, which
raises xDSL's own error.

The walk is xDSL's (`Operation.verify`, `Region.verify`, `Block.verify`): nested ops first, every
other op through its own `verify(verify_nested_ops=False)`. The memos are an explicit object,
owned by whoever verifies (`tools/pipeline.verify_program`: one per verification), bounded by
`max_entries` (past it, both are cleared before the next entry), keyed by values (attributes hash
and compare by value; placements by a number the verifier gives each distinct placement value),
never by identity.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, ErasedSSAValue, Operation, Region
from xdsl.irdl import AnyOf, BaseAttr, EqIntConstraint, IRDLOperation, RangeLengthConstraint, RangeOf
from xdsl.traits import NoTerminator, OpTrait
from xdsl.utils.exceptions import VerifyException

from sbpc.dialects.placement import PlacementOp, lookup_placement_named, verify_signatures
from sbpc.dialects.sbp_op_base import SbpOp
from sbpc.dialects.tensor_type import GlobalTensorType


def _tests_class_only(constraint: object) -> bool:
    """Whether an operand/result constraint reads nothing of a type but its class (and the count)."""
    if isinstance(constraint, RangeLengthConstraint):
        return isinstance(constraint.length, EqIntConstraint) and _tests_class_only(constraint.constraint)
    if isinstance(constraint, RangeOf):
        return _tests_class_only(constraint.constr)
    if isinstance(constraint, AnyOf):
        return all(_tests_class_only(c) for c in constraint.attr_constrs)
    return type(constraint) is BaseAttr


def irdl_reads_classes_only(cls: type[IRDLOperation]) -> bool:
    """Whether the IRDL checks of `cls` read of its operand and result types only their classes:
    class-test constraints, no regions or successors, no trait with a verifier of its own."""
    op_def = cls.get_irdl_definition()
    return (
        not op_def.regions and not op_def.successors
        and all(_tests_class_only(d.constr) for _, d in (*op_def.operands, *op_def.results))
        and all(type(t).verify is OpTrait.verify for t in op_def.traits)
    )


class _OpFacts:
    """What the verifier needs to know of an op's definition, learnt once per op name."""

    __slots__ = ("declared_attributes", "irdl_classes_only", "sbp")

    def __init__(self, op: Operation):
        self.sbp = isinstance(op, SbpOp)
        self.irdl_classes_only = self.sbp and irdl_reads_classes_only(type(op))  # type: ignore[arg-type]
        self.declared_attributes: tuple[str, ...] = (
            tuple(type(op).get_irdl_definition().attributes) if self.sbp else ())  # type: ignore[attr-defined]


class _BlockPlacements:
    """The placements the ops of one block see, looked up once per name: each with its hierarchy
    and the verifier's number for its value (its properties: all an op's verification reads of it)."""

    __slots__ = ("found", "verifier")

    def __init__(self, verifier: ProgramVerifier) -> None:
        self.verifier = verifier
        self.found: dict[str, tuple[PlacementOp, tuple[int, ...], int] | None] = {}

    def lookup(self, op: Operation, name: str) -> tuple[PlacementOp, tuple[int, ...], int] | None:
        if name in self.found:
            return self.found[name]
        placement = lookup_placement_named(op, name)
        found = None
        if placement is not None:
            number = self.verifier.value_number(tuple(placement.properties.items()))
            found = placement, placement.get_hierarchy(), number
        self.found[name] = found
        return found

    def placement(self, op: Operation, name: str) -> tuple[PlacementOp, tuple[int, ...]] | None:
        found = self.lookup(op, name)
        return None if found is None else found[:2]


class ProgramVerifier:
    """Verifies modules as `module.verify()` followed by `verify_signatures` do, remembering the
    value of every `sbp` op it has verified (see the module docstring)."""

    def __init__(self, max_entries: int = 100_000):
        self.max_entries = max_entries
        """The bound: with this many entries in a memo, both are cleared before the next one."""
        self.verified: set[Hashable] = set()
        """`key`s of the ops verified."""
        self.irdl_verified: set[Hashable] = set()
        """`irdl_key`s of the ops whose IRDL checks passed."""
        self._facts: dict[str, _OpFacts] = {}
        self._values: dict[Hashable, int] = {}
        self._numbers = itertools.count()

    def clear(self) -> None:
        """Forget every op and placement value (handed-out placement numbers are never reused; what
        was learnt of op definitions, one entry per op name, stays)."""
        self.verified = set()
        self.irdl_verified = set()
        self._values = {}

    def size(self) -> int:
        return len(self.verified) + len(self.irdl_verified)

    def value_number(self, value: Hashable) -> int:
        """A small int per distinct placement value (keys hold it rather than the value's tree)."""
        found = self._values.get(value)
        if found is None:
            found = self._values[value] = next(self._numbers)
        return found

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

    def _remember(self, memo: set[Hashable], key: Hashable) -> None:
        if len(memo) >= self.max_entries:
            self.clear()
        memo.add(key)

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
            if key is None:
                self.verify_op(op)
                continue
            # Added first, so that the key is hashed once; taken out again if the op fails.
            if len(self.verified) >= self.max_entries:
                self.clear()
            known = len(self.verified)
            self.verified.add(key)
            if len(self.verified) == known:
                continue
            assert isinstance(op, SbpOp)
            try:
                irdl_key = self.irdl_key(op)
                if irdl_key is None or irdl_key not in self.irdl_verified:
                    type(op).get_irdl_definition().verify(op)
                    if irdl_key is not None:
                        self._remember(self.irdl_verified, irdl_key)
                op.verify_placed(lambda name, op=op: placements.placement(op, name))
            except VerifyException:
                self.verified.discard(key)
                op.verify()  # raises xDSL's own error for this op
                raise
            except BaseException:
                self.verified.discard(key)
                raise
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

    def key(self, op: Operation, placements: _BlockPlacements) -> Hashable | None:
        """Everything `op.verify()` reads of `op` and the placements it names, as values; None for
        an op the memo does not answer (not a global `sbp` op, or one whose verification depends on
        where it stands: the last op of its block, regions, successors, an erased operand)."""
        facts = self._facts.get(op.name)
        if facts is None:
            facts = self._facts[op.name] = _OpFacts(op)
        if not facts.sbp or op.next_op is None or op.regions or op.successors:
            return None
        types: list[Attribute] = []
        for v in op.operands:
            if type(v) is ErasedSSAValue:
                return None
            types.append(v.type)
        n_operands = len(types)
        types.extend([r.type for r in op.results])
        numbers: list[int] = []
        seen: list[str] = []
        for t in types:
            if type(t) is not GlobalTensorType:
                return None  # per-rank types: the verifier reads placements named by properties
            name = t.placement_name
            if name not in seen:
                seen.append(name)
                found = placements.lookup(op, name)
                if found is None:
                    return None  # the op's own verifier reports the missing placement
                numbers.append(found[2])
        # One flat tuple (the counts make it unambiguous): the memo keeps every key, and nested
        # tuples would multiply the long-lived objects the garbage collector walks.
        properties, attributes = op.properties, op.attributes
        key: list[object] = [op.name, n_operands, len(types) - n_operands, len(properties), len(attributes), *types]
        for name, value in properties.items():
            key += (name, value)
        for name, value in attributes.items():
            key += (name, value)
        key += numbers
        return tuple(key)

    def irdl_key(self, op: Operation) -> Hashable | None:
        """What the IRDL checks of `op` read when they test only type classes (see the module),
        else None: undeclared (discardable) attributes are not among them."""
        facts = self._facts.get(op.name)
        if facts is None:
            facts = self._facts[op.name] = _OpFacts(op)
        if not facts.irdl_classes_only:
            return None
        attributes = op.attributes
        return (
            op.name, tuple([v.type.name for v in op.operands]), tuple([r.type.name for r in op.results]),
            tuple(op.properties.items()),
            tuple([(name, attributes.get(name)) for name in facts.declared_attributes]),
        )
