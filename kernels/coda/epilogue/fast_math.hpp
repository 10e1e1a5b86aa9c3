// SPDX-License-Identifier: BSD-3-Clause
// Activation math for the epilogue, with the fast intrinsics (device-side). CUTLASS's SiLu divides
// with IEEE rounding (a dozen instructions); __expf + __fdividef is a few, and its error (~2 ulp
// of fp32) is far below the bf16 rounding of the output. silu(x) → 0 as x → −∞ (the quotient
// becomes x · 0, not NaN: __fdividef returns 0 for a divisor above 2^126).
#pragma once

#include <cutlass/cutlass.h>

namespace coda::epilogue {

CUTLASS_DEVICE float fast_silu(float x) { return __fdividef(x, 1.0f + __expf(-x)); }

// silu'(x) = σ(x) · (1 + x · (1 − σ(x)))
CUTLASS_DEVICE float fast_sigmoid(float x) { return __fdividef(1.0f, 1.0f + __expf(-x)); }

}  // namespace coda::epilogue
