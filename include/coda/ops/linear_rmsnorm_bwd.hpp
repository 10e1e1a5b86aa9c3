// SPDX-License-Identifier: BSD-3-Clause
// The RMSNorm backward fused into the input-gradient GEMM of the linear that consumed the norm
// (docs/ops-math.md §2.0, §2.7). Forward: u = X · r (r = rstd), N = u ⊙ w, Z = N · Wᵀ (the
// linear_rmsnorm* ops compute it with the norm deferred). Backward, with dZ the gradient of Z:
//   G  = α · dZ · W                    the dgrad GEMM (α: optional fp32 device scalar, else 1)
//   dX = r · (G ⊙ w − u · c)           c = zdz / D, zdz[m] = Σ_k Z[m, k] · dZ[m, k]: the consumer's
//                                      backward has it (linear_swiglu_bwd's zdz), so no extra pass
//        written to dX, or with accumulate added to it by TMA reduce-add (the residual stream's
//        incoming gradient; the add is in fp32 on the bf16 value, as an autograd sum)
//   N  = u ⊙ w      [M, D] bf16        re-materialised for ∂W = dZᵀ · N (the forward need not keep
//   it) dw = Σ_m G ⊙ u  [D] fp32           the norm weight's gradient (deterministic merge)
// r comes from X's Σx² statistics as the forward left them (stats; norm_stats.hpp). One GEMM and
// one small merge; no host sync. Host-visible; bf16 tensors with contiguous 16-byte aligned rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "coda/ops/norm_stats.hpp"
#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

// The saved forward state of one RMSNorm: its input, statistics, weight and eps.
struct RmsNormSaved {
  TensorView X;        // [M, D] bf16
  RowNormStats stats;  // Σx² of X per row, as its producer wrote them
  TensorView weight;   // w: [D] bf16
  float eps = 1e-5f;
};

// Bytes of device scratch linear_rmsnorm_bwd needs for M tokens and D features.
std::size_t linear_rmsnorm_bwd_workspace_bytes(std::int64_t m, std::int64_t d);

// dZ: [M, N] bf16; W: [N, D] bf16 (nn.Linear layout); zdz: [M] fp32; dX, N: [M, D] bf16;
// dw: [D] fp32; alpha: empty or an fp32 [1] device scalar.
void linear_rmsnorm_bwd(const TensorView& dX, bool accumulate, const TensorView& N,
                        const TensorView& dw, const TensorView& dZ, const TensorView& W,
                        const RmsNormSaved& norm, const TensorView& zdz, void* workspace,
                        std::size_t workspace_bytes, const TensorView& alpha = {},
                        cudaStream_t stream = nullptr, const OpOptions& options = {});

}  // namespace coda::ops
