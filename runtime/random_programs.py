"""Random well-typed global programs, for property tests and the boxing stress benchmark.

A program has 1–3 inputs with random ND-SBPs (splits, broadcasts, sum/max partials) on a random mesh
of up to three axes, then up to `max_ops` ops of SPEC §2.4 (and, asked, of §7) over shapes with size-1
and uneven dims.
Integer programs (i32) may use fmod and are checked exactly; float programs (f32) avoid ops whose
result jumps under rounding (fmod, div) since partial sums reorder float additions.
`with_free_args` frees some inputs' SBPs for `infer-sbp{rule=global}`.
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass, field

MESHES: tuple[tuple[int, ...], ...] = ((2,), (3,), (2, 2), (2, 3), (2, 2, 2))
DIMS = (1, 2, 3, 5, 7)


@dataclass
class _Value:
    name: str
    shape: tuple[int, ...]
    type: str = ""


@dataclass
class _Builder:
    rng: random.Random
    dtype: str
    hierarchy: tuple[int, ...]
    lines: list[str] = field(default_factory=list)
    inputs: list[tuple[_Value, str]] = field(default_factory=list)
    values: list[_Value] = field(default_factory=list)
    counter: int = 0

    def ty(self, shape: tuple[int, ...], sbp: str | None = None, dtype: str | None = None) -> str:
        dims = "".join(f"{d}x" for d in shape)
        return f"!sbp.tensor<{dims}{dtype or self.dtype}, @mesh{', ' + sbp if sbp else ''}>"

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def random_sbp(self, shape: tuple[int, ...], partials: bool = True) -> str:
        entries = []
        for _ in self.hierarchy:
            choices = (["B", "P", "P(max)"] if partials else ["B"]) + [f"S({a})" for a in range(len(shape))]
            entries.append(self.rng.choice(choices))
        return "[" + ", ".join(entries) + "]"

    def new_input(self, shape: tuple[int, ...], dtype: str | None = None) -> _Value:
        """An argument; an i1 one (a condition) is never partial."""
        sbp = self.random_sbp(shape, partials=dtype != "i1")
        value = _Value(f"%in{len(self.inputs)}", shape, self.ty(shape, sbp, dtype))
        self.inputs.append((value, sbp))
        if dtype is None or dtype == self.dtype:  # later ops take values of the program's element type
            self.values.append(value)
        return value

    def emit(self, text: str, shape: tuple[int, ...], dtype: str | None = None) -> _Value:
        value = _Value(self.fresh(), shape, self.ty(shape, dtype=dtype))
        self.lines.append(f"  {value.name} = {text} -> {value.type}")
        if dtype is None or dtype == self.dtype:  # later ops take values of the program's element type
            self.values.append(value)
        return value


def _random_shape(rng: random.Random, rank: int | None = None) -> tuple[int, ...]:
    rank = rng.randint(1, 3) if rank is None else rank
    return tuple(rng.choice(DIMS) for _ in range(rank))


def _broadcast_partner(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with `shape` to `shape` (some dims 1, maybe fewer leading dims)."""
    drop = rng.randint(0, len(shape) - 1) if len(shape) > 1 and rng.random() < 0.3 else 0
    return tuple(1 if rng.random() < 0.3 else d for d in shape[drop:])


