// SPDX-License-Identifier: BSD-3-Clause
// The RMSNorm backward's element-wise step (docs/ops-math.md §2.0), as a scalar functor for
// MapNode: with u = X · r (r = rstd), the norm's output gradient G, its weight w and
// c = (1/D) Σ_k z · dz (the ⟨z, dz⟩ of the linear that consumed the norm, from that linear's
// output side):
//   dX = r · (G ⊙ w − u · c)
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cutlass/cutlass.h>

namespace coda::epilogue {

struct RmsNormInputGrad {
  CUTLASS_DEVICE float operator()(float g, float w, float u, float c, float r) const {
    return r * (g * w - u * c);
  }
};

}  // namespace coda::epilogue
