// SPDX-License-Identifier: BSD-3-Clause
// qknorm_rope_bwd: one warp per row, 128 columns per step, lane l on columns 4l … 4l+3 (8-byte
// loads; two RoPE pairs). A head is hd / 4 consecutive lanes, so its sums are xor-shuffles within
// that lane group (every lane of a group ends with the same bits). ∂γ: each lane keeps its four γ
// columns for Q and for K over the block's rows; the block writes one partial per γ column, and a
// second kernel sums the blocks in a fixed order.
#include <cuda_bf16.h>

#include <string>
#include <utility>

#include "coda/epilogue/rope_table.hpp"
#include "coda/ops/qknorm_rope_bwd.hpp"
#include "coda/status.hpp"
#include "op_checks.hpp"
#include "qkv_grad_blocks.hpp"

namespace coda::ops {

namespace {

constexpr const char* kWhere = "coda::ops::qknorm_rope_bwd";
constexpr int kWarps = 8;
constexpr int kRowsPerWarp = 2;
constexpr int kRowsPerBlock = kWarps * kRowsPerWarp;
constexpr int kChunk = 128;  // columns per warp step

struct BwdArgs {
  const __nv_bfloat16* pre;
  std::int64_t pre_stride;
  detail::QkvGradBlocks dy;
  __nv_bfloat16* dpre;
  std::int64_t dpre_stride;
  const std::int32_t* positions;
  const epilogue::RopeFrequency* frequencies;
  const __nv_bfloat16* gamma_q;
  const __nv_bfloat16* gamma_k;
  float* zdz;
  float* block_partials;  // [blocks][2][head_dim]: ∂γ_q then ∂γ_k per block
  int rows, cols, q_cols, qk_cols;
  float eps;
};

__device__ __forceinline__ void load4(const __nv_bfloat16* p, float (&v)[4]) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
  const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
  v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
}

__device__ __forceinline__ void store4(__nv_bfloat16* p, const float (&v)[4]) {
  const __nv_bfloat162 a = __floats2bfloat162_rn(v[0], v[1]), b = __floats2bfloat162_rn(v[2], v[3]);
  uint2 raw;
  raw.x = *reinterpret_cast<const unsigned*>(&a);
  raw.y = *reinterpret_cast<const unsigned*>(&b);
  *reinterpret_cast<uint2*>(p) = raw;
}

// The sum over the Lanes consecutive lanes of one head.
template <int Lanes>
__device__ __forceinline__ float head_sum(float v) {
  for (int mask = 1; mask < Lanes; mask <<= 1) v += __shfl_xor_sync(0xffffffffu, v, mask);
  return v;
}

template <int HeadDim>
__global__ void __launch_bounds__(kWarps * 32) qknorm_rope_bwd_kernel(BwdArgs a) {
  constexpr int kHeadLanes = HeadDim / 4;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int gamma_col = (4 * lane) % HeadDim;  // the same in every 128-column step
  float gamma_q[4], gamma_k[4], dgamma_q[4] = {}, dgamma_k[4] = {};
  load4(a.gamma_q + gamma_col, gamma_q);
  load4(a.gamma_k + gamma_col, gamma_k);

  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int row = blockIdx.x * kRowsPerBlock + i * kWarps + warp;
    if (row >= a.rows) break;  // warp-uniform
    const std::int32_t position = a.positions[row];
    double zdz = 0.0;  // ⟨pre, dpre⟩ in double (free here): rounded once, to fp32
    for (int c0 = 0; c0 < a.cols; c0 += kChunk) {
      const int col = c0 + 4 * lane;
      const bool in = col < a.cols, qk = in && col < a.qk_cols, is_q = col < a.q_cols;
      float p[4] = {}, g[4] = {};
      if (in) {
        load4(a.pre + row * a.pre_stride + col, p);
        load4(a.dy.at(row, col), g);
      }
      // dn = R(θ)ᵀ g on the two pairs: (g0 cos θ + g1 sin θ, −g0 sin θ + g1 cos θ).
      float dn[4];
#pragma unroll
      for (int t = 0; t < 4; t += 2) {
        float s = 0.0f, c = 1.0f;
        if (qk) epilogue::rope_sincos(position, a.frequencies[col / 2 + t / 2], s, c);
        dn[t] = g[t] * c + g[t + 1] * s;
        dn[t + 1] = g[t + 1] * c - g[t] * s;
      }
      // Every lane joins the head sums (lanes of V columns or past N compute unused ones): a
      // 128-column step holds whole heads, and Q/K/V boundaries are multiples of head_dim.
      float gamma[4], ss = 0.0f, s_dot = 0.0f;
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        gamma[t] = is_q ? gamma_q[t] : gamma_k[t];  // selects: no local-memory array
        ss = fmaf(p[t], p[t], ss);
      }
      const float r = rsqrtf(head_sum<kHeadLanes>(ss) * (1.0f / HeadDim) + a.eps);
      float p_hat[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        p_hat[t] = p[t] * r;
        s_dot = fmaf(p_hat[t], gamma[t] * dn[t], s_dot);
      }
      const float mean_dot = head_sum<kHeadLanes>(s_dot) * (1.0f / HeadDim);
      float dp[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        dp[t] = qk ? r * (gamma[t] * dn[t] - p_hat[t] * mean_dot) : g[t];
        zdz += double(p[t]) * double(dp[t]);
      }
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        const float d = qk ? p_hat[t] * dn[t] : 0.0f;
        dgamma_q[t] += is_q ? d : 0.0f;
        dgamma_k[t] += is_q ? 0.0f : d;
      }
      // V columns: dPre = dQKV, already there when in place.
      __nv_bfloat16* out = a.dpre + row * a.dpre_stride + col;
      if (qk || (in && out != a.dy.at(row, col))) store4(out, dp);
    }
    for (int mask = 16; mask > 0; mask /= 2) zdz += __shfl_xor_sync(0xffffffffu, zdz, mask);
    if (lane == 0) a.zdz[row] = float(zdz);
  }

  // The block's ∂γ: lanes holding the same γ columns (head_dim 64: l and l + 16), then warps,
  // each in a fixed order.
  __shared__ float warp_sums[kWarps][2][HeadDim];
  for (int t = 0; t < 4; ++t)
    for (int mask = kHeadLanes; mask < 32; mask <<= 1) {
      dgamma_q[t] += __shfl_xor_sync(0xffffffffu, dgamma_q[t], mask);
      dgamma_k[t] += __shfl_xor_sync(0xffffffffu, dgamma_k[t], mask);
    }
  if (lane < kHeadLanes)
    for (int t = 0; t < 4; ++t) {
      warp_sums[warp][0][gamma_col + t] = dgamma_q[t];
      warp_sums[warp][1][gamma_col + t] = dgamma_k[t];
    }
  __syncthreads();
  for (int j = threadIdx.x; j < 2 * HeadDim; j += blockDim.x) {
    float sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) sum += warp_sums[w][j / HeadDim][j % HeadDim];
    a.block_partials[blockIdx.x * 2 * HeadDim + j] = sum;
  }
}

