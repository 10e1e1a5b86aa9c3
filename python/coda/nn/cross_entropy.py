# SPDX-License-Identifier: BSD-3-Clause
"""coda.nn.LinearCrossEntropy: the LM head with cross-entropy, loss only — the [tokens, vocab]
logits never exist whole. Training runs forward and backward in one call
(linear_cross_entropy_fwd_bwd, in ~1 GiB row chunks) and the backward scales the held gradients by
the upstream one; evaluation (no grad) runs the loss-only kernel."""
from __future__ import annotations

import torch
from torch import nn

from .. import ops


class LinearCrossEntropyFunction(torch.autograd.Function):
    """mean CE(x · Wᵀ, targets) over non-ignored tokens; ∂x, ∂W computed in the forward."""

    @staticmethod
    def forward(ctx, x, weight, targets, ignore_index: int, z_loss: float, softcap: float):
        loss, _lse, dx, dw, _zdz = ops.linear_cross_entropy_fwd_bwd(
            x, weight, targets, ignore_index, ops.REDUCTIONS["mean"], z_loss, softcap)
        ctx.save_for_backward(dx, dw)
        ctx.weight_dtype = weight.dtype
        return loss.view(())

    @staticmethod
    def backward(ctx, g):
        dx, dw = ctx.saved_tensors
        return (dx * g).to(dx.dtype), (dw * g).to(ctx.weight_dtype), None, None, None, None


class LinearCrossEntropy(nn.Module):
    """loss = mean cross-entropy of (x · weightᵀ) against targets (ignore_index skipped), with
    optional z-loss (z_loss · lse²) and logit soft-capping (Gemma 2). x: [..., in_features] bf16,
    targets: [...] int32/int64. Extra memory: ~1 GiB of logit chunks plus an fp32 ∂W."""

    def __init__(self, in_features: int, vocab_size: int, ignore_index: int = -100, z_loss: float = 0.0,
                 softcap: float = 0.0, device=None, dtype=torch.bfloat16):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab_size, in_features, device=device, dtype=dtype))
        nn.init.normal_(self.weight, std=in_features ** -0.5)
        self.ignore_index, self.z_loss, self.softcap = ignore_index, float(z_loss), float(softcap)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x2d, t1d = x.reshape(-1, x.shape[-1]), targets.reshape(-1)
        if torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad):
            return LinearCrossEntropyFunction.apply(x2d, self.weight, t1d, self.ignore_index, self.z_loss,
                                                    self.softcap)
        loss, _lse = ops.linear_cross_entropy(x2d, self.weight, t1d, self.ignore_index, ops.REDUCTIONS["mean"],
                                              self.z_loss, self.softcap)
        return loss.view(())
