"""Step 1 of `infer-sbp` for one op: its candidate signatures.

Each mesh axis's 1-D list comes from the op's `SbpRule` (OneFlow's `GetSbpSignaturesIf`, all-B
appended); on an ND mesh their direct product (`DfsGetNdSbpSignature`, mesh axis 0 major) goes
through the rule's `EnumerateNdSbpSignatures` hook; then OneFlow's filters: the inputs' shapes
(Storage4NdSbp, with swap-with-last removal on an ND mesh), and the hint and required result
SBPs. `candidates` does all of it for an op, through the tables of the `InferenceCache`: ops of
one kind share their 1-D lists when their rule's `list_key` agrees, and filtered lists when their
shapes agree up to extents of at least the device count (which every split fits), so most ops
meet a list, its table and its kAllMatch map already built. Scoring is the next step
(passes/infer_sbp/scoring.py).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from itertools import chain

from xdsl.ir import Operation

from sbpc.dialects.errors import OpError
from sbpc.dialects.sbp import BROADCAST, NdSbpAttr, SbpAttr, SignatureAttr, nd_sbp
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sharding import fits_shape
from sbpc.dialects.signatures import NdSig, SbpRule, Sig, swap_with_last_filter
from sbpc.passes.infer_sbp.cache import CandidateList, InferenceCache, OpMeta, element_bytes

__all__ = ["candidates", "element_bytes", "format_nd_sig"]  # element_bytes: lower_boxing reads it here


def format_nd_sig(sig: NdSig) -> str:
    ins = ", ".join(s.short_str() for s in sig[0])
    outs = ", ".join(s.short_str() for s in sig[1])
    return f"{ins} -> {outs}"


# ---------------------------------------------------------------------------
# The lists
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
    lists: Sequence[Sequence[Sig]], n_ins: int, n_outs: int, made: dict[tuple[SbpAttr, ...], NdSbpAttr] | None = None,
) -> list[NdSig]:
    """The ND candidates of per-axis 1-D lists, mesh axis 0 major. `made` holds the ND-SBPs built
    so far by their entries (building an attribute runs its verifier)."""
    if made is None:
        made = {}

    def nd(entries: tuple[SbpAttr, ...]) -> NdSbpAttr:
        found = made.get(entries)
        if found is None:
            found = made[entries] = nd_sbp(*entries)
        return found

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


# ---------------------------------------------------------------------------
# One op's candidates
# ---------------------------------------------------------------------------


def candidates(
    op: Operation, rule: SbpRule, meta: OpMeta, op_key: tuple[object, ...], in_keys: tuple[tuple[object, ...], ...],
    hint: SignatureAttr | None, required: tuple[NdSbpAttr | None, ...],
) -> CandidateList:
    """The op's candidates that fit its input shapes and contain its hint and required result SBPs
    (a located error if none does). `op_key` holds the op's name, properties and result shapes,
    `in_keys` its inputs' `TypeInfo.key`s."""
    cache = meta.cache
    complete = meta.rule == "cost"
    one_d = len(meta.hierarchy) == 1
    shapes = tuple([k[0] for k in in_keys])
    candidates_key = (op_key, tuple([k[2] for k in in_keys]), shapes, meta.hierarchy, complete)
    cands: CandidateList | None = cache.candidates.get(candidates_key)
    if cands is None:
        cands = cache.candidates[candidates_key] = _fitting(op, rule, meta, op_key, shapes, complete, one_d)

    def constrained(sig: NdSig) -> bool:
        return contains(sig, hint, required)

    if hint is None and all(r is None for r in required):
        return cands  # nothing to contain: either filter keeps all, in order
    if one_d or complete:
        survivors = [c for c in cands.sigs if constrained(c)]
    else:
        survivors = swap_with_last_filter(cands.sigs, constrained)
    if not survivors:
        listed = "; ".join(format_nd_sig(c) for c in cands.sigs) or "none"
        wanted = (hint.short_str() if hint is not None else "") + (
            (" and " if hint is not None else "") + "result " + ", ".join(r.short_str() for r in required if r)
            if any(required) else ""
        )
        raise OpError(op, f"{describe_op(op)}: no SBP signature satisfies {wanted}; candidates: {listed}")
    return CandidateList(survivors, cache)


