# SPDX-License-Identifier: BSD-3-Clause
"""Hugging Face drop-in: patch_llama / patch_qwen3 convert a `transformers` causal LM in place so
that its forward and backward run the CODA chain; unpatch converts it back.

What changes: each decoder layer becomes a CodaDecoderLayer holding the same weights in the fused
layouts (exact permutations), and the model's forward runs coda.nn.model (the loss without
logits when labels are given). What does not: parameter values, state_dict() / save_pretrained()
(the Hugging Face names and layouts, bit for bit), load_state_dict of a Hugging Face checkpoint,
the call signature `model(input_ids=..., labels=...)`. Create the optimizer after patching: the
fused weights are new Parameter objects. Activation checkpointing set by the model's
gradient_checkpointing_enable (before or after patching) applies to the CODA layers."""
from __future__ import annotations

import types
import warnings

import torch

from .nn.config import UnsupportedModel, check_config
from .nn.layer import CodaDecoderLayer, default_checkpoint
from .nn.precision import is_dtensor
from .nn.model import causal_lm_loss, final_norm, run_layers

_PATCHED = "_coda_patched"


def _check_device(model) -> None:
    params = list(model.parameters())
    if not torch.cuda.is_available():
        raise UnsupportedModel("no CUDA device: CODA's kernels run on NVIDIA Hopper (sm_90) GPUs")
    devices = {p.device for p in params}
    if len(devices) != 1 or next(iter(devices)).type != "cuda":
        raise UnsupportedModel(f"model parameters must all be on one CUDA device, found {sorted(map(str, devices))}")
    major, minor = torch.cuda.get_device_capability(next(iter(devices)))
    if (major, minor) != (9, 0):
        name = torch.cuda.get_device_name(next(iter(devices)))
        raise UnsupportedModel(f"GPU {name} is sm_{major}{minor}: the kernels are built for Hopper (sm_90a) only")
    dtypes = {p.dtype for p in params}
    if not dtypes <= {torch.bfloat16, torch.float32}:
        raise UnsupportedModel(f"model dtype: parameters must be bfloat16 (model.to(torch.bfloat16)) or float32 "
                               f"master weights for bf16 autocast (nn/precision.py), found {sorted(map(str, dtypes))}")


def _check(model, model_type: str) -> None:
    if getattr(model, _PATCHED, False):
        raise UnsupportedModel("model is already patched")
    config = getattr(model, "config", None)
    if config is None or getattr(config, "model_type", None) != model_type:
        raise UnsupportedModel(f"expected a {model_type} causal LM (config.model_type == {model_type!r}), "
                               f"got {type(model).__name__}")
    if not (hasattr(model, "model") and hasattr(model.model, "layers") and hasattr(model, "lm_head")):
        raise UnsupportedModel(f"{type(model).__name__}: expected .model.layers and .lm_head (a *ForCausalLM)")
    if getattr(model.lm_head, "bias", None) is not None:
        raise UnsupportedModel("lm_head.bias: a biased LM head is not supported")
    check_config(config)
    sharded = [name for name, p in model.named_parameters() if is_dtensor(p)]
    if sharded:
        raise UnsupportedModel(f"{sharded[0]} is a DTensor (sharded by FSDP2 or tensor parallelism): patch the model "
                               "before sharding it (then fully_shard each decoder layer and the model)")
    _check_device(model)


def _causal_lm_forward(self, input_ids=None, attention_mask=None, position_ids=None, labels=None,
                       inputs_embeds=None, num_items_in_batch=None, **kwargs):
    from transformers.modeling_outputs import CausalLMOutputWithPast

    if kwargs.get("past_key_values") is not None or kwargs.get("use_cache"):
        raise ValueError("coda: a patched model trains; it has no KV cache (use_cache=False, past_key_values=None)")
    for name in ("output_attentions", "output_hidden_states"):  # would come back None, unasked
        if kwargs.get(name):
            raise ValueError(f"coda: {name}=True: a patched model returns no per-layer attentions or hidden "
                             "states (the fused layers never hold them whole); unpatch it for that")
    if kwargs.get("logits_to_keep"):
        raise ValueError("coda: logits_to_keep: a patched model computes the loss, or every position's logits")
    if attention_mask is not None:  # checked on the device: no host sync, capturable
        torch._assert_async(attention_mask.all(), "coda: padding masks are not supported; pack sequences "
                            "and pass position_ids (positions restart at 0 per document) instead")
    embed = inputs_embeds if inputs_embeds is not None else self.model.embed_tokens(input_ids)
    norm = self.model.norm
    state = run_layers(embed, self.model.layers, norm.weight, position_ids)
    eps = float(norm.variance_epsilon)
    if labels is not None:
        loss = causal_lm_loss(state, norm.weight, self.lm_head.weight, labels, eps, num_items_in_batch)
        return CausalLMOutputWithPast(loss=loss, logits=None)
    logits = self.lm_head(final_norm(state, eps)).view(*embed.shape[:2], -1)
    return CausalLMOutputWithPast(loss=None, logits=logits)


def _patch(model, model_type: str, strict: bool):
    try:
        _check(model, model_type)
    except UnsupportedModel as e:
        if strict:
            raise
        warnings.warn(f"coda: model left unpatched: {e}", stacklevel=3)
        return model
    layers = model.model.layers
    hf_class = type(layers[0])
    for i in range(len(layers)):
        layers[i] = CodaDecoderLayer.from_hf(layers[i], model.config)
    model.forward = types.MethodType(_causal_lm_forward, model)
    setattr(model, _PATCHED, hf_class)
    return model


def patch_llama(model, strict: bool = True):
    """Converts a transformers LlamaForCausalLM (on a Hopper GPU) in place; returns it. Parameters
    bf16 (model.to(torch.bfloat16)), or fp32 master weights whose forward then runs under
    torch.autocast("cuda", dtype=torch.bfloat16) — mixed precision, as Trainer(bf16=True) runs it.
    strict=False: an unsupported model or GPU is left untouched with a warning instead of raising
    coda.UnsupportedModel."""
    return _patch(model, "llama", strict)


def patch_qwen3(model, strict: bool = True):
    """patch_llama for Qwen3ForCausalLM (QK-norm in the QKV epilogue and its backward)."""
    return _patch(model, "qwen3", strict)


def unpatch(model):
    """Restores the Hugging Face layers (same weights, exact inverse permutations) and forward."""
    hf_class = getattr(model, _PATCHED, None)
    if hf_class is None:
        raise ValueError("coda.unpatch: model is not patched")
    layers = model.model.layers
    for i in range(len(layers)):
        coda_layer = layers[i]
        ref = coda_layer.qkv_weight
        hf_layer = hf_class(model.config, layer_idx=i).to(device=ref.device, dtype=ref.dtype)
        hf_layer.load_state_dict(coda_layer.state_dict())
        if coda_layer.gradient_checkpointing:  # as the model's gradient_checkpointing_enable left it
            hf_layer.gradient_checkpointing = True
            hf_layer._gradient_checkpointing_func = getattr(coda_layer, "_gradient_checkpointing_func",
                                                            default_checkpoint)
        layers[i] = hf_layer
    del model.forward
    delattr(model, _PATCHED)
    return model
