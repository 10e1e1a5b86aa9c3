// SPDX-License-Identifier: BSD-3-Clause
// The table of compiled plain-GEMM kernels, expanded from the generated instances/dispatch.inc (in the build tree).
#include "coda/gemm/instance.hpp"

namespace coda::gemm {

namespace instances {
#define CODA_GEMM_INSTANCE(layout, d_dtype, config, name)                                       \
  void name##_run(const GemmProblem&, const KernelChoice&, const float*, void*, cudaStream_t); \
  std::size_t name##_workspace(const GemmProblem&, const KernelChoice&);
#include "instances/dispatch.inc"
#undef CODA_GEMM_INSTANCE
}  // namespace instances

namespace {
constexpr GemmInstance kInstances[] = {
#define CODA_GEMM_INSTANCE(layout, d_dtype, config, name)                         \
  {OperandLayout::layout, DType::d_dtype, TileConfig::config, &instances::name##_run, \
   &instances::name##_workspace},
#include "instances/dispatch.inc"
#undef CODA_GEMM_INSTANCE
};
}  // namespace

const GemmInstance* find_instance(OperandLayout layout, DType d_dtype, TileConfig config) {
  for (const GemmInstance& inst : kInstances)
    if (inst.layout == layout && inst.d_dtype == d_dtype && inst.config == config) return &inst;
  return nullptr;
}

}  // namespace coda::gemm
