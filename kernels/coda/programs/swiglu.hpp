// SPDX-License-Identifier: BSD-3-Clause
// SwiGLU over interleaved gate/up columns, with or without the deferred norm and Z. (Device-side,
// CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/gated.hpp"
#include "coda/programs/rstd_row_scale.hpp"

namespace coda::epilogue {

// D = Z = acc;  Y = silu(Z[:, 2j]) · Z[:, 2j+1] → half-width gated output
struct SwiGluPairs {
  using Params = SwiGluPairsParams;
  template <class Ctx>
  using Callbacks = GatedPairStore<SiluGate, Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {static_cast<bf16*>(p.gated), p.gated_stride};
  }
};
CODA_COMPILE_PROGRAM(SwiGluPairs, kAkBk, bf16);

// Z = rstd[m] · acc → D;  Y = silu(Z[:, 2j]) · Z[:, 2j+1] → half-width output (RMSNorm → SwiGLU)
struct RstdSwiGluPairs {
  using Params = RstdSwiGluPairsParams;
  // rstd[m] · acc is rounded once by the framework: no bf16 handoff (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  template <class Ctx>
  using Callbacks = GatedPairStore<SiluGate, Mul<RowRstd, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0 = p.rstd;
    SwiGluPairs::fill(a, p.gated);
  }
};
CODA_COMPILE_PROGRAM(RstdSwiGluPairs, kAkBk, bf16);

// SwiGluPairs and RstdSwiGluPairs compiled with no D (void below): Y only, Z not stored.
struct SwiGluPairsNoD : SwiGluPairs {
  using Params = SwiGluPairsNoDParams;
};
CODA_COMPILE_PROGRAM(SwiGluPairsNoD, kAkBk, void);
struct RstdSwiGluPairsNoD : RstdSwiGluPairs {
  using Params = RstdSwiGluPairsNoDParams;
};
CODA_COMPILE_PROGRAM(RstdSwiGluPairsNoD, kAkBk, void);

}  // namespace coda::epilogue
