// SPDX-License-Identifier: BSD-3-Clause
// GELU-tanh after a bias (linear_bias_gelu), with the pre-activation saved, and its backward.
// (Device-side, CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/partial_reduction.hpp"

namespace coda::epilogue {

// Y = GELU_tanh(acc + b[n]) → D   (linear_bias_gelu)
struct BiasGelu {
  using Params = BiasGeluParams;
  // acc + b is rounded once by the framework's linear layer: no bf16 handoff (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  template <class Ctx>
  using Callbacks = GeluTanh<Add<Acc, PerCol<Ctx, bf16>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_1 = {static_cast<const bf16*>(p.bias), bf16(0), {}};  // b[n]
  }
};
CODA_COMPILE_PROGRAM(BiasGelu, kAkBk, bf16);

// P = acc + b[n] → pre;  Y = GELU_tanh(P) → D (from fp32 P, not its bf16 copy)
struct BiasGeluSavePre {
  using Params = BiasGeluSavePreParams;
  // acc + b is rounded once by the framework's linear layer: no bf16 handoff (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  template <class Ctx>
  using Callbacks = GeluTanh<TileStore<Ctx, bf16, Add<Acc, PerCol<Ctx, bf16>>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0.op_1 = {static_cast<const bf16*>(p.bias), bf16(0), {}};          // b[n]
    a.op_0.op_1 = {static_cast<bf16*>(p.pre), row_major_stride(p.pre_stride)};  // → P
  }
};
CODA_COMPILE_PROGRAM(BiasGeluSavePre, kAkBk, bf16);

// dY = acc (dgrad: dOut · W_down);  dP = dY ⊙ GELU_tanh'(P) → D;  Σ_m dP → per-col partials (∂b)
struct BiasGeluBwd {
  using Params = BiasGeluBwdParams;
  // Its column (bias) / row (z·dz) sums are taken over values the framework rounds to bf16 first,
  // where the handoff rounds the accumulator instead (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  template <class Ctx>
  using Callbacks = PerColPartialSum<Ctx, Mul<Acc, GeluTanhGrad<TileLoad<Ctx, bf16>>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_1.op_0 = {static_cast<const bf16*>(p.pre), bf16(0), row_major_stride(p.pre_stride)};
    a.op_1 = {p.dbias_partials};
  }
};
CODA_COMPILE_PROGRAM(BiasGeluBwd, kAkBn, bf16);

}  // namespace coda::epilogue
