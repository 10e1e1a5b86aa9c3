# SPDX-License-Identifier: BSD-3-Clause
"""The standard Hugging Face decoder layer as the framework and the float64 reference for parity
tests: the same module run in bf16 (the framework) and on float64 copies (the reference), with
RoPE angles computed in float64 here — not from coda's frequency table — and the document mask
of packed rows built densely, independently of coda's FlexAttention mask."""
from __future__ import annotations

import copy
import math

import torch

SIZES = {  # hidden, q heads, kv heads, ffn (head_dim = hidden / q heads)
    "1B": (2048, 32, 8, 8192),
    "8B": (4096, 32, 8, 14336),
    "tiny": (256, 4, 2, 512),
}


def make_config(model: str, size: str):
    hidden, heads, kv, ffn = SIZES[size]
    kw = dict(hidden_size=hidden, num_attention_heads=heads, num_key_value_heads=kv, intermediate_size=ffn,
              num_hidden_layers=2, vocab_size=1024, rms_norm_eps=1e-5, max_position_embeddings=4096,
              attention_bias=False, mlp_bias=False, attn_implementation="sdpa", head_dim=hidden // heads)
    if model == "qwen3":
        from transformers import Qwen3Config
        return Qwen3Config(rope_theta=1e6, **kw)
    from transformers import LlamaConfig
    return LlamaConfig(rope_theta=5e5, **kw)


def make_layer(config, device="cuda"):
    """A decoder layer in bf16 with random weights at training-like scales (norm weights near 1)."""
    if config.model_type == "qwen3":
        from transformers.models.qwen3.modeling_qwen3 import Qwen3DecoderLayer as Layer
    else:
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer as Layer
    layer = Layer(config, layer_idx=0).to(device=device, dtype=torch.bfloat16)
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if p.dim() == 1:
                p.copy_(1 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / math.sqrt(p.shape[1]))
    return layer


def rope_cos_sin(config, position_ids: torch.Tensor, dtype):
    """HF's rotate-half cos/sin [B, S, hd], angles in float64."""
    hd = config.head_dim
    theta = getattr(config, "rope_theta", None) or config.rope_parameters["rope_theta"]
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64, device=position_ids.device) / hd))
    ang = position_ids.to(torch.float64)[..., None] * inv
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos().to(dtype), ang.sin().to(dtype)


def document_mask(position_ids: torch.Tensor, dtype) -> torch.Tensor:
    """Additive [B, 1, S, S] mask: causal within each document (a document starts at position 0)."""
    doc = torch.cumsum((position_ids == 0).int(), dim=1)
    s = position_ids.shape[1]
    causal = torch.ones(s, s, dtype=torch.bool, device=position_ids.device).tril()
    allowed = causal & (doc[:, :, None] == doc[:, None, :])
    mask = torch.zeros(allowed.shape, dtype=dtype, device=position_ids.device)
    return mask.masked_fill(~allowed, float("-inf"))[:, None]


def run(layer, config, x: torch.Tensor, dy: torch.Tensor, position_ids: torch.Tensor, packed: bool):
    """Output and gradients (input and every parameter, by HF name) of one forward/backward."""
    x = x.detach().clone().requires_grad_(True)
    cos, sin = rope_cos_sin(config, position_ids, x.dtype)
    mask = document_mask(position_ids, x.dtype) if packed else None
    out = layer(x, attention_mask=mask, position_ids=position_ids, position_embeddings=(cos, sin))
    out = out[0] if isinstance(out, tuple) else out
    out.backward(dy)
    grads = {name: p.grad.detach().clone() for name, p in layer.named_parameters()}
    layer.zero_grad(set_to_none=True)
    return out.detach(), x.grad.detach(), grads


def float64_copy(layer):
    return copy.deepcopy(layer).to(torch.float64)
