// SPDX-License-Identifier: BSD-3-Clause
// linear_swiglu_bwd: the SwiGluBwd epilogue program in the down-projection's dgrad GEMM, then the
// merge of the per-tile ⟨z, dz⟩ partials.
#include "coda/ops/linear_swiglu_bwd.hpp"

#include <string>

#include "coda/epilogue/merge.hpp"
#include "coda/epilogue/program_launchers.hpp"
#include "coda/gemm/choose_config.hpp"
#include "op_checks.hpp"
#include "tuned_launch.hpp"

namespace coda::ops {

std::size_t linear_swiglu_bwd_workspace_bytes(std::int64_t m, std::int64_t ffn) {
  return static_cast<std::size_t>(epilogue::per_row_partial_floats_any_config(m, ffn)) *
         sizeof(float);
}

void linear_swiglu_bwd(const TensorView& dZ, const TensorView& Y, const TensorView& zdz,
                       const TensorView& dOut, const TensorView& W_down, const TensorView& Z,
                       void* workspace, std::size_t workspace_bytes, cudaStream_t stream,
                       const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_swiglu_bwd");
  const detail::LinearShape s = detail::require_dgrad_linear(check, dOut, "dOut", W_down, "W_down");
  const std::int64_t m = s.m, hidden = s.k, ffn = s.n;
  detail::require_bf16_matrix(check, Z, "Z", m, 2 * ffn, dOut.device);
  detail::require_bf16_matrix(check, dZ, "dZ", m, 2 * ffn, dOut.device);
  detail::require_bf16_matrix(check, Y, "Y", m, ffn, dOut.device);
  detail::require_vector(check, zdz, "zdz", m, DType::kF32, dOut.device);
  detail::require_workspace(check, workspace, workspace_bytes,
                            linear_swiglu_bwd_workspace_bytes(m, ffn),
                            "linear_swiglu_bwd_workspace_bytes(M, F)");

  const detail::TunedCall call{OpKey::kLinearSwigluBwd, m, ffn, hidden};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);

  epilogue::SwiGluBwdParams p;
  p.packed_z = Z.data;
  p.packed_z_stride = Z.stride[0] / 2;  // 32-bit pairs
  p.packed_dz = dZ.data;
  p.packed_dz_stride = dZ.stride[0] / 2;
  p.zdz_partials = static_cast<float*>(workspace);
  detail::require_memory(
      check, dOut.device,
      {{"dZ", dZ},
       {"Y", Y},
       {"zdz", zdz},
       {"workspace",
        workspace_view(workspace, linear_swiglu_bwd_workspace_bytes(m, ffn), dOut.device)}},
      {{"dOut", dOut}, {"W_down", W_down}, {"Z", Z}});
  detail::launch_tuned(
      call, options, choice, stream,
      [&](const gemm::KernelChoice& c) {
        epilogue::swiglu_bwd(Y, dOut, detail::dgrad_b(W_down), p, c, stream);
        epilogue::merge_partial_sums(p.zdz_partials,
                                     epilogue::per_row_partial_layout(c.config, int(m), int(ffn)),
                                     int(m), static_cast<float*>(zdz.data), stream);
      });
}

}  // namespace coda::ops
