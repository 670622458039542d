"""GPT-2 (small config shrunk): tied token embedding, learned positions, pre-LayerNorm blocks with
causal self-attention and a GeLU (tanh) MLP, in plain PyTorch with random init.

`make()` returns `(module, example_args)` for `sbpc.from_torch` and `sbp-translate --import-torch
examples/torch/gpt2.py:make --mesh 2x4`; `make(layers=4)` is the 4-layer model the README times.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    """Multi-head attention with a causal mask (built in forward: a constant of the captured program).

    q, k and v are separate projections and the head count is read from the projected width (`-1`),
    so that DTensor's Megatron plan (bench/torch_frontend.py), which runs this code on each rank's
    column shard, computes the rank's heads."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.head_dim = width // heads
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        weights = F.softmax(scores + mask, dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(b, t, -1)
        return self.proj(y)


class Block(nn.Module):
    """x + attn(ln_1(x)), then + mlp(ln_2(·)) with GeLU (tanh form, as GPT-2)."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln_2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.proj = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    """Token + position embedding, `layers` blocks, final LayerNorm, logits by the tied embedding."""

    def __init__(self, vocab: int = 1024, context: int = 64, width: int = 256, heads: int = 8, layers: int = 2):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.h = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied (named_parameters() lists it once, as wte.weight)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def make(layers: int = 2, batch: int = 2, seq: int = 16) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The model (seeded random init, eval mode) and an example batch of token ids."""
    torch.manual_seed(0)
    model = GPT2(layers=layers).eval()
    idx = torch.randint(0, 1024, (batch, seq))
    return model, (idx,)


def make4() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The 4-layer model (the README's capture + plan timing)."""
    return make(layers=4)
