"""A small LLaMA: RMSNorm, rotary position embedding (rotate-half by slice and cat), causal
attention with grouped-query heads, SwiGLU MLP, untied output head; plain PyTorch, random init.

`make()` returns `(module, example_args)` for `sbpc.from_torch` and `sbp-translate --import-torch
examples/torch/llama.py:make --mesh 2x4`.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """[x1, x2] -> [-x2, x1] over the last axis (the rotary embedding's pairing, as in HF LLaMA)."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    """Causal attention, `kv_heads` key/value heads shared by groups of `heads // kv_heads` query heads."""

    def __init__(self, width: int, heads: int, kv_heads: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, width // heads
        self.wq = nn.Linear(width, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, width, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        # Head counts read from the projected widths (`-1`): under DTensor's Megatron plan
        # (bench/torch_frontend.py) each rank runs this on its column shard, i.e. its heads.
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        heads, kv_heads = q.shape[1], k.shape[1]
        group = heads // kv_heads
        k = k[:, :, None].expand(b, kv_heads, group, t, self.head_dim).reshape(b, heads, t, self.head_dim)
        v = v[:, :, None].expand(b, kv_heads, group, t, self.head_dim).reshape(b, heads, t, self.head_dim)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        y = F.softmax(scores + mask, dim=-1) @ v
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


class Block(nn.Module):
    """x + attn(norm(x)), then + w2(silu(w1(·)) · w3(·)) (SwiGLU)."""

    def __init__(self, width: int, heads: int, kv_heads: int, hidden: int):
        super().__init__()
        self.attn_norm = nn.RMSNorm(width, eps=1e-5)
        self.attn = Attention(width, heads, kv_heads)
        self.mlp_norm = nn.RMSNorm(width, eps=1e-5)
        self.w1 = nn.Linear(width, hidden, bias=False)
        self.w3 = nn.Linear(width, hidden, bias=False)
        self.w2 = nn.Linear(hidden, width, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin)
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Llama(nn.Module):
    """Token embedding, `layers` blocks, final RMSNorm, output head; rotary tables as buffers."""

    def __init__(self, vocab: int = 1024, context: int = 64, width: int = 256, heads: int = 8, kv_heads: int = 4,
                 hidden: int = 512, layers: int = 2):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList(Block(width, heads, kv_heads, hidden) for _ in range(layers))
        self.norm = nn.RMSNorm(width, eps=1e-5)
        self.output = nn.Linear(width, vocab, bias=False)
        head_dim = width // heads
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(context).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        cos, sin = self.cos[:t], self.sin[:t]
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.output(self.norm(x))


def make(layers: int = 2, batch: int = 2, seq: int = 16) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The model (seeded random init, eval mode) and an example batch of token ids."""
    torch.manual_seed(0)
    model = Llama(layers=layers).eval()
    tokens = torch.randint(0, 1024, (batch, seq))
    return model, (tokens,)
