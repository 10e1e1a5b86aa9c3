// SPDX-License-Identifier: BSD-3-Clause
// The arithmetic that finishes per-row partials, shared by the merge kernels (merge.cu) and the
// in-register RowRstd leaf (row_rstd.hpp) so both give the same bits. Device-side.
#pragma once

#include <cstdint>

namespace coda::epilogue {

// Σ_t partials[t·padded + i], in tile order.
__device__ __forceinline__ float sum_of_partials(const float* partials, int tiles,
                                                 std::int64_t padded, std::int64_t i) {
  float sum = 0.0f;
  for (int t = 0; t < tiles; ++t) sum += __ldg(partials + t * padded + i);
  return sum;
}

// RMSNorm's statistic from Σx² over `width` features: 1 / sqrt(Σx² / width + eps).
__device__ __forceinline__ float rstd_from_sum(float sum_squares, float inv_width, float eps) {
  return rsqrtf(sum_squares * inv_width + eps);
}

}  // namespace coda::epilogue
