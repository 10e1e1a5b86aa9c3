// SPDX-License-Identifier: BSD-3-Clause
// linear_rmsnorm_bwd: the RmsNormBwd(Accumulate) epilogue program in the consuming linear's dgrad
// GEMM, then the merge of the norm weight's per-tile gradient partials.
#include "coda/ops/linear_rmsnorm_bwd.hpp"

#include <string>

#include "coda/epilogue/merge.hpp"
#include "coda/epilogue/program_launchers.hpp"
#include "coda/gemm/choose_config.hpp"
#include "op_checks.hpp"
#include "tuned_launch.hpp"

namespace coda::ops {

std::size_t linear_rmsnorm_bwd_workspace_bytes(std::int64_t m, std::int64_t d) {
  return static_cast<std::size_t>(epilogue::per_col_partial_floats_any_config(m, d)) *
         sizeof(float);
}

void linear_rmsnorm_bwd(const TensorView& dX, bool accumulate, const TensorView& N,
                        const TensorView& dw, const TensorView& dZ, const TensorView& W,
                        const RmsNormSaved& norm, const TensorView& zdz, void* workspace,
                        std::size_t workspace_bytes, const TensorView& alpha, cudaStream_t stream,
                        const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_rmsnorm_bwd");
  const detail::LinearShape s = detail::require_dgrad_linear(check, dZ, "dZ", W, "W");
  const std::int64_t m = s.m, n = s.k, d = s.n;
  const int device = dZ.device;
  detail::require_bf16_matrix(check, norm.X, "norm.X", m, d, device);
  detail::require_bf16_matrix(check, dX, "dX", m, d, device);
  detail::require_bf16_matrix(check, N, "N", m, d, device);
  detail::require_vector(check, norm.weight, "norm.weight", d, DType::kBF16, device);
  detail::require_vector(check, zdz, "zdz", m, DType::kF32, device);
  detail::require_vector(check, dw, "dw", d, DType::kF32, device);
  if (alpha.data != nullptr) detail::require_vector(check, alpha, "alpha", 1, DType::kF32, device);
  detail::require_filled_stats(check, norm.stats, m, d, "D (W's columns)");
  if (!(norm.eps >= 0.0f)) check.fail("norm.eps: must be non-negative");
  detail::require_workspace(check, workspace, workspace_bytes,
                            linear_rmsnorm_bwd_workspace_bytes(m, d),
                            "linear_rmsnorm_bwd_workspace_bytes(M, D)");

  // Under accumulate dX is read: the tuner restores it after its timed runs.
  detail::TunedCall call{OpKey::kLinearRmsnormBwd, m, d, n};
  if (accumulate) call.read_output = dX;
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);

  epilogue::RmsNormBwdParams p;
  p.alpha = static_cast<const float*>(alpha.data);
  p.rstd = {norm.stats.sums(), norm.eps};
  p.x = norm.X.data;
  p.x_stride = norm.X.stride[0];
  p.norm_weight = norm.weight.data;
  p.zdz = static_cast<const float*>(zdz.data);
  p.normed = N.data;
  p.normed_stride = N.stride[0];
  p.dw_partials = static_cast<float*>(workspace);
  // With accumulate, dX is read and written by the same thread: an output like the others.
  detail::require_memory(
      check, device,
      {{"dX", dX},
       {"N", N},
       {"dw", dw},
       {"workspace", workspace_view(workspace, linear_rmsnorm_bwd_workspace_bytes(m, d), device)}},
      {{"dZ", dZ},
       {"W", W},
       {"norm.X", norm.X},
       {"norm.weight", norm.weight},
       {"norm.stats.partials", detail::stats_read(norm.stats)},
       {"zdz", zdz},
       {"alpha", alpha}});
  detail::launch_tuned(call, options, choice, stream, [&](const gemm::KernelChoice& c) {
    if (accumulate)
      epilogue::rms_norm_bwd_accumulate(dX, dZ, detail::dgrad_b(W), {p}, c, stream);
    else
      epilogue::rms_norm_bwd(dX, dZ, detail::dgrad_b(W), p, c, stream);
    epilogue::merge_partial_sums(p.dw_partials,
                                 epilogue::per_col_partial_layout(c.config, int(m), int(d)),
                                 int(d), static_cast<float*>(dw.data), stream);
  });
}

}  // namespace coda::ops
