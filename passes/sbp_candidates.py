"""Candidate lists of `infer-sbp`: each mesh axis's 1-D list from the op's `SbpRule` (OneFlow's
`GetSbpSignaturesIf`, all-B appended), their direct product on an ND mesh (`DfsGetNdSbpSignature`,
mesh axis 0 major) passed through the rule's `EnumerateNdSbpSignatures` hook, and OneFlow's
filters (swap-with-last removal, hint and result containment).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from xdsl.ir import Operation

from sbpc.dialects import dtypes
from sbpc.dialects.sbp import BROADCAST, GlobalTensorType, NdSbpAttr, SbpAttr, SignatureAttr, nd_sbp
from sbpc.dialects.signatures import NdSig, SbpRule, Sig


def element_bytes(ty: GlobalTensorType) -> int:
    return dtypes.size_of(ty.element_type)


def byte_size(ty: GlobalTensorType) -> float:
    return float(ty.element_count() * element_bytes(ty))


def format_nd_sig(sig: NdSig) -> str:
    ins = ", ".join(s.short_str() for s in sig[0])
    outs = ", ".join(s.short_str() for s in sig[1])
    return f"{ins} -> {outs}"


# ---------------------------------------------------------------------------
# Candidates
# ---------------------------------------------------------------------------


def all_b_sig(op: Operation) -> Sig:
    return ((BROADCAST,) * len(op.operands), (BROADCAST,) * len(op.results))


def axis_list(rule: SbpRule, op: Operation, n: int, complete: bool) -> list[Sig]:
    """Per-mesh-axis 1-D list: the op's rules (+ partial max/min if complete) + all-B."""
    sigs = list(rule.signatures(op, n))
    if complete:
        sigs += [s for s in rule.extremum_signatures(op, n) if s not in sigs]
    sigs.append(all_b_sig(op))
    return sigs


def axis_lists(rule: SbpRule, op: Operation, hierarchy: Sequence[int], complete: bool) -> list[list[Sig]]:
    """The 1-D list of each mesh axis (computed once per axis size, or once if the rule does not
    read it)."""
    if not rule.reads_axis_size:
        return [axis_list(rule, op, hierarchy[0], complete)] * len(hierarchy)
    lists = {h: axis_list(rule, op, h, complete) for h in set(hierarchy)}
    return [lists[h] for h in hierarchy]


def nd_candidates(rule: SbpRule, op: Operation, hierarchy: Sequence[int], complete: bool) -> list[NdSig]:
    """The ND list before shape filtering: the direct product of the per-axis lists, mesh axis 0
    major (DfsGetNdSbpSignature), passed through the op's EnumerateNdSbpSignatures hook."""
    product = nd_product(axis_lists(rule, op, hierarchy, complete), len(op.operands), len(op.results))
    return rule.nd_signatures(op, hierarchy, product) if len(hierarchy) > 1 else product


def nd_product(
    lists: Sequence[Sequence[Sig]], n_ins: int, n_outs: int,
    made: dict[tuple[int, ...], tuple[tuple[object, ...], NdSbpAttr]] | None = None,
) -> list[NdSig]:
    """The ND candidates of per-axis 1-D lists, mesh axis 0 major. `made` holds the ND-SBPs
    built so far by the ids of their entries (with the entries, so no id is reused): hashing
    attributes walks their parameters."""
    if made is None:
        made = {}

    def nd(entries: tuple[SbpAttr, ...]) -> NdSbpAttr:
        key = tuple(map(id, entries))
        found = made.get(key)
        if found is None:
            found = made[key] = (entries, nd_sbp(*entries))
        return found[1]

    result: list[NdSig] = []
    for combo in itertools.product(*lists):
        # column i of the per-axis signatures is operand (result) i's ND-SBP
        ins = tuple(map(nd, zip(*(c[0][:n_ins] for c in combo), strict=True)))
        outs = tuple(map(nd, zip(*(c[1][:n_outs] for c in combo), strict=True)))
        result.append((ins, outs))
    return result


def contains(sig: NdSig, hint: SignatureAttr | None, required_outs: Sequence[NdSbpAttr | None]) -> bool:
    for cand, want in zip(sig[1], required_outs, strict=True):
        if want is not None and cand != want:
            return False
    if hint is None:
        return True
    for cand, want in zip(sig[0], hint.inputs.data, strict=False):
        if isinstance(want, NdSbpAttr) and cand != want:
            return False
    for cand, want in zip(sig[1], hint.outputs.data, strict=False):
        if isinstance(want, NdSbpAttr) and cand != want:
            return False
    return True
