// SPDX-License-Identifier: BSD-3-Clause
// linear_cross_entropy: the loss-only LM-head GEMM (epilogue program CrossEntropyLoss, no D), then
// two small deterministic kernels: per row, merge the per-tile lse and finish the loss; then the
// sum/mean over rows in a fixed order.
#include "coda/ops/linear_cross_entropy.hpp"

#include <cmath>
#include <string>

#include "coda/device_check.hpp"
#include "coda/epilogue/merge.hpp"
#include "coda/epilogue/program_launchers.hpp"
#include "coda/status.hpp"
#include "op_checks.hpp"

namespace coda::ops {

namespace {

constexpr const char* kWhere = "coda::ops::linear_cross_entropy";
constexpr int kReduceThreads = 1024;

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

// Workspace: [partials: tiles × padded floats, for any program config][target logits: M floats].
std::int64_t partial_floats(std::int64_t m, std::int64_t v) {
  return (v + 127) / 128 * round_up(m, 256);
}

// One thread per row: lse from the tile partials, then the row's loss (NaN for a target out of
// range; 0 and not counted for ignore_index). row_loss may alias target_logit (same index).
__global__ void finish_rows(const float* partials, int tiles, std::int64_t padded,
                            const float* target_logit, const void* targets, bool targets_int64,
                            std::int64_t ignore_index, int rows, int vocab, float z_loss,
                            float* lse_out, float* row_loss, float* valid) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= rows) return;
  float max = -INFINITY;
  for (int t = 0; t < tiles; ++t) max = fmaxf(max, partials[t * padded + m]);
  float sum = 0.0f;
  if (max != -INFINITY)
    for (int t = 0; t < tiles; ++t) sum += expf(partials[t * padded + m] - max);
  const float lse = max == -INFINITY ? -INFINITY : max + logf(sum);
  lse_out[m] = lse;
  const std::int64_t target = targets_int64 ? static_cast<const std::int64_t*>(targets)[m]
                                            : static_cast<const std::int32_t*>(targets)[m];
  float loss = 0.0f, counted = 0.0f;
  if (target != ignore_index) {
    counted = 1.0f;
    loss = (target >= 0 && target < vocab) ? lse - target_logit[m] + z_loss * lse * lse : NAN;
  }
  row_loss[m] = loss;
  if (valid != nullptr) valid[m] = counted;
}

// One block: Σ row_loss and Σ valid in a fixed order; loss = sum, or sum / count for the mean.
__global__ void reduce_rows(const float* row_loss, const float* valid, int rows, bool mean,
                            float* loss) {
  __shared__ float sums[kReduceThreads], counts[kReduceThreads];
  float s = 0.0f, c = 0.0f;
  for (int m = threadIdx.x; m < rows; m += kReduceThreads) {
    s += row_loss[m];
    c += valid[m];
  }
  sums[threadIdx.x] = s;
  counts[threadIdx.x] = c;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sums[threadIdx.x] += sums[threadIdx.x + half];
      counts[threadIdx.x] += counts[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) loss[0] = mean ? sums[0] / counts[0] : sums[0];
}

void check_launch(const char* what) {
  const cudaError_t err = cudaGetLastError();
  require(err == cudaSuccess, kWhere, std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace

std::size_t linear_cross_entropy_workspace_bytes(std::int64_t m, std::int64_t v) {
  return static_cast<std::size_t>(partial_floats(m, v) + 2 * round_up(m, 4)) * sizeof(float);
}

void linear_cross_entropy(const TensorView& loss, const TensorView& lse, const TensorView& X,
                          const TensorView& W, const TensorView& targets,
                          const CrossEntropyOptions& ce, void* workspace,
                          std::size_t workspace_bytes, cudaStream_t stream,
                          const OpOptions& options) {
  const ArgCheck check(kWhere);
  check.not_null(X, "X");
  check.rank_is(X, "X", 2);
  check.not_null(W, "W");
  check.rank_is(W, "W", 2);
  const std::int64_t m = X.shape[0], v = W.shape[0], h = X.shape[1];
  check.not_null(targets, "targets");
  check.dtype_in(targets, "targets", {DType::kI32, DType::kI64});
  detail::require_vector(check, targets, "targets", m, targets.dtype, X.device);
  detail::require_vector(check, lse, "lse", m, DType::kF32, X.device);
  detail::require_vector(check, loss, "loss", ce.reduction == Reduction::kNone ? m : 1,
                         DType::kF32, X.device);
  if (!(ce.z_loss >= 0.0f) || !std::isfinite(ce.z_loss))
    check.fail("ce.z_loss: must be finite and non-negative");
  if (!(ce.softcap >= 0.0f) || !std::isfinite(ce.softcap))
    check.fail("ce.softcap: must be finite and non-negative (0: no soft-cap)");
  if (workspace == nullptr) check.fail("workspace: data pointer is null");
  if (reinterpret_cast<std::uintptr_t>(workspace) % 16 != 0)
    check.fail("workspace: must be 16-byte aligned");
  const std::size_t need = linear_cross_entropy_workspace_bytes(m, v);
  if (workspace_bytes < need)
    check.fail("workspace_bytes: needs linear_cross_entropy_workspace_bytes(M, V) = " +
               std::to_string(need) + "; got " + std::to_string(workspace_bytes));

  // Wide vocabulary: Pingpong (its epilogue's exp overlaps the other warpgroup's mainloop), walking
  // along M with swizzle 8 so CTAs in flight share W tiles in L2.
  const gemm::KernelChoice wide{gemm::TileConfig::kPingpong128x128Cluster2x1,
                                gemm::RasterOrder::kAlongM, 8, gemm::Decomposition::kHeuristic};
  const gemm::KernelChoice choice =
      detail::program_choice(check, "linear_cross_entropy", m, v, h, options, &wide);
  const epilogue::PartialLayout layout =
      epilogue::per_row_partial_layout(choice.config, static_cast<int>(m), static_cast<int>(v));
  float* partials = static_cast<float*>(workspace);
  float* target_logits = partials + partial_floats(m, v);
  float* valid = target_logits + round_up(m, 4);

  epilogue::CrossEntropyLossParams p;
  p.lse_partials = partials;
  p.lse_padded = layout.padded;
  p.targets = targets.data;
  p.targets_int64 = targets.dtype == DType::kI64;
  p.ignore_index = ce.ignore_index;
  p.target_logits = target_logits;
  p.softcap = ce.softcap;
  epilogue::cross_entropy_loss_partials(X, W, p, choice, stream);  // validates X, W, devices
  require_device_memory(loss.data, X.device, kWhere, "loss");
  require_device_memory(lse.data, X.device, kWhere, "lse");

  const bool reduce = ce.reduction != Reduction::kNone;
  const int blocks = static_cast<int>((m + 255) / 256);
  finish_rows<<<blocks, 256, 0, stream>>>(
      partials, layout.tiles, layout.padded, target_logits, targets.data, p.targets_int64,
      ce.ignore_index, static_cast<int>(m), static_cast<int>(v), ce.z_loss,
      static_cast<float*>(lse.data), reduce ? target_logits : static_cast<float*>(loss.data),
      reduce ? valid : nullptr);
  check_launch("finish kernel launch");
  if (reduce) {
    reduce_rows<<<1, kReduceThreads, 0, stream>>>(target_logits, valid, static_cast<int>(m),
                                                  ce.reduction == Reduction::kMean,
                                                  static_cast<float*>(loss.data));
    check_launch("reduce kernel launch");
  }
}

}  // namespace coda::ops