def _op(b: _Builder) -> None:
    rng = b.rng
    x = rng.choice(b.values)
    ty = x.type
    kinds = ["binary", "binary", "unary", "scalar", "matmul", "transpose", "reduce", "reshape"]
    if b.dtype == "i32":
        kinds.append("fmod")
    kind = rng.choice(kinds)
    if not x.shape and kind in ("transpose", "reduce", "reshape"):
        kind = "unary"  # a 0-d value has no axes to permute, reduce or regroup
    if kind in ("binary", "fmod"):
        same = [v for v in b.values if v.shape == x.shape and v is not x]
        if same and rng.random() < 0.5:
            y = rng.choice(same)
        else:
            y = b.new_input(_broadcast_partner(rng, x.shape))
        if kind == "fmod":
            b.emit(f"sbp.fmod {x.name}, {y.name} : {ty}, {y.type}", x.shape)
            return
        name = rng.choice(["add", "sub", "mul", "maximum", "minimum"])
        b.emit(f"sbp.{name} {x.name}, {y.name} : {ty}, {y.type}", x.shape)
    elif kind == "unary":
        names = ["relu", "neg"] + (["exp"] if b.dtype == "f32" else [])
        b.emit(f"sbp.{rng.choice(names)} {x.name} : {ty}", x.shape)
    elif kind == "scalar":
        scalar = "2 : i32" if b.dtype == "i32" else "0.5 : f32"
        name = rng.choice(["add_scalar", "mul_scalar"] + (["fmod_scalar"] if b.dtype == "i32" else []))
        b.emit(f"sbp.{name} {x.name}, {scalar} : {ty}", x.shape)
    elif kind == "matmul":
        a = x if len(x.shape) >= 2 else b.new_input(_random_shape(rng, 2))
        k, m = a.shape[-1], rng.choice(DIMS)
        w = b.new_input((k, m))
        b.emit(f"sbp.matmul {a.name}, {w.name} : {a.type}, {w.type}", (*a.shape[:-1], m))
    elif kind == "transpose":
        perm = list(range(len(x.shape)))
        rng.shuffle(perm)
        shape = tuple(x.shape[p] for p in perm)
        b.emit(f"sbp.transpose {x.name} {{perm = array<i64: {', '.join(map(str, perm))}>}} : {ty}", shape)
    elif kind == "reduce":
        axes = sorted(rng.sample(range(len(x.shape)), rng.randint(1, len(x.shape))))
        keep = rng.random() < 0.5
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keep else tuple(
            d for i, d in enumerate(x.shape) if i not in axes
        )
        name = rng.choice(["reduce_sum", "reduce_max", "reduce_min"])
        flags = ", keepdims" if keep else ""
        b.emit(f"sbp.{name} {x.name} {{axes = array<i64: {', '.join(map(str, axes))}>{flags}}} : {ty}", shape)
    else:
        n = 1
        for d in x.shape:
            n *= d
        shape = (n,) if len(x.shape) > 1 or rng.random() < 0.5 else _factor(rng, n)
        b.emit(f"sbp.reshape {x.name} : {ty}", shape)


