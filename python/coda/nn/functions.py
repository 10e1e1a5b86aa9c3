# SPDX-License-Identifier: BSD-3-Clause
"""The Llama block's fused groups as autograd Functions, forward and backward through the CODA ops
(docs/design.md, "the block schedule"). Between the groups run attention (SDPA or FlexAttention,
differentiated by PyTorch) and the residual sums autograd already makes.

The residual stream travels as (x, h, stats): x the stream, h = x ⊙ w of the norm that consumes
it next, stats its Σx² partials (coda.ops). h and stats are functions of (x, w); their gradients
are folded into the consumer's backward (linear_rmsnorm_bwd returns ∂x and ∂w directly), so every
Function returns None for them, never differentiates the producer's copy of w, and does not have
autograd fill zero gradients for them (set_materialize_grads(False)).

The residual gradient is summed inside the GEMMs, not by autograd: the Mlp's RMSNorm backward
reduce-adds ∂x2 into ∂x1, and AttentionInput hands x on to AttentionOutput's residual (its 4th
output), so the residual's gradient comes back to AttentionInput, whose RMSNorm backward adds ∂x
into it in place. That gradient is ∂x1 as the Mlp allocated it, passed through AttentionOutput:
no one else holds it, so adding into it is safe (an incoming gradient from outside the layer is
never written).

Parameters enter as the model holds them, bf16 or fp32 master weights under autocast
(precision.py): each Function computes with bf16 copies and returns every parameter's gradient in
the parameter's own dtype (a norm weight's fp32 reduction is not rounded to bf16 on the way).

Plain GEMMs (weight gradients, the O projection's dgrad) are torch.matmul: cuBLAS, the floor."""
from __future__ import annotations

import torch

from .. import ops
from .precision import compute_copy, dtype_of, scaled_grad


def _split_heads(qkv: torch.Tensor, batch: int, q_heads: int, kv_heads: int, head_dim: int):
    """q, k, v as [B, heads, S, hd] views of the [B·S, N] projection (no copy)."""
    seq = qkv.shape[0] // batch
    q, k, v = qkv.view(batch, seq, -1, head_dim).split([q_heads, kv_heads, kv_heads], dim=2)
    return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)


def _heads_as_rows(d: torch.Tensor) -> torch.Tensor:
    """A [B, heads, S, hd] gradient as the [B·S, heads·hd] column block of the projection's: a view
    where attention laid it out as [B, S, heads, hd] (SDPA's backward does, like its input), else
    a copy. The RoPE backward reads the three blocks where they are: no concatenation."""
    b, _, s, _ = d.shape
    return d.transpose(1, 2).reshape(b * s, -1)


def _stream_outputs(ctx, x, h, stats):
    """(x, h, stats) as a Function's outputs: only x carries a gradient (the next consumer's backward
    folds in h's and stats'), and autograd fills no zero gradients for the other two (the Function's
    backward then gets None for them, and None for x where nothing used it)."""
    ctx.mark_non_differentiable(h, stats)
    ctx.set_materialize_grads(False)
    return x, h, stats


