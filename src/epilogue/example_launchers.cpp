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
  constexpr const char* kWhere = "coda::epilogue::row_scale";
  if (params.alpha) require_aligned(params.alpha, kWhere, "params.alpha", 4);
  require_aligned(params.row_scale, kWhere, "params.row_scale", 4);
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.alpha, "params.alpha"}, {params.row_scale, "params.row_scale"}});
}

void bias_silu_col_sum(const TensorView& D, const TensorView& A, const TensorView& B,
                       const BiasSiluColSumParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::bias_silu_col_sum";
  require_aligned(params.bias, kWhere, "params.bias", 16);
  require_aligned(params.col_partials, kWhere, "params.col_partials", 16);
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.bias, "params.bias"}, {params.col_partials, "params.col_partials"}});
}

void activation(const TensorView& D, const TensorView& A, const TensorView& B,
                const ActivationParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  launch("coda::epilogue::activation", D, A, B, params, choice, stream);
}

void residual_add(const TensorView& D, const TensorView& A, const TensorView& B,
                  const ResidualAddParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::residual_add";
  require_tile(params.residual, params.residual_stride, D.shape[1], kWhere, "params.residual");
  launch(kWhere, D, A, B, params, choice, stream, {{params.residual, "params.residual"}});
}

void row_sum_squares(const TensorView& D, const TensorView& A, const TensorView& B,
                     const RowSumSquaresParams& params, gemm::KernelChoice choice,
                     cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::row_sum_squares";
  require_aligned(params.sumsq_partials, kWhere, "params.sumsq_partials", 16);
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.sumsq_partials, "params.sumsq_partials"}});
}

void swiglu_pairs_grad(const TensorView& D, const TensorView& A, const TensorView& B,
                       const SwiGluPairsGradParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::swiglu_pairs_grad";
  require_packed_z_dz(params, D.shape[1], kWhere);
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.packed_z, "params.packed_z"}, {params.packed_dz, "params.packed_dz"}});
}

void residual_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                         const ResidualAccumulateParams& params, gemm::KernelChoice choice,
                         cudaStream_t stream) {
  launch("coda::epilogue::residual_accumulate", D, A, B, params, choice, stream);
}

void cross_entropy_partials(const TensorView& D, const TensorView& A, const TensorView& B,
                            const CrossEntropyPartialsParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::cross_entropy_partials";
  require_aligned(params.lse_partials, kWhere, "params.lse_partials", 4);
  const gemm::GemmProblem problem = gemm::make_gemm_problem(D, A, B, kWhere);  // valid M, N first
  check_cross_entropy(params, problem, choice.config, kWhere);
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.lse_partials, "params.lse_partials"},
          {params.targets, "params.targets"},
          {params.target_logits, "params.target_logits"}});
}

}  // namespace coda::epilogue
