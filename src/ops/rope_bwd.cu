// SPDX-License-Identifier: BSD-3-Clause
// rope_bwd: one warp per row; lane l takes the column pairs l, l + 32, ... (4-byte bf16x2 loads, a
// warp reads 128 contiguous bytes), sums y · dy in double (free in a memory-bound pass) and the
// warp combines in a fixed order.
#include <cuda_bf16.h>

#include <string>
#include <utility>

#include "coda/epilogue/rope_table.hpp"
#include "coda/ops/rope_bwd.hpp"
#include "coda/status.hpp"
#include "op_checks.hpp"
#include "qkv_grad_blocks.hpp"

namespace coda::ops {

namespace {

constexpr const char* kWhere = "coda::ops::rope_bwd";
constexpr int kWarpsPerBlock = 8;

__global__ void rope_bwd_kernel(const __nv_bfloat162* y, std::int64_t y_stride,
                                detail::QkvGradBlocks dy, __nv_bfloat162* dz, std::int64_t dz_stride,
                                const std::int32_t* positions,
                                const epilogue::RopeFrequency* frequencies, float* zdz, int rows,
                                int pairs) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::int32_t position = positions[row];
  double sum = 0.0;  // bf16 · bf16 is exact in fp32; summed in double, zdz is correctly rounded
  for (int j = lane; j < pairs; j += 32) {
    const float2 yv = __bfloat1622float2(y[row * y_stride + j]);
    const float2 g =
        __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(dy.at(row, 2 * j)));
    sum += double(yv.x * g.x) + double(yv.y * g.y);
    const epilogue::RopeFrequency f = frequencies[j];
    float2 d = g;  // V pairs (f = 0) pass through untouched, as the standard model never rotates V
    if (f.hi != 0.0f || f.lo != 0.0f) {
      float s, c;
      epilogue::rope_sincos(position, f, s, c);
      // R(θ)ᵀ = R(−θ): (g0 cos θ + g1 sin θ, −g0 sin θ + g1 cos θ)
      d = make_float2(g.x * c + g.y * s, g.y * c - g.x * s);
    }
    dz[row * dz_stride + j] = __floats2bfloat162_rn(d.x, d.y);
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) zdz[row] = float(sum);
}

}  // namespace

void rope_bwd(const TensorView& dZ, const TensorView& zdz, const TensorView& QKV,
              const QkvGrad& dQKV, const TensorView& positions, const TensorView& frequencies,
              cudaStream_t stream) {
  const ArgCheck check(kWhere);
  check.not_null(QKV, "QKV");
  check.rank_is(QKV, "QKV", 2);
  const std::int64_t m = QKV.shape[0], n = QKV.shape[1];
  if (n % 2 != 0)
    check.fail("QKV: needs an even number of columns (RoPE pairs); got " + std::to_string(n));
  detail::require_bf16_matrix(check, QKV, "QKV", m, n, QKV.device);
  const detail::QkvGradBlocks dy = detail::require_qkv_grad(check, dQKV, "dQKV", m, n, QKV.device);
  detail::require_bf16_matrix(check, dZ, "dZ", m, n, QKV.device);
  detail::require_vector(check, zdz, "zdz", m, DType::kF32, QKV.device);
  detail::require_vector(check, positions, "positions", m, DType::kI32, QKV.device);
  detail::require_vector(check, frequencies, "frequencies", n, DType::kF32, QKV.device);
  // dZ may overwrite an unsplit dQKV in place (each pair is read, then written, by one thread).
  detail::require_memory(check, QKV.device, {{"dZ", dZ}, {"zdz", zdz}},
                         {{"QKV", QKV},
                          {"dQKV", dQKV.q},
                          {"dQKV.k", dQKV.k},
                          {"dQKV.v", dQKV.v},
                          {"positions", positions},
                          {"frequencies", frequencies}},
                         {{"dZ", "dQKV"}});
  const unsigned blocks = static_cast<unsigned>((m + kWarpsPerBlock - 1) / kWarpsPerBlock);
  rope_bwd_kernel<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(
      static_cast<const __nv_bfloat162*>(QKV.data), QKV.stride[0] / 2, dy,
      static_cast<__nv_bfloat162*>(dZ.data), dZ.stride[0] / 2,
      static_cast<const std::int32_t*>(positions.data),
      static_cast<const epilogue::RopeFrequency*>(frequencies.data), static_cast<float*>(zdz.data),
      static_cast<int>(m), static_cast<int>(n / 2));
  const cudaError_t err = cudaGetLastError();
  require(err == cudaSuccess, kWhere, std::string("kernel launch: ") + cudaGetErrorString(err));
}

}  // namespace coda::ops
