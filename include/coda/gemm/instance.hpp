// SPDX-License-Identifier: BSD-3-Clause
// The table of compiled plain-GEMM kernels, generated with the instance files from the one list in
// scripts/instances.py so the two never drift.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "coda/gemm/config.hpp"
#include "coda/gemm/problem.hpp"

namespace coda::gemm {

struct GemmInstance {
  OperandLayout layout;
  DType d_dtype;
  TileConfig config;
  void (*run)(const GemmProblem&, const KernelChoice&, const float* alpha, void* workspace,
              cudaStream_t);
  std::size_t (*workspace_bytes)(const GemmProblem&, const KernelChoice&);
};

// nullptr when that kernel is not compiled in.
const GemmInstance* find_instance(OperandLayout layout, DType d_dtype, TileConfig config);

}  // namespace coda::gemm
