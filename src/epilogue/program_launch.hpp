// SPDX-License-Identifier: BSD-3-Clause
// How a program launcher runs its kernel, shared by the library's launchers
// (program_launchers.cpp) and the example programs' (example_launchers.cpp): the generated
// instances, finding one by (Params, config), the checks every launcher makes, and the launch.
// Internal; needs the generated instances/epilogue_dispatch.inc on the include path.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "coda/device_check.hpp"
#include "coda/epilogue/merge.hpp"
#include "coda/epilogue/program_params.hpp"
#include "coda/gemm/config.hpp"
#include "coda/gemm/problem.hpp"
#include "coda/status.hpp"
#include "coda/tensor.hpp"

namespace coda::epilogue {

// Every compiled program kernel (library and examples). Declaring one creates no link
// dependency: find<Params> names only the kernels of the Params it is instantiated for.
namespace instances {
#define CODA_EPILOGUE_INSTANCE(program, config, layout, name)                                   \
  void name(const gemm::GemmProblem&, const gemm::KernelChoice&, const program##Params&, void*, \
            cudaStream_t);
#include "instances/epilogue_dispatch.inc"
#undef CODA_EPILOGUE_INSTANCE
}  // namespace instances

namespace launch_detail {

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

// These checks run on every launch: their messages are built only when they fail.
inline void require_aligned(const void* p, const char* where, const char* name,
                            std::size_t bytes) {
  if (p == nullptr) require(false, where, std::string(name) + ": data pointer is null");
  if (reinterpret_cast<std::uintptr_t>(p) % bytes != 0)
    require(false, where,
            std::string(name) + ": must be " + std::to_string(bytes) + "-byte aligned");
}

// An extra M × N tile read or written by TMA, of `element_bytes`-byte elements (`unit` names them
// in the message): 16-byte aligned, row stride >= N and a whole number of 16 bytes.
inline void require_tma_tile(const void* p, std::int64_t stride, std::int64_t n, int element_bytes,
                             const char* unit, const char* where, const char* name) {
  require_aligned(p, where, name, 16);
  const int per_16_bytes = 16 / element_bytes;
  if (stride < n || stride % per_16_bytes != 0)
    require(false, where,
            std::string(name) + ": row stride must be >= N and a multiple of " +
                std::to_string(per_16_bytes) + " " + unit + " (16 bytes, for TMA); got " +
                std::to_string(stride));
}

// A bf16 tile.
inline void require_tile(const void* p, std::int64_t stride, std::int64_t n, const char* where,
                         const char* name) {
  require_tma_tile(p, stride, n, 2, "elements", where, name);
}

// A 32-bit tile of packed bf16 pairs, M × N (N = the GEMM's N).
inline void require_packed_tile(const void* p, std::int64_t stride, std::int64_t n,
                                const char* where, const char* name) {
  require_tma_tile(p, stride, n, 4, "32-bit elements", where, name);
}

inline void require_even_n(std::int64_t n, const char* where) {
  require(n % 2 == 0, where,
          "N: must be even (the program works on column pairs); got " + std::to_string(n));
}

// A device pointer of the params, by its name in messages; null ones are optional inputs,
// already checked where required.
struct ParamPointer {
  const void* ptr;
  std::string name;
};

// A launcher's checks of its params, each device pointer named once: validated where it is
// declared (alignment, or a TMA tile's stride) and kept for the launch's device-memory check.
// member("rstd") is the view of a nested params struct ("params.rstd.…"), adding to the same list
// (the list is held by the launcher's own ParamChecks, so a const view can still add to it).
class ParamChecks {
 public:
  explicit ParamChecks(const char* where) : where_(where), prefix_("params"), list_(&own_) {}
  ParamChecks(const ParamChecks&) = delete;
  ParamChecks& operator=(const ParamChecks&) = delete;

  ParamChecks member(const char* field) const { return ParamChecks(where_, name(field), list_); }
  const char* where() const { return where_; }
  std::string name(const char* field) const { return prefix_ + "." + field; }
  const std::vector<ParamPointer>& pointers() const { return *list_; }

  // Non-null and aligned to `bytes`.
  void aligned(const void* p, const char* field, std::size_t bytes) const {
    std::string at = name(field);
    require_aligned(p, where_, at.c_str(), bytes);
    list_->push_back({p, std::move(at)});
  }
  // Optional (null: off); aligned to `bytes` when given.
  void optional_aligned(const void* p, const char* field, std::size_t bytes) const {
    if (p == nullptr) return;  // nothing to check on the device either
    aligned(p, field, bytes);
  }
  // A bf16 M × N tile read or written by TMA.
  void tile(const void* p, std::int64_t stride, std::int64_t n, const char* field) const {
    std::string at = name(field);
    require_tile(p, stride, n, where_, at.c_str());
    list_->push_back({p, std::move(at)});
  }
  // A 32-bit M × N tile of packed bf16 pairs.
  void packed_tile(const void* p, std::int64_t stride, std::int64_t n, const char* field) const {
    std::string at = name(field);
    require_packed_tile(p, stride, n, where_, at.c_str());
    list_->push_back({p, std::move(at)});
  }
  void require(bool ok, const std::string& message) const { coda::require(ok, where_, message); }

