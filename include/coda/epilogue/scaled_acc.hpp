// SPDX-License-Identifier: BSD-3-Clause
// The plain GEMM's epilogue program: D = α · acc, α a device scalar (nullptr: α = 1).
#pragma once

#include <cutlass/epilogue/fusion/operations.hpp>

namespace coda::epilogue {

struct ScaledAcc {
  template <class CtaTile, class EpilogueTile, class ElementD>
  using Callbacks = cutlass::epilogue::fusion::ScaledAcc<ElementD, float, float>;

  template <class FusionArguments>
  static FusionArguments arguments(const float* alpha) {
    FusionArguments args{};
    args.alpha = 1.0f;
    args.alpha_ptr = alpha;  // read on the device when set
    return args;
  }
};

}  // namespace coda::epilogue
