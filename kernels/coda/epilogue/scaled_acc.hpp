// SPDX-License-Identifier: BSD-3-Clause
// The plain GEMM's epilogue program: D = α · acc, α a device scalar (nullptr: α = 1).
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cutlass/epilogue/fusion/operations.hpp>

namespace coda::epilogue {

struct ScaledAcc {
  template <class Ctx>
  using Callbacks = cutlass::epilogue::fusion::ScaledAcc<typename Ctx::ElementD, float, float>;

  template <class FusionArguments>
  static FusionArguments arguments(const float* alpha) {
    FusionArguments args{};
    args.alpha = 1.0f;
    args.alpha_ptr = alpha;  // read on the device when set
    return args;
  }
};

}  // namespace coda::epilogue
