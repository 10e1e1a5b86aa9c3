// SPDX-License-Identifier: BSD-3-Clause
// The log-sum-exp arithmetic of the cross-entropy paths — the online node (online_lse.hpp), the
// partial merges (merge.cu, linear_cross_entropy.cu) and the fwd+bwd row kernel — with NaN and
// ±Inf giving what the standard computation gives (torch.logsumexp, docs/numerics.md): a NaN
// term gives NaN, a +Inf term (and no NaN) gives +Inf, an empty or all −Inf sum gives −Inf.
// Device-side; no CUTLASS.
#pragma once

namespace coda::epilogue {

// max(a, b) that returns NaN when either is NaN (fmaxf drops it): PTX max.NaN, one instruction
// like fmaxf, so the running maxima carry a NaN logit to the end at no cost.
__device__ __forceinline__ float max_nan(float a, float b) {
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

// log Σ exp(x) from max = the max_nan of the terms and sum = Σ exp(x − max). An infinite max is
// the result, as torch.logsumexp masks it: +Inf (the sum holds exp(+Inf); max + log(sum) would be
// NaN, the sum having exp(Inf − Inf)), −Inf (every term −Inf). A NaN max gives NaN through the
// addition; a finite one max + log(sum), sum ≥ 1.
__device__ __forceinline__ float lse_of(float max, float sum) {
  return isinf(max) ? max : max + logf(sum);
}

}  // namespace coda::epilogue
