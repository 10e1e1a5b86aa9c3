# SPDX-License-Identifier: BSD-3-Clause
"""Liger-Kernel's Llama patches on one decoder-layer instance, for the `liger` variant of the layer bench.

`liger_kernel.transformers.apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True)`
replaces three things: `modeling_llama.LlamaRMSNorm` -> `LigerRMSNorm` (casting mode "llama"),
`modeling_llama.LlamaMLP` -> `LigerSwiGLUMLP`, and the module function
`modeling_llama.apply_rotary_pos_emb` -> `liger_rotary_pos_emb` (its loss patches do not apply to
a single layer). It does so process-wide, which would also change the `hf_eager` and `hf_compile`
variants timed in the same process. So this module applies the same three kernels to one layer only:
a copy of the HF layer (same weights) whose two norms and MLP are replaced by Liger's modules, and
whose calls swap Liger's RoPE into `modeling_llama` for their duration (LlamaAttention.forward looks
`apply_rotary_pos_emb` up in its module's globals at each call; the backward runs Liger's autograd
function and needs no swap).

The device has no internet: liger-kernel travels as its pure-Python wheel in `<repo>/.whl/`
(git-ignored), which `scripts/device-run.sh layer` installs; without it the variant reports itself
unavailable. Nothing is downloaded here.
"""
from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator

import torch
from torch import nn

@contextlib.contextmanager
def _module_function_swapped(module, name: str, replacement) -> Iterator[None]:
    original = getattr(module, name)
    setattr(module, name, replacement)
    try:
        yield
    finally:
        setattr(module, name, original)


class LigerDecoderLayer(nn.Module):
    """A copy of an HF LlamaDecoderLayer running Liger's RMSNorm, SwiGLU MLP and RoPE kernels."""

    def __init__(self, hf_layer: nn.Module, config):
        super().__init__()
        from liger_kernel.transformers import LigerRMSNorm, LigerSwiGLUMLP, liger_rotary_pos_emb
        from transformers.models.llama import modeling_llama

        self.layer = copy.deepcopy(hf_layer)
        for norm_name in ("input_layernorm", "post_attention_layernorm"):
            hf_norm = getattr(self.layer, norm_name)
            with torch.device("meta"):
                liger_norm = LigerRMSNorm(config.hidden_size, eps=hf_norm.variance_epsilon, casting_mode="llama")
            liger_norm.weight = hf_norm.weight
            setattr(self.layer, norm_name, liger_norm)
        hf_mlp = self.layer.mlp
        with torch.device("meta"):
            liger_mlp = LigerSwiGLUMLP(config)
        for projection in ("gate_proj", "up_proj", "down_proj"):
            setattr(liger_mlp, projection, getattr(hf_mlp, projection))
        self.layer.mlp = liger_mlp
        self._modeling_llama = modeling_llama
        self._rope = liger_rotary_pos_emb

    def forward(self, *args, **kwargs):
        with _module_function_swapped(self._modeling_llama, "apply_rotary_pos_emb", self._rope):
            return self.layer(*args, **kwargs)
