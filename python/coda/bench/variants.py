# SPDX-License-Identifier: BSD-3-Clause
"""The implementations of one Llama-3 decoder layer that the layer bench compares, behind one interface.

Every variant runs on the same `Problem` (same input, output gradient, RoPE tables, weights):

- `hf_eager`: transformers' LlamaDecoderLayer (SDPA attention), bf16;
- `hf_compile`: torch.compile of that same module (same parameters);
- `liger`: a copy of it with Liger-Kernel's RMSNorm / SwiGLU / RoPE kernels (see liger.py);
- `floor`: the layer's four GEMMs (fused QKV and gate/up shapes) and SDPA alone, forward and
  backward (dgrad + wgrad of each linear, SDPA backward): what fusion can at best reach;
- `coda`: coda.nn.CodaDecoderLayer, built from the HF layer (imported lazily, so that everything
  else runs without the native module).

Causality of `hf_*` / `liger` with attention_mask=None: transformers' sdpa_attention_forward sets
`is_causal = q_len > 1 and attention_mask is None and is_causal`, where `is_causal` is the kwarg if
given, else `module.is_causal` (True for LlamaAttention). The decoder layer forwards its **kwargs to
the attention function, so the bench passes `is_causal=True` explicitly rather than rely on the
module attribute; layer.py also probes causality of every variant's output.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

VARIANT_NAMES = ("hf_eager", "hf_compile", "liger", "floor", "coda")


@dataclass
class Problem:
    """One layer size's data, shared by every variant."""

    config: Any  # transformers LlamaConfig
    batch: int
    seq: int
    x: torch.Tensor  # [batch, seq, hidden] bf16, the layer input (no grad)
    dy: torch.Tensor  # [batch, seq, hidden] bf16, the gradient of the layer output
    cos: torch.Tensor  # [1, seq, head_dim] from LlamaRotaryEmbedding
    sin: torch.Tensor
    positions: torch.Tensor  # int32 [batch * seq]: arange(seq) for each batch row

    @property
    def tokens(self) -> int:
        return self.batch * self.seq

    @property
    def hidden(self) -> int:
        return self.config.hidden_size


@dataclass
class Variant:
    """One implementation. A timed iteration is prepare (untimed) then forward and/or backward."""

    name: str
    clear_grads: Callable[[], None]
    prepare: Callable[[torch.Tensor], Any]  # x [B, T, D] -> forward's input (fresh autograd leaf)
    forward: Callable[[Any], Any]
    backward: Callable[[Any], None]  # of forward's result, with the problem's dy
    output: Callable[[Any], torch.Tensor] | None  # forward's result -> [M, D] layer output; None: floor


def _grad_clearer(tensors: Iterable[torch.Tensor]) -> Callable[[], None]:
    tensors = list(tensors)

    def clear() -> None:
        for tensor in tensors:
            tensor.grad = None

    return clear


def _fresh_leaf(x: torch.Tensor) -> torch.Tensor:
    return x.detach().requires_grad_(True)


def _hf_module_variant(name: str, module: nn.Module, parameters: Iterable[torch.Tensor],
                       problem: Problem) -> Variant:
    """Any module called like LlamaDecoderLayer: hidden_states [B, T, D] in, [B, T, D] out."""
    clear_grads = _grad_clearer(parameters)

    def prepare(x: torch.Tensor) -> torch.Tensor:
        clear_grads()
        return _fresh_leaf(x)

    def forward(leaf: torch.Tensor) -> torch.Tensor:
        return module(leaf, attention_mask=None, position_embeddings=(problem.cos, problem.sin),
                      is_causal=True)

    return Variant(name=name, clear_grads=clear_grads, prepare=prepare, forward=forward,
                   backward=lambda out: out.backward(problem.dy),
                   output=lambda out: out.reshape(problem.tokens, problem.hidden))


def build_hf_eager(hf_layer: nn.Module, problem: Problem) -> Variant:
    return _hf_module_variant("hf_eager", hf_layer, hf_layer.parameters(), problem)


def build_hf_compile(hf_layer: nn.Module, problem: Problem) -> Variant:
    return _hf_module_variant("hf_compile", torch.compile(hf_layer), hf_layer.parameters(), problem)


def build_liger(hf_layer: nn.Module, problem: Problem) -> Variant:
    from coda.bench.liger import LigerDecoderLayer

    layer = LigerDecoderLayer(hf_layer, problem.config)
    return _hf_module_variant("liger", layer, layer.parameters(), problem)


