// SPDX-License-Identifier: BSD-3-Clause
// The QK-norm + RoPE backward as one memory pass (docs/ops-math.md §2.9; the forward is
// linear_qknorm_rope / linear_rmsnorm_qknorm_rope with `Pre` saved). For each Q or K head of
// width hd of row m, with p = Pre[m, head], r = rsqrt(mean(p²) + eps), p̂ = p · r, γ = γ_q or γ_k
// and dn = R(θ)ᵀ · dQKV[m, head] (the inverse rotation, θ as in the forward):
//   dPre = r · (γ ⊙ dn − p̂ · mean(p̂ ⊙ γ ⊙ dn))        [M, N] bf16; V columns: dPre = dQKV.
//                                                     dPre may be dQKV itself (in place)
//   ∂γ_q, ∂γ_k = Σ over rows and Q (K) heads of p̂ ⊙ dn   fp32 [hd], in γ's (pair) order;
//                                                     written, or added into (micro-batches)
//   zdz[m] = Σ_k Pre[m, k] · dPre[m, k]               [M] fp32: ⟨z, dz⟩ of the projection's
//                                                     output, what linear_rmsnorm_bwd takes
// dQKV: one [M, N] tensor, or attention's dQ | dK | dV read in place (qkv_grad.hpp).
// Deterministic: ∂γ is summed per block of rows into `workspace`, then over blocks in a fixed
// order; no atomics, no host sync. Host-visible; bf16 tensors with contiguous 16-byte aligned rows.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "coda/ops/linear_rope.hpp"
#include "coda/ops/qkv_grad.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

// Where the γ gradients go.
struct QkNormGrads {
  TensorView q_weight;      // ∂γ_q: fp32 [head_dim]
  TensorView k_weight;      // ∂γ_k: fp32 [head_dim]
  bool accumulate = false;  // add into them instead of overwriting
};

// The scratch qknorm_rope_bwd needs for m rows of heads of width head_dim.
std::size_t qknorm_rope_bwd_workspace_bytes(std::int64_t m, int head_dim);

void qknorm_rope_bwd(const TensorView& dPre, const TensorView& zdz, const QkNormGrads& dgamma,
                     const TensorView& Pre, const QkvGrad& dQKV, const TensorView& positions,
                     const TensorView& frequencies, const QkNorm& qk_norm, void* workspace,
                     std::size_t workspace_bytes, cudaStream_t stream = nullptr);

}  // namespace coda::ops
