// SPDX-License-Identifier: BSD-3-Clause
// The residual add with the next norm's statistics: X = acc + R, Σx², X ⊙ w. (Device-side,
// CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/partial_reduction.hpp"

namespace coda::epilogue {

// X = acc + R → D;  Σ X² → per-row partials;  X ⊙ w → H
struct ResidualRms {
  using Params = ResidualRmsParams;
  // Σ X² is taken over X = acc + R before rounding, where the framework rounds acc first: with
  // a bf16 handoff the two round at different points, and one row's sum missed the contract
  // (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  template <class Ctx>
  using Callbacks = Split<
      Add<Acc, TileLoad<Ctx, bf16>>,                        // X = acc + R
      PerRowPartialSumSquares<Ctx, Shared>,                 // D = X, partial Σ X²
      TileStore<Ctx, bf16, Mul<Shared, PerCol<Ctx, bf16>>>  // H = X ⊙ w
      >;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    // input tree: Add(Acc, TileLoad)
    a.op_0.op_1 = {static_cast<const bf16*>(p.residual), bf16(0), row_major_stride(p.residual_stride)};
    // side tree: TileStore(Mul(Shared, PerCol))
    a.op_1.op_0.op_1 = {static_cast<const bf16*>(p.norm_weight), bf16(0), {}};
    a.op_1.op_1 = {static_cast<bf16*>(p.normed), row_major_stride(p.normed_stride)};
    // output tree: PerRowPartialSumSquares(Shared)
    a.op_2.op_1 = {p.sumsq_partials, 0.0f, {}};
  }
};
CODA_COMPILE_PROGRAM(ResidualRms, kAkBk, bf16);

}  // namespace coda::epilogue
