// SPDX-License-Identifier: BSD-3-Clause
// Activation math for the epilogue, with the fast intrinsics (device-side). CUTLASS's SiLu divides
// with IEEE rounding (a dozen instructions); one ex2 and one rcp (mufu.hpp) are two MUFU
// instructions, and their error (~2 ulp of fp32) is far below the bf16 rounding of the output.
// silu(x) → 0 as x → −∞: the quotient becomes x · 0 (1 / (1 + ∞) = 0), not NaN.
#pragma once

#include <cutlass/cutlass.h>

#include "coda/epilogue/mufu.hpp"

namespace coda::epilogue {

// σ(x) = 1 / (1 + e^−x).
CUTLASS_DEVICE float fast_sigmoid(float x) { return rcp_ftz(1.0f + fast_exp(-x)); }

// silu(x) = x · σ(x); silu'(x) = σ(x) · (1 + x · (1 − σ(x))) (gated.hpp).
CUTLASS_DEVICE float fast_silu(float x) { return x * fast_sigmoid(x); }

// GELU, tanh form (PyTorch's F.gelu(x, approximate="tanh"); CUTLASS's GELU is the erf form):
//   gelu(x) = 0.5 · x · (1 + tanh(u)),  u = √(2/π) · (x + 0.044715 · x³),
// computed as x · σ(2u) (1 + tanh(u) = 2σ(2u)), which has no cancellation where tanh(u) → −1:
// gelu(x) → −0 as x → −∞ (x · 0, as fast_silu), x once x³ overflows, NaN at −∞ (−∞ · 0, as the
// tanh form gives).
constexpr float kGeluTanh2Beta = 2.0f * 0.7978845608028654f;  // 2 · √(2/π)
constexpr float kGeluTanhKappa = 0.044715f;
CUTLASS_DEVICE float fast_gelu_tanh(float x) {
  return x * fast_sigmoid(kGeluTanh2Beta * (x + kGeluTanhKappa * x * x * x));
}
// gelu'(x) = σ(z) + x · σ(z) · (1 − σ(z)) · z',  z = 2u,  z' = 2√(2/π) · (1 + 3 · 0.044715 · x²).
// Beyond |x| = 30 it is exactly 1 or 0 in fp32, so x is clamped there (z' and x³ stay finite: no
// 0 · ∞ for large finite x); + 0 · x keeps NaN and ±∞ inputs NaN, as the tanh form's
// 0.5 · (1 + t) + 0.5 · x · (1 − t²) · u' gives them.
CUTLASS_DEVICE float fast_gelu_tanh_grad(float x) {
  const float c = fminf(fmaxf(x, -30.0f), 30.0f);
  const float s = fast_sigmoid(kGeluTanh2Beta * (c + kGeluTanhKappa * c * c * c));
  return s + c * s * (1.0f - s) * kGeluTanh2Beta * (1.0f + 3.0f * kGeluTanhKappa * c * c) +
         0.0f * x;
}

}  // namespace coda::epilogue
