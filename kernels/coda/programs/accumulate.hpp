// SPDX-License-Identifier: BSD-3-Clause
// D += acc by TMA reduce-add (residual-stream and weight gradients). (Device-side, CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"


namespace coda::epilogue {

// D += acc (TMA reduce-add into the existing D)
struct ResidualAccumulate {
  using Params = ResidualAccumulateParams;
  static constexpr bool kAccumulateIntoD = true;
  template <class Ctx>
  using Callbacks = Acc;

  template <class Args>
  static void fill(Args&, const Params&) {}
};
CODA_COMPILE_EXAMPLE(ResidualAccumulate, kAkBk, bf16);

// ResidualAccumulate compiled for fp32 D in the wgrad layout.
struct WeightGradAccumulate : ResidualAccumulate {
  using Params = WeightGradAccumulateParams;
};
CODA_COMPILE_PROGRAM(WeightGradAccumulate, kAmBn, float);

}  // namespace coda::epilogue
