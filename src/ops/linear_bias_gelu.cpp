// SPDX-License-Identifier: BSD-3-Clause
// linear_bias_gelu: the BiasGelu(SavePre) epilogue program; linear_bias_gelu_bwd: the BiasGeluBwd
// program in the next linear's dgrad GEMM, then the merge of the bias gradient's per-tile partials.
#include "coda/ops/linear_bias_gelu.hpp"

#include "coda/epilogue/merge.hpp"
#include "coda/epilogue/program_launchers.hpp"
#include "op_checks.hpp"
#include "tuned_launch.hpp"

namespace coda::ops {

void linear_bias_gelu(const TensorView& Y, const TensorView& Pre, const TensorView& X,
                      const TensorView& W, const TensorView& bias, cudaStream_t stream,
                      const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_bias_gelu");
  const detail::LinearShape s = detail::require_linear(check, X, "X", W, "W");
  detail::require_vector(check, bias, "bias", s.n, DType::kBF16, X.device);
  detail::require_bf16_matrix(check, Y, "Y", s.m, s.n, X.device);
  const bool save_pre = Pre.data != nullptr;
  if (save_pre) detail::require_bf16_matrix(check, Pre, "Pre", s.m, s.n, X.device);
  // Saving Pre is another program, hence its own key (as the QK-norm ops').
  const detail::TunedCall call{save_pre ? OpKey::kLinearBiasGeluSavePre : OpKey::kLinearBiasGelu,
                               s.m, s.n, s.k};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);
  detail::require_memory(check, X.device, {{"Y", Y}, {"Pre", Pre}},
                         {{"X", X}, {"W", W}, {"bias", bias}});
  const epilogue::BiasGeluParams params{bias.data};
  detail::launch_tuned(call, options, choice, stream, [&](const gemm::KernelChoice& c) {
    if (save_pre)
      epilogue::bias_gelu(Y, X, W, epilogue::BiasGeluSavePreParams{params, Pre.data, Pre.stride[0]},
                          c, stream);
    else
      epilogue::bias_gelu(Y, X, W, params, c, stream);
  });
}

std::size_t linear_bias_gelu_bwd_workspace_bytes(std::int64_t m, std::int64_t n) {
  return static_cast<std::size_t>(epilogue::per_col_partial_floats_any_config(m, n)) *
         sizeof(float);
}

void linear_bias_gelu_bwd(const TensorView& dPre, const TensorView& dbias, const TensorView& dOut,
                          const TensorView& W_down, const TensorView& Pre, void* workspace,
                          std::size_t workspace_bytes, cudaStream_t stream,
                          const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_bias_gelu_bwd");
  const detail::LinearShape s = detail::require_dgrad_linear(check, dOut, "dOut", W_down, "W_down");
  const std::int64_t m = s.m, n = s.n, d = s.k;
  const int device = dOut.device;
  detail::require_bf16_matrix(check, Pre, "Pre", m, n, device);
  detail::require_bf16_matrix(check, dPre, "dPre", m, n, device);
  detail::require_vector(check, dbias, "dbias", n, DType::kF32, device);
  detail::require_workspace(check, workspace, workspace_bytes,
                            linear_bias_gelu_bwd_workspace_bytes(m, n),
                            "linear_bias_gelu_bwd_workspace_bytes(M, N)");

  const detail::TunedCall call{OpKey::kLinearBiasGeluBwd, m, n, d};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);

  epilogue::BiasGeluBwdParams p;
  p.pre = Pre.data;
  p.pre_stride = Pre.stride[0];
  p.dbias_partials = static_cast<float*>(workspace);
  detail::require_memory(
      check, device,
      {{"dPre", dPre},
       {"dbias", dbias},
       {"workspace",
        workspace_view(workspace, linear_bias_gelu_bwd_workspace_bytes(m, n), device)}},
      {{"dOut", dOut}, {"W_down", W_down}, {"Pre", Pre}});
  detail::launch_tuned(call, options, choice, stream, [&](const gemm::KernelChoice& c) {
    epilogue::bias_gelu(dPre, dOut, detail::dgrad_b(W_down), p, c, stream);
    epilogue::merge_partial_sums(p.dbias_partials,
                                 epilogue::per_col_partial_layout(c.config, int(m), int(n)),
                                 int(n), static_cast<float*>(dbias.data), stream);
  });
}

}  // namespace coda::ops
