# SPDX-License-Identifier: BSD-3-Clause
"""The Llama-3 / Qwen3 decoder layer as the CODA chain (docs/design.md §9):

  q,k,v  = AttentionInput(x, h, stats)     QKV GEMM, RMSNorm deferred, (QK-norm +) RoPE epilogue
  o      = attention(q, k, v)              SDPA (causal, GQA) or FlexAttention (packed documents)
  x1     = AttentionOutput(o, x)           O GEMM + residual, h1 = x1 ⊙ w_post and Σx² in its epilogue
  x2     = Mlp(x1, h1, stats1)             gate/up GEMM (norm + SwiGLU) → down GEMM + residual,
                                           h2 = x2 ⊙ w_next and Σx² for the NEXT layer's norm

A layer therefore hands the next one a ResidualState (x, h, stats), not a bare tensor, and its
down projection applies the next layer's input-norm weight (or the final norm's)."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree
import torch.utils.checkpoint
from torch import nn

from .. import ops
from . import layout
from .functions import AttentionInput, AttentionOutput, Mlp
from .precision import compute_copy, require_computable


@dataclass
class ResidualState:
    """The residual stream as the fused ops pass it: x [M, D], h = x ⊙ w (w: the weight of the norm
    that reads x next), stats: Σx² partials of x (fp32), stats_k: K of the GEMM that wrote them (0:
    the first norm, ops.rms_norm_stats). The partials are held as their int32 bits (stats_bits):
    FSDP2's mixed precision casts every floating tensor in a unit's inputs to its param_dtype, which
    would round them to bf16. Make one with ResidualState.of(x, h, stats, stats_k)."""
    x: torch.Tensor
    h: torch.Tensor
    stats_bits: torch.Tensor
    stats_k: int

    @staticmethod
    def of(x: torch.Tensor, h: torch.Tensor, stats: torch.Tensor, stats_k: int) -> "ResidualState":
        return ResidualState(x, h, stats.view(torch.int32), stats_k)

    @property
    def stats(self) -> torch.Tensor:
        return self.stats_bits.view(torch.float32)


# A pytree too: FSDP2 hooks the unsharding of a layer's parameters for its backward on the tensors
# of the layer's output, which some PyTorch versions find with tree_flatten (others walk dataclasses).
pytree.register_pytree_node(
    ResidualState, lambda s: ([s.x, s.h, s.stats_bits], s.stats_k),
    lambda children, stats_k: ResidualState(*children, stats_k), serialized_type_name="coda.nn.ResidualState")


def first_state(x: torch.Tensor, norm_weight: torch.Tensor) -> ResidualState:
    """The stream entering the first layer (no GEMM produced it): h and Σx² in one memory pass.
    h and stats carry no gradient: the first layer's backward returns ∂x and ∂w itself. x and
    norm_weight: bf16, or fp32 under bf16 autocast (the stream then starts as x's bf16 copy)."""
    require_computable("coda.nn.first_state", x=x, norm_weight=norm_weight)
    x = compute_copy(x)
    with torch.no_grad():
        h, stats = ops.rms_norm_stats(x, compute_copy(norm_weight))
    return ResidualState.of(x, h, stats, 0)


@dataclass(frozen=True)
class Documents:
    """Packed sequences: FlexAttention's document-causal block mask for one batch."""
    block_mask: object


def documents_from_positions(position_ids: torch.Tensor) -> Documents:
    """Document-causal attention for packed rows: a new document starts where its position is 0."""
    from torch.nn.attention.flex_attention import create_block_mask

    batch, seq = position_ids.shape
    doc = torch.cumsum((position_ids == 0).int(), dim=1)

    def mask_mod(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (doc[b, q_idx] == doc[b, kv_idx])

    return Documents(create_block_mask(mask_mod, batch, None, seq, seq, device=position_ids.device))


_flex = None


def attention(q, k, v, documents: Optional[Documents]) -> torch.Tensor:
    """Causal GQA attention of [B, H, S, hd] heads; returns [B·S, H·hd]."""
    global _flex
    if documents is None:
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    else:
        if _flex is None:
            from torch.nn.attention.flex_attention import flex_attention
            _flex = torch.compile(flex_attention, dynamic=False)
        o = _flex(q, k, v, block_mask=documents.block_mask, enable_gqa=True)
    b, h, s, d = o.shape
    return o.transpose(1, 2).reshape(b * s, h * d)


# Activation checkpointing of a layer whose owner set no function (Hugging Face's
# gradient_checkpointing_enable sets its own: use_reentrant, offloading and so on as the user asked).
default_checkpoint = functools.partial(torch.utils.checkpoint.checkpoint, use_reentrant=False,
                                       preserve_rng_state=False)  # the layer draws no random numbers


class CodaDecoderLayer(nn.Module):
    """One decoder layer's parameters in the fused layouts (coda.nn.layout) and its CODA forward.
    state_dict() and load_state_dict() speak the Hugging Face names and layouts.

    Activation checkpointing: with `gradient_checkpointing` set (Hugging Face's
    model.gradient_checkpointing_enable() sets it on every module that has the attribute, with its
    `_gradient_checkpointing_func`), a training forward keeps only the stream entering the layer and
    recomputes the layer's fused forward in the backward."""

    gradient_checkpointing = False

    def __init__(self, hidden: int, q_heads: int, kv_heads: int, head_dim: int, ffn: int, eps: float,
                 qk_norm: bool, device=None, dtype=torch.bfloat16):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.hidden, self.q_heads, self.kv_heads, self.head_dim, self.ffn = hidden, q_heads, kv_heads, head_dim, ffn
        self.eps = eps
        self.input_norm_weight = nn.Parameter(torch.empty(hidden, **kw))
        self.qkv_weight = nn.Parameter(torch.empty((q_heads + 2 * kv_heads) * head_dim, hidden, **kw))
        self.o_weight = nn.Parameter(torch.empty(hidden, q_heads * head_dim, **kw))
        self.post_norm_weight = nn.Parameter(torch.empty(hidden, **kw))
        self.gate_up_weight = nn.Parameter(torch.empty(2 * ffn, hidden, **kw))
        self.down_weight = nn.Parameter(torch.empty(hidden, ffn, **kw))
        self.q_norm_weight = nn.Parameter(torch.empty(head_dim, **kw)) if qk_norm else None
        self.k_norm_weight = nn.Parameter(torch.empty(head_dim, **kw)) if qk_norm else None
        self.register_buffer("frequencies", torch.empty(0, device=device), persistent=False)
        self.next_norm_weight: Optional[torch.Tensor] = None  # set by the model (or from_hf)
        self._register_state_dict_hook(_to_hf_state_dict)
        self._register_load_state_dict_pre_hook(self._from_hf_state_dict)

    # --- construction from / conversion to Hugging Face --------------------------------------
    @classmethod
    def from_hf(cls, hf_layer: nn.Module, config, next_norm_weight: Optional[torch.Tensor] = None):
        """A new layer holding hf_layer's weights in the fused layouts (hf_layer is left as is)."""
        from .config import layer_dims, rope_parameters

        dims = layer_dims(config)
        ref = hf_layer.self_attn.q_proj.weight
        layer = cls(**dims, device=ref.device, dtype=ref.dtype)
        layer.load_state_dict(hf_layer.state_dict())
        layer.gradient_checkpointing = bool(getattr(hf_layer, "gradient_checkpointing", False))
        if hasattr(hf_layer, "_gradient_checkpointing_func"):
            layer._gradient_checkpointing_func = hf_layer._gradient_checkpointing_func
        theta, scaling = rope_parameters(config)
        layer.frequencies = layout.rope_frequencies(dims["q_heads"], dims["kv_heads"], dims["head_dim"], theta,
                                                    scaling, ref.device)
        # A plain (detached) alias, not a registered parameter: its gradient belongs to the layer
        # that owns it (the next one), and it must not appear in this layer's state_dict.
        object.__setattr__(layer, "next_norm_weight",
                           None if next_norm_weight is None else next_norm_weight.detach())
        return layer

    def _from_hf_state_dict(self, state_dict, prefix, *args):
        def pop(name):
            return state_dict.pop(prefix + name)

        if prefix + "self_attn.q_proj.weight" not in state_dict:
            return  # already in the fused names
        hq, hkv, hd = self.q_heads, self.kv_heads, self.head_dim
        state_dict[prefix + "input_norm_weight"] = pop("input_layernorm.weight")
        state_dict[prefix + "qkv_weight"] = layout.fuse_qkv(pop("self_attn.q_proj.weight"),
                                                            pop("self_attn.k_proj.weight"),
                                                            pop("self_attn.v_proj.weight"), hq, hkv, hd)
        state_dict[prefix + "o_weight"] = pop("self_attn.o_proj.weight")
        state_dict[prefix + "post_norm_weight"] = pop("post_attention_layernorm.weight")
        state_dict[prefix + "gate_up_weight"] = layout.fuse_gate_up(pop("mlp.gate_proj.weight"),
                                                                    pop("mlp.up_proj.weight"))
        state_dict[prefix + "down_weight"] = pop("mlp.down_proj.weight")
        if self.q_norm_weight is not None:
            state_dict[prefix + "q_norm_weight"] = layout.pair_order(pop("self_attn.q_norm.weight"), hd)
            state_dict[prefix + "k_norm_weight"] = layout.pair_order(pop("self_attn.k_norm.weight"), hd)

    def _apply(self, fn, recurse=True):
        """module.to(dtype), .bfloat16(), .half() cast floating buffers too; the RoPE frequency
        table stays the fp32 one it was built as (a bf16 copy would move the angles of far
        positions by whole turns), only moved to the new device."""
        frequencies = self.frequencies
        super()._apply(fn, recurse)
        if self.frequencies.dtype != frequencies.dtype:
            self.frequencies = frequencies.to(self.frequencies.device)
        return self

    # --- forward --------------------------------------------------------------------------------
    def forward(self, state: ResidualState, positions: torch.Tensor, batch: int = 1,
                documents: Optional[Documents] = None,
                next_norm_weight: Optional[torch.Tensor] = None) -> ResidualState:
        """state: the stream entering this layer (h made with this layer's input_norm_weight);
        positions: int32 [M] per token; batch: B of the [B·S] rows; returns the stream for the next
        norm (next_norm_weight, else the one set on the layer)."""
        w_next = next_norm_weight if next_norm_weight is not None else self.next_norm_weight
        if w_next is None:
            raise ValueError("coda.nn.CodaDecoderLayer: next_norm_weight is not set")
        require_computable("coda.nn.CodaDecoderLayer", next_norm_weight=w_next, **dict(self.named_parameters()))
        args = (state.x, state.h, state.stats, positions, w_next, state.stats_k, batch, documents)
        if self.gradient_checkpointing and self.training and torch.is_grad_enabled():
            checkpoint = getattr(self, "_gradient_checkpointing_func", None) or default_checkpoint
            x2, h2, stats2 = checkpoint(self._chain, *args)
        else:
            x2, h2, stats2 = self._chain(*args)
        return ResidualState.of(x2, h2, stats2, self.ffn)

    def _chain(self, x, h, stats, positions, w_next, stats_k: int, batch: int, documents):
        """The layer's Functions and attention on tensors in, tensors out (what a reentrant
        checkpoint can carry): (x2, h2, stats2) for the next norm."""
        q, k, v, x = AttentionInput.apply(x, h, stats, self.qkv_weight, self.input_norm_weight, positions,
                                          self.frequencies, self.q_norm_weight, self.k_norm_weight, stats_k,
                                          self.eps, batch, self.q_heads, self.kv_heads, self.head_dim, self.eps)
        o = attention(q, k, v, documents)
        x1, h1, stats1 = AttentionOutput.apply(o, self.o_weight, x, self.post_norm_weight)
        return Mlp.apply(x1, h1, stats1, self.gate_up_weight, self.post_norm_weight, self.down_weight, w_next,
                         self.o_weight.shape[1], self.eps)


def to_hf(module: CodaDecoderLayer, fused: dict) -> dict:
    """The Hugging Face tensors (names relative to the layer) of the fused ones `fused` (by this
    module's parameter names: its weights, or their gradients); exact inverse permutations."""
    hq, hkv, hd = module.q_heads, module.kv_heads, module.head_dim
    out = {"input_layernorm.weight": fused["input_norm_weight"]}
    out["self_attn.q_proj.weight"], out["self_attn.k_proj.weight"], out["self_attn.v_proj.weight"] = \
        layout.split_qkv(fused["qkv_weight"], hq, hkv, hd)
    out["self_attn.o_proj.weight"] = fused["o_weight"]
    if module.q_norm_weight is not None:
        out["self_attn.q_norm.weight"] = layout.half_order(fused["q_norm_weight"], hd)
        out["self_attn.k_norm.weight"] = layout.half_order(fused["k_norm_weight"], hd)
    out["post_attention_layernorm.weight"] = fused["post_norm_weight"]
    out["mlp.gate_proj.weight"], out["mlp.up_proj.weight"] = (t.clone() for t in
                                                              layout.split_gate_up(fused["gate_up_weight"]))
    out["mlp.down_proj.weight"] = fused["down_weight"]
    return out


def _to_hf_state_dict(module: CodaDecoderLayer, state_dict, prefix, _metadata):
    """state_dict() in the Hugging Face names and layouts."""
    names = [n for n, p in module.named_parameters(recurse=False)]
    fused = {n: state_dict.pop(prefix + n) for n in names}
    for name, t in to_hf(module, fused).items():
        state_dict[prefix + name] = t
    return state_dict
