// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the example programs (example_launchers.hpp): validate -> find the instance ->
// launch, as the library's (program_launch.hpp). Built into coda_examples, not libcoda.
#include "example_launchers.hpp"

#include <string>

#include "program_launch.hpp"

namespace coda::epilogue {

using namespace launch_detail;  // this file holds launchers built on that machinery

// The checks of each example params struct, once (m, n: the GEMM's extents); found by
// run_with_d through argument-dependent lookup.
static void check_params(const RowScaleParams& params, std::int64_t, std::int64_t,
                         const ParamChecks& checks) {
  checks.optional_aligned(params.alpha, "alpha", 4);
  checks.aligned(params.row_scale, "row_scale", 4);
}
static void check_params(const BiasSiluColSumParams& params, std::int64_t, std::int64_t,
                         const ParamChecks& checks) {
  checks.aligned(params.bias, "bias", 16);
  checks.aligned(params.col_partials, "col_partials", 16);
}
static void check_params(const ActivationParams&, std::int64_t, std::int64_t,
                         const ParamChecks&) {}
static void check_params(const ResidualAddParams& params, std::int64_t, std::int64_t n,
                         const ParamChecks& checks) {
  checks.tile(params.residual, params.residual_stride, n, "residual");
}
static void check_params(const RowSumSquaresParams& params, std::int64_t, std::int64_t,
                         const ParamChecks& checks) {
  checks.aligned(params.sumsq_partials, "sumsq_partials", 16);
}
static void check_params(const SwiGluPairsGradParams& params, std::int64_t, std::int64_t n,
                         const ParamChecks& checks) {
  check_packed_z_dz(params, n, checks);
}
static void check_params(const ResidualAccumulateParams&, std::int64_t, std::int64_t,
                         const ParamChecks&) {}

CODA_PROGRAM_LAUNCHER(row_scale, RowScaleParams)
CODA_PROGRAM_LAUNCHER(bias_silu_col_sum, BiasSiluColSumParams)
CODA_PROGRAM_LAUNCHER(activation, ActivationParams)
CODA_PROGRAM_LAUNCHER(residual_add, ResidualAddParams)
CODA_PROGRAM_LAUNCHER(row_sum_squares, RowSumSquaresParams)
CODA_PROGRAM_LAUNCHER(swiglu_pairs_grad, SwiGluPairsGradParams)
CODA_PROGRAM_LAUNCHER(residual_accumulate, ResidualAccumulateParams)

void cross_entropy_partials(const TensorView& D, const TensorView& A, const TensorView& B,
                            const CrossEntropyPartialsParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::cross_entropy_partials");
  require_aligned(params.lse_partials, checks.where(), "params.lse_partials", 4);  // before M, N
  const gemm::GemmProblem problem = gemm::make_gemm_problem(D, A, B, checks.where());
  check_cross_entropy(params, problem, choice.config, checks);
  launch(D, A, B, params, choice, stream, checks);
}

}  // namespace coda::epilogue
