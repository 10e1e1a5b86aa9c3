# SPDX-License-Identifier: BSD-3-Clause
"""coda.nn.LinearCrossEntropy: the LM head with cross-entropy, loss only — the [tokens, vocab]
logits never exist whole. Training runs forward and backward in one call
(linear_cross_entropy_fwd_bwd, in row chunks of ≤ ~2 GiB of logits) and the backward scales the held gradients by
the upstream one; evaluation (no grad) runs the loss-only kernel."""
from __future__ import annotations

import torch
from torch import nn

from .. import ops
from .precision import compute_copy, require_computable, scaled_grad


class LinearCrossEntropyFunction(torch.autograd.Function):
    """mean CE(x · Wᵀ, targets) over non-ignored tokens; ∂x, ∂W computed in the forward."""

    @staticmethod
    def forward(ctx, x, weight, targets, ignore_index: int, z_loss: float, softcap: float):
        ctx.dtypes = (x.dtype, weight.dtype)  # gradients return in these (fp32 masters: fp32)
        loss, _lse, dx, dw, _zdz = ops.linear_cross_entropy_fwd_bwd(
            compute_copy(x), compute_copy(weight), targets, ignore_index, ops.REDUCTIONS["mean"], z_loss, softcap)
        ctx.save_for_backward(dx, dw)
        return loss.view(())

    @staticmethod
    def backward(ctx, g):
        dx, dw = ctx.saved_tensors
        x_dtype, weight_dtype = ctx.dtypes
        return scaled_grad(dx, g, x_dtype), scaled_grad(dw, g, weight_dtype), None, None, None, None


class LinearCrossEntropy(nn.Module):
    """loss = mean cross-entropy of (x · weightᵀ) against targets (ignore_index skipped), with
    optional z-loss (z_loss · lse²) and logit soft-capping (Gemma 2). x: [..., in_features] bf16,
    targets: [...] int32/int64. Extra memory: ≤ ~2 GiB of logit chunks plus an fp32 ∂W. An fp32
    weight (or x) runs under bf16 autocast, as in coda.nn.precision, its gradient returned in fp32."""

    def __init__(self, in_features: int, vocab_size: int, ignore_index: int = -100, z_loss: float = 0.0,
                 softcap: float = 0.0, device=None, dtype=torch.bfloat16):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab_size, in_features, device=device, dtype=dtype))
        nn.init.normal_(self.weight, std=in_features ** -0.5)
        self.ignore_index, self.z_loss, self.softcap = ignore_index, float(z_loss), float(softcap)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        require_computable("coda.nn.LinearCrossEntropy", x=x, weight=self.weight)
        x2d, t1d = x.reshape(-1, x.shape[-1]), targets.reshape(-1)
        if torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad):
            return LinearCrossEntropyFunction.apply(x2d, self.weight, t1d, self.ignore_index, self.z_loss,
                                                    self.softcap)
        loss, _lse = ops.linear_cross_entropy(compute_copy(x2d), compute_copy(self.weight), t1d, self.ignore_index,
                                              ops.REDUCTIONS["mean"], self.z_loss, self.softcap)
        return loss.view(())
