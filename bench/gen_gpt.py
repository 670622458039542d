"""An L-layer GPT stack in the `sbp` dialect, for issue 13's acceptance tests and `bench_gpt_stack.py`.

Each block is pre-LayerNorm GPT: `x + attn(ln1(x))`, then `r + mlp(ln2(r))` with a GeLU MLP of width
`mlp_ratio·h`. Attention is written as in examples/transformer_block.mlir (QKV projections, reshape
and transpose into heads, scores `q kᵀ / √d_head`, softmax as reduce_max / sub / exp / reduce_sum /
div, weighted values, heads merged back, output projection). The input x is `[S(0), B]` (data parallel
on mesh axis 0) and the result is converted to `[S(0), B]` with `sbp.to_global`, so every rule pays
for bringing the activations back to data parallelism.

Weights are either annotated Megatron-style (`weights="megatron"`: wq/wk/wv and w1 column-split
`[B, S(1)]`, wo and w2 row-split `[B, S(0)]`, LayerNorm gamma/beta replicated `[B, B]`) or free
(`weights="free"`: types without SBP, for `infer-sbp{rule=global}` to decide).

`megatron_bytes` is the known optimum's communication (wave2.md §4): per block two ring all-reduces
of the local `b/d·s·h` activation over the t tensor-parallel ranks, each sending `2(t−1)/t` of the
buffer per rank, summed over all d·t ranks (what `--sbp-report=json` counts).

    python bench/gen_gpt.py --layers 2 [--weights free] [--batch 8 --seq 32 --hidden 256 --heads 8]
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass
from typing import Any

ELT_BYTES = {"f32": 4, "f16": 2}
WEIGHTS = ("megatron", "free")


@dataclass(frozen=True)
class GptDims:
    batch: int = 8
    seq: int = 32
    hidden: int = 256
    heads: int = 8
    mlp_ratio: int = 4
    elt: str = "f32"
    mesh: tuple[int, int] = (2, 4)
    """(data parallel, tensor parallel)."""

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def ffn(self) -> int:
        return self.mlp_ratio * self.hidden

    def weight_shapes(self) -> list[tuple[str, tuple[int, ...], str]]:
        """(name, shape, Megatron SBP) of one block's parameters, in argument order."""
        h, f = self.hidden, self.ffn
        col, row, rep = "[B, S(1)]", "[B, S(0)]", "[B, B]"
        return [
            ("ln1_g", (h,), rep), ("ln1_b", (h,), rep),
            ("wq", (h, h), col), ("wk", (h, h), col), ("wv", (h, h), col), ("wo", (h, h), row),
            ("ln2_g", (h,), rep), ("ln2_b", (h,), rep),
            ("w1", (h, f), col), ("w2", (f, h), row),
        ]

    def weight_bytes(self, layers: int) -> int:
        """Bytes of every block's parameters (global, unsharded)."""
        per_block = sum(math.prod(shape) for _, shape, _ in self.weight_shapes())
        return layers * per_block * ELT_BYTES[self.elt]

    def validate(self) -> None:
        d = self.mesh[0]
        if self.elt not in ELT_BYTES:
            raise ValueError(f"element type {self.elt} is not one of {sorted(ELT_BYTES)}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} is not a multiple of heads {self.heads}")
        if self.batch % d:
            raise ValueError(f"batch {self.batch} is not a multiple of the data-parallel size {d}")


def megatron_bytes(layers: int, dims: GptDims = GptDims()) -> int:
    """Megatron's forward communication over all ranks: 2 ring all-reduces of `b/d·s·h` per block."""
    d, t = dims.mesh
    local = dims.batch // d * dims.seq * dims.hidden * ELT_BYTES[dims.elt]
    per_rank = 2 * (t - 1) * local // t  # one ring all-reduce
    return layers * 2 * per_rank * d * t


