// SPDX-License-Identifier: BSD-3-Clause
// coda::gemm::gemm: validate -> choose the kernel -> check the workspace -> launch.
#include "coda/gemm/gemm.hpp"

#include <string>

#include "coda/device_check.hpp"
#include "coda/gemm/choose_config.hpp"
#include "coda/gemm/instance.hpp"
#include "coda/gemm/problem.hpp"

namespace coda::gemm {
namespace {

constexpr const char* kWhere = "coda::gemm";

struct Plan {
  GemmProblem problem;
  KernelChoice choice;
  const GemmInstance* instance;
};

Plan plan(const TensorView& D, const TensorView& A, const TensorView& B,
          const GemmOptions& options) {
  Plan p{make_gemm_problem(D, A, B, kWhere), {}, nullptr};
  p.choice = options.choice ? *options.choice
                            : choose_kernel(p.problem.layout, p.problem.d_dtype, p.problem.m,
                                            p.problem.n, p.problem.k);
  const int s = p.choice.swizzle;
  require(s == 1 || s == 2 || s == 4 || s == 8, kWhere,
          "options.choice.swizzle must be 1, 2, 4 or 8; got " + std::to_string(s));
  p.instance = find_instance(p.problem.layout, p.problem.d_dtype, p.choice.config);
  require(p.instance != nullptr, kWhere,
          std::string("options.choice.config: no ") + to_string(p.choice.config) + " kernel for " +
              to_string(p.problem.layout) + " operands with " + dtype_name(p.problem.d_dtype) +
              " D is compiled in (scripts/instances.py)");
  require(options.alpha == nullptr || reinterpret_cast<std::uintptr_t>(options.alpha) % 4 == 0,
          kWhere, "options.alpha: must be 4-byte aligned");
  return p;
}

}  // namespace

std::size_t workspace_bytes(const TensorView& D, const TensorView& A, const TensorView& B,
                            const GemmOptions& options) {
  Plan p = plan(D, A, B, options);
  return p.instance->workspace_bytes(p.problem, p.choice);
}

void gemm(const TensorView& D, const TensorView& A, const TensorView& B, const GemmOptions& options,
          cudaStream_t stream) {
  Plan p = plan(D, A, B, options);
  // The device first: the workspace size is a query of D's device.
  require_gemm_operands_on_device(D, A, B, kWhere);
  if (options.alpha) require_device_memory(options.alpha, D.device, kWhere, "options.alpha");
  const std::size_t needed = p.instance->workspace_bytes(p.problem, p.choice);
  ArgCheck(kWhere).outputs_disjoint(
      {{"D", D}, {"options.workspace", workspace_view(options.workspace, needed, D.device)}},
      {{"A", A}, {"B", B}, {"options.alpha", TensorView::vector(options.alpha, DType::kF32, 1)}});

  if (needed > 0) {
    require(options.workspace != nullptr && options.workspace_bytes >= needed, kWhere,
            std::string("options.workspace: kernel ") + to_string(p.choice.config) + " needs " +
                std::to_string(needed) + " bytes of workspace; got " +
                std::to_string(options.workspace ? options.workspace_bytes : 0) +
                " (query coda::gemm::workspace_bytes)");
    require(reinterpret_cast<std::uintptr_t>(options.workspace) % 16 == 0, kWhere,
            "options.workspace: must be 16-byte aligned");
    require_device_memory(options.workspace, D.device, kWhere, "options.workspace");
  }
  p.instance->run(p.problem, p.choice, options.alpha, options.workspace, stream);
}

}  // namespace coda::gemm
