// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the example programs (example_launchers.hpp): validate -> find the instance ->
// launch, as the library's (program_launch.hpp). Built into coda_examples, not libcoda.
#include "example_launchers.hpp"

#include <string>

#include "program_launch.hpp"

namespace coda::epilogue {

using namespace launch_detail;  // this file holds launchers built on that machinery

void row_scale(const TensorView& D, const TensorView& A, const TensorView& B,
               const RowScaleParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::row_scale");
  checks.optional_aligned(params.alpha, "alpha", 4);
  checks.aligned(params.row_scale, "row_scale", 4);
  launch(D, A, B, params, choice, stream, checks);
}

void bias_silu_col_sum(const TensorView& D, const TensorView& A, const TensorView& B,
                       const BiasSiluColSumParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::bias_silu_col_sum");
  checks.aligned(params.bias, "bias", 16);
  checks.aligned(params.col_partials, "col_partials", 16);
  launch(D, A, B, params, choice, stream, checks);
}

void activation(const TensorView& D, const TensorView& A, const TensorView& B,
                const ActivationParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  launch(D, A, B, params, choice, stream, ParamChecks("coda::epilogue::activation"));
}

void residual_add(const TensorView& D, const TensorView& A, const TensorView& B,
                  const ResidualAddParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::residual_add");
  checks.tile(params.residual, params.residual_stride, D.shape[1], "residual");
  launch(D, A, B, params, choice, stream, checks);
}

void row_sum_squares(const TensorView& D, const TensorView& A, const TensorView& B,
                     const RowSumSquaresParams& params, gemm::KernelChoice choice,
                     cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::row_sum_squares");
  checks.aligned(params.sumsq_partials, "sumsq_partials", 16);
  launch(D, A, B, params, choice, stream, checks);
}

void swiglu_pairs_grad(const TensorView& D, const TensorView& A, const TensorView& B,
                       const SwiGluPairsGradParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  ParamChecks checks("coda::epilogue::swiglu_pairs_grad");
  check_packed_z_dz(params, D.shape[1], checks);
  launch(D, A, B, params, choice, stream, checks);
}

void residual_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                         const ResidualAccumulateParams& params, gemm::KernelChoice choice,
                         cudaStream_t stream) {
  launch(D, A, B, params, choice, stream, ParamChecks("coda::epilogue::residual_accumulate"));
}

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
