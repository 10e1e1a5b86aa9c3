// SPDX-License-Identifier: BSD-3-Clause
// The RoPE backward as one memory pass (docs/ops-math.md §2.0, §2.4; step 1 of the block backward,
// docs/design.md §9.3). With the forward's rotated output QKV (what linear_rope /
// linear_rmsnorm_rope stored; adjacent-pair order) and its gradient dQKV:
//   dZ = R(θ)ᵀ · dQKV on each pair (2j, 2j+1), θ = 2π · positions[m] · f[j]   [M, N] bf16
//        (V pairs have f = 0 and pass through); dZ may be dQKV itself (in place)
//   zdz[m] = Σ_k QKV[m, k] · dQKV[m, k]   [M] fp32: ⟨z, dz⟩ of the pre-rotation z, equal because R
//        is orthogonal — what linear_rmsnorm_bwd takes for the attention norm's backward
// dQKV: one [M, N] tensor, or attention's dQ | dK | dV read in place (qkv_grad.hpp).
// positions and frequencies as in the forward (linear_rope.hpp). Deterministic (a fixed
// per-row order), no host sync. Host-visible; bf16 tensors with contiguous 16-byte aligned rows.
#pragma once

#include <cuda_runtime_api.h>

#include "coda/ops/qkv_grad.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

void rope_bwd(const TensorView& dZ, const TensorView& zdz, const TensorView& QKV,
              const QkvGrad& dQKV, const TensorView& positions, const TensorView& frequencies,
              cudaStream_t stream = nullptr);

}  // namespace coda::ops
