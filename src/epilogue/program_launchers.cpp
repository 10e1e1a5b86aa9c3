// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the compiled epilogue programs: validate -> find the instance -> launch.
#include "coda/epilogue/program_launchers.hpp"

#include <cmath>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "coda/device_check.hpp"
#include "coda/epilogue/merge.hpp"
#include "coda/gemm/problem.hpp"
#include "coda/status.hpp"

namespace coda::epilogue {

namespace instances {
#define CODA_EPILOGUE_INSTANCE(program, config, layout, name)                                   \
  void name(const gemm::GemmProblem&, const gemm::KernelChoice&, const program##Params&, void*, \
            cudaStream_t);
#include "instances/epilogue_dispatch.inc"
#undef CODA_EPILOGUE_INSTANCE
}  // namespace instances

namespace {

template <class Params>
using Launcher = void (*)(const gemm::GemmProblem&, const gemm::KernelChoice&, const Params&, void*,
                          cudaStream_t);

template <class Params>
Launcher<Params> find(gemm::TileConfig config) {
#define CODA_EPILOGUE_INSTANCE(program, cfg, layout, name)        \
  if constexpr (std::is_same_v<Params, program##Params>) {        \
    if (config == gemm::TileConfig::cfg) return &instances::name; \
  }
#include "instances/epilogue_dispatch.inc"
#undef CODA_EPILOGUE_INSTANCE
  return nullptr;
}

// The operand layout the program of Params is compiled for (scripts/instances.py).
template <class Params>
gemm::OperandLayout compiled_layout() {
#define CODA_EPILOGUE_INSTANCE(program, cfg, layout, name) \
  if constexpr (std::is_same_v<Params, program##Params>) return gemm::OperandLayout::layout;
#include "instances/epilogue_dispatch.inc"
#undef CODA_EPILOGUE_INSTANCE
  return gemm::OperandLayout::kAkBk;
}

void require_aligned(const void* p, const char* where, const char* name, std::size_t bytes) {
  require(p != nullptr, where, std::string(name) + ": data pointer is null");
  require(reinterpret_cast<std::uintptr_t>(p) % bytes == 0, where,
          std::string(name) + ": must be " + std::to_string(bytes) + "-byte aligned");
}

// An extra M×N bf16 tile read or written by TMA: 16-byte aligned, row stride >= N and 16-byte
// aligned.
void require_tile(const void* p, std::int64_t stride, std::int64_t n, const char* where,
                  const char* name) {
  require_aligned(p, where, name, 16);
  require(stride >= n && stride % 8 == 0, where,
          std::string(name) +
              ": row stride must be >= N and a multiple of 8 elements (16 bytes, "
              "for TMA); got " +
              std::to_string(stride));
}

// A 32-bit tile of packed bf16 pairs, M × N (N = the GEMM's N), read or written by TMA.
void require_packed_tile(const void* p, std::int64_t stride, std::int64_t n, const char* where,
                         const char* name) {
  require_aligned(p, where, name, 16);
  require(stride >= n && stride % 4 == 0, where,
          std::string(name) +
              ": row stride must be >= N and a multiple of 4 32-bit elements "
              "(16 bytes, for TMA); got " +
              std::to_string(stride));
}

void require_even_n(std::int64_t n, const char* where) {
  require(n % 2 == 0, where,
          "N: must be even (the program works on column pairs); got " + std::to_string(n));
}

// The params' own device pointers (null ones are optional inputs, already checked where required).
struct ParamPointer {
  const void* ptr;
  const char* name;
};

// Finds the program's kernel for choice.config and runs it on the validated problem `p`; D is
// null for programs that store no D.
template <class Params>
void run_program(const char* where, const gemm::GemmProblem& p, const TensorView* D,
                 const TensorView& A, const TensorView& B, const Params& params,
                 gemm::KernelChoice choice, cudaStream_t stream,
                 std::initializer_list<ParamPointer> param_pointers) {
  const gemm::OperandLayout layout = compiled_layout<Params>();
  require(p.layout == layout, where,
          std::string("A and B: this program is compiled for the ") + gemm::to_string(layout) +
              " operand layout (" +
              (layout == gemm::OperandLayout::kAkBk ? "forward: K-major A and B"
                                                    : "dgrad: K-major A, N-major B") +
              "); got " + gemm::to_string(p.layout));
  Launcher<Params> run = find<Params>(choice.config);
  require(run != nullptr, where,
          std::string("choice.config: no ") + gemm::to_string(choice.config) + " instance");
  if (D != nullptr) {
    require_gemm_operands_on_device(*D, A, B, where);
  } else {
    require_current_device(p.device, where, "A");
    require_device_memory(A.data, p.device, where, "A");
    require_device_memory(B.data, p.device, where, "B");
  }
  for (const ParamPointer& q : param_pointers)
    if (q.ptr != nullptr) require_device_memory(q.ptr, p.device, where, q.name);
  run(p, choice, params, nullptr, stream);
}

template <class Params>
void launch(const char* where, const TensorView& D, const TensorView& A, const TensorView& B,
            const Params& params, gemm::KernelChoice choice, cudaStream_t stream,
            std::initializer_list<ParamPointer> param_pointers = {}) {
  gemm::GemmProblem p = gemm::make_gemm_problem(D, A, B, where);
  require(p.d_dtype == DType::kBF16, where, "D: the epilogue programs write bf16 D");
  run_program(where, p, &D, A, B, params, choice, stream, param_pointers);
}

}  // namespace

bool has_program_instance(gemm::TileConfig config) {
  return find<RowScaleParams>(config) != nullptr;
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

void swiglu_pairs_grad(const TensorView& D, const TensorView& A, const TensorView& B,
                       const SwiGluPairsGradParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::swiglu_pairs_grad";
  require_packed_tile(params.packed_z, params.packed_z_stride, D.shape[1], kWhere,
                      "params.packed_z");
  require_packed_tile(params.packed_dz, params.packed_dz_stride, D.shape[1], kWhere,
                      "params.packed_dz");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.packed_z, "params.packed_z"}, {params.packed_dz, "params.packed_dz"}});
}

