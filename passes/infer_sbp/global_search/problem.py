"""`infer-sbp{rule=global}`, step 1: one function as a factor problem (SPEC §3.1).

Variables:
* one per op with an SBP rule: its candidate signatures, from the very lists `rule=cost` scores
  (`passes/infer_sbp/candidates.py`, complete lists, shape-filtered, hints and result types written with
  an SBP applied; a result written with `?` entries keeps the candidates matching its fixed ones),
  so every plan the search returns is one the other passes can lower and run;
* one per free function argument (no SBP, or `?` entries): every ND-SBP of splits and broadcasts
  that fits its shape on the mesh (`fits_shape`), the fixed entries of a `?` pattern kept.
  Partial is not offered: an input handed over as partial sums is not something a caller holds,
  and it never beats broadcast (same local bytes and compute; B -> P is free where a consumer wants P).

Factors (seconds):
* unary: the op's local compute time (`passes/cost/compute.py`), plus the boxing from every
  operand whose SBP is fixed (an argument with an SBP, a `to_global` result) to what the candidate
  needs, plus the conversion of its results by a `to_global`/`sbp.boxing` consumer;
* pairwise: between a producer (op or free argument) and a consumer, the time of the boxing from
  the producer's chosen output SBP to the consumer's chosen input SBP, planned by
  `cost_model.transition_time` — the α-β Dijkstra `lower-boxing{planner=optimal}` runs, on the
  placement's `links`, through one `PlannerCache`;
* per step (a training step accumulating K micro-batches, `autodiff{micro-batches=K}`): the program is
  one micro-batch's step; the update ops' compute and the boxings only they and the return read (the
  gradients' reduction, the ties) happen once per K micro-batches, so they are charged 1/K
  (`boxing_share`), the objective being the time per micro-batch;
* tied (a training step, SPEC §8): an updated parameter or optimizer state is taken by the next step
  as its argument (`passes/autodiff.py`'s `tied_results`), so it leaves in the argument's SBP — a
  use of the result by the argument's variable (needs: the argument's choices), priced as any other,
  written back as an `sbp.to_global` before the return (`autodiff.return_in_argument_layouts`);
* shared (`passes/infer_sbp/boxings.py`, `passes/infer_sbp/global_search/shared.py`): a value with
  several priced uses (operands of ops, its `to_global`s) pays one boxing per distinct target, as
  `materialize-boxing` inserts them — one factor over its producer and consumers (per-edge
  pairs, an upper bound, where that factor would exceed `shared.MAX_SHARED_TABLE` entries;
  `GlobalProblem.per_edge` names those values, `factors(lower=True)` is the matching lower bound
  and `value` prices a plan exactly).

Memory rows (only when a budget is given): per op in program order, the local bytes of every
function argument plus those of every value live there (from its definition to its last use); a
training step's updated parameters and optimizer state are donated (`donated_arguments`): live to
their last use, their results from then on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from sbpc.dialects.collective_ops import CollectiveOp
from sbpc.dialects.errors import OpError
from sbpc.dialects.flops import FlopModel
from sbpc.dialects.placement import PlacementOp, lookup_placement
from sbpc.dialects.sbp import BROADCAST, NdSbpAttr, NdSbpPatternAttr, SbpAttr, nd_sbp, split
from sbpc.dialects.sbp_op_base import describe_op
from sbpc.dialects.sbp_ops import BoxingOp, ToGlobalOp
from sbpc.dialects.sharding import fits_shape
from sbpc.dialects.signatures import NdSig, SbpRule
from sbpc.dialects.tensor_type import GlobalTensorType
from sbpc.dialects.units import SECONDS_PER_US
from sbpc.passes.autodiff import STEP_OPS, micro_batches, tied_results
from sbpc.passes.cost.comm import DEFAULT_MODEL, CommModel, PlannerCache, placement_model, transition_time
from sbpc.passes.cost.compute import DeviceFigures, device_figures, local_bytes, op_compute_s
from sbpc.passes.infer_sbp.boxings import priced_use
from sbpc.passes.infer_sbp.cache import CandidateList, InferenceCache, OpMeta, element_bytes, op_key_of
from sbpc.passes.infer_sbp.candidates import candidates
from sbpc.passes.infer_sbp.global_search.shared import Shared
from sbpc.passes.infer_sbp.local import check_hint
from sbpc.passes.solver.factor import CoverForm, FactorProblem, MemoryRow


@dataclass(frozen=True)
class Mesh:
    """What pricing reads of a placement."""

    hierarchy: tuple[int, ...]
    model: CommModel
    device: DeviceFigures


def mesh_of(anchor: Operation, ty: GlobalTensorType, base: CommModel = DEFAULT_MODEL) -> Mesh:
    placement = lookup_placement(anchor, ty)
    if placement is None:
        raise OpError(anchor, f"{describe_op(anchor)}: placement @{ty.placement_name} is not defined")
    return _mesh(placement, base)


def _mesh(placement: PlacementOp, base: CommModel) -> Mesh:
    return Mesh(placement.get_hierarchy(), placement_model(placement, base), device_figures(placement.device_type.data))


class Pricer:
    """Boxing seconds between ND-SBPs of one tensor type, by value, through one `PlannerCache`;
    and matrices of them between two lists of ND-SBPs. Bounded: a full table is cleared."""

    def __init__(self, planner: PlannerCache | None = None, max_entries: int = 1 << 18):
        self.planner = PlannerCache() if planner is None else planner
        self.max_entries = max_entries
        self.prices: dict[tuple[object, ...], dict[tuple[NdSbpAttr, NdSbpAttr], float]] = {}
        """Per (shape, element bytes, mesh): seconds by (source, target) ND-SBP."""
        self.matrices: dict[tuple[object, ...], np.ndarray] = {}
        self.size = 0

    def _table(self, ty: GlobalTensorType, mesh: Mesh) -> dict[tuple[NdSbpAttr, NdSbpAttr], float]:
        key = (ty.get_shape(), element_bytes(ty), mesh)
        found = self.prices.get(key)
        if found is None:
            if self.size >= self.max_entries:
                self.prices.clear()
                self.matrices.clear()
                self.size = 0
            found = self.prices[key] = {}
        return found

    def _price(self, table: dict[tuple[NdSbpAttr, NdSbpAttr], float], ty: GlobalTensorType, src: NdSbpAttr,
               dst: NdSbpAttr, mesh: Mesh) -> float:
        if src == dst:
            return 0.0
        found = table.get((src, dst))
        if found is None:
            self.size += 1
            found = table[src, dst] = SECONDS_PER_US * transition_time(
                src, dst, ty.get_shape(), element_bytes(ty), mesh.hierarchy, mesh.model, self.planner)
        return found

    def boxing_s(self, ty: GlobalTensorType, src: NdSbpAttr, dst: NdSbpAttr, mesh: Mesh) -> float:
        return self._price(self._table(ty, mesh), ty, src, dst, mesh)

    def matrix(self, ty: GlobalTensorType, srcs: tuple[NdSbpAttr, ...], dsts: tuple[NdSbpAttr, ...],
               mesh: Mesh) -> np.ndarray:
        """M[a, b] = boxing_s(srcs[a] -> dsts[b]), built over the distinct values only."""
        key = (ty.get_shape(), element_bytes(ty), srcs, dsts, mesh)
        found = self.matrices.get(key)
        if found is None:
            table = self._table(ty, mesh)
            src_ids, src_vals = _classes(srcs)
            dst_ids, dst_vals = _classes(dsts)
            small = np.array([[self._price(table, ty, s, d, mesh) for d in dst_vals] for s in src_vals])
            self.size += 1
            found = self.matrices[key] = small[np.ix_(src_ids, dst_ids)]
        return found


def _classes(values: tuple[NdSbpAttr, ...]) -> tuple[np.ndarray, list[NdSbpAttr]]:
    index: dict[NdSbpAttr, int] = {}
    ids = [index.setdefault(v, len(index)) for v in values]
    return np.array(ids, dtype=np.intp), list(index)


@dataclass
class Var:
    """One decision: an op's signature or a free argument's ND-SBP."""

    kind: Literal["op", "arg"]
    anchor: Operation
    index: int
    """The argument's position (kind "arg")."""
    choices: list[NdSig] | list[NdSbpAttr]
    compute: np.ndarray
    comm: np.ndarray

    def outputs(self, j: int) -> tuple[NdSbpAttr, ...]:
        """The ND-SBP of result j under each choice."""
        if self.kind == "arg":
            return tuple(self.choices)  # type: ignore[arg-type]
        return tuple(sig[1][j] for sig in self.choices)  # type: ignore[index]


