// SPDX-License-Identifier: BSD-3-Clause
// PlainGemm: the fixed mainloop with the ScaledAcc program (D = α·acc), as the generated instance
// files expose it. Device-side header (CUTLASS).
#pragma once

#include "coda/epilogue/scaled_acc.hpp"
#include "coda/gemm/launch.hpp"

namespace coda::gemm {

template <OperandLayout Layout, class ElementD, TileConfig Config>
struct PlainGemm {
  using K = GemmKernel<Layout, ElementD, Config, epilogue::ScaledAcc>;

  static void run(const GemmProblem& p, const KernelChoice& choice, const float* alpha,
                  void* workspace, cudaStream_t stream) {
    launch_gemm<K>(p, choice, epilogue::ScaledAcc::arguments<typename K::FusionArguments>(alpha),
                   workspace, stream);
  }
  static std::size_t workspace_bytes(const GemmProblem& p, const KernelChoice& choice) {
    return gemm_workspace_bytes<K>(p, choice);
  }
};

}  // namespace coda::gemm
