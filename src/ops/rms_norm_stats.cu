// SPDX-License-Identifier: BSD-3-Clause
// The first block's norm: H = X ⊙ w and Σx² per row, one warp per row (memory-bound).
#include <cuda_bf16.h>

#include <string>

#include "coda/epilogue/merge.hpp"
#include "coda/ops/norm_stats.hpp"
#include "coda/status.hpp"
#include "op_checks.hpp"

namespace coda::ops {

namespace {

constexpr int kWarpsPerBlock = 8;

// Lane l handles columns l, l + 32, ...; the warp sums in a fixed shuffle order (deterministic).
__global__ void rms_norm_stats_kernel(const __nv_bfloat16* x, std::int64_t x_stride,
                                      const __nv_bfloat16* w, __nv_bfloat16* h,
                                      std::int64_t h_stride, float* sumsq, int rows, int cols) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const __nv_bfloat16* xr = x + row * x_stride;
  __nv_bfloat16* hr = h + row * h_stride;
  float sum = 0.0f;
  for (int c = lane; c < cols; c += 32) {
    const float v = __bfloat162float(xr[c]);
    sum = fmaf(v, v, sum);
    hr[c] = __float2bfloat16(v * __bfloat162float(w[c]));
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) sumsq[row] = sum;
}

}  // namespace

std::int64_t norm_stats_floats(std::int64_t m, std::int64_t n) {
  return epilogue::per_row_partial_floats_any_config(m, n);
}

void rms_norm_stats(const TensorView& H, RowNormStats& stats, const TensorView& X,
                    const TensorView& norm_weight, cudaStream_t stream) {
  const ArgCheck check("coda::ops::rms_norm_stats");
  check.not_null(X, "X");
  check.rank_is(X, "X", 2);
  const std::int64_t m = X.shape[0], n = X.shape[1];
  detail::require_bf16_matrix(check, X, "X", m, n, X.device);
  detail::require_bf16_matrix(check, H, "H", m, n, X.device);
  detail::require_vector(check, norm_weight, "norm_weight", n, DType::kBF16, X.device);
  detail::require_stats_buffer(check, stats, m, n);
  detail::require_memory(check, X.device,
                         {{"H", H}, {"stats.partials", detail::stats_written(stats, m, n)}},
                         {{"X", X}, {"norm_weight", norm_weight}});

  const int blocks = static_cast<int>((m + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rms_norm_stats_kernel<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(X.data), X.stride[0],
      static_cast<const __nv_bfloat16*>(norm_weight.data), static_cast<__nv_bfloat16*>(H.data),
      H.stride[0], stats.partials, static_cast<int>(m), static_cast<int>(n));
  const cudaError_t err = cudaGetLastError();
  require(err == cudaSuccess, "coda::ops::rms_norm_stats",
          std::string("kernel launch: ") + cudaGetErrorString(err));
  stats.layout = {1, m};
  stats.width = static_cast<int>(n);
}

}  // namespace coda::ops