// ∂γ_q | ∂γ_k [column j of 2·head_dim] = Σ_blocks partials, written or added. Block x takes 32
// columns; warp w sums blocks w, w + 8, …, then warp 0 adds the 8 warp sums in order.
__global__ void __launch_bounds__(kWarps * 32)
    dgamma_reduce_kernel(const float* partials, int blocks, int head_dim, float* dgamma_q,
                         float* dgamma_k, bool accumulate) {
  __shared__ float warp_sums[kWarps][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, j = blockIdx.x * 32 + lane;
  const int width = 2 * head_dim;
  float sum = 0.0f;
  if (j < width)
    for (int b = warp; b < blocks; b += kWarps) sum += partials[b * width + j];
  warp_sums[warp][lane] = sum;
  __syncthreads();
  if (warp != 0 || j >= width) return;
  float total = 0.0f;
  for (int w = 0; w < kWarps; ++w) total += warp_sums[w][lane];
  float* out = j < head_dim ? dgamma_q + j : dgamma_k + (j - head_dim);
  *out = accumulate ? *out + total : total;
}

int blocks_for(std::int64_t m) { return static_cast<int>((m + kRowsPerBlock - 1) / kRowsPerBlock); }

}  // namespace

std::size_t qknorm_rope_bwd_workspace_bytes(std::int64_t m, int head_dim) {
  return std::size_t(blocks_for(m)) * 2 * std::size_t(head_dim) * sizeof(float);
}