def gpt_inputs(layers: int, dims: GptDims = GptDims(), seed: int = 0) -> list[Any]:
    """Inputs in argument order with GPT's initialisation scale (weights N(0, 1/fan_in), gamma near
    1, beta near 0): unit-variance N(0, 1) weights drive the softmax to saturation, where a float
    reordering of the tensor-parallel sums flips which key wins and no tolerance holds."""
    import numpy as np

    rng = np.random.default_rng(seed)
    dtype = np.dtype(np.float32 if dims.elt == "f32" else np.float16)
    out = [rng.standard_normal((dims.batch, dims.seq, dims.hidden)).astype(dtype)]
    for _ in range(layers):
        for name, shape, _ in dims.weight_shapes():
            if len(shape) == 2:
                value = rng.standard_normal(shape) / math.sqrt(shape[0])
            else:
                value = (1.0 if name.endswith("_g") else 0.0) + 0.1 * rng.standard_normal(shape)
            out.append(value.astype(dtype))
    return out


def save_inputs(directory: str, layers: int, dims: GptDims = GptDims(), seed: int = 0) -> str:
    """Write `gpt_inputs` as DIR/arg<i>.npy; returns the comma-separated list `sbp-run --inputs` takes."""
    import numpy as np

    os.makedirs(directory, exist_ok=True)
    paths = []
    for i, value in enumerate(gpt_inputs(layers, dims, seed)):
        paths.append(os.path.join(directory, f"arg{i}.npy"))
        np.save(paths[-1], value)
    return ",".join(paths)


def _ty(shape: tuple[int, ...], elt: str, sbp: str | None = None) -> str:
    dims = "".join(f"{n}x" for n in shape)
    return f"!sbp.tensor<{dims}{elt}, @mesh" + (f", {sbp}" if sbp else "") + ">"


def _block(i: int, x: str, x_ty: str, dims: GptDims, wty: dict[str, str]) -> tuple[list[str], str]:
    """The ops of block i reading activation `x` (typed `x_ty`); returns (lines, result name)."""
    b, s, h, n, e = dims.batch, dims.seq, dims.hidden, dims.heads, dims.elt
    hd = dims.head_dim
    act, heads4, split4 = _ty((b, s, h), e), _ty((b, n, s, hd), e), _ty((b, s, n, hd), e)
    scores, col = _ty((b, n, s, s), e), _ty((b, n, s, 1), e)
    ffn = _ty((b, s, dims.ffn), e)
    p = f"%l{i}_"
    w = {name: f"{p}{name}" for name, _, _ in dims.weight_shapes()}
    scale = 1.0 / math.sqrt(hd)
    lines = [
        f"  // Block {i}: x + attention(LayerNorm(x)).",
        f"  {p}n1 = sbp.layer_norm {x}, {w['ln1_g']}, {w['ln1_b']} : {x_ty}, {wty['ln1_g']}, {wty['ln1_b']} -> {act}",
    ]
    for t in "qkv":
        lines += [
            f"  {p}{t} = sbp.matmul {p}n1, {w['w' + t]} : {act}, {wty['w' + t]} -> {act}",
            f"  {p}{t}4 = sbp.reshape {p}{t} : {act} -> {split4}",
            f"  {p}{t}h = sbp.transpose {p}{t}4 {{perm = array<i64: 0, 2, 1, 3>}} : {split4} -> {heads4}",
        ]
    lines += [
        f"  {p}s = sbp.matmul {p}qh, {p}kh {{transpose_b}} : {heads4}, {heads4} -> {scores}",
        f"  {p}ss = sbp.mul_scalar {p}s, {scale!r} : f32 : {scores} -> {scores}",
        f"  {p}mx = sbp.reduce_max {p}ss {{axes = array<i64: 3>, keepdims}} : {scores} -> {col}",
        f"  {p}z = sbp.sub {p}ss, {p}mx : {scores}, {col} -> {scores}",
        f"  {p}ex = sbp.exp {p}z : {scores} -> {scores}",
        f"  {p}den = sbp.reduce_sum {p}ex {{axes = array<i64: 3>, keepdims}} : {scores} -> {col}",
        f"  {p}pr = sbp.div {p}ex, {p}den : {scores}, {col} -> {scores}",
        f"  {p}o = sbp.matmul {p}pr, {p}vh : {scores}, {heads4} -> {heads4}",
        f"  {p}ot = sbp.transpose {p}o {{perm = array<i64: 0, 2, 1, 3>}} : {heads4} -> {split4}",
        f"  {p}oc = sbp.reshape {p}ot : {split4} -> {act}",
        f"  {p}at = sbp.matmul {p}oc, {w['wo']} : {act}, {wty['wo']} -> {act}",
        f"  {p}r1 = sbp.add {x}, {p}at : {x_ty}, {act} -> {act}",
        f"  // Block {i}: r + MLP(LayerNorm(r)), GeLU between the two GEMMs.",
        f"  {p}n2 = sbp.layer_norm {p}r1, {w['ln2_g']}, {w['ln2_b']} : {act}, {wty['ln2_g']}, {wty['ln2_b']} -> {act}",
        f"  {p}h = sbp.matmul {p}n2, {w['w1']} : {act}, {wty['w1']} -> {ffn}",
        f"  {p}g = sbp.gelu {p}h : {ffn} -> {ffn}",
        f"  {p}y = sbp.matmul {p}g, {w['w2']} : {ffn}, {wty['w2']} -> {act}",
        f"  {p}out = sbp.add {p}r1, {p}y : {act}, {act} -> {act}",
    ]
    return lines, f"{p}out"


