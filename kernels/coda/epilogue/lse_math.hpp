// SPDX-License-Identifier: BSD-3-Clause
// The log-sum-exp arithmetic of the cross-entropy paths — the online node (online_lse.hpp), the
// partial merges (merge.cu, linear_cross_entropy.cu) and the fwd+bwd row kernel — with NaN and
// ±Inf giving what the standard computation gives (torch.logsumexp, docs/numerics.md): a NaN
// term gives NaN, a +Inf term (and no NaN) gives +Inf, an empty or all −Inf sum gives −Inf.
// Device-side; no CUTLASS.
#pragma once

#include "coda/epilogue/mufu.hpp"

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

// Σ exp(x − max) in base 2, one MUFU.EX2 per term. The fused form 2^(x·log2 e − shift), with
// shift = fl(max · log2 e), is one FFMA; but the rounding of shift puts an absolute error of up to
// |max| · 2^-24 into every exponent. Common to the row, it changes the lse by only that much, until
// it overflows or underflows a term outright (|max| beyond ~2^30: the extreme-row tests reach
// 1e18). A running sum whose max reaches kFusedShiftLimit (no real logit does) therefore takes the
// exact form 2^((x − max) · log2 e), one FADD more. Below the limit the error is < 0.006 in the
// exponent, so sums rescaled from one form into the other stay within that.
constexpr float kFusedShiftLimit = 65536.0f;

__device__ __forceinline__ bool needs_exact_shift(float max) {
  return fabsf(max) >= kFusedShiftLimit && fabsf(max) != INFINITY;  // NaN: false
}
// The fused form's shift: max · log2 e; +∞ for an empty max (−∞), so that −∞ terms give 2^−∞ = 0.
__device__ __forceinline__ float log2_shift(float max) {
  return max == -INFINITY ? INFINITY : max * kLog2e;
}
__device__ __forceinline__ float exp_term_fused(float x, float shift) {
  return exp2_ftz(fmaf(x, kLog2e, -shift));
}
__device__ __forceinline__ float exp_term_exact(float x, float max) {
  return max == -INFINITY ? 0.0f : exp2_ftz((x - max) * kLog2e);
}
// The factor that turns a sum of terms for max `old` into one for max `m` (≥ old, or NaN), in the
// form the terms take: 0 from an empty sum (old = −∞) and towards +∞ (the lse is then +∞).
__device__ __forceinline__ float rescale_factor(float old, float m, bool exact) {
  return exp2_ftz(exact ? (old - m) * kLog2e : old * kLog2e - log2_shift(m));
}

}  // namespace coda::epilogue