class AttentionInput(torch.autograd.Function):
    """q, k, v = heads(RoPE([QkNorm](RMSNorm(x) · W_qkvᵀ))), the norm deferred to the epilogue, and
    x itself, for the residual (its gradient comes back here: see the module docstring).

    Backward: the RoPE (+ QK-norm) backward as one memory pass, then the RMSNorm backward in the
    QKV dgrad GEMM (∂x added into the residual's gradient, ∂w, and N for the weight gradient)."""

    @staticmethod
    def forward(ctx, x, h, stats, w_qkv, norm_weight, positions, frequencies, q_norm_weight,
                k_norm_weight, stats_k: int, eps: float, batch: int, q_heads: int, kv_heads: int,
                head_dim: int, qk_eps: float):
        ctx.dtypes = tuple(map(dtype_of, (w_qkv, norm_weight, q_norm_weight, k_norm_weight)))
        w_qkv, norm_weight, q_norm_weight, k_norm_weight = map(compute_copy, (w_qkv, norm_weight, q_norm_weight,
                                                                              k_norm_weight))
        qk_norm = q_norm_weight is not None
        if qk_norm:
            qkv, pre = ops.linear_rmsnorm_qknorm_rope(h, w_qkv, stats, stats_k, eps, positions, frequencies,
                                                      q_norm_weight, k_norm_weight, q_heads, kv_heads, qk_eps,
                                                      True)
            ctx.save_for_backward(x, stats, w_qkv, norm_weight, positions, frequencies, pre, q_norm_weight,
                                  k_norm_weight)
        else:
            qkv = ops.linear_rmsnorm_rope(h, w_qkv, stats, stats_k, eps, positions, frequencies)
            ctx.save_for_backward(x, stats, w_qkv, norm_weight, positions, frequencies, qkv)
        ctx.qk_norm = qk_norm
        ctx.meta = (stats_k, eps, q_heads, kv_heads, qk_eps)
        return (*_split_heads(qkv, batch, q_heads, kv_heads, head_dim), x)

    @staticmethod
    def backward(ctx, dq, dk, dv, d_residual):
        stats_k, eps, q_heads, kv_heads, qk_eps = ctx.meta
        qkv_dtype, norm_dtype, gq_dtype, gk_dtype = ctx.dtypes
        dq, dk, dv = (_heads_as_rows(t) for t in (dq, dk, dv))
        dgq = dgk = None
        if ctx.qk_norm:
            x, stats, w_qkv, norm_weight, positions, frequencies, pre, gq, gk = ctx.saved_tensors
            dz, zdz, dgq, dgk = ops.qknorm_rope_bwd(pre, dq, positions, frequencies, gq, gk, q_heads,
                                                    kv_heads, qk_eps, dk, dv)
            dgq, dgk = dgq.to(gq_dtype), dgk.to(gk_dtype)
        else:
            x, stats, w_qkv, norm_weight, positions, frequencies, qkv = ctx.saved_tensors
            dz, zdz = ops.rope_bwd(qkv, dq, positions, frequencies, dk, dv)
        # d_residual: ∂x1 from the Mlp through AttentionOutput (ours alone), or zeros autograd made.
        normed, dw = ops.linear_rmsnorm_bwd_add_(d_residual, dz, w_qkv, x, stats, stats_k, norm_weight, eps, zdz)
        dx = d_residual
        d_w_qkv = (dz.t() @ normed).to(qkv_dtype)
        return (dx, None, None, d_w_qkv, dw.to(norm_dtype), None, None, dgq, dgk,
                None, None, None, None, None, None, None)


class AttentionOutput(torch.autograd.Function):
    """x1 = o · W_oᵀ + x, with h1 = x1 ⊙ w_post and its Σx² partials from the same epilogue."""

    @staticmethod
    def forward(ctx, o, w_o, x, post_norm_weight):
        ctx.w_o_dtype = w_o.dtype
        w_o = compute_copy(w_o)
        x1, h1, stats1 = ops.linear_residual_rms(o, w_o, x, compute_copy(post_norm_weight))
        ctx.save_for_backward(o, w_o)
        return _stream_outputs(ctx, x1, h1, stats1)

    @staticmethod
    def backward(ctx, dx1, _dh1, _dstats1):
        if dx1 is None:
            return None, None, None, None
        o, w_o = ctx.saved_tensors
        return dx1 @ w_o, (dx1.t() @ o).to(ctx.w_o_dtype), dx1, None


class Mlp(torch.autograd.Function):
    """x2 = SwiGLU(RMSNorm(x1) · W_guᵀ) · W_downᵀ + x1, the norm deferred to the gate/up epilogue,
    and (h2, stats2) for the next norm (weight next_norm_weight) from the down projection's.

    Backward: the SwiGLU backward in the down projection's dgrad (Y recomputed, ⟨z, dz⟩), then
    the RMSNorm backward in the gate/up dgrad, reduce-added onto the residual gradient."""

    @staticmethod
    def forward(ctx, x1, h1, stats1, w_gate_up, post_norm_weight, w_down, next_norm_weight,
                stats_k: int, eps: float):
        ctx.dtypes = (w_gate_up.dtype, post_norm_weight.dtype, w_down.dtype)
        w_gate_up, post_norm_weight, w_down, next_norm_weight = map(compute_copy, (w_gate_up, post_norm_weight,
                                                                                   w_down, next_norm_weight))
        z, y = ops.linear_rmsnorm_swiglu(h1, w_gate_up, stats1, stats_k, eps, True)
        x2, h2, stats2 = ops.linear_residual_rms(y, w_down, x1, next_norm_weight)
        ctx.save_for_backward(x1, stats1, w_gate_up, post_norm_weight, w_down, z)
        ctx.meta = (stats_k, eps)
        return _stream_outputs(ctx, x2, h2, stats2)

    @staticmethod
    def backward(ctx, dx2, _dh2, _dstats2):
        if dx2 is None:
            return (None,) * 9
        x1, stats1, w_gate_up, post_norm_weight, w_down, z = ctx.saved_tensors
        stats_k, eps = ctx.meta
        gate_up_dtype, norm_dtype, down_dtype = ctx.dtypes
        dz, y, zdz = ops.linear_swiglu_bwd(dx2, w_down, z)
        d_w_down = (dx2.t() @ y).to(down_dtype)
        dx1, normed, dw = ops.linear_rmsnorm_bwd(dz, w_gate_up, x1, stats1, stats_k, post_norm_weight, eps, zdz,
                                                 dx2)
        d_w_gate_up = (dz.t() @ normed).to(gate_up_dtype)
        return dx1, None, None, d_w_gate_up, dw.to(norm_dtype), d_w_down, None, None, None


