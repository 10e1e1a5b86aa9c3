# SPDX-License-Identifier: BSD-3-Clause
"""The model-level CODA forward of a causal LM: embeddings → first norm statistics → the CODA
layers (each hands the next a ResidualState) → the final norm + LM head + cross-entropy with the
logits never materialised (NormLinearCrossEntropy), or plain logits when no labels are given."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from .. import ops
from .functions import NormLinearCrossEntropy, normed_from_stats
from .layer import ResidualState, documents_from_positions, first_state
from .precision import COMPUTE_DTYPE, compute_copy, is_dtensor, require_computable

IGNORE_INDEX = -100


def flat_positions(position_ids: Optional[torch.Tensor], batch: int, seq: int, device):
    """int32 [B·S] positions and the packed-document mask (None: plain causal rows)."""
    if position_ids is None:
        return torch.arange(seq, device=device, dtype=torch.int32).repeat(batch), None
    position_ids = position_ids.expand(batch, seq)
    return position_ids.reshape(-1).to(torch.int32), documents_from_positions(position_ids)


def shifted_targets(labels: torch.Tensor) -> torch.Tensor:
    """HF's causal-LM convention as per-token targets: token t predicts labels[t + 1]."""
    pad = labels.new_full((labels.shape[0], 1), IGNORE_INDEX)
    return torch.cat([labels[:, 1:], pad], dim=1).reshape(-1)


def whole(norm_weight: torch.Tensor) -> torch.Tensor:
    """A layer's input-norm weight as the previous layer's epilogue reads it: with FSDP2 units per
    layer it is still sharded (a DTensor) while the previous layer runs, so it is all-gathered (one
    vector) in the compute dtype — an fp32 master shard rounded to bf16, as FSDP2's mixed precision
    (param_dtype bf16) or autocast rounds it for its own unit. Forward data only: the layer that
    owns it returns its gradient. Call it before the first layer runs (run_layers): see there."""
    if not is_dtensor(norm_weight):
        return norm_weight
    with torch.no_grad():
        return norm_weight.full_tensor().to(COMPUTE_DTYPE)


def run_layers(embed: torch.Tensor, layers: nn.ModuleList, final_norm_weight: torch.Tensor,
               position_ids: Optional[torch.Tensor]) -> ResidualState:
    """The residual stream after every layer, with h and stats made for the final norm.

    Every layer's input-norm weight is gathered here, before the first layer runs. A gather is a
    collective issued from the compute stream, and NCCL runs the collectives of one process group
    in order on one stream, each after the work its issuing stream had queued: gathered between
    layers, the next vector would wait for the previous layer's compute, and FSDP2's all-gather of
    the next unit's weights, queued behind it, could no longer overlap that compute."""
    batch, seq, hidden = embed.shape
    positions, documents = flat_positions(position_ids, batch, seq, embed.device)
    norm_weights = [whole(layer.input_norm_weight) for layer in layers] + [final_norm_weight]
    state = first_state(embed.reshape(batch * seq, hidden), norm_weights[0])
    for layer, w_next in zip(layers, norm_weights[1:]):
        state = layer(state, positions, batch=batch, documents=documents, next_norm_weight=w_next)
    return state


def final_norm(state: ResidualState, eps: float) -> torch.Tensor:
    """RMSNorm(x) of the last stream from its h and stats (no reduction pass over x)."""
    return normed_from_stats(state.h, state.stats, state.stats_k, eps)[0]


def causal_lm_loss(state: ResidualState, final_norm_weight: torch.Tensor, lm_head_weight: torch.Tensor,
                   labels: torch.Tensor, eps: float, num_items_in_batch=None) -> torch.Tensor:
    """Mean next-token cross-entropy over non-ignored labels (or the sum over num_items_in_batch,
    as HF's Trainer passes under gradient accumulation)."""
    require_computable("coda.nn.causal_lm_loss", final_norm_weight=final_norm_weight, lm_head_weight=lm_head_weight)
    targets = shifted_targets(labels)
    if not torch.is_grad_enabled():  # evaluation: the loss-only kernel, no gradients held
        normed = final_norm(state, eps)
        loss = ops.linear_cross_entropy(normed, compute_copy(lm_head_weight), targets, IGNORE_INDEX,
                                        ops.REDUCTIONS["mean"], 0.0, 0.0)[0].view(())
    else:
        loss = NormLinearCrossEntropy.apply(state.x, state.h, state.stats, final_norm_weight, lm_head_weight,
                                        targets, state.stats_k, eps, IGNORE_INDEX)
    if num_items_in_batch is not None:
        loss = loss * (targets != IGNORE_INDEX).sum() / num_items_in_batch
    return loss