Source = tuple[NdSbpAttr, None, int] | tuple[None, int, int]
"""A value's SBP: fixed (nd, None, 0) or (None, variable, result index)."""


@dataclass
class Edge:
    """A boxing factor: `source`'s result feeds `consumer`; `table[c_source, c_consumer]`."""

    source: int
    consumer: int
    table: np.ndarray


@dataclass
class GlobalProblem:
    function: func.FuncOp
    variables: list[Var] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    incoming: dict[int, list[Edge]] = field(default_factory=dict)
    const_compute: float = 0.0
    const_comm: float = 0.0
    memory_terms: list[tuple[int, np.ndarray]] = field(default_factory=list)
    memory: list[MemoryRow] = field(default_factory=list)
    shared: list[Shared] = field(default_factory=list)
    shared_at: dict[int, list[Shared]] = field(default_factory=dict)
    """Per variable, the shared values it produces or consumes."""

    def factors(self, lower: bool = False, covers: bool = False, pairwise: bool = False) -> FactorProblem:
        """The factor problem: exact, or, where a shared value is charged per edge, an upper bound
        (a lower bound with `lower`); with `covers`, exact for HiGHS alone (such a value as a
        `FactorProblem.covers` term, which elimination cannot read); with `pairwise`, every shared
        value charged per edge (no factor of three or more variables: `solver.anytime`'s twins),
        but one whose table is over two variables or fewer, kept exact (gen_dag 2000: the lower
        twin's bound 471.6 -> 472.3 µs)."""
        problem = FactorProblem(
            [v.compute + v.comm for v in self.variables], constant=self.const_compute + self.const_comm)
        for e in self.edges:
            problem.add_pair(e.source, e.consumer, e.table)
        for s in self.shared:
            if s.table is not None and (not pairwise or s.pairwise):
                problem.add_factor(s.scope, s.table, s.form)
            elif covers:
                problem.covers.append(s.form)
            else:
                for scope, table in s.pairs(lower):
                    problem.add_factor(scope, table)
        problem.memory_terms, problem.memory = self.memory_terms, self.memory
        return problem

    def value(self, choice: list[int], factors: FactorProblem) -> float:
        """The exact objective of `choice` (`plan_objective` of the plan), from the upper-bound
        `factors` with each per-edge value's charge replaced by its shared boxing."""
        total = factors.value(choice)
        for s in self.shared:
            if not s.exact:
                for scope, table in s.pairs(False):
                    total -= float(table[tuple(choice[w] for w in scope)])
                total += s.seconds(choice)
        return total

    def per_edge(self) -> list[str]:
        """The values whose shared boxing the model charges per consuming edge (an upper bound)."""
        return [describe_value(s.value) for s in self.shared if not s.exact]

    def compute_s(self, choice: list[int]) -> float:
        return self.const_compute + sum(float(v.compute[c]) for v, c in zip(self.variables, choice, strict=True))

    def local_cost(self, v: int, c: int, choice: list[int]) -> float:
        """Op v's own cost with choice c, its producers as in `choice`: compute and input boxing
        (what a greedy, op-by-op rule minimises)."""
        return float(self.local_costs(v, choice)[c])

    def local_costs(self, v: int, choice: list[int]) -> np.ndarray:
        """`local_cost` of every choice of v. An input shared with other uses costs what v adds
        to its boxings (the targets no other use needs); the `to_global`s of v's results count
        as v's, as they do unshared."""
        var = self.variables[v]
        total = var.compute + var.comm
        for e in self.incoming.get(v, ()):
            total = total + e.table[choice[e.source]]
        for s in self.shared_at.get(v, ()):
            if v in s.needs:
                total = total + s.marginal(v, choice)
            if v == s.source:
                total = total + s.conversions()
        return total


