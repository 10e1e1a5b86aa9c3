// SPDX-License-Identifier: BSD-3-Clause
// RoPE on column pairs, with or without the deferred norm. (Device-side, CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/rope.hpp"
#include "coda/programs/rstd_row_scale.hpp"

namespace coda::epilogue {

// D = RoPE(acc) with θ = 2π · position[m] · f[j] on the pair (2j, 2j+1)
struct RopeRotate {
  using Params = RopeRotateParams;
  template <class Ctx>
  using Callbacks = RopePairs<Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {p.positions, p.frequencies};
  }
};
CODA_COMPILE_PROGRAM(RopeRotate, kAkBk, bf16);

// D = RoPE(rstd[m] · acc) (RMSNorm → fused QKV projection → RoPE)
struct RstdRopeRotate {
  using Params = RstdRopeRotateParams;
  // rstd[m] · acc is rounded once by the framework: no bf16 handoff (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  template <class Ctx>
  using Callbacks = RopePairs<Mul<RowRstd, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0 = p.rstd;
    RopeRotate::fill(a, p.rope);
  }
};
CODA_COMPILE_PROGRAM(RstdRopeRotate, kAkBk, bf16);

}  // namespace coda::epilogue
