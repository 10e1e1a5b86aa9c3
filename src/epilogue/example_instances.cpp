// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the compiled example programs: validate -> find the instance -> launch.
#include "coda/epilogue/example_instances.hpp"

#include <string>
#include <type_traits>

#include "coda/device_check.hpp"
#include "coda/gemm/problem.hpp"
#include "coda/status.hpp"

namespace coda::epilogue {

namespace instances {
#define CODA_EPILOGUE_INSTANCE(program, config, name)                                      \
  void name(const gemm::GemmProblem&, const gemm::KernelChoice&, const program##Params&, \
            void*, cudaStream_t);
#include "../instances/epilogue_dispatch.inc"
#undef CODA_EPILOGUE_INSTANCE
}  // namespace instances

namespace {

template <class Params>
using Launcher = void (*)(const gemm::GemmProblem&, const gemm::KernelChoice&, const Params&, void*,
                          cudaStream_t);

template <class Params>
Launcher<Params> find(gemm::TileConfig config) {
#define CODA_EPILOGUE_INSTANCE(program, cfg, name)                    \
  if constexpr (std::is_same_v<Params, program##Params>) {            \
    if (config == gemm::TileConfig::cfg) return &instances::name;     \
  }
#include "../instances/epilogue_dispatch.inc"
#undef CODA_EPILOGUE_INSTANCE
  return nullptr;
}

void require_aligned(const void* p, const char* where, const char* name, std::size_t bytes) {
  require(p != nullptr, where, std::string(name) + ": data pointer is null");
  require(reinterpret_cast<std::uintptr_t>(p) % bytes == 0, where,
          std::string(name) + ": must be " + std::to_string(bytes) + "-byte aligned");
}

// An extra M×N bf16 tile read or written by TMA: 16-byte aligned, row stride >= N and 16-byte aligned.
void require_tile(const void* p, std::int64_t stride, std::int64_t n, const char* where,
                  const char* name) {
  require_aligned(p, where, name, 16);
  require(stride >= n && stride % 8 == 0, where,
          std::string(name) + ": row stride must be >= N and a multiple of 8 elements (16 bytes, "
                              "for TMA); got " + std::to_string(stride));
}

template <class Params>
void launch(const char* where, const TensorView& D, const TensorView& A, const TensorView& B,
            const Params& params, gemm::KernelChoice choice, cudaStream_t stream) {
  gemm::GemmProblem p = gemm::make_gemm_problem(D, A, B, where);
  require(p.layout == gemm::OperandLayout::kAkBk, where,
          "A and B: the example programs are compiled for K-major A and B (forward layout)");
  require(p.d_dtype == DType::kBF16, where, "D: the example programs write bf16 D");
  Launcher<Params> run = find<Params>(choice.config);
  require(run != nullptr, where,
          std::string("choice.config: no ") + gemm::to_string(choice.config) + " instance");
  require_gemm_operands_on_device(D, A, B, where);
  run(p, choice, params, nullptr, stream);
}

}  // namespace

bool has_example_instance(gemm::TileConfig config) {
  return find<RowScaleParams>(config) != nullptr;
}

void residual_rms(const TensorView& D, const TensorView& A, const TensorView& B,
                  const ResidualRmsParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::residual_rms";
  require_tile(params.residual, params.residual_stride, D.shape[1], kWhere, "params.residual");
  require_aligned(params.norm_weight, kWhere, "params.norm_weight", 16);
  require_tile(params.normed, params.normed_stride, D.shape[1], kWhere, "params.normed");
  require_aligned(params.sumsq_partials, kWhere, "params.sumsq_partials", 16);
  launch(kWhere, D, A, B, params, choice, stream);
}

void row_scale(const TensorView& D, const TensorView& A, const TensorView& B,
               const RowScaleParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::row_scale";
  if (params.alpha) require_aligned(params.alpha, kWhere, "params.alpha", 4);
  require_aligned(params.row_scale, kWhere, "params.row_scale", 4);
  launch(kWhere, D, A, B, params, choice, stream);
}

void bias_silu_col_sum(const TensorView& D, const TensorView& A, const TensorView& B,
                       const BiasSiluColSumParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::bias_silu_col_sum";
  require_aligned(params.bias, kWhere, "params.bias", 16);
  require_aligned(params.col_partials, kWhere, "params.col_partials", 16);
  launch(kWhere, D, A, B, params, choice, stream);
}

void activation(const TensorView& D, const TensorView& A, const TensorView& B,
                const ActivationParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  launch("coda::epilogue::activation", D, A, B, params, choice, stream);
}

void residual_add(const TensorView& D, const TensorView& A, const TensorView& B,
                  const ResidualAddParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::residual_add";
  require_tile(params.residual, params.residual_stride, D.shape[1], kWhere, "params.residual");
  launch(kWhere, D, A, B, params, choice, stream);
}

void row_sum_squares(const TensorView& D, const TensorView& A, const TensorView& B,
                     const RowSumSquaresParams& params, gemm::KernelChoice choice,
                     cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::row_sum_squares";
  require_aligned(params.sumsq_partials, kWhere, "params.sumsq_partials", 16);
  launch(kWhere, D, A, B, params, choice, stream);
}

}  // namespace coda::epilogue