def _fitting(
    op: Operation, rule: SbpRule, meta: OpMeta, op_key: tuple[object, ...], shapes: tuple[tuple[int, ...], ...],
    complete: bool, one_d: bool,
) -> CandidateList:
    """The product of the op's 1-D lists, through the rule's ND hook and the shape filter."""
    cache, hierarchy = meta.cache, meta.hierarchy
    # Ops whose rules give the same per-axis lists (equal up to, say, a scalar) share the product,
    # and the shape filter too when their input shapes agree.
    lists, lists_serial = _axis_lists(cache, rule, op, hierarchy, complete, shapes)
    product_key = (lists_serial, len(op.operands), len(op.results))
    hooked = not one_d and type(rule).nd_signatures is not SbpRule.nd_signatures
    # The shape filter reads a shape only through `fits_shape`, which passes every split of an
    # extent of at least the device count: extents are capped there (the rule's ND hook reads the
    # shapes themselves).
    fit_shapes = shapes if hooked else _fit_classes(cache, shapes, hierarchy)
    fitting_key = (product_key, fit_shapes, hierarchy, one_d or complete, op_key if hooked else None)
    found: CandidateList | None = cache.fitting.get(fitting_key)
    if found is not None:
        return found
    product: CandidateList | None = cache.products.get(product_key)
    if product is None:
        product = cache.products[product_key] = CandidateList(
            nd_product(lists, len(op.operands), len(op.results), cache.nd_by_entries), cache)
    if hooked:  # OneFlow's EnumerateNdSbpSignatures (reshape)
        product = CandidateList(rule.nd_signatures(op, hierarchy, product.sigs), cache)
    # Storage4NdSbp on the inputs, decided once per input position and distinct ND-SBP.
    keep: list[bool] | None = None
    for i, shape in enumerate(fit_shapes):
        fit = _fitting_column(cache, product, i, shape, hierarchy)
        if fit is not None:
            keep = fit if keep is None else list(map(operator.and_, keep, fit))
    if keep is None:
        found = product
    elif one_d or complete:
        found = CandidateList(list(itertools.compress(product.sigs, keep)), cache)
    else:  # OneFlow's ND filter reorders (swap-with-last)
        sigs = product.sigs
        found = CandidateList([sigs[j] for j in swap_with_last_filter(range(len(sigs)), keep.__getitem__)], cache)
    cache.fitting[fitting_key] = found
    return found


def _axis_lists(
    cache: InferenceCache, rule: SbpRule, op: Operation, hierarchy: tuple[int, ...], complete: bool,
    in_shapes: tuple[tuple[int, ...], ...],
) -> tuple[list[list[Sig]], int]:
    """`axis_lists` of the op and a serial telling them apart by value: ops of one kind whose rule
    gives them equal `list_key`s share their lists, and equal lists share a serial."""
    list_key = rule.list_key(op, in_shapes)
    key = None if list_key is None else (type(op), list_key, hierarchy, complete)
    found = None if key is None else cache.axis_lists.get(key)
    if found is None:
        lists = axis_lists(rule, op, hierarchy, complete)
        value = (tuple(map(len, lists)), tuple(chain.from_iterable(lists)))
        serial = cache.list_serials.get(value)
        if serial is None:
            serial = cache.list_serials[value] = cache.serial()
        found = (lists, serial)
        if key is not None:
            cache.axis_lists[key] = found
    return found


def _fit_classes(
    cache: InferenceCache, shapes: tuple[tuple[int, ...], ...], hierarchy: tuple[int, ...],
) -> tuple[tuple[int, ...], ...]:
    """`shapes` with every extent capped at the device count: `fits_shape` gives the same answer
    for the capped shape (an extent of at least prod(hierarchy) fits every split)."""
    key = (shapes, hierarchy)
    found = cache.fit_classes.get(key)
    if found is None:
        cap = math.prod(hierarchy)
        found = cache.fit_classes[key] = tuple([tuple([min(d, cap) for d in s]) for s in shapes])
    return found


def _fitting_column(
    cache: InferenceCache, cands: CandidateList, i: int, shape: tuple[int, ...], hierarchy: tuple[int, ...],
) -> list[bool] | None:
    """Per candidate, whether input i's needed ND-SBP fits `shape` (`fits_shape`; None: all do),
    decided once per distinct ND-SBP and shape."""
    needs = cands.needs(cache)[i]
    first_of = cands.first_of(cache)[i]
    fits = cache.fits
    allowed = set()
    for k, j in first_of.items():
        ok = fits.get((k, shape, hierarchy))
        if ok is None:
            ok = fits[(k, shape, hierarchy)] = fits_shape(cands.sigs[j][0][i], shape, hierarchy)
        if ok:
            allowed.add(k)
    return None if len(allowed) == len(first_of) else list(map(allowed.__contains__, needs))