void rstd_row_scale(const TensorView& D, const TensorView& A, const TensorView& B,
                    const RstdRowScaleParams& params, gemm::KernelChoice choice,
                    cudaStream_t stream) {
  constexpr const char* kWhere = "coda::epilogue::rstd_row_scale";
  check_rstd(params, D.shape[0], kWhere, "params");
  launch(kWhere, D, A, B, params, choice, stream,
         {{params.sumsq_partials, "params.sumsq_partials"}});
}

void residual_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                         const ResidualAccumulateParams& params, gemm::KernelChoice choice,
                         cudaStream_t stream) {
  launch("coda::epilogue::residual_accumulate", D, A, B, params, choice, stream);
}

namespace {
void check_cross_entropy(const CrossEntropyPartialsParams& params, const gemm::GemmProblem& problem,
                         gemm::TileConfig config, const char* where) {
  require_aligned(params.lse_partials, where, "params.lse_partials", 4);
  require(params.softcap >= 0.0f && params.softcap < INFINITY, where,
          "params.softcap: must be finite and non-negative (0: off)");
  if (params.targets != nullptr) {
    require_aligned(params.targets, where, "params.targets", params.targets_int64 ? 8 : 4);
    require_aligned(params.target_logits, where, "params.target_logits", 4);
  }
  const std::int64_t padded = per_row_partial_layout(config, problem.m, problem.n).padded;
  require(params.lse_padded == padded, where,
          "params.lse_padded: must be per_row_partial_layout(choice.config, M, N).padded = " +
              std::to_string(padded) + "; got " + std::to_string(params.lse_padded));
}
}  // namespace

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
  require_packed_tile(params.packed_z, params.packed_z_stride, D.shape[1], kWhere,
                      "params.packed_z");
  require_packed_tile(params.packed_dz, params.packed_dz_stride, D.shape[1], kWhere,
                      "params.packed_dz");
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