def per_step(op: Operation) -> bool:
    """Whether a use by `op` happens once per optimizer step, not once per micro-batch: an update op
    (`autodiff.STEP_OPS`), or a `to_global` whose result only the step returns."""
    if isinstance(op, STEP_OPS):
        return True
    uses = op.results[0].uses if isinstance(op, ToGlobalOp) else ()
    return bool(uses) and all(isinstance(u.operation, func.ReturnOp) for u in uses)


def boxing_share(value: SSAValue, share: float) -> float:
    """The share per micro-batch of `value`'s boxings (`step_share`): `share` = 1/K where every priced use
    (`boxings.priced_use`) is `per_step` — a gradient only the update reads, an updated value only the
    step returns (its tie) — else 1, a conversion every micro-batch pays (also for a value read by both,
    whose per-step targets the model then charges in full: an upper bound)."""
    if share == 1.0:
        return 1.0
    return share if all(per_step(u.operation) for u in value.uses if priced_use(u.operation)) else 1.0


def donated_arguments(f: func.FuncOp) -> set[int]:
    """The arguments a training step updates (`autodiff.tied_results`): the step owns them — the next
    step takes the results instead, as torch.optim updates in place and a compiled step donates its
    inputs — so memory counts each from the start to its last use, not to the end, and its updated
    value from its definition on: one copy of a parameter or moment at a time, not two."""
    return {a for _, a in tied_results(f)}


