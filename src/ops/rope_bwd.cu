// SPDX-License-Identifier: BSD-3-Clause
// rope_bwd: one warp per row; lane l takes the 8-column groups l, l + 32, ... (16-byte loads and
// stores, four RoPE pairs each; the few pairs past the last whole group one at a time), sums
// y · dy in double (free in a memory-bound pass) and the warp combines in a fixed order. With
// 4-byte accesses the pass moved 2.0 TB/s at 8B widths on an H100 (forty-third session).
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

// One pair's gradient: dy rotated by −θ, R(θ)ᵀ = R(−θ): (g0 cos θ + g1 sin θ, −g0 sin θ + g1 cos θ).
// V pairs (f = 0) pass through untouched, as the standard model never rotates V. Adds y · dy to sum
// (bf16 · bf16 is exact in fp32; summed in double, zdz is correctly rounded).
__device__ __forceinline__ float2 pair_grad(float2 y, float2 g, std::int32_t position,
                                            epilogue::RopeFrequency f, double& sum) {
  sum += double(y.x * g.x) + double(y.y * g.y);
  if (f.hi == 0.0f && f.lo == 0.0f) return g;
  float s, c;
  epilogue::rope_sincos(position, f, s, c);
  return make_float2(g.x * c + g.y * s, g.y * c - g.x * s);
}

// Eight bf16 columns (16 bytes, 16-byte aligned: rows are, and groups start at multiples of 8).
union Group {
  uint4 raw;
  __nv_bfloat162 pairs[4];
};

__global__ void rope_bwd_kernel(const __nv_bfloat16* y, std::int64_t y_stride,
                                detail::QkvGradBlocks dy, __nv_bfloat16* dz, std::int64_t dz_stride,
                                const std::int32_t* positions,
                                const epilogue::RopeFrequency* frequencies, float* zdz, int rows,
                                int pairs) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::int32_t position = positions[row];
  const __nv_bfloat16* y_row = y + row * y_stride;
  __nv_bfloat16* dz_row = dz + row * dz_stride;
  double sum = 0.0;
  const int groups = pairs / 4;
  for (int g = lane; g < groups; g += 32) {
    const int col = 8 * g;
    Group yv, gv, out;
    yv.raw = *reinterpret_cast<const uint4*>(y_row + col);
    gv.raw = *reinterpret_cast<const uint4*>(dy.at(row, col));  // a group stays in one block
    for (int i = 0; i < 4; ++i) {
      const float2 d = pair_grad(__bfloat1622float2(yv.pairs[i]), __bfloat1622float2(gv.pairs[i]),
                                 position, frequencies[4 * g + i], sum);
      out.pairs[i] = __floats2bfloat162_rn(d.x, d.y);
    }
    *reinterpret_cast<uint4*>(dz_row + col) = out.raw;
  }
  for (int j = 4 * groups + lane; j < pairs; j += 32) {  // at most 3 pairs: n % 8 = 2, 4 or 6
    const int col = 2 * j;
    const float2 d = pair_grad(__bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(y_row + col)),
                               __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(dy.at(row, col))),
                               position, frequencies[j], sum);
    *reinterpret_cast<__nv_bfloat162*>(dz_row + col) = __floats2bfloat162_rn(d.x, d.y);
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
      static_cast<const __nv_bfloat16*>(QKV.data), QKV.stride[0], dy,
      static_cast<__nv_bfloat16*>(dZ.data), dZ.stride[0],
      static_cast<const std::int32_t*>(positions.data),
      static_cast<const epilogue::RopeFrequency*>(frequencies.data), static_cast<float*>(zdz.data),
      static_cast<int>(m), static_cast<int>(n / 2));
  const cudaError_t err = cudaGetLastError();
  require(err == cudaSuccess, kWhere, std::string("kernel launch: ") + cudaGetErrorString(err));
}

}  // namespace coda::ops
