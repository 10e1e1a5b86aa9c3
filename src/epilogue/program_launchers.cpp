// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the library's epilogue programs: validate -> find the instance -> launch
// (program_launch.hpp). Each params struct's checks are written once (check_* below), naming and
// validating each of its device pointers once; a program's launcher composes the checks of its
// parts. The example programs' launchers: example_launchers.cpp.
#include "coda/epilogue/program_launchers.hpp"

#include <string>
#include <type_traits>

#include "program_launch.hpp"

namespace coda::epilogue {

using namespace launch_detail;  // this file holds launchers built on that machinery

namespace {

void check_gated(const SwiGluPairsParams& params, std::int64_t n, const ParamChecks& checks) {
  require_even_n(n, checks.where());
  checks.aligned(params.gated, "gated", 4);
  checks.require(params.gated_stride >= n / 2 && params.gated_stride % 2 == 0,
                 checks.name("gated_stride") +
                     ": must be >= N/2 and even (4-byte pair stores); got " +
                     std::to_string(params.gated_stride));
}

void check_rope(const RopeRotateParams& params, const TensorView& D, const ParamChecks& checks) {
  require_even_n(D.shape[1], checks.where());
  checks.aligned(params.positions, "positions", 4);
  checks.aligned(params.frequencies, "frequencies", 8);
}

void check_rstd(const RstdRowScaleParams& params, std::int64_t m, const ParamChecks& checks) {
  checks.aligned(params.sumsq_partials, "sumsq_partials", 4);
  checks.require(params.partial_tiles > 0 && params.partial_padded >= m,
                 checks.name("partial_tiles/partial_padded") +
                     ": need tiles > 0 and padded >= M; got " +
                     std::to_string(params.partial_tiles) + ", " +
                     std::to_string(params.partial_padded));
  checks.require(params.width > 0, checks.name("width") + ": must be positive");
  checks.require(params.eps >= 0.0f, checks.name("eps") + ": must be non-negative");
}

void check_qk_norm(const QkNormRopeParams& params, const TensorView& D, const ParamChecks& checks) {
  check_rope(params.rope, D, checks.member("rope"));
  const int hd = params.head_dim;
  checks.require(hd == 64 || hd == 128,
                 checks.name("head_dim") +
                     ": must be 64 or 128 (whole heads per epilogue subtile); got " +
                     std::to_string(hd));
  checks.require(D.shape[1] % hd == 0, "D: N must be a multiple of head_dim " +
                                           std::to_string(hd) + "; got " +
                                           std::to_string(D.shape[1]));
  checks.require(params.q_columns > 0 && params.q_columns % hd == 0 &&
                     params.qk_columns > params.q_columns && params.qk_columns % hd == 0 &&
                     params.qk_columns <= D.shape[1],
                 checks.name("q_columns/qk_columns") +
                     ": need 0 < q_columns < qk_columns <= N, multiples of head_dim; got " +
                     std::to_string(params.q_columns) + ", " + std::to_string(params.qk_columns));
  checks.aligned(params.q_norm_weight, "q_norm_weight", 4);
  checks.aligned(params.k_norm_weight, "k_norm_weight", 4);
  checks.require(params.eps >= 0.0f, checks.name("eps") + ": must be non-negative");
}

void check_qk_norm_save_pre(const QkNormRopeSavePreParams& params, const TensorView& D,
                            const ParamChecks& checks) {
  check_qk_norm(params.qk, D, checks.member("qk"));
  checks.tile(params.pre, params.pre_stride, D.shape[1], "pre");
}

void check_rms_norm_bwd(const RmsNormBwdParams& params, const TensorView& D,
                        const ParamChecks& checks) {
  checks.optional_aligned(params.alpha, "alpha", 4);
  check_rstd(params.rstd, D.shape[0], checks.member("rstd"));
  checks.require(params.rstd.width == D.shape[1],
                 "params.rstd.width: must be D's N (the features normalised) = " +
                     std::to_string(D.shape[1]) + "; got " + std::to_string(params.rstd.width));
  checks.tile(params.x, params.x_stride, D.shape[1], "x");
  checks.aligned(params.norm_weight, "norm_weight", 16);
  checks.aligned(params.zdz, "zdz", 4);
  checks.tile(params.normed, params.normed_stride, D.shape[1], "normed");
  checks.aligned(params.dw_partials, "dw_partials", 16);
}

}  // namespace

bool has_program_instance(gemm::TileConfig config) {
  return find<RstdRowScaleParams>(config) != nullptr;
}

void residual_rms(const TensorView& D, const TensorView& A, const TensorView& B,
                  const ResidualRmsParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::residual_rms");
  checks.tile(params.residual, params.residual_stride, D.shape[1], "residual");
  checks.aligned(params.norm_weight, "norm_weight", 16);
  checks.tile(params.normed, params.normed_stride, D.shape[1], "normed");
  checks.aligned(params.sumsq_partials, "sumsq_partials", 16);
  launch(D, A, B, params, choice, stream, checks);
}

void swiglu_pairs(const TensorView& D, const TensorView& A, const TensorView& B,
                  const SwiGluPairsParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::swiglu_pairs");
  check_gated(params, D.shape[1], checks);
  launch(D, A, B, params, choice, stream, checks);
}

void rope_rotate(const TensorView& D, const TensorView& A, const TensorView& B,
                 const RopeRotateParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rope_rotate");
  check_rope(params, D, checks);
  launch(D, A, B, params, choice, stream, checks);
}

void rstd_swiglu_pairs(const TensorView& D, const TensorView& A, const TensorView& B,
                       const RstdSwiGluPairsParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rstd_swiglu_pairs");
  check_rstd(params.rstd, D.shape[0], checks.member("rstd"));
  check_gated(params.gated, D.shape[1], checks.member("gated"));
  launch(D, A, B, params, choice, stream, checks);
}

void rstd_rope_rotate(const TensorView& D, const TensorView& A, const TensorView& B,
                      const RstdRopeRotateParams& params, gemm::KernelChoice choice,
                      cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rstd_rope_rotate");
  check_rstd(params.rstd, D.shape[0], checks.member("rstd"));
  check_rope(params.rope, D, checks.member("rope"));
  launch(D, A, B, params, choice, stream, checks);
}

void qk_norm_rope(const TensorView& D, const TensorView& A, const TensorView& B,
                  const QkNormRopeParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::qk_norm_rope");
  check_qk_norm(params, D, checks);
  launch(D, A, B, params, choice, stream, checks);
}

void rstd_qk_norm_rope(const TensorView& D, const TensorView& A, const TensorView& B,
                       const RstdQkNormRopeParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rstd_qk_norm_rope");
  check_rstd(params.rstd, D.shape[0], checks.member("rstd"));
  check_qk_norm(params.qk, D, checks.member("qk"));
  launch(D, A, B, params, choice, stream, checks);
}

void qk_norm_rope_save_pre(const TensorView& D, const TensorView& A, const TensorView& B,
                           const QkNormRopeSavePreParams& params, gemm::KernelChoice choice,
                           cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::qk_norm_rope_save_pre");
  check_qk_norm_save_pre(params, D, checks);
  launch(D, A, B, params, choice, stream, checks);
}

void rstd_qk_norm_rope_save_pre(const TensorView& D, const TensorView& A, const TensorView& B,
                                const RstdQkNormRopeSavePreParams& params,
                                gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rstd_qk_norm_rope_save_pre");
  check_rstd(params.rstd, D.shape[0], checks.member("rstd"));
  check_qk_norm_save_pre(params.qk, D, checks.member("qk"));
  launch(D, A, B, params, choice, stream, checks);
}

template <class Params>
void bias_gelu(const TensorView& D, const TensorView& A, const TensorView& B, const Params& p,
               gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr bool kForward = std::is_base_of_v<BiasGeluParams, Params>;
  constexpr bool kPre = !std::is_same_v<Params, BiasGeluParams>;
  ParamChecks checks(!kForward ? "coda::epilogue::bias_gelu_bwd"
                     : kPre    ? "coda::epilogue::bias_gelu_save_pre"
                               : "coda::epilogue::bias_gelu");
  // Each program's own pointers: the bias, the saved pre-activation tile, the ∂b partials.
  if constexpr (kForward) checks.aligned(p.bias, "bias", 16);
  if constexpr (kPre) checks.tile(p.pre, p.pre_stride, D.shape[1], "pre");
  if constexpr (!kForward) checks.aligned(p.dbias_partials, "dbias_partials", 16);
  launch(D, A, B, p, choice, stream, checks);
}
template void bias_gelu(const TensorView&, const TensorView&, const TensorView&,
                        const BiasGeluParams&, gemm::KernelChoice, cudaStream_t);
template void bias_gelu(const TensorView&, const TensorView&, const TensorView&,
                        const BiasGeluSavePreParams&, gemm::KernelChoice, cudaStream_t);
template void bias_gelu(const TensorView&, const TensorView&, const TensorView&,
                        const BiasGeluBwdParams&, gemm::KernelChoice, cudaStream_t);

void rstd_row_scale(const TensorView& D, const TensorView& A, const TensorView& B,
                    const RstdRowScaleParams& params, gemm::KernelChoice choice,
                    cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rstd_row_scale");
  check_rstd(params, D.shape[0], checks);
  launch(D, A, B, params, choice, stream, checks);
}

void cross_entropy_loss_partials(const TensorView& A, const TensorView& B,
                                 const CrossEntropyLossParams& params, gemm::KernelChoice choice,
                                 cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::cross_entropy_loss_partials");
  const gemm::GemmProblem problem = gemm::make_gemm_problem_without_d(A, B, checks.where());
  check_cross_entropy(params, problem, choice.config, checks);
  run_program(checks.where(), problem, nullptr, A, B, params, choice, stream, checks);
}

void swiglu_pairs_no_d(const TensorView& A, const TensorView& B, const SwiGluPairsNoDParams& params,
                       gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::swiglu_pairs_no_d");
  const gemm::GemmProblem problem = gemm::make_gemm_problem_without_d(A, B, checks.where());
  check_gated(params, problem.n, checks);
  run_program(checks.where(), problem, nullptr, A, B, params, choice, stream, checks);
}

void rstd_swiglu_pairs_no_d(const TensorView& A, const TensorView& B,
                            const RstdSwiGluPairsNoDParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rstd_swiglu_pairs_no_d");
  const gemm::GemmProblem problem = gemm::make_gemm_problem_without_d(A, B, checks.where());
  check_rstd(params.rstd, problem.m, checks.member("rstd"));
  check_gated(params.gated, problem.n, checks.member("gated"));
  run_program(checks.where(), problem, nullptr, A, B, params, choice, stream, checks);
}

void swiglu_bwd(const TensorView& D, const TensorView& A, const TensorView& B,
                const SwiGluBwdParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::swiglu_bwd");
  check_packed_z_dz(params, D.shape[1], checks);
  checks.aligned(params.zdz_partials, "zdz_partials", 16);
  launch(D, A, B, params, choice, stream, checks);
}

void rms_norm_bwd(const TensorView& D, const TensorView& A, const TensorView& B,
                  const RmsNormBwdParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rms_norm_bwd");
  check_rms_norm_bwd(params, D, checks);
  launch(D, A, B, params, choice, stream, checks);
}

void rms_norm_bwd_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                             const RmsNormBwdAccumulateParams& params, gemm::KernelChoice choice,
                             cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::rms_norm_bwd_accumulate");
  check_rms_norm_bwd(params, D, checks);  // the accumulate program adds into D
  launch(D, A, B, params, choice, stream, checks);
}

void weight_grad_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                            const WeightGradAccumulateParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream) {
  const ParamChecks checks("coda::epilogue::weight_grad_accumulate");  // no pointers of its own
  const gemm::GemmProblem p = gemm::make_gemm_problem(D, A, B, checks.where());
  checks.require(p.d_dtype == DType::kF32, "D: this program accumulates into fp32 D");
  run_program(checks.where(), p, &D, A, B, params, choice, stream, checks);
}

}  // namespace coda::epilogue
