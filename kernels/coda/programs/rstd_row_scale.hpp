// SPDX-License-Identifier: BSD-3-Clause
// The deferred RMSNorm: rstd[m] from the producer's Σx² partials, scaling the accumulator. (Device-
// side, CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/row_rstd.hpp"

namespace coda::epilogue {

// D = rstd[m] · acc, rstd folded in registers from the producing GEMM's Σx² partials
struct RstdRowScale {
  using Params = RstdRowScaleParams;
  // rstd[m] · acc is rounded once by the framework: no bf16 handoff (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  template <class Ctx>
  using Callbacks = Mul<RowRstd, Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0 = p;
  }
};
CODA_COMPILE_PROGRAM(RstdRowScale, kAkBk, bf16);

}  // namespace coda::epilogue
