# SPDX-License-Identifier: BSD-3-Clause
"""The weight layouts the fused ops read, from and back to the Hugging Face ones — exact row
permutations, so a patched model's state_dict is bit-for-bit the original:
  W_qkv   = [W_q; W_k; W_v] with the Q and K rows of each head put in adjacent-pair RoPE order
            (HF rotates halves: pair (i, i + hd/2) becomes (2i, 2i + 1); q·k is unchanged)
  W_gu    = gate and up rows interleaved (row 2j = gate j, row 2j + 1 = up j)
  γ_q, γ_k (Qwen3 QK-norm) permuted like one head's rows.
The permutations come from the C++ library (coda::ops weights.hpp), the one definition the
kernels are tested against."""
from __future__ import annotations

import functools

import torch

from .._native import C


@functools.lru_cache(maxsize=64)
def _rows(kind: str, *args) -> torch.Tensor:
    if kind == "rope":
        return torch.tensor(C.rope_interleave_rows(*args), dtype=torch.long)
    return torch.tensor(C.gate_up_interleave_rows(*args), dtype=torch.long)


def _inverse(perm: torch.Tensor) -> torch.Tensor:
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(perm.numel())
    return inv


def _take_rows(w: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    return w.index_select(0, rows.to(w.device))


def fuse_qkv(w_q, w_k, w_v, q_heads: int, kv_heads: int, head_dim: int) -> torch.Tensor:
    return torch.cat([_take_rows(w_q, _rows("rope", q_heads, head_dim)),
                      _take_rows(w_k, _rows("rope", kv_heads, head_dim)), w_v])


def split_qkv(w_qkv, q_heads: int, kv_heads: int, head_dim: int):
    w_q, w_k, w_v = w_qkv.split([q_heads * head_dim, kv_heads * head_dim, kv_heads * head_dim])
    return (_take_rows(w_q, _inverse(_rows("rope", q_heads, head_dim))),
            _take_rows(w_k, _inverse(_rows("rope", kv_heads, head_dim))), w_v.clone())


def fuse_gate_up(w_gate, w_up) -> torch.Tensor:
    return _take_rows(torch.cat([w_gate, w_up]), _rows("gate_up", w_gate.shape[0]))


def split_gate_up(w_gate_up):
    ffn = w_gate_up.shape[0] // 2
    return _take_rows(w_gate_up, _inverse(_rows("gate_up", ffn))).split(ffn)


def pair_order(gamma, head_dim: int) -> torch.Tensor:
    """A per-head vector (QK-norm γ) in adjacent-pair order."""
    return _take_rows(gamma, _rows("rope", 1, head_dim))


def half_order(gamma, head_dim: int) -> torch.Tensor:
    return _take_rows(gamma, _inverse(_rows("rope", 1, head_dim)))


def rope_frequencies(q_heads: int, kv_heads: int, head_dim: int, theta: float, scaling: dict | None,
                     device) -> torch.Tensor:
    """The kernels' per-column (hi, lo) frequency table, from the HF rope parameters."""
    s = scaling or {}
    args = (float(s.get("factor", 0.0)), float(s.get("low_freq_factor", 1.0)),
            float(s.get("high_freq_factor", 4.0)), float(s.get("original_max_position_embeddings", 8192.0)))
    table = C.rope_frequencies(q_heads, kv_heads, head_dim, float(theta), *args)
    return torch.tensor(table, dtype=torch.float32, device=device)
