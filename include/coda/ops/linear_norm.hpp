// SPDX-License-Identifier: BSD-3-Clause
// The RMSNorm chain of a Llama block as two GEMM epilogues (docs/ops-math.md §2.0–2.2):
//   RMSNorm(X; w) · Wᵀ = diag(rstd) · ((X ⊙ w) · Wᵀ),   rstd = 1 / sqrt(mean(X²) + eps).
// The GEMM that produces X also writes H = X ⊙ w and the Σx² partials; the next GEMM runs on H and
// applies rstd per row in its epilogue. Host-visible; all tensors bf16 unless said, row-major,
// rows contiguous, 16-byte aligned (TMA); W in nn.Linear layout [out, in].
#pragma once

#include <cuda_runtime_api.h>

#include "coda/ops/norm_stats.hpp"
#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

// X = A · Wᵀ + R   (the new residual stream, [M, N]);   H = X ⊙ w   ([M, N], w: [N]);
// stats ← Σ X² per row of the fp32 X (before X is rounded to bf16).
// A: [M, K], W: [N, K], R: [M, N].
void linear_residual_rms(const TensorView& X, const TensorView& H, RowNormStats& stats,
                         const TensorView& A, const TensorView& W, const TensorView& R,
                         const TensorView& norm_weight, cudaStream_t stream = nullptr,
                         const OpOptions& options = {});

// D = RMSNorm(X) · Wᵀ computed as rstd[m] · (H · Wᵀ) with H = X ⊙ w and rstd from `stats`
// (both from the producer of X). H: [M, K], W: [N, K], D: [M, N].
void linear_rmsnorm(const TensorView& D, const TensorView& H, const TensorView& W,
                    const RowNormStats& stats, float eps, cudaStream_t stream = nullptr,
                    const OpOptions& options = {});

}  // namespace coda::ops