def normed_from_stats(h, stats, stats_k: int, eps: float):
    """(RMSNorm(x) in x's dtype, rstd fp32) from h = x ⊙ w and the stream's Σx² partials: no
    reduction pass over x."""
    rstd = ops.row_rstd(h, stats, stats_k, eps)
    # One pass: the product in fp32 (rstd's dtype wins the promotion), rounded once on the write —
    # the bits of (h.float() * rstd[:, None]).to(h.dtype) without its fp32 copy.
    return torch.mul(h, rstd[:, None], out=torch.empty_like(h)), rstd


def rmsnorm_backward(d_normed, x, rstd, norm_weight, g):
    """(∂x in x's dtype, ∂w fp32) of normed = (x · rstd) ⊙ w, given ∂normed = d_normed · g (g the
    upstream scalar): with u = x · rstd and G = d_normed · g ⊙ w,
        ∂x = rstd · (G − u · mean(G ⊙ u)),    ∂w = g · Σ_rows d_normed ⊙ u,
    in fp32 (PyTorch's RMSNorm backward's math). Each bf16 operand is read as it is (it promotes
    inside the kernel: no fp32 copy of x or d_normed), g is folded into the [H] weight and ∂x is
    rounded once on the write: 8 passes over [M, H] where the two-step form took 14 (~45 % less
    traffic)."""
    u = torch.mul(x, rstd[:, None])
    gw = torch.mul(d_normed, norm_weight.float() * g)
    c = (gw * u).mean(dim=1, keepdim=True)
    dx = torch.mul(torch.addcmul(gw, u, c, value=-1.0), rstd[:, None], out=torch.empty_like(x))
    dw = (d_normed * u).sum(0).mul_(g)
    return dx, dw


class NormLinearCrossEntropy(torch.autograd.Function):
    """loss = CE(RMSNorm(x) · W_lmᵀ, targets), mean over non-ignored tokens; the logits never
    exist whole. Forward and backward run together (linear_cross_entropy_fwd_bwd) and the
    backward scales them by the upstream gradient: the usual training step at the cost of holding
    ∂W_lm in fp32 between the two."""

    @staticmethod
    def forward(ctx, x, h, stats, norm_weight, w_lm, targets, stats_k: int, eps: float,
                ignore_index: int):
        ctx.dtypes = (norm_weight.dtype, w_lm.dtype)
        norm_weight = compute_copy(norm_weight)  # the w that made h: the backward differentiates it
        normed, rstd = normed_from_stats(h, stats, stats_k, eps)
        loss, _lse, d_normed, d_w_lm, _zdz = ops.linear_cross_entropy_fwd_bwd(
            normed, compute_copy(w_lm), targets, ignore_index, ops.REDUCTIONS["mean"], 0.0, 0.0)
        ctx.save_for_backward(x, rstd, norm_weight, d_normed, d_w_lm)
        return loss.view(())

    @staticmethod
    def backward(ctx, g):
        x, rstd, norm_weight, d_normed, d_w_lm = ctx.saved_tensors
        norm_dtype, w_lm_dtype = ctx.dtypes
        dx, dw = rmsnorm_backward(d_normed, x, rstd, norm_weight, g)
        return dx, None, None, dw.to(norm_dtype), scaled_grad(d_w_lm, g, w_lm_dtype), None, None, None, None
