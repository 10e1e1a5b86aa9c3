// SPDX-License-Identifier: BSD-3-Clause
// Runtime inputs and outputs of the example epilogue programs (host-visible; the programs
// themselves are in example_programs.hpp). Pointers are device pointers; strides in elements.
#pragma once

#include <cstdint>

namespace coda::epilogue {

// X = acc + R → D;  Σ X² per (row, N-tile) → sumsq partials;  H = X ⊙ w → normed.
struct ResidualRmsParams {
  const void* residual = nullptr;  // R: bf16 [M, N]
  std::int64_t residual_stride = 0;
  const void* norm_weight = nullptr;  // w: bf16 [N]
  void* normed = nullptr;             // H: bf16 [M, N]
  std::int64_t normed_stride = 0;
  float* sumsq_partials = nullptr;  // per-row partials (partial_reduction.hpp layout)
};

// D = α · r[m] · acc  (the deferred RMSNorm: r = rstd).
struct RowScaleParams {
  const float* alpha = nullptr;      // device scalar
  const float* row_scale = nullptr;  // r: fp32 [M]
};

// Y = silu(acc + b[n]) → D;  Σ_m Y per (column, M-tile) → col partials.
struct BiasSiluColSumParams {
  const void* bias = nullptr;     // b: bf16 [N]
  float* col_partials = nullptr;  // per-col partials (partial_reduction.hpp layout)
};

// One primitive family each, for measuring families on their own (`coda-bench epilogue`):
// D = silu(acc)                                   (element-wise)
struct ActivationParams {};
// D = acc + R                                     (tile load)
struct ResidualAddParams {
  const void* residual = nullptr;  // R: bf16 [M, N]
  std::int64_t residual_stride = 0;
};
// D = acc;  Σ acc² per (row, N-tile) → partials   (partial reduction)
struct RowSumSquaresParams {
  float* sumsq_partials = nullptr;
};

}  // namespace coda::epilogue
