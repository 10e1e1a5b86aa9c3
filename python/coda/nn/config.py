# SPDX-License-Identifier: BSD-3-Clause
"""What CODA reads from a Hugging Face Llama / Qwen3 config, and the reasons it refuses one.
Every refusal names the field and what the fused kernels need."""
from __future__ import annotations


class UnsupportedModel(ValueError):
    """The model or GPU cannot run the CODA chain; the message says why."""


def rope_parameters(config) -> tuple[float, dict | None]:
    """(theta, llama3 scaling dict or None), from transformers 4.x or 5.x config fields."""
    params = getattr(config, "rope_parameters", None) or {}
    scaling = getattr(config, "rope_scaling", None) or params or None
    theta = params.get("rope_theta", getattr(config, "rope_theta", None))
    if theta is None:
        raise UnsupportedModel("config: no rope_theta")
    rope_type = (scaling or {}).get("rope_type", (scaling or {}).get("type", "default"))
    if rope_type == "default":
        return float(theta), None
    if rope_type == "llama3":
        return float(theta), dict(scaling)
    raise UnsupportedModel(f"config.rope_scaling: rope_type {rope_type!r} is not supported (default, llama3)")


def layer_dims(config) -> dict:
    """The constructor arguments of CodaDecoderLayer for `config`, after checking it."""
    check_config(config)
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return dict(hidden=config.hidden_size, q_heads=heads, kv_heads=config.num_key_value_heads or heads,
                head_dim=head_dim, ffn=config.intermediate_size, eps=float(config.rms_norm_eps),
                qk_norm=getattr(config, "model_type", "") == "qwen3")


def check_config(config) -> None:
    """Raises UnsupportedModel naming the first field the fused kernels cannot serve."""
    model_type = getattr(config, "model_type", "")
    if model_type not in ("llama", "qwen3"):
        raise UnsupportedModel(f"config.model_type: {model_type!r} (supported: llama, qwen3)")
    if getattr(config, "hidden_act", "silu") != "silu":
        raise UnsupportedModel(f"config.hidden_act: {config.hidden_act!r} (the epilogue computes SwiGLU with silu)")
    for field in ("attention_bias", "mlp_bias"):
        if getattr(config, field, False):
            raise UnsupportedModel(f"config.{field}: biases are not supported by the fused projections")
    if getattr(config, "use_sliding_window", False):
        raise UnsupportedModel("config.use_sliding_window: sliding-window attention is not supported")
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    if head_dim not in (64, 128):
        raise UnsupportedModel(f"config.head_dim: {head_dim} (the RoPE epilogue needs 64 or 128)")
    for field in ("hidden_size", "intermediate_size"):
        if getattr(config, field) % 8:
            raise UnsupportedModel(f"config.{field}: {getattr(config, field)} is not a multiple of 8 "
                                   "(rows must be 16-byte aligned for TMA)")
    if config.vocab_size % 8:
        raise UnsupportedModel(f"config.vocab_size: {config.vocab_size} is not a multiple of 8")
    rope_parameters(config)
