// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the library's epilogue programs: validate -> find the instance -> launch
// (program_launch.hpp). The example programs' launchers: example_launchers.cpp.
#include "coda/epilogue/program_launchers.hpp"

#include <string>
#include <type_traits>

#include "program_launch.hpp"

namespace coda::epilogue {

using namespace launch_detail;  // this file holds launchers built on that machinery

bool has_program_instance(gemm::TileConfig config) {
  return find<RstdRowScaleParams>(config) != nullptr;
}

void residual_rms(const TensorView& D, const TensorView& A, const TensorView& B,
                  const ResidualRmsParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::residual_rms";
  require_tile(params.residual, params.residual_stride, D.shape[1], kWhere, "params.residual");
  require_aligned(params.norm_weight, kWhere, "params.norm_weight", 16);
  require_tile(params.normed, params.normed_stride, D.shape[1], kWhere, "params.normed");
  require_aligned(params.sumsq_partials, kWhere, "params.sumsq_partials", 16);
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.residual, "params.residual"},
          {params.norm_weight, "params.norm_weight"},
          {params.normed, "params.normed"},
          {params.sumsq_partials, "params.sumsq_partials"}});
}

namespace {

void check_gated(const SwiGluPairsParams& params, std::int64_t n, const char* where,
                 const std::string& name) {
  require_even_n(n, where);
  require_aligned(params.gated, where, (name + ".gated").c_str(), 4);
  require(params.gated_stride >= n / 2 && params.gated_stride % 2 == 0, where,
          name + ".gated_stride: must be >= N/2 and even (4-byte pair stores); got " +
              std::to_string(params.gated_stride));
}

void check_rope(const RopeRotateParams& params, const TensorView& D, const char* where,
                const std::string& name) {
  require_even_n(D.shape[1], where);
  require_aligned(params.positions, where, (name + ".positions").c_str(), 4);
  require_aligned(params.frequencies, where, (name + ".frequencies").c_str(), 8);
}

void check_rstd(const RstdRowScaleParams& params, std::int64_t m, const char* where,
                const std::string& name) {
  require_aligned(params.sumsq_partials, where, (name + ".sumsq_partials").c_str(), 4);
  require(params.partial_tiles > 0 && params.partial_padded >= m, where,
          name + ".partial_tiles/partial_padded: need tiles > 0 and padded >= M; got " +
              std::to_string(params.partial_tiles) + ", " + std::to_string(params.partial_padded));
  require(params.width > 0, where, name + ".width: must be positive");
  require(params.eps >= 0.0f, where, name + ".eps: must be non-negative");
}

}  // namespace

void swiglu_pairs(const TensorView& D, const TensorView& A, const TensorView& B,
                  const SwiGluPairsParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::swiglu_pairs";
  check_gated(params, D.shape[1], kWhere, "params");
  launch(kWhere, D, A, B, params, choice, stream, {{params.gated, "params.gated"}});
}

void rope_rotate(const TensorView& D, const TensorView& A, const TensorView& B,
                 const RopeRotateParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rope_rotate";
  check_rope(params, D, kWhere, "params");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.positions, "params.positions"}, {params.frequencies, "params.frequencies"}});
}

void rstd_swiglu_pairs(const TensorView& D, const TensorView& A, const TensorView& B,
                       const RstdSwiGluPairsParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rstd_swiglu_pairs";
  check_rstd(params.rstd, D.shape[0], kWhere, "params.rstd");
  check_gated(params.gated, D.shape[1], kWhere, "params.gated");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.rstd.sumsq_partials, "params.rstd.sumsq_partials"},
          {params.gated.gated, "params.gated.gated"}});
}

void rstd_rope_rotate(const TensorView& D, const TensorView& A, const TensorView& B,
                      const RstdRopeRotateParams& params, gemm::KernelChoice choice,
                      cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rstd_rope_rotate";
  check_rstd(params.rstd, D.shape[0], kWhere, "params.rstd");
  check_rope(params.rope, D, kWhere, "params.rope");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.rstd.sumsq_partials, "params.rstd.sumsq_partials"},
          {params.rope.positions, "params.rope.positions"},
          {params.rope.frequencies, "params.rope.frequencies"}});
}

namespace {
void check_qk_norm(const QkNormRopeParams& params, const TensorView& D, const char* where,
                   const std::string& name) {
  check_rope(params.rope, D, where, name + ".rope");
  const int hd = params.head_dim;
  require(hd == 64 || hd == 128, where,
          name + ".head_dim: must be 64 or 128 (whole heads per epilogue subtile); got " +
              std::to_string(hd));
  require(D.shape[1] % hd == 0, where,
          "D: N must be a multiple of head_dim " + std::to_string(hd) + "; got " +
              std::to_string(D.shape[1]));
  require(params.q_columns > 0 && params.q_columns % hd == 0 &&
              params.qk_columns > params.q_columns && params.qk_columns % hd == 0 &&
              params.qk_columns <= D.shape[1],
          where,
          name +
              ".q_columns/qk_columns: need 0 < q_columns < qk_columns <= N, multiples of "
              "head_dim; got " +
              std::to_string(params.q_columns) + ", " + std::to_string(params.qk_columns));
  require_aligned(params.q_norm_weight, where, (name + ".q_norm_weight").c_str(), 4);
  require_aligned(params.k_norm_weight, where, (name + ".k_norm_weight").c_str(), 4);
  require(params.eps >= 0.0f, where, name + ".eps: must be non-negative");
}
}  // namespace