def describe_value(value: SSAValue) -> str:
    """`%name` of a value, or its type and defining op."""
    if value.name_hint:
        return f"%{value.name_hint}"
    ty = value.type
    where = value.owner.name if isinstance(value.owner, Operation) else "an argument"
    return f"{ty.describe() if isinstance(ty, GlobalTensorType) else ty} of {where}"


def argument_domain(ty: GlobalTensorType, hierarchy: tuple[int, ...]) -> list[NdSbpAttr]:
    """The ND-SBPs a free argument may take: per free mesh axis S(k) or B, fitting the shape
    (`fits_shape`, as candidates must)."""
    pattern = ty.sbp_pattern
    fixed: tuple[SbpAttr | None, ...] = pattern.fixed() if pattern is not None else (None,) * len(hierarchy)
    options: list[SbpAttr] = [*(split(k) for k in range(ty.rank)), BROADCAST]
    combos: list[tuple[SbpAttr, ...]] = [()]
    for entry in fixed:
        combos = [(*c, e) for c in combos for e in ([entry] if entry is not None else options)]
    every = [nd_sbp(*c) for c in combos]
    fitting = [nd for nd in every if fits_shape(nd, ty.get_shape(), hierarchy)]
    # The fixed entries of a pattern may split an extent below the mesh size (a legal, uneven type);
    # then the free entries take any value.
    return fitting or every


def _matches(nd: NdSbpAttr, pattern: NdSbpPatternAttr) -> bool:
    return all(want is None or got == want for got, want in zip(nd, pattern.fixed(), strict=True))


