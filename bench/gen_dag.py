"""A seeded random DAG program of `sbp` ops on a 2x4 mesh, for `bench_infer_sbp.py`.

Every op draws its operands from earlier values (mostly recent ones, so that chains form, and
sometimes any earlier one, so that values fan out). Shapes and element types are kept consistent:
values are grouped by (shape, element type) and an op only takes operands its verifier accepts.
The function inputs carry random (shape-legal) ND-SBPs, partial ones included; every op result
and the function result are left for `--infer-sbp` to type.

`uniform=True` (`--uniform`) gives a DAG of 64x64 f32 tensors only, built from the op families
that keep that shape (elementwise, scalar, matmul, transpose): few distinct op metas, so the
per-op cost of the pass (and of verifying and printing its result) dominates.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

MESH = (2, 4)
PLACEMENT = '@mesh'
PLACEMENT_OP = 'sbp.placement @mesh "npu" [[0, 1, 2, 3], [4, 5, 6, 7]]'

DIMS = (64, 128)
SHAPES_2D = [(m, n) for m in DIMS for n in DIMS]
SHAPES_3D = [(8, m, n) for m in DIMS for n in DIMS]
ELEMENT_TYPES = ("f32", "f16")

BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "fmod")
UNARY = ("relu", "neg", "exp")
SCALAR = ("add_scalar", "mul_scalar", "fmod_scalar")
# Relative frequencies of the op families.
FAMILIES = (
    ("binary", 30),
    ("unary", 15),
    ("scalar", 12),
    ("matmul", 12),
    ("transpose", 8),
    ("reduce", 8),
    ("cast", 5),
    ("reshape", 4),
    ("bias", 6),
)


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple[int, ...]
    elt: str
    ty: str  # the type as written (inputs carry their SBP)


def type_text(shape: tuple[int, ...], elt: str, sbp: str | None = None) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"!sbp.tensor<{dims}{elt}, {PLACEMENT}" + (f", {sbp}" if sbp else "") + ">"


def random_sbp(rng: random.Random, shape: tuple[int, ...]) -> str:
    """A random ND-SBP that fits `shape` on MESH (split axes hold at least h elements)."""
    extents = list(shape)
    entries = []
    for h in MESH:
        r = rng.random()
        axes = [a for a in range(len(shape)) if extents[a] >= h]
        if r < 0.55 and axes:
            a = rng.choice(axes)
            extents[a] //= h
            entries.append(f"S({a})")
        elif r < 0.9:
            entries.append("B")
        else:
            entries.append("P")
    return "[" + ", ".join(entries) + "]"


UNIFORM_SHAPE = (64, 64)
UNIFORM_FAMILIES = (("binary", 30), ("unary", 15), ("scalar", 12), ("matmul", 12), ("transpose", 8))


class DagBuilder:
    def __init__(self, seed: int, uniform: bool = False):
        self.rng = random.Random(seed)
        self.uniform = uniform
        self.families = UNIFORM_FAMILIES if uniform else FAMILIES
        self.values: list[Value] = []
        self.by_key: dict[tuple[tuple[int, ...], str], list[Value]] = {}
        self.lines: list[str] = []
        self.args: list[str] = []
        self.counter = 0

    # -- values ------------------------------------------------------------
    def _add(self, v: Value) -> Value:
        self.values.append(v)
        self.by_key.setdefault((v.shape, v.elt), []).append(v)
        return v

    def add_input(self, shape: tuple[int, ...], elt: str) -> None:
        name = f"%in{len(self.args)}"
        ty = type_text(shape, elt, random_sbp(self.rng, shape))
        self.args.append(f"{name}: {ty}")
        self._add(Value(name, shape, elt, ty))

    def pick(self, ok=lambda v: True) -> Value | None:  # type: ignore[no-untyped-def]
        """Mostly one of the last 32 values, sometimes any earlier one."""
        for _ in range(40):
            if self.rng.random() < 0.8:
                v = self.values[-self.rng.randint(1, min(32, len(self.values)))]
            else:
                v = self.rng.choice(self.values)
            if ok(v):
                return v
        return None

    def pick_key(self, shape: tuple[int, ...], elt: str) -> Value | None:
        found = self.by_key.get((shape, elt))
        if not found:
            return None
        if self.rng.random() < 0.7:
            return found[-self.rng.randint(1, min(8, len(found)))]
        return self.rng.choice(found)

    def emit(self, op: str, operands: list[Value], props: str, shape: tuple[int, ...], elt: str) -> Value:
        name = f"%v{self.counter}"
        self.counter += 1
        ins = ", ".join(v.name for v in operands)
        tys = ", ".join(v.ty for v in operands)
        ty = type_text(shape, elt)
        self.lines.append(f"  {name} = sbp.{op} {ins}{props} : {tys} -> {ty}")
        return self._add(Value(name, shape, elt, ty))

    # -- ops ---------------------------------------------------------------
    def op(self) -> None:
        rng = self.rng
        family = rng.choices([f for f, _ in self.families], [w for _, w in self.families])[0]
        if family == "binary":
            a = self.pick(lambda v: len(v.shape) >= 1)
            assert a is not None
            b = self.pick_key(a.shape, a.elt) or a
            if rng.random() < 0.5:
                a, b = b, a
            self.emit(rng.choice(BINARY), [a, b], "", a.shape, a.elt)
        elif family == "bias":  # rank-n value with a 1-D (or keepdims) operand broadcast over it
            a = self.pick(lambda v: len(v.shape) >= 2)
            if a is None:
                return self.op()
            b = self.pick_key((a.shape[-1],), a.elt)
            if b is None:
                keep = (*a.shape[:-1], 1)
                b = self.pick_key(keep, a.elt)
            if b is None:
                return self.op()
            self.emit(rng.choice(("add", "sub", "mul", "div", "maximum", "fmod")), [a, b], "", a.shape, a.elt)
        elif family == "unary":
            a = self.pick()
            assert a is not None
            self.emit(rng.choice(UNARY), [a], "", a.shape, a.elt)
        elif family == "scalar":
            a = self.pick()
            assert a is not None
            op = rng.choice(SCALAR)
            scalar = rng.choice(("0.5", "2.0", "1.25", "-3.0"))
            self.emit(op, [a], f", {scalar} : {a.elt}", a.shape, a.elt)
        elif family == "matmul":
            a = self.pick(lambda v: len(v.shape) >= 2)
            assert a is not None
            k = a.shape[-1]
            n = UNIFORM_SHAPE[1] if self.uniform else rng.choice(DIMS)
            if rng.random() < 0.5:
                b = self.pick_key((k, n), a.elt)
                props = ""
            else:
                b = self.pick_key((n, k), a.elt)
                props = " {transpose_b}"
            if b is None:
                return self.op()
            self.emit("matmul", [a, b], props, (*a.shape[:-1], n), a.elt)
        elif family == "transpose":
            a = self.pick(lambda v: len(v.shape) >= 2)
            assert a is not None
            perm = list(range(len(a.shape)))
            if len(perm) == 2:
                perm = [1, 0]
            else:
                perm = [0, 2, 1] if rng.random() < 0.7 else rng.sample(perm, len(perm))
            shape = tuple(a.shape[p] for p in perm)
            text = ", ".join(str(p) for p in perm)
            self.emit("transpose", [a], f" {{perm = array<i64: {text}>}}", shape, a.elt)
        elif family == "reduce":
            a = self.pick(lambda v: len(v.shape) >= 2)
            assert a is not None
            axis = rng.randrange(len(a.shape))
            keep = rng.random() < 0.5
            shape = tuple(1 if i == axis else d for i, d in enumerate(a.shape)) if keep else tuple(
                d for i, d in enumerate(a.shape) if i != axis
            )
            op = rng.choices(("reduce_sum", "reduce_max", "reduce_min"), (3, 1, 1))[0]
            props = f" {{axes = array<i64: {axis}>" + (", keepdims}" if keep else "}")
            self.emit(op, [a], props, shape, a.elt)
        elif family == "cast":
            a = self.pick()
            assert a is not None
            self.emit("cast", [a], "", a.shape, "f16" if a.elt == "f32" else "f32")
        elif family == "reshape":
            a = self.pick(lambda v: len(v.shape) >= 2 and v.shape[-1] != v.shape[-2])
            if a is None:
                return self.op()
            self.emit("reshape", [a], "", (*a.shape[:-2], a.shape[-1], a.shape[-2]), a.elt)

    def build(self, n_ops: int, n_inputs: int) -> str:
        if self.uniform:
            while len(self.args) < n_inputs:
                self.add_input(UNIFORM_SHAPE, "f32")
        else:
            for shape in [*SHAPES_2D, *SHAPES_3D, *((d,) for d in DIMS)]:
                for elt in ELEMENT_TYPES:
                    self.add_input(shape, elt)
            while len(self.args) < n_inputs:
                shape = self.rng.choice([*SHAPES_2D, *SHAPES_3D])
                self.add_input(shape, self.rng.choice(ELEMENT_TYPES))
        while self.counter < n_ops:
            self.op()
        last = self.values[-1]
        ret = last.ty
        head = "func.func @main(" + ", ".join(self.args) + f") -> {ret} {{"
        body = "\n".join(self.lines)
        return f"{PLACEMENT_OP}\n{head}\n{body}\n  func.return {last.name} : {ret}\n}}\n"


def generate(n_ops: int = 10_000, seed: int = 0, n_inputs: int = 64, uniform: bool = False) -> str:
    """The program text: `n_ops` ops (plus func.return) in one function."""
    return DagBuilder(seed, uniform).build(n_ops, n_inputs)


if __name__ == "__main__":
    import argparse
    import sys

    cli = argparse.ArgumentParser(description="a seeded random DAG program of sbp ops")
    cli.add_argument("ops", nargs="?", type=int, default=10_000)
    cli.add_argument("--seed", type=int, default=0)
    cli.add_argument("--uniform", action="store_true", help="64x64 f32 tensors only")
    args = cli.parse_args()
    sys.stdout.write(generate(args.ops, args.seed, uniform=args.uniform))