void qk_norm_rope(const TensorView& D, const TensorView& A, const TensorView& B,
                  const QkNormRopeParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::qk_norm_rope";
  check_qk_norm(params, D, kWhere, "params");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.rope.positions, "params.rope.positions"},
          {params.rope.frequencies, "params.rope.frequencies"},
          {params.q_norm_weight, "params.q_norm_weight"},
          {params.k_norm_weight, "params.k_norm_weight"}});
}

void rstd_qk_norm_rope(const TensorView& D, const TensorView& A, const TensorView& B,
                       const RstdQkNormRopeParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rstd_qk_norm_rope";
  check_rstd(params.rstd, D.shape[0], kWhere, "params.rstd");
  check_qk_norm(params.qk, D, kWhere, "params.qk");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.rstd.sumsq_partials, "params.rstd.sumsq_partials"},
          {params.qk.rope.positions, "params.qk.rope.positions"},
          {params.qk.rope.frequencies, "params.qk.rope.frequencies"},
          {params.qk.q_norm_weight, "params.qk.q_norm_weight"},
          {params.qk.k_norm_weight, "params.qk.k_norm_weight"}});
}

void qk_norm_rope_save_pre(const TensorView& D, const TensorView& A, const TensorView& B,
                           const QkNormRopeSavePreParams& params, gemm::KernelChoice choice,
                           cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::qk_norm_rope_save_pre";
  check_qk_norm(params.qk, D, kWhere, "params.qk");
  require_tile(params.pre, params.pre_stride, D.shape[1], kWhere, "params.pre");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.qk.rope.positions, "params.qk.rope.positions"},
          {params.qk.rope.frequencies, "params.qk.rope.frequencies"},
          {params.qk.q_norm_weight, "params.qk.q_norm_weight"},
          {params.qk.k_norm_weight, "params.qk.k_norm_weight"},
          {params.pre, "params.pre"}});
}

void rstd_qk_norm_rope_save_pre(const TensorView& D, const TensorView& A, const TensorView& B,
                                const RstdQkNormRopeSavePreParams& params,
                                gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rstd_qk_norm_rope_save_pre";
  check_rstd(params.rstd, D.shape[0], kWhere, "params.rstd");
  check_qk_norm(params.qk.qk, D, kWhere, "params.qk.qk");
  require_tile(params.qk.pre, params.qk.pre_stride, D.shape[1], kWhere, "params.qk.pre");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.rstd.sumsq_partials, "params.rstd.sumsq_partials"},
          {params.qk.qk.rope.positions, "params.qk.qk.rope.positions"},
          {params.qk.qk.rope.frequencies, "params.qk.qk.rope.frequencies"},
          {params.qk.qk.q_norm_weight, "params.qk.qk.q_norm_weight"},
          {params.qk.qk.k_norm_weight, "params.qk.qk.k_norm_weight"},
          {params.qk.pre, "params.qk.pre"}});
}

template <class Params>
void bias_gelu(const TensorView& D, const TensorView& A, const TensorView& B, const Params& p,
               gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr bool kForward = std::is_base_of_v<BiasGeluParams, Params>;
  constexpr bool kPre = !std::is_same_v<Params, BiasGeluParams>;
  const char* where = !kForward ? "coda::epilogue::bias_gelu_bwd"
                      : kPre    ? "coda::epilogue::bias_gelu_save_pre"
                                : "coda::epilogue::bias_gelu";
  // Each program's own pointers: the bias, the saved pre-activation tile, the ∂b partials.
  const void *bias = nullptr, *pre = nullptr, *partials = nullptr;
  if constexpr (kForward) {
    require_aligned(p.bias, where, "params.bias", 16);
    bias = p.bias;
  }
  if constexpr (kPre) {
    require_tile(p.pre, p.pre_stride, D.shape[1], where, "params.pre");
    pre = p.pre;
  }
  if constexpr (!kForward) {
    require_aligned(p.dbias_partials, where, "params.dbias_partials", 16);
    partials = p.dbias_partials;
  }
  launch(where, D, A, B, p, choice, stream,
         {{bias, "params.bias"}, {pre, "params.pre"}, {partials, "params.dbias_partials"}});
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
  constexpr const char* kWhere = "coda::epilogue::rstd_row_scale";
  check_rstd(params, D.shape[0], kWhere, "params");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.sumsq_partials, "params.sumsq_partials"}});
}