class Builder:
    """Builds the `GlobalProblem` of one function (see the module docstring)."""

    def __init__(self, f: func.FuncOp, cache: InferenceCache, pricer: Pricer, budget: float | None):
        self.f, self.cache, self.pricer, self.budget = f, cache, pricer, budget
        self.problem = GlobalProblem(f)
        self.sources: dict[SSAValue, Source] = {}
        self.meshes: dict[str, Mesh] = {}
        self.compute_memo: dict[tuple[object, ...], np.ndarray] = {}
        self.pending: dict[SSAValue, tuple[list[tuple[int, tuple[NdSbpAttr, ...]]], list[NdSbpAttr]]] = {}
        """Values with several priced uses: (op uses (variable, needs), to_global targets)."""
        self.share = 1.0 / micro_batches(f)
        """A step's per-optimizer-step share per micro-batch (`step_share`)."""
        self.ties: dict[SSAValue, list[int]] = {}
        """Returned values a training step's arguments take back: value -> the argument indices."""

    def mesh(self, anchor: Operation, ty: GlobalTensorType) -> Mesh:
        found = self.meshes.get(ty.placement_name)
        if found is None:
            found = self.meshes[ty.placement_name] = mesh_of(anchor, ty)
        return found

    def build(self) -> GlobalProblem:
        f = self.f
        if len(f.body.blocks) != 1 or any(op.regions for op in f.body.block.ops):
            raise OpError(
                f, f"func.func @{f.sym_name.data}: rule=global needs a body of one block without nested regions")
        ret = f.body.block.last_op
        for r, a in tied_results(f) if isinstance(ret, func.ReturnOp) else ():
            value = ret.operands[r]  # type: ignore[union-attr]
            if value is not f.body.block.args[a] and isinstance(value.type, GlobalTensorType):
                self.ties.setdefault(value, []).append(a)
        for i, arg in enumerate(f.body.block.args):
            ty = arg.type
            if not isinstance(ty, GlobalTensorType):
                continue
            if ty.nd_sbp is not None:
                self.sources[arg] = (ty.nd_sbp, None, 0)
                continue
            mesh = self.mesh(f, ty)
            domain = argument_domain(ty, mesh.hierarchy)
            if not domain:
                raise OpError(f, f"func.func @{f.sym_name.data}: argument {i} ({ty.describe()}) fits no SBP on "
                              f"mesh {list(mesh.hierarchy)}")
            self.sources[arg] = (None, self._new_var("arg", f, i, domain, np.zeros(len(domain))), 0)
        for op in f.body.block.ops:
            rule = op.get_trait(SbpRule)
            if rule is not None:
                self._op(op, rule)
            elif isinstance(op, ToGlobalOp | BoxingOp | CollectiveOp):
                self._conversion(op)
            elif not isinstance(op, func.ReturnOp) and any(
                    isinstance(v.type, GlobalTensorType) for v in (*op.operands, *op.results)):
                raise OpError(op, f"{describe_op(op)}: {op.name} has no SBP signature rule")
        for value, args in self.ties.items():
            for a in args:
                self._tie(value, a)
        domains = [len(var.choices) for var in self.problem.variables]
        for value, (uses, conversions) in self.pending.items():
            self._shared(value, uses, conversions, domains)
        if self.budget is not None:
            self._memory()
        return self.problem

    def _new_var(
        self, kind: Literal["op", "arg"], anchor: Operation, index: int, choices: list, compute: np.ndarray,
    ) -> int:
        self.problem.variables.append(Var(kind, anchor, index, choices, compute, np.zeros(len(choices))))
        return len(self.problem.variables) - 1

    def _candidates(self, op: Operation, rule: SbpRule, mesh: Mesh) -> CandidateList:
        cache = self.cache
        in_types = tuple([v.type for v in op.operands])
        infos = tuple([cache.type_info(t) for t in in_types])  # type: ignore[arg-type]
        out_types: list[GlobalTensorType] = [r.type for r in op.results]  # type: ignore[misc]
        hint = op.attributes.get("sbp.hint")
        if hint is not None:
            check_hint(op, hint)
        required = tuple([t.nd_sbp for t in out_types])
        meta = OpMeta("cost", mesh.hierarchy, infos, in_types, True, cache)  # type: ignore[arg-type]
        cands = candidates(op, rule, meta, op_key_of(op, out_types), tuple([i.key for i in infos]), hint, required)  # type: ignore[arg-type]
        patterns = [(j, t.sbp_pattern) for j, t in enumerate(out_types) if t.sbp_pattern is not None]
        if patterns:
            kept = [s for s in cands.sigs if all(_matches(s[1][j], p) for j, p in patterns)]  # type: ignore[arg-type]
            if not kept:
                wanted = ", ".join(p.short_str() for _, p in patterns)  # type: ignore[union-attr]
                raise OpError(op, f"{describe_op(op)}: no SBP signature produces result {wanted}")
            cands = CandidateList(kept, cache)
        return cands

    def _op(self, op: Operation, rule: SbpRule) -> None:
        first = op.operands[0].type if op.operands else op.results[0].type
        assert isinstance(first, GlobalTensorType)
        mesh = self.mesh(op, first)
        for v in op.operands:
            t = v.type
            if isinstance(t, GlobalTensorType) and t.placement_name != first.placement_name:
                raise OpError(op, f"{describe_op(op)}: operands are on different placements")
        cands = self._candidates(op, rule, mesh)
        sigs = cands.sigs
        in_types = [v.type for v in op.operands]
        out_types = [r.type for r in op.results]
        flops = op.get_trait(FlopModel)
        key = (op_key_of(op, out_types), tuple(in_types), cands.serial, mesh)  # type: ignore[arg-type]
        compute = self.compute_memo.get(key)
        if compute is None:
            compute = self.compute_memo[key] = np.array(
                [op_compute_s(op, flops, in_types, out_types, s, mesh.hierarchy, mesh.device) for s in sigs])  # type: ignore[arg-type]
        if self.share != 1.0 and isinstance(op, STEP_OPS):
            compute = compute * self.share
        v = self._new_var("op", op, 0, sigs, compute)
        var = self.problem.variables[v]
        for i, value in enumerate(op.operands):
            needs = tuple(s[0][i] for s in sigs)
            self._feed(value, needs, v, var, mesh)
        for j, r in enumerate(op.results):
            self.sources[r] = (None, v, j)

    def _pending(self, value: SSAValue) -> tuple[list[tuple[int, tuple[NdSbpAttr, ...]]], list[NdSbpAttr]] | None:
        """The uses collected so far if `value` has several priced uses (`boxings.priced_use`:
        operands of ops with an SBP rule, `to_global`s), else None (priced at once, per edge)."""
        found = self.pending.get(value)
        if found is None:
            priced = sum(1 for use in value.uses if priced_use(use.operation)) + len(self.ties.get(value, ()))
            if priced < 2:
                return None
            found = self.pending[value] = ([], [])
        return found

    def _feed(self, value: SSAValue, needs: tuple[NdSbpAttr, ...], v: int, var: Var, mesh: Mesh) -> None:
        """Price `value` arriving as `needs[c]` under each choice c of variable v."""
        pending = self._pending(value)
        if pending is not None:
            pending[0].append((v, needs))
            return
        self._edge(value, needs, v, var, mesh)

    def _edge(self, value: SSAValue, needs: tuple[NdSbpAttr, ...], v: int, var: Var, mesh: Mesh) -> None:
        ty = value.type
        assert isinstance(ty, GlobalTensorType)
        fixed, u, j = self.sources[value]
        weight = boxing_share(value, self.share)
        if fixed is not None:
            var.comm = var.comm + weight * self.pricer.matrix(ty, (fixed,), needs, mesh)[0]
            return
        assert u is not None
        edge = Edge(u, v, weight * self.pricer.matrix(ty, self.problem.variables[u].outputs(j), needs, mesh))
        self.problem.edges.append(edge)
        self.problem.incoming.setdefault(v, []).append(edge)

    def _tie(self, value: SSAValue, a: int) -> None:
        """Price `value` (a step's result) arriving in the SBP of argument `a`, which takes it next step."""
        ty = value.type
        assert isinstance(ty, GlobalTensorType)
        mesh = self.mesh(self.f, ty)
        fixed, w, _ = self.sources[self.f.body.block.args[a]]
        if fixed is not None:
            pending = self._pending(value)
            if pending is not None:
                pending[1].append(fixed)
            else:
                self._convert(value, fixed, mesh, boxing_share(value, self.share))
            return
        assert w is not None
        var = self.problem.variables[w]
        self._feed(value, tuple(var.choices), w, var, mesh)  # type: ignore[arg-type]

    def _conversion(self, op: Operation) -> None:
        src, dst = op.operands[0], op.results[0]
        ty, out = src.type, dst.type
        assert isinstance(ty, GlobalTensorType) and isinstance(out, GlobalTensorType)
        if out.nd_sbp is None:
            raise OpError(op, f"{describe_op(op)}: the result type of {op.name} must give the target SBP")
        pending = self._pending(src) if isinstance(op, ToGlobalOp) else None
        if pending is not None:
            pending[1].append(out.nd_sbp)
        else:
            weight = boxing_share(src, self.share) if isinstance(op, ToGlobalOp) else 1.0  # a boxing: its own op
            self._convert(src, out.nd_sbp, self.mesh(op, ty), weight)
        self.sources[dst] = (out.nd_sbp, None, 0)

    def _convert(self, src: SSAValue, target: NdSbpAttr, mesh: Mesh, weight: float) -> None:
        ty = src.type
        assert isinstance(ty, GlobalTensorType)
        fixed, u, j = self.sources[src]
        if fixed is not None:
            self.problem.const_comm += weight * self.pricer.boxing_s(ty, fixed, target, mesh)
        else:
            var = self.problem.variables[u]  # type: ignore[index]
            var.comm = var.comm + weight * self.pricer.matrix(ty, var.outputs(j), (target,), mesh)[:, 0]

    def _shared(self, value: SSAValue, uses: list[tuple[int, tuple[NdSbpAttr, ...]]],
                conversions: list[NdSbpAttr], domains: list[int]) -> None:
        """One factor for a value with several priced uses (see `passes/infer_sbp/global_search/shared.py`)."""
        ty = value.type
        assert isinstance(ty, GlobalTensorType)
        mesh = self.mesh(self.f, ty)
        fixed, u, j = self.sources[value]
        variables = self.problem.variables
        outs = (fixed,) if fixed is not None else variables[u].outputs(j)  # type: ignore[index]
        rows, classes = _classes(outs)  # type: ignore[arg-type]
        targets = list(dict.fromkeys([*(n for _, needs in uses for n in needs), *conversions]))
        column = {t: k for k, t in enumerate(targets)}
        price = boxing_share(value, self.share) * self.pricer.matrix(ty, tuple(classes), tuple(targets), mesh)
        wanted: dict[int, np.ndarray] = {}
        for v, needs in uses:
            mask = np.zeros((len(needs), len(targets)), dtype=bool)
            mask[np.arange(len(needs)), [column[n] for n in needs]] = True
            found = wanted.get(v)
            wanted[v] = mask if found is None else found | mask
        fixed = np.zeros(len(targets), dtype=bool)
        fixed[[column[t] for t in conversions]] = True
        shared = Shared(value, targets, CoverForm(u, rows, price, wanted, fixed))
        shared.build(domains)
        self.problem.shared.append(shared)
        for w in shared.scope:
            self.problem.shared_at.setdefault(w, []).append(shared)

    def _bytes(self, value: SSAValue) -> tuple[float, tuple[int, np.ndarray] | None]:
        ty = value.type
        assert isinstance(ty, GlobalTensorType)
        fixed, u, j = self.sources[value]
        hierarchy = self.mesh(self.f, ty).hierarchy
        if fixed is not None:
            return float(local_bytes(ty, fixed, hierarchy)), None
        outs = self.problem.variables[u].outputs(j)  # type: ignore[index]
        return 0.0, (u, np.array([float(local_bytes(ty, nd, hierarchy)) for nd in outs]))  # type: ignore[arg-type]

    def _memory(self) -> None:
        """One row per op: every argument plus the values live at it (a training step's donated
        arguments, `donated_arguments`, only up to their last use)."""
        block = self.f.body.block
        ops = list(block.ops)
        position = {op: t for t, op in enumerate(ops)}
        terms = self.problem.memory_terms
        base, base_terms = 0.0, []
        Entry = tuple[float, int | None]  # constant bytes, or a term index
        starts: list[list[tuple[int, Entry]]] = [[] for _ in ops]
        ends: list[list[int]] = [[] for _ in ops]
        number = 0
        donated = donated_arguments(self.f)
        for i, arg in enumerate(block.args):
            if isinstance(arg.type, GlobalTensorType):
                c, term = self._bytes(arg)
                if term is not None:
                    terms.append(term)
                if i in donated and ops:  # live from the start to its last use, then its result's buffer
                    last = max((position[use.operation] for use in arg.uses), default=0)
                    starts[0].append((number, (c, None if term is None else len(terms) - 1)))
                    ends[last].append(number)
                    number += 1
                    continue
                base += c
                if term is not None:
                    base_terms.append(len(terms) - 1)
        for t, op in enumerate(ops):
            for r in op.results:
                if not isinstance(r.type, GlobalTensorType):
                    continue
                last = max((position[use.operation] for use in r.uses), default=t)
                c, term = self._bytes(r)
                if term is not None:
                    terms.append(term)
                starts[t].append((number, (c, None if term is None else len(terms) - 1)))
                ends[last].append(number)
                number += 1
        live: dict[int, Entry] = {}
        for t in range(len(ops)):
            live.update(starts[t])
            const = base + sum(c for c, _ in live.values())
            row = base_terms + [k for _, k in live.values() if k is not None]
            self.problem.memory.append(MemoryRow(const, row))
            for n in ends[t]:
                del live[n]
