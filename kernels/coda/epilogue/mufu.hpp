// SPDX-License-Identifier: BSD-3-Clause
// 2^x and 1/x as one MUFU instruction each, in their flush-to-zero forms (device-side; no
// CUTLASS). Without .ftz, nvcc wraps every MUFU.EX2 / MUFU.RCP in a denormal-range rescale (a
// compare and two multiplies; __expf and __fdividef get it too in a build without -ftz=true),
// which in an epilogue that computes one exponential per output element is most of its cost.
// Flushing changes only values below 2^-126 in magnitude, far below any bf16 output's rounding
// at the scale of its row. NaN and ±∞ go through as in IEEE arithmetic: 2^+∞ = +∞, 2^−∞ = +0,
// 1/±∞ = ±0, 1/0 = +∞, NaN → NaN. Error ~2 ulp of fp32.
#pragma once

namespace coda::epilogue {

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float rcp_ftz(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// e^x = 2^(x · log2 e): one multiply and one MUFU.EX2.
__device__ __forceinline__ float fast_exp(float x) { return exp2_ftz(x * kLog2e); }

}  // namespace coda::epilogue
