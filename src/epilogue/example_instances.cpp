// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the compiled example programs: validate -> find the instance -> launch.
#include "coda/epilogue/example_instances.hpp"

#include <string>
#include <type_traits>

#include "coda/device_check.hpp"
#include "coda/epilogue/merge.hpp"
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

// A 32-bit tile of packed bf16 pairs, M × N (N = the GEMM's N), read or written by TMA.
void require_packed_tile(const void* p, std::int64_t stride, std::int64_t n, const char* where,
                         const char* name) {
  require_aligned(p, where, name, 16);
  require(stride >= n && stride % 4 == 0, where,
          std::string(name) + ": row stride must be >= N and a multiple of 4 32-bit elements "
                              "(16 bytes, for TMA); got " + std::to_string(stride));
}

void require_even_n(const TensorView& D, const char* where) {
  require(D.shape[1] % 2 == 0, where,
          "D: N must be even (the program works on column pairs); got " + std::to_string(D.shape[1]));
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

void swiglu_pairs(const TensorView& D, const TensorView& A, const TensorView& B,
                  const SwiGluPairsParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::swiglu_pairs";
  require_even_n(D, kWhere);
  require_aligned(params.gated, kWhere, "params.gated", 4);
  require(params.gated_stride >= D.shape[1] / 2 && params.gated_stride % 2 == 0, kWhere,
          "params.gated_stride: must be >= N/2 and even (4-byte pair stores); got " +
              std::to_string(params.gated_stride));
  launch(kWhere, D, A, B, params, choice, stream);
}

void rope_rotate(const TensorView& D, const TensorView& A, const TensorView& B,
                 const RopeRotateParams& params, gemm::KernelChoice choice, cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rope_rotate";
  require_even_n(D, kWhere);
  require_aligned(params.positions, kWhere, "params.positions", 4);
  require_aligned(params.frequencies, kWhere, "params.frequencies", 8);
  launch(kWhere, D, A, B, params, choice, stream);
}

void swiglu_pairs_grad(const TensorView& D, const TensorView& A, const TensorView& B,
                       const SwiGluPairsGradParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::swiglu_pairs_grad";
  require_packed_tile(params.packed_z, params.packed_z_stride, D.shape[1], kWhere, "params.packed_z");
  require_packed_tile(params.packed_dz, params.packed_dz_stride, D.shape[1], kWhere,
                      "params.packed_dz");
  launch(kWhere, D, A, B, params, choice, stream);
}

void rstd_row_scale(const TensorView& D, const TensorView& A, const TensorView& B,
                    const RstdRowScaleParams& params, gemm::KernelChoice choice,
                    cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rstd_row_scale";
  require_aligned(params.sumsq_partials, kWhere, "params.sumsq_partials", 4);
  require(params.partial_tiles > 0 && params.partial_padded >= D.shape[0], kWhere,
          "params.partial_tiles/partial_padded: need tiles > 0 and padded >= M; got " +
              std::to_string(params.partial_tiles) + ", " + std::to_string(params.partial_padded));
  require(params.width > 0, kWhere, "params.width: must be positive");
  require(params.eps >= 0.0f, kWhere, "params.eps: must be non-negative");
  launch(kWhere, D, A, B, params, choice, stream);
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
  if (params.targets != nullptr) {
    require_aligned(params.targets, kWhere, "params.targets", params.targets_int64 ? 8 : 4);
    require_aligned(params.target_logits, kWhere, "params.target_logits", 4);
  }
  const gemm::GemmProblem problem = gemm::make_gemm_problem(D, A, B, kWhere);  // valid M, N first
  const std::int64_t padded = per_row_partial_layout(choice.config, problem.m, problem.n).padded;
  require(params.lse_padded == padded, kWhere,
          "params.lse_padded: must be per_row_partial_layout(choice.config, M, N).padded = " +
              std::to_string(padded) + "; got " + std::to_string(params.lse_padded));
  launch(kWhere, D, A, B, params, choice, stream);
}

}  // namespace coda::epilogue
