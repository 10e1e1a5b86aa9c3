// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the library's epilogue programs: validate -> find the instance -> launch
// (program_launch.hpp). Each params struct's checks are written once (a check_params overload
// below), naming and validating each of its device pointers once; a composed params struct
// checks its parts through checks.member. A launcher is then one generic call
// (run_with_d / run_without_d). The example programs' launchers: example_launchers.cpp.
#include "coda/epilogue/program_launchers.hpp"

#include <string>
#include <type_traits>

#include "program_launch.hpp"

namespace coda::epilogue {

using namespace launch_detail;  // this file holds launchers built on that machinery

// The checks of each params struct, once (m, n: the GEMM's extents). `static`, not in an unnamed
// namespace: run_with_d / run_without_d find them by argument-dependent lookup.

static void check_params(const SwiGluPairsParams& params, std::int64_t, std::int64_t n,
                         const ParamChecks& checks) {
  require_even_n(n, checks.where());
  checks.aligned(params.gated, "gated", 4);
  checks.require(params.gated_stride >= n / 2 && params.gated_stride % 2 == 0,
                 checks.name("gated_stride") +
                     ": must be >= N/2 and even (4-byte pair stores); got " +
                     std::to_string(params.gated_stride));
}

static void check_params(const RopeRotateParams& params, std::int64_t, std::int64_t n,
                         const ParamChecks& checks) {
  require_even_n(n, checks.where());
  checks.aligned(params.positions, "positions", 4);
  checks.aligned(params.frequencies, "frequencies", 8);
}

static void check_params(const RstdRowScaleParams& params, std::int64_t m, std::int64_t,
                         const ParamChecks& checks) {
  const SumSquaresPartials& sums = params.sums;
  checks.aligned(sums.partials, "sums.partials", 4);
  checks.require(sums.layout.tiles > 0 && sums.layout.padded >= m,
                 checks.name("sums.layout") + ": need tiles > 0 and padded >= M; got " +
                     std::to_string(sums.layout.tiles) + ", " +
                     std::to_string(sums.layout.padded));
  checks.require(sums.width > 0, checks.name("sums.width") + ": must be positive");
  checks.require(params.eps >= 0.0f, checks.name("eps") + ": must be non-negative");
}

static void check_params(const QkNormRopeParams& params, std::int64_t m, std::int64_t n,
                         const ParamChecks& checks) {
  check_params(params.rope, m, n, checks.member("rope"));
  const int hd = params.head_dim;
  checks.require(hd == 64 || hd == 128,
                 checks.name("head_dim") +
                     ": must be 64 or 128 (whole heads per epilogue subtile); got " +
                     std::to_string(hd));
  checks.require(n % hd == 0, "D: N must be a multiple of head_dim " + std::to_string(hd) +
                                  "; got " + std::to_string(n));
  checks.require(params.q_columns > 0 && params.q_columns % hd == 0 &&
                     params.qk_columns > params.q_columns && params.qk_columns % hd == 0 &&
                     params.qk_columns <= n,
                 checks.name("q_columns/qk_columns") +
                     ": need 0 < q_columns < qk_columns <= N, multiples of head_dim; got " +
                     std::to_string(params.q_columns) + ", " + std::to_string(params.qk_columns));
  checks.aligned(params.q_norm_weight, "q_norm_weight", 4);
  checks.aligned(params.k_norm_weight, "k_norm_weight", 4);
  checks.require(params.eps >= 0.0f, checks.name("eps") + ": must be non-negative");
}

static void check_params(const QkNormRopeSavePreParams& params, std::int64_t m, std::int64_t n,
                         const ParamChecks& checks) {
  check_params(params.qk, m, n, checks.member("qk"));
  checks.tile(params.pre, params.pre_stride, n, "pre");
}

// A row-norm statistic composed with another program: the statistic's checks, then the other's.
template <class Other>
static void check_rstd_then(const RstdRowScaleParams& rstd, const Other& other,
                            const char* other_name, std::int64_t m, std::int64_t n,
                            const ParamChecks& checks) {
  check_params(rstd, m, n, checks.member("rstd"));
  check_params(other, m, n, checks.member(other_name));
}
static void check_params(const RstdSwiGluPairsParams& p, std::int64_t m, std::int64_t n,
                         const ParamChecks& checks) {
  check_rstd_then(p.rstd, p.gated, "gated", m, n, checks);
}
static void check_params(const RstdRopeRotateParams& p, std::int64_t m, std::int64_t n,
                         const ParamChecks& checks) {
  check_rstd_then(p.rstd, p.rope, "rope", m, n, checks);
}
static void check_params(const RstdQkNormRopeParams& p, std::int64_t m, std::int64_t n,
                         const ParamChecks& checks) {
  check_rstd_then(p.rstd, p.qk, "qk", m, n, checks);
}
static void check_params(const RstdQkNormRopeSavePreParams& p, std::int64_t m, std::int64_t n,
                         const ParamChecks& checks) {
  check_rstd_then(p.rstd, p.qk, "qk", m, n, checks);
}

static void check_params(const ResidualRmsParams& params, std::int64_t, std::int64_t n,
                         const ParamChecks& checks) {
  checks.tile(params.residual, params.residual_stride, n, "residual");
  checks.aligned(params.norm_weight, "norm_weight", 16);
  checks.tile(params.normed, params.normed_stride, n, "normed");
  checks.aligned(params.sumsq_partials, "sumsq_partials", 16);
}

static void check_params(const SwiGluBwdParams& params, std::int64_t, std::int64_t n,
                         const ParamChecks& checks) {
  check_packed_z_dz(params, n, checks);
  checks.aligned(params.zdz_partials, "zdz_partials", 16);
}

static void check_params(const RmsNormBwdParams& params, std::int64_t m, std::int64_t n,
                         const ParamChecks& checks) {
  checks.optional_aligned(params.alpha, "alpha", 4);
  check_params(params.rstd, m, n, checks.member("rstd"));
  checks.require(params.rstd.sums.width == n,
                 "params.rstd.sums.width: must be D's N (the features normalised) = " +
                     std::to_string(n) + "; got " + std::to_string(params.rstd.sums.width));
  checks.tile(params.x, params.x_stride, n, "x");
  checks.aligned(params.norm_weight, "norm_weight", 16);
  checks.aligned(params.zdz, "zdz", 4);
  checks.tile(params.normed, params.normed_stride, n, "normed");
  checks.aligned(params.dw_partials, "dw_partials", 16);
}

// Each bias-GELU program's own pointers: the bias, the saved pre-activation tile, the ∂b partials.
static void check_params(const BiasGeluParams& p, std::int64_t, std::int64_t,
                         const ParamChecks& checks) {
  checks.aligned(p.bias, "bias", 16);
}
static void check_params(const BiasGeluSavePreParams& p, std::int64_t m, std::int64_t n,
                         const ParamChecks& checks) {
  check_params(static_cast<const BiasGeluParams&>(p), m, n, checks);
  checks.tile(p.pre, p.pre_stride, n, "pre");
}
static void check_params(const BiasGeluBwdParams& p, std::int64_t, std::int64_t n,
                         const ParamChecks& checks) {
  checks.tile(p.pre, p.pre_stride, n, "pre");
  checks.aligned(p.dbias_partials, "dbias_partials", 16);
}

bool has_program_instance(ops::OpKey op, gemm::TileConfig config) {
  switch (op) {
#define CODA_OP_HAS_INSTANCE(id, name, Params) \
  case ops::OpKey::id:                         \
    return find<Params>(config) != nullptr;
    CODA_OP_KEYS(CODA_OP_HAS_INSTANCE)
#undef CODA_OP_HAS_INSTANCE
    case ops::OpKey::kCount:
      break;
  }
  return false;
}

CODA_PROGRAM_LAUNCHER(residual_rms, ResidualRmsParams)
CODA_PROGRAM_LAUNCHER(swiglu_pairs, SwiGluPairsParams)
CODA_PROGRAM_LAUNCHER(rope_rotate, RopeRotateParams)
CODA_PROGRAM_LAUNCHER(rstd_swiglu_pairs, RstdSwiGluPairsParams)
CODA_PROGRAM_LAUNCHER(rstd_rope_rotate, RstdRopeRotateParams)
CODA_PROGRAM_LAUNCHER(qk_norm_rope, QkNormRopeParams)
CODA_PROGRAM_LAUNCHER(rstd_qk_norm_rope, RstdQkNormRopeParams)
CODA_PROGRAM_LAUNCHER(qk_norm_rope_save_pre, QkNormRopeSavePreParams)
CODA_PROGRAM_LAUNCHER(rstd_qk_norm_rope_save_pre, RstdQkNormRopeSavePreParams)
CODA_PROGRAM_LAUNCHER(rstd_row_scale, RstdRowScaleParams)
CODA_PROGRAM_LAUNCHER(swiglu_bwd, SwiGluBwdParams)
CODA_PROGRAM_LAUNCHER(rms_norm_bwd, RmsNormBwdParams)
CODA_PROGRAM_LAUNCHER(rms_norm_bwd_accumulate, RmsNormBwdAccumulateParams)  // adds into D

CODA_PROGRAM_LAUNCHER_NO_D(swiglu_pairs_no_d, SwiGluPairsNoDParams)
CODA_PROGRAM_LAUNCHER_NO_D(rstd_swiglu_pairs_no_d, RstdSwiGluPairsNoDParams)

template <class Params>
void bias_gelu(const TensorView& D, const TensorView& A, const TensorView& B, const Params& p,
               gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr bool kForward = std::is_base_of_v<BiasGeluParams, Params>;
  constexpr bool kPre = !std::is_same_v<Params, BiasGeluParams>;
  run_with_d(!kForward ? "coda::epilogue::bias_gelu_bwd"
             : kPre    ? "coda::epilogue::bias_gelu_save_pre"
                       : "coda::epilogue::bias_gelu",
             D, A, B, p, choice, stream);
}
template void bias_gelu(const TensorView&, const TensorView&, const TensorView&,
                        const BiasGeluParams&, gemm::KernelChoice, cudaStream_t);
template void bias_gelu(const TensorView&, const TensorView&, const TensorView&,
                        const BiasGeluSavePreParams&, gemm::KernelChoice, cudaStream_t);
template void bias_gelu(const TensorView&, const TensorView&, const TensorView&,
                        const BiasGeluBwdParams&, gemm::KernelChoice, cudaStream_t);

void cross_entropy_loss_partials(const TensorView& A, const TensorView& B,
                                 const CrossEntropyLossParams& params, gemm::KernelChoice choice,
                                 cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::cross_entropy_loss_partials");
  const gemm::GemmProblem problem = gemm::make_gemm_problem_without_d(A, B, checks.where());
  check_cross_entropy(params, problem, choice.config, checks);
  run_program(checks.where(), problem, nullptr, A, B, params, choice, stream, checks);
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
