// SPDX-License-Identifier: BSD-3-Clause
// Shape -> kernel choice: committed tables tuned per GPU (tuned_gpu.hpp) for the Llama-3 training
// shapes, and a rule for every other shape or GPU. Deterministic: on one device, the same shape
// always gets the same kernel.
#pragma once

#include "coda/gemm/config.hpp"
#include "coda/gemm/tuned_gpu.hpp"
#include "coda/tensor.hpp"

namespace coda::gemm {

// The kernel for (layout, D dtype, M, N, K) on the current device. Always names an instantiated
// kernel.
KernelChoice choose_kernel(OperandLayout layout, DType d_dtype, int m, int n, int k);
// The same for a given GPU's table (tests, tools).
KernelChoice choose_kernel_for(TunedGpu gpu, OperandLayout layout, DType d_dtype, int m, int n,
                               int k);

// Whether a kernel for (layout, D dtype, config) is compiled into the library.
bool has_instance(OperandLayout layout, DType d_dtype, TileConfig config);

}  // namespace coda::gemm