def _nn_op(b: _Builder) -> None:
    """One op of SPEC §7 on a random value (the float-only ones in f32 programs)."""
    rng = b.rng
    x = rng.choice([v for v in b.values if v.shape] or [b.new_input(_random_shape(rng))])
    ty, shape, rank = x.type, x.shape, len(x.shape)
    kinds = ["dropout", "slice", "concat", "broadcast_to", "where", "embedding"]
    if b.dtype == "f32":
        kinds += ["activation", "activation", "softmax", "rms_norm", "cross_entropy"]
    kind = rng.choice(kinds)
    if kind == "activation":
        b.emit(f"sbp.{rng.choice(['sigmoid', 'tanh', 'silu'])} {x.name} : {ty}", shape)
    elif kind == "dropout":
        b.emit(f"sbp.dropout {x.name} {{p = 2.500000e-01 : f32}} : {ty}", shape)
    elif kind == "softmax":
        b.emit(f"sbp.softmax {x.name} {{axis = {rng.randrange(rank)} : i64}} : {ty}", shape)
    elif kind == "rms_norm":
        g = b.new_input((shape[-1],))
        b.emit(f"sbp.rms_norm {x.name}, {g.name} : {ty}, {g.type}", shape)
    elif kind == "slice":
        axis = rng.randrange(rank)
        start, stop, step = [0] * rank, list(shape), [1] * rank
        start[axis] = rng.randrange(shape[axis])
        stop[axis] = rng.randint(start[axis] + 1, shape[axis])
        step[axis] = rng.choice([1, 2])
        out = tuple(-(-(stop[axis] - start[axis]) // step[axis]) if i == axis else d for i, d in enumerate(shape))
        bounds = ", ".join(f"{k} = array<i64: {', '.join(map(str, v))}>"
                           for k, v in (("start", start), ("stop", stop), ("step", step)))
        b.emit(f"sbp.slice {x.name} {{{bounds}}} : {ty}", out)
    elif kind == "concat":
        axis = rng.randrange(rank)
        other = b.new_input(tuple(rng.choice(DIMS) if i == axis else d for i, d in enumerate(shape)))
        out = tuple(d + other.shape[axis] if i == axis else d for i, d in enumerate(shape))
        b.emit(f"sbp.concat {x.name}, {other.name} {{axis = {axis} : i64}} : {ty}, {other.type}", out)
    elif kind == "broadcast_to":
        out = tuple(rng.choice(DIMS) if d == 1 else d for d in shape)
        if rank < 3 and rng.random() < 0.5:
            out = (rng.choice(DIMS), *out)
        b.emit(f"sbp.broadcast_to {x.name} : {ty}", out)
    elif kind == "where":
        cond = b.new_input(_broadcast_partner(rng, shape), "i1")
        y = b.new_input(_broadcast_partner(rng, shape))
        b.emit(f"sbp.where {cond.name}, {x.name}, {y.name} : {cond.type}, {ty}, {y.type}", shape)
    elif kind == "embedding":
        indices = x if b.dtype == "i32" else b.new_input(shape, "i32")
        table = b.new_input((rng.choice((5, 7, 12)), rng.choice(DIMS)))
        b.emit(f"sbp.embedding {table.name}, {indices.name} : {table.type}, {indices.type}",
               (*indices.shape, table.shape[1]))
    else:
        targets = b.new_input(shape[:-1], "i32")
        b.emit(f"sbp.cross_entropy {x.name}, {targets.name} : {ty}, {targets.type}", shape[:-1])


def _factor(rng: random.Random, n: int) -> tuple[int, ...]:
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    d = rng.choice(divisors)
    return (d, n // d)


def random_program(seed: int, max_ops: int = 12, nn: bool = False) -> str:
    """A random program (MLIR text) with a `@main` returning its last one or two values; with `nn`,
    half its ops are those of SPEC §7 (without, the programs of a seed stay as they were)."""
    rng = random.Random(seed)
    hierarchy = rng.choice(MESHES)
    b = _Builder(rng, rng.choice(["f32", "i32"]), hierarchy)
    for _ in range(rng.randint(1, 2)):
        b.new_input(_random_shape(rng))
    for _ in range(rng.randint(1, max_ops)):
        if nn and rng.random() < 0.5:
            _nn_op(b)
        else:
            _op(b)
    outputs = b.values[-1:] if rng.random() < 0.6 or len(b.values) < 2 else b.values[-2:]
    ranks = list(range(1, 1 + _prod(hierarchy)))
    mesh = _nested(ranks, hierarchy)
    args = ", ".join(f"{v.name}: {v.type}" for v, _ in b.inputs)
    results = ", ".join(v.type for v in outputs)
    return "\n".join(
        [
            f'sbp.placement @mesh "cpu" {mesh}',
            f"func.func @main({args}) -> ({results}) {{",
            *b.lines,
            f"  func.return {', '.join(v.name for v in outputs)} : {results}",
            "}",
            "",
        ]
    )


def _prod(xs: tuple[int, ...]) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _nested(ranks: list[int], hierarchy: tuple[int, ...]) -> str:
    if len(hierarchy) == 1:
        return "[" + ", ".join(map(str, ranks)) + "]"
    step = len(ranks) // hierarchy[0]
    return "[" + ", ".join(_nested(ranks[i : i + step], hierarchy[1:]) for i in range(0, len(ranks), step)) + "]"


_HIERARCHY = re.compile(r'sbp\.placement @mesh "cpu" (\[.*\])')
_ARG = re.compile(r"%in\d+: (!sbp\.tensor<[^>]*>)")


def hierarchy_of(text: str) -> tuple[int, ...]:
    """The mesh of a program `random_program` made."""
    found = _HIERARCHY.search(text)
    assert found is not None
    nested = ast.literal_eval(found.group(1))
    shape = []
    while isinstance(nested, list):
        shape.append(len(nested))
        nested = nested[0]
    return tuple(shape)


def with_free_args(text: str, rng: random.Random, p_free: float = 0.5) -> str:
    """`text` with some argument types free for `infer-sbp{rule=global}` (SPEC §2.5): without an
    SBP, or with one entry `?` (partial entries become `?` too); every use rewritten alike."""
    for ty in dict.fromkeys(_ARG.findall(text)):
        if rng.random() >= p_free or ", [" not in ty:
            continue
        head, sbp = ty[:-1].rsplit(", [", 1)
        entries = [e.strip() for e in re.findall(r"S\(\d+\)|P\(\w+\)|P|B", sbp)]
        if len(entries) > 1 and rng.random() < 0.4:
            entries[rng.randrange(len(entries))] = "?"
            if any(e.startswith("P") for e in entries):
                entries = ["?" if e.startswith("P") else e for e in entries]  # a pattern fixes S/B only
            new = f"{head}, [{', '.join(entries)}]>"
        else:
            new = head + ">"
        text = text.replace(ty, new)
    return text
