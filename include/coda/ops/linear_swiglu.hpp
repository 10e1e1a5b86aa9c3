// SPDX-License-Identifier: BSD-3-Clause
// The MLP's first projection with SwiGLU in the epilogue (docs/ops-math.md §2.3). One GEMM over the
// gate/up weight interleaved by row (W_gu row 2j = gate row j, row 2j + 1 = up row j:
// gate_up_interleave_rows in weights.hpp), so output columns (2j, 2j+1) are (g_j, u_j):
//   Z = A · W_guᵀ              [M, 2F]  pre-activation, saved for the backward; optional: pass
//                                       a TensorView with null data and Z is never written
//                                       (recompute it in the backward; half the output traffic)
//   Y[m, j] = silu(Z[m, 2j]) · Z[m, 2j+1]   [M, F]
// The rmsnorm variant takes H = X ⊙ w and the stats of X (linear_norm.hpp) and computes
// Z = rstd ⊙ (H · W_guᵀ), i.e. the SwiGLU of RMSNorm(X)'s projection. Host-visible; bf16, rows
// contiguous and 16-byte aligned.
#pragma once

#include <cuda_runtime_api.h>

#include "coda/ops/norm_stats.hpp"
#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

void linear_swiglu(const TensorView& Z, const TensorView& Y, const TensorView& A,
                   const TensorView& W_gate_up, cudaStream_t stream = nullptr,
                   const OpOptions& options = {});

void linear_rmsnorm_swiglu(const TensorView& Z, const TensorView& Y, const TensorView& H,
                           const TensorView& W_gate_up, const RowNormStats& stats, float eps,
                           cudaStream_t stream = nullptr, const OpOptions& options = {});

}  // namespace coda::ops