def gpt_stack(layers: int, dims: GptDims = GptDims(), weights: str = "megatron") -> str:
    """The module text of an L-layer GPT stack on a 2-D "npu" mesh."""
    if layers < 1:
        raise ValueError(f"layers must be >= 1, got {layers}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    dims.validate()
    d, t = dims.mesh
    ranks = [[r * t + c for c in range(t)] for r in range(d)]
    act_shape = (dims.batch, dims.seq, dims.hidden)
    x_ty = _ty(act_shape, dims.elt, "[S(0), B]")
    args = [f"%x: {x_ty}"]
    wty: dict[str, str] = {}
    for name, shape, sbp in dims.weight_shapes():
        wty[name] = _ty(shape, dims.elt, sbp if weights == "megatron" else None)
    for i in range(layers):
        args += [f"%l{i}_{name}: {wty[name]}" for name, _, _ in dims.weight_shapes()]
    body: list[str] = []
    cur, cur_ty = "%x", x_ty
    for i in range(layers):
        lines, cur = _block(i, cur, cur_ty, dims, wty)
        body += lines
        cur_ty = _ty(act_shape, dims.elt)
    body += [
        "  // Back to data parallelism at the function boundary.",
        f"  %res = sbp.to_global {cur} : {cur_ty} -> {x_ty}",
        f"  func.return %res : {x_ty}",
    ]
    head = [
        f"// GPT stack: {layers} block(s), b={dims.batch} s={dims.seq} h={dims.hidden} heads={dims.heads} "
        f"MLP {dims.ffn} {dims.elt}, weights {weights}; bench/gen_gpt.py",
        f'sbp.placement @mesh "npu" {ranks}',
        "",
        "func.func @main(" + ",\n               ".join(args) + f") -> {x_ty} {{",
    ]
    return "\n".join(head + body + ["}", ""])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--weights", choices=WEIGHTS, default="megatron")
    ap.add_argument("--batch", type=int, default=GptDims.batch)
    ap.add_argument("--seq", type=int, default=GptDims.seq)
    ap.add_argument("--hidden", type=int, default=GptDims.hidden)
    ap.add_argument("--heads", type=int, default=GptDims.heads)
    ap.add_argument("--mlp-ratio", type=int, default=GptDims.mlp_ratio)
    ap.add_argument("--elt", choices=sorted(ELT_BYTES), default=GptDims.elt)
    ap.add_argument("--mesh", default="2x4", help="DATAxTENSOR, e.g. 2x4")
    ap.add_argument("--megatron-bytes", action="store_true", help="print the Megatron volume instead")
    ap.add_argument("--save-inputs", metavar="DIR",
                    help="also write GPT-initialised inputs DIR/arg<i>.npy (for sbp-run --inputs)")
    args = ap.parse_args(argv)
    try:
        d, t = (int(v) for v in args.mesh.split("x"))
        dims = GptDims(args.batch, args.seq, args.hidden, args.heads, args.mlp_ratio, args.elt, (d, t))
        if args.megatron_bytes:
            dims.validate()
            print(megatron_bytes(args.layers, dims))
        else:
            print(gpt_stack(args.layers, dims, args.weights), end="")
        if args.save_inputs:
            save_inputs(args.save_inputs, args.layers, dims)
    except ValueError as err:
        ap.error(str(err))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
