// SPDX-License-Identifier: BSD-3-Clause
#include "coda/ops/linear_swiglu.hpp"

#include "coda/epilogue/program_launchers.hpp"
#include "op_checks.hpp"
#include "tuned_launch.hpp"

namespace coda::ops {

namespace {
using Shape = detail::LinearShape;  // n = 2F
Shape check_swiglu(const ArgCheck& check, const TensorView& Z, const TensorView& Y,
                   const TensorView& A, const char* a_name, const TensorView& W) {
  const Shape s = detail::require_linear(check, A, a_name, W, "W_gate_up");
  if (s.n % 2 != 0)
    check.fail("W_gate_up: needs an even number of rows (gate/up interleaved); got " +
               std::to_string(s.n));
  if (Z.data != nullptr) detail::require_bf16_matrix(check, Z, "Z", s.m, s.n, A.device);
  detail::require_bf16_matrix(check, Y, "Y", s.m, s.n / 2, A.device);
  return s;
}
}  // namespace

void linear_swiglu(const TensorView& Z, const TensorView& Y, const TensorView& A,
                   const TensorView& W_gate_up, cudaStream_t stream, const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_swiglu");
  const Shape s = check_swiglu(check, Z, Y, A, "A", W_gate_up);
  const detail::TunedCall call{OpKey::kLinearSwiglu, s.m, s.n, s.k};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);
  detail::require_memory(check, A.device, {{"Z", Z}, {"Y", Y}},
                         {{"A", A}, {"W_gate_up", W_gate_up}});
  const epilogue::SwiGluPairsParams gated{Y.data, Y.stride[0]};
  detail::launch_tuned(call, options, choice, stream,
                       [&](const gemm::KernelChoice& c) {
                         if (Z.data != nullptr)
                           epilogue::swiglu_pairs(Z, A, W_gate_up, gated, c, stream);
                         else
                           epilogue::swiglu_pairs_no_d(A, W_gate_up, {gated}, c, stream);
                       });
}

void linear_rmsnorm_swiglu(const TensorView& Z, const TensorView& Y, const TensorView& H,
                           const TensorView& W_gate_up, const RowNormStats& stats, float eps,
                           cudaStream_t stream, const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_rmsnorm_swiglu");
  const Shape s = check_swiglu(check, Z, Y, H, "H", W_gate_up);
  detail::require_filled_stats(check, stats, s.m, s.k, "K (H's columns)");
  if (!(eps >= 0.0f)) check.fail("eps: must be non-negative");
  const detail::TunedCall call{OpKey::kLinearRmsnormSwiglu, s.m, s.n, s.k};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);
  detail::require_memory(
      check, H.device, {{"Z", Z}, {"Y", Y}},
      {{"H", H}, {"W_gate_up", W_gate_up}, {"stats.partials", detail::stats_read(stats)}});
  const epilogue::RstdSwiGluPairsParams params{{stats.sums(), eps},
                                               {Y.data, Y.stride[0]}};
  detail::launch_tuned(call, options, choice, stream,
                       [&](const gemm::KernelChoice& c) {
                         if (Z.data != nullptr)
                           epilogue::rstd_swiglu_pairs(Z, H, W_gate_up, params, c, stream);
                         else
                           epilogue::rstd_swiglu_pairs_no_d(H, W_gate_up, {params}, c, stream);
                       });
}

}  // namespace coda::ops