void cross_entropy_loss_partials(const TensorView& A, const TensorView& B,
                                 const CrossEntropyLossParams& params, gemm::KernelChoice choice,
                                 cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::cross_entropy_loss_partials";
  const gemm::GemmProblem problem = gemm::make_gemm_problem_without_d(A, B, kWhere);
  check_cross_entropy(params, problem, choice.config, kWhere);
  run_program(kWhere, problem, nullptr, A, B, params, choice, stream,
              {{params.lse_partials, "params.lse_partials"},
               {params.targets, "params.targets"},
               {params.target_logits, "params.target_logits"}});
}

void swiglu_pairs_no_d(const TensorView& A, const TensorView& B, const SwiGluPairsNoDParams& params,
                       gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::swiglu_pairs_no_d";
  const gemm::GemmProblem problem = gemm::make_gemm_problem_without_d(A, B, kWhere);
  check_gated(params, problem.n, kWhere, "params");
  run_program(kWhere, problem, nullptr, A, B, params, choice, stream,
              {{params.gated, "params.gated"}});
}

void rstd_swiglu_pairs_no_d(const TensorView& A, const TensorView& B,
                            const RstdSwiGluPairsNoDParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rstd_swiglu_pairs_no_d";
  const gemm::GemmProblem problem = gemm::make_gemm_problem_without_d(A, B, kWhere);
  check_rstd(params.rstd, problem.m, kWhere, "params.rstd");
  check_gated(params.gated, problem.n, kWhere, "params.gated");
  run_program(kWhere, problem, nullptr, A, B, params, choice, stream,
              {{params.rstd.sumsq_partials, "params.rstd.sumsq_partials"},
               {params.gated.gated, "params.gated.gated"}});
}

void swiglu_bwd(const TensorView& D, const TensorView& A, const TensorView& B,
                const SwiGluBwdParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::swiglu_bwd";
  require_packed_z_dz(params, D.shape[1], kWhere);
  require_aligned(params.zdz_partials, kWhere, "params.zdz_partials", 16);
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.packed_z, "params.packed_z"},
          {params.packed_dz, "params.packed_dz"},
          {params.zdz_partials, "params.zdz_partials"}});
}

namespace {
void check_rms_norm_bwd(const RmsNormBwdParams& params, const TensorView& D, const char* where) {
  if (params.alpha) require_aligned(params.alpha, where, "params.alpha", 4);
  check_rstd(params.rstd, D.shape[0], where, "params.rstd");
  require(params.rstd.width == D.shape[1], where,
          "params.rstd.width: must be D's N (the features normalised) = " +
              std::to_string(D.shape[1]) + "; got " + std::to_string(params.rstd.width));
  require_tile(params.x, params.x_stride, D.shape[1], where, "params.x");
  require_aligned(params.norm_weight, where, "params.norm_weight", 16);
  require_aligned(params.zdz, where, "params.zdz", 4);
  require_tile(params.normed, params.normed_stride, D.shape[1], where, "params.normed");
  require_aligned(params.dw_partials, where, "params.dw_partials", 16);
}
// Both variants: checks, then the launch of Params' program (the accumulate one adds into D).
template <class Params>
void launch_rms_norm_bwd(const char* where, const TensorView& D, const TensorView& A,
                         const TensorView& B, const Params& p, gemm::KernelChoice choice,
                         cudaStream_t stream) {
  check_rms_norm_bwd(p, D, where);
  launch(where, D, A, B, p, choice, stream,
         {{p.alpha, "params.alpha"},
          {p.rstd.sumsq_partials, "params.rstd.sumsq_partials"},
          {p.x, "params.x"},
          {p.norm_weight, "params.norm_weight"},
          {p.zdz, "params.zdz"},
          {p.normed, "params.normed"},
          {p.dw_partials, "params.dw_partials"}});
}
}  // namespace

void rms_norm_bwd(const TensorView& D, const TensorView& A, const TensorView& B,
                  const RmsNormBwdParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  launch_rms_norm_bwd("coda::epilogue::rms_norm_bwd", D, A, B, params, choice, stream);
}

void rms_norm_bwd_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                             const RmsNormBwdAccumulateParams& params, gemm::KernelChoice choice,
                             cudaStream_t stream) {
  launch_rms_norm_bwd("coda::epilogue::rms_norm_bwd_accumulate", D, A, B, params, choice, stream);
}

void weight_grad_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                            const WeightGradAccumulateParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::weight_grad_accumulate";
  const gemm::GemmProblem p = gemm::make_gemm_problem(D, A, B, kWhere);
  require(p.d_dtype == DType::kF32, kWhere, "D: this program accumulates into fp32 D");
  run_program(kWhere, p, &D, A, B, params, choice, stream, {});
}

}  // namespace coda::epilogue