void qknorm_rope_bwd(const TensorView& dPre, const TensorView& zdz, const QkNormGrads& dgamma,
                     const TensorView& Pre, const QkvGrad& dQKV, const TensorView& positions,
                     const TensorView& frequencies, const QkNorm& qk_norm, void* workspace,
                     std::size_t workspace_bytes, cudaStream_t stream) {
  const ArgCheck check(kWhere);
  check.not_null(Pre, "Pre");
  check.rank_is(Pre, "Pre", 2);
  const std::int64_t m = Pre.shape[0], n = Pre.shape[1];
  const int device = Pre.device;
  const int hd = detail::require_qk_norm(check, qk_norm, n, "Pre: columns", device);
  detail::require_bf16_matrix(check, Pre, "Pre", m, n, device);
  const detail::QkvGradBlocks dy = detail::require_qkv_grad(check, dQKV, "dQKV", m, n, device);
  detail::require_bf16_matrix(check, dPre, "dPre", m, n, device);
  detail::require_vector(check, zdz, "zdz", m, DType::kF32, device);
  detail::require_vector(check, positions, "positions", m, DType::kI32, device);
  detail::require_vector(check, frequencies, "frequencies", n, DType::kF32, device);
  detail::require_vector(check, dgamma.q_weight, "dgamma.q_weight", hd, DType::kF32, device);
  detail::require_vector(check, dgamma.k_weight, "dgamma.k_weight", hd, DType::kF32, device);
  detail::require_workspace(check, workspace, workspace_bytes,
                            qknorm_rope_bwd_workspace_bytes(m, hd),
                            "qknorm_rope_bwd_workspace_bytes(M, head_dim)");
  // dPre may overwrite an unsplit dQKV in place (a lane reads its four columns of a head before
  // anyone writes them); nothing else may share memory with an output.
  detail::require_memory(
      check, device,
      {{"dPre", dPre},
       {"zdz", zdz},
       {"dgamma.q_weight", dgamma.q_weight},
       {"dgamma.k_weight", dgamma.k_weight},
       {"workspace", workspace_view(workspace, qknorm_rope_bwd_workspace_bytes(m, hd), device)}},
      {{"Pre", Pre},
       {"dQKV", dQKV.q},
       {"dQKV.k", dQKV.k},
       {"dQKV.v", dQKV.v},
       {"positions", positions},
       {"frequencies", frequencies},
       {"qk_norm.q_weight", qk_norm.q_weight},
       {"qk_norm.k_weight", qk_norm.k_weight}},
      {{"dPre", "dQKV"}});

  const int blocks = blocks_for(m);
  BwdArgs a{static_cast<const __nv_bfloat16*>(Pre.data),
            Pre.stride[0],
            dy,
            static_cast<__nv_bfloat16*>(dPre.data),
            dPre.stride[0],
            static_cast<const std::int32_t*>(positions.data),
            static_cast<const epilogue::RopeFrequency*>(frequencies.data),
            static_cast<const __nv_bfloat16*>(qk_norm.q_weight.data),
            static_cast<const __nv_bfloat16*>(qk_norm.k_weight.data),
            static_cast<float*>(zdz.data),
            static_cast<float*>(workspace),
            static_cast<int>(m),
            static_cast<int>(n),
            qk_norm.q_heads * hd,
            (qk_norm.q_heads + qk_norm.kv_heads) * hd,
            qk_norm.eps};
  if (hd == 64)
    qknorm_rope_bwd_kernel<64><<<blocks, kWarps * 32, 0, stream>>>(a);
  else
    qknorm_rope_bwd_kernel<128><<<blocks, kWarps * 32, 0, stream>>>(a);
  dgamma_reduce_kernel<<<(2 * hd + 31) / 32, kWarps * 32, 0, stream>>>(
      static_cast<const float*>(workspace), blocks, hd, static_cast<float*>(dgamma.q_weight.data),
      static_cast<float*>(dgamma.k_weight.data), dgamma.accumulate);
  const cudaError_t err = cudaGetLastError();
  require(err == cudaSuccess, kWhere, std::string("kernel launch: ") + cudaGetErrorString(err));
}

}  // namespace coda::ops