 private:
  ParamChecks(const char* where, std::string prefix, std::vector<ParamPointer>* list)
      : where_(where), prefix_(std::move(prefix)), list_(list) {}
  const char* where_;
  std::string prefix_;
  std::vector<ParamPointer> own_;
  std::vector<ParamPointer>* list_;
};

// The packed Z and dZ tiles of the SwiGLU gradient programs (SwiGluPairsGrad, SwiGluBwd).
template <class Params>
void check_packed_z_dz(const Params& params, std::int64_t n, const ParamChecks& checks) {
  checks.packed_tile(params.packed_z, params.packed_z_stride, n, "packed_z");
  checks.packed_tile(params.packed_dz, params.packed_dz_stride, n, "packed_dz");
}

// Finds the program's kernel for choice.config and runs it on the validated problem `p`; D is
// null for programs that store no D.
template <class Params>
void run_program(const char* where, const gemm::GemmProblem& p, const TensorView* D,
                 const TensorView& A, const TensorView& B, const Params& params,
                 gemm::KernelChoice choice, cudaStream_t stream, const ParamChecks& checks) {
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
  for (const ParamPointer& q : checks.pointers())
    if (q.ptr != nullptr) require_device_memory(q.ptr, p.device, where, q.name.c_str());
  run(p, choice, params, nullptr, stream);
}

// The launch of a program that writes bf16 D, its params checked (`checks.where()` names the
// launcher in every message).
template <class Params>
void launch(const TensorView& D, const TensorView& A, const TensorView& B, const Params& params,
            gemm::KernelChoice choice, cudaStream_t stream, const ParamChecks& checks) {
  const char* where = checks.where();
  gemm::GemmProblem p = gemm::make_gemm_problem(D, A, B, where);
  require(p.d_dtype == DType::kBF16, where, "D: the epilogue programs write bf16 D");
  run_program(where, p, &D, A, B, params, choice, stream, checks);
}

// The generic launchers: the params checked by their check_params overload (found by argument-
// dependent lookup: each launcher file defines one per params struct it launches), then the
// launch. With D, the params are checked before the operands (their extents are D's); without
// D, the problem comes first and gives the extents.
template <class Params>
void run_with_d(const char* where, const TensorView& D, const TensorView& A, const TensorView& B,
                const Params& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks(where);
  check_params(params, D.shape[0], D.shape[1], checks);
  launch(D, A, B, params, choice, stream, checks);
}

template <class Params>
void run_without_d(const char* where, const TensorView& A, const TensorView& B,
                   const Params& params, gemm::KernelChoice choice, cudaStream_t stream) {
  ParamChecks checks(where);
  const gemm::GemmProblem problem = gemm::make_gemm_problem_without_d(A, B, where);
  check_params(params, problem.m, problem.n, checks);
  run_program(where, problem, nullptr, A, B, params, choice, stream, checks);
}

// A public launcher `name` of Params' program (program_launchers.hpp, example_launchers.hpp):
// one generic call; "coda::epilogue::name" in its messages.
#define CODA_PROGRAM_LAUNCHER(name, Params)                                                      \
  void name(const TensorView& D, const TensorView& A, const TensorView& B, const Params& params, \
            gemm::KernelChoice choice, cudaStream_t stream) {                                   \
    launch_detail::run_with_d("coda::epilogue::" #name, D, A, B, params, choice, stream);       \
  }
#define CODA_PROGRAM_LAUNCHER_NO_D(name, Params)                                                 \
  void name(const TensorView& A, const TensorView& B, const Params& params,                     \
            gemm::KernelChoice choice, cudaStream_t stream) {                                   \
    launch_detail::run_without_d("coda::epilogue::" #name, A, B, params, choice, stream);       \
  }

// Cross-entropy partials (the example with D, the library's loss-only program): where the
// partials go must match the config's layout.
inline void check_cross_entropy(const CrossEntropyPartialsParams& params,
                                const gemm::GemmProblem& problem, gemm::TileConfig config,
                                const ParamChecks& checks) {
  checks.aligned(params.lse_partials, "lse_partials", 4);
  checks.require(params.softcap >= 0.0f && params.softcap < INFINITY,
                 checks.name("softcap") + ": must be finite and non-negative (0: off)");
  if (params.targets != nullptr) {  // without targets the capture is off
    checks.aligned(params.targets, "targets", params.targets_int64 ? 8 : 4);
    checks.aligned(params.target_logits, "target_logits", 4);
  }
  const std::int64_t padded = per_row_partial_layout(config, problem.m, problem.n).padded;
  checks.require(params.lse_padded == padded,
                 checks.name("lse_padded") +
                     ": must be per_row_partial_layout(choice.config, M, N).padded = " +
                     std::to_string(padded) + "; got " + std::to_string(params.lse_padded));
}

}  // namespace launch_detail

}  // namespace coda::epilogue