def build_coda(hf_layer: nn.Module, problem: Problem) -> Variant:
    import coda.nn

    eps = problem.config.rms_norm_eps
    # The next layer's input-norm weight: in this one-layer bench, the layer's own.
    layer = coda.nn.CodaDecoderLayer.from_hf(hf_layer, problem.config, hf_layer.input_layernorm.weight)
    clear_grads = _grad_clearer(layer.parameters())
    dy = problem.dy.reshape(problem.tokens, problem.hidden)

    def prepare(x: torch.Tensor):
        clear_grads()
        x2d = _fresh_leaf(x.reshape(problem.tokens, problem.hidden))
        return coda.nn.first_state(x2d, layer.input_norm_weight)

    return Variant(name="coda", clear_grads=clear_grads, prepare=prepare,
                   forward=lambda state: layer(state, problem.positions, batch=problem.batch),
                   backward=lambda out: out.x.backward(dy), output=lambda out: out.x)


class _FloorOperands:
    """Fused-shape weights of the HF layer and fixed random activations/gradients of the floor GEMMs."""

    def __init__(self, hf_layer: nn.Module, problem: Problem):
        config, attention, mlp = problem.config, hf_layer.self_attn, hf_layer.mlp
        heads, kv_heads, head_dim = config.num_attention_heads, config.num_key_value_heads, attention.head_dim
        m, hidden, ffn = problem.tokens, problem.hidden, config.intermediate_size
        like = problem.x
        with torch.no_grad():
            self.w_qkv = torch.cat([attention.q_proj.weight, attention.k_proj.weight, attention.v_proj.weight])
            self.w_o = attention.o_proj.weight
            self.w_gate_up = torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight])
            self.w_down = mlp.down_proj.weight

        def rand(*shape: int, requires_grad: bool = False) -> torch.Tensor:
            return torch.randn(*shape, device=like.device, dtype=like.dtype).requires_grad_(requires_grad)

        self.normed = rand(m, hidden)  # stand-in for either RMSNorm output
        self.attn_flat = rand(m, heads * head_dim)
        self.swiglu = rand(m, ffn)
        self.d_qkv = rand(m, self.w_qkv.shape[0])
        self.d_hidden = rand(m, hidden)
        self.d_gate_up = rand(m, 2 * ffn)
        b, t = problem.batch, problem.seq
        self.q = rand(b, heads, t, head_dim, requires_grad=True)
        self.k = rand(b, kv_heads, t, head_dim, requires_grad=True)
        self.v = rand(b, kv_heads, t, head_dim, requires_grad=True)
        self.d_attn = rand(b, heads, t, head_dim)


def build_floor(hf_layer: nn.Module, problem: Problem) -> Variant:
    ops = _FloorOperands(hf_layer, problem)
    clear_grads = _grad_clearer([ops.q, ops.k, ops.v])

    def prepare(_x: torch.Tensor) -> None:
        clear_grads()

    def forward(_inputs: None) -> torch.Tensor:
        with torch.no_grad():
            for activation, weight in ((ops.normed, ops.w_qkv), (ops.attn_flat, ops.w_o),
                                       (ops.normed, ops.w_gate_up), (ops.swiglu, ops.w_down)):
                torch.matmul(activation, weight.t())
        return F.scaled_dot_product_attention(ops.q, ops.k, ops.v, is_causal=True, enable_gqa=True)

    def backward(attention_out: torch.Tensor) -> None:
        with torch.no_grad():
            for d_out, weight, activation in ((ops.d_qkv, ops.w_qkv, ops.normed),
                                              (ops.d_hidden, ops.w_o, ops.attn_flat),
                                              (ops.d_gate_up, ops.w_gate_up, ops.normed),
                                              (ops.d_hidden, ops.w_down, ops.swiglu)):
                torch.matmul(d_out, weight)  # dgrad
                torch.matmul(d_out.t(), activation)  # wgrad
        attention_out.backward(ops.d_attn)

    return Variant(name="floor", clear_grads=clear_grads, prepare=prepare, forward=forward,
                   backward=backward, output=None)


BUILDERS: dict[str, Callable[[nn.Module, Problem], Variant]] = {
    "hf_eager": build_hf_eager,
    "hf_compile": build_hf_compile,
    "liger": build_liger,
    "floor": build_floor,
    "coda": build_coda,
}
