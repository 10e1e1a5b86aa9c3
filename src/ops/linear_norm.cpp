// SPDX-License-Identifier: BSD-3-Clause
#include "coda/ops/linear_norm.hpp"

#include "coda/epilogue/program_launchers.hpp"
#include "op_checks.hpp"
#include "tuned_launch.hpp"

namespace coda::ops {

void linear_residual_rms(const TensorView& X, const TensorView& H, RowNormStats& stats,
                         const TensorView& A, const TensorView& W, const TensorView& R,
                         const TensorView& norm_weight, cudaStream_t stream,
                         const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_residual_rms");
  const detail::LinearShape s = detail::require_linear(check, A, "A", W, "W");
  detail::require_bf16_matrix(check, X, "X", s.m, s.n, A.device);
  detail::require_bf16_matrix(check, H, "H", s.m, s.n, A.device);
  detail::require_bf16_matrix(check, R, "R", s.m, s.n, A.device);
  detail::require_vector(check, norm_weight, "norm_weight", s.n, DType::kBF16, A.device);
  detail::require_stats_buffer(check, stats, s.m, s.n);
  // keep_config: the statistics' layout follows the config, which consumers predict
  // (linear_residual_rms_stats_layout).
  const detail::TunedCall call{OpKey::kLinearResidualRms, s.m, s.n, s.k, /*keep_config=*/true};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);
  detail::require_memory(
      check, A.device,
      {{"X", X}, {"H", H}, {"stats.partials", detail::stats_written(stats, s.m, s.n)}},
      {{"A", A}, {"W", W}, {"R", R}, {"norm_weight", norm_weight}});
  epilogue::ResidualRmsParams p;
  p.residual = R.data;
  p.residual_stride = R.stride[0];
  p.norm_weight = norm_weight.data;
  p.normed = H.data;
  p.normed_stride = H.stride[0];
  p.sumsq_partials = stats.partials;
  const gemm::KernelChoice ran = detail::launch_tuned(
      call, options, choice, stream,
      [&](const gemm::KernelChoice& c) { epilogue::residual_rms(X, A, W, p, c, stream); });
  stats.layout = epilogue::per_row_partial_layout(ran.config, int(s.m), int(s.n));
  stats.width = int(s.n);
}

epilogue::PartialLayout linear_residual_rms_stats_layout(std::int64_t m, std::int64_t n,
                                                         std::int64_t k) {
  const ArgCheck check("coda::ops::linear_residual_rms_stats_layout");
  if (m <= 0 || n <= 0 || k <= 0) check.fail("m, n, k: must be positive");
  const gemm::KernelChoice choice =
      detail::program_choice(check, {OpKey::kLinearResidualRms, m, n, k}, OpOptions{});
  return epilogue::per_row_partial_layout(choice.config, int(m), int(n));
}

void linear_rmsnorm(const TensorView& D, const TensorView& H, const TensorView& W,
                    const RowNormStats& stats, float eps, cudaStream_t stream,
                    const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_rmsnorm");
  const detail::LinearShape s = detail::require_linear(check, H, "H", W, "W");
  detail::require_bf16_matrix(check, D, "D", s.m, s.n, H.device);
  detail::require_filled_stats(check, stats, s.m, s.k, "K (H's columns)");
  if (!(eps >= 0.0f)) check.fail("eps: must be non-negative");
  const detail::TunedCall call{OpKey::kLinearRmsnorm, s.m, s.n, s.k};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);
  detail::require_memory(check, H.device, {{"D", D}},
                         {{"H", H}, {"W", W}, {"stats.partials", detail::stats_read(stats)}});
  const epilogue::RstdRowScaleParams rstd{stats.sums(), eps};
  detail::launch_tuned(
      call, options, choice, stream,
      [&](const gemm::KernelChoice& c) { epilogue::rstd_row_scale(D, H, W, rstd, c, stream); });
}

}  // namespace coda::ops
