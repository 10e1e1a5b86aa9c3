// SPDX-License-Identifier: BSD-3-Clause
// The fused QKV projection with RoPE in the epilogue (docs/ops-math.md §2.4), rotated in place:
// only the rotated QKV is stored. Pairs are adjacent columns (2j, 2j+1) within each head; for a
// model with the rotate-half convention (Hugging Face Llama), permute W_q's and W_k's rows per head
// first (rope_interleave_rows in weights.hpp). With θ = 2π · positions[m] · f[j]:
//   (q[2j], q[2j+1]) ← (q[2j] cos θ − q[2j+1] sin θ,  q[2j] sin θ + q[2j+1] cos θ)
//   QKV = RoPE(A · W_qkvᵀ)                     linear_rope
//   QKV = RoPE(rstd ⊙ (H · W_qkvᵀ))            linear_rmsnorm_rope (H, stats: linear_norm.hpp)
// With QK-norm (Qwen3, OLMo-2): each Q and K head is RMS-normalised over its head_dim columns and
// scaled by γ_q / γ_k before the rotation, all in the epilogue (V passes through):
//   QKV = RoPE(QkNorm(A · W_qkvᵀ))             linear_qknorm_rope
//   QKV = RoPE(QkNorm(rstd ⊙ (H · W_qkvᵀ)))    linear_rmsnorm_qknorm_rope
// head_dim = N / (q_heads + 2 · kv_heads) must be 64 or 128; γ is permuted like the rows of
// W_q / W_k (rope_interleave_rows(1, head_dim) in weights.hpp). For training, pass `Pre` (bf16
// [M, N]): the projection before the norm (A · W_qkvᵀ, or rstd ⊙ (H · W_qkvᵀ)) is stored from the
// same epilogue, as the standard model saves it for qknorm_rope_bwd (its V columns equal QKV's);
// an empty `Pre` stores nothing.
// positions: [M] int32, one per token (per-document positions for packed sequences, < 2^24).
// frequencies: [N] fp32 as N/2 (hi, lo) pairs in turns per position, 0 for V columns
// (rope_frequencies in weights.hpp builds it). Host-visible.
#pragma once

#include <cuda_runtime_api.h>

#include "coda/ops/norm_stats.hpp"
#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

void linear_rope(const TensorView& QKV, const TensorView& A, const TensorView& W_qkv,
                 const TensorView& positions, const TensorView& frequencies,
                 cudaStream_t stream = nullptr, const OpOptions& options = {});

void linear_rmsnorm_rope(const TensorView& QKV, const TensorView& H, const TensorView& W_qkv,
                         const RowNormStats& stats, float eps, const TensorView& positions,
                         const TensorView& frequencies, cudaStream_t stream = nullptr,
                         const OpOptions& options = {});

// The per-head norm of linear_qknorm_rope.
struct QkNorm {
  TensorView q_weight;  // γ_q: bf16 [head_dim], pair order
  TensorView k_weight;  // γ_k: bf16 [head_dim], pair order
  int q_heads = 0;
  int kv_heads = 0;
  float eps = 1e-6f;
};

void linear_qknorm_rope(const TensorView& QKV, const TensorView& Pre, const TensorView& A,
                        const TensorView& W_qkv, const TensorView& positions,
                        const TensorView& frequencies, const QkNorm& qk_norm,
                        cudaStream_t stream = nullptr, const OpOptions& options = {});

void linear_rmsnorm_qknorm_rope(const TensorView& QKV, const TensorView& Pre, const TensorView& H,
                                const TensorView& W_qkv, const RowNormStats& stats, float eps,
                                const TensorView& positions, const TensorView& frequencies,
                                const QkNorm& qk_norm, cudaStream_t stream = nullptr,
                                const OpOptions& options = {});

}  // namespace coda::ops
