// SPDX-License-Identifier: BSD-3-Clause
// GemmProblem: a validated GEMM, in the terms the kernel instances take (no CUTLASS types here),
// and the validation that builds it. Host-only, so CPU tests cover every rejection.
#pragma once

#include <cstdint>

#include "coda/gemm/config.hpp"
#include "coda/tensor.hpp"

namespace coda::gemm {

struct GemmProblem {
  int m = 0, n = 0, k = 0;
  OperandLayout layout = OperandLayout::kAkBk;
  DType d_dtype = DType::kBF16;
  // Pointers and the one non-unit stride of each operand, in elements.
  const void* a = nullptr;
  std::int64_t a_stride = 0;  // between rows of A (K-major) or between columns (M-major)
  const void* b = nullptr;
  std::int64_t b_stride = 0;  // between rows of B (K-major) or between columns (N-major)
  void* d = nullptr;
  std::int64_t d_stride = 0;  // between rows of D
  int device = 0;
};

// Checks D, A, B against every constraint of the fixed mainloop and returns the problem, or throws
// coda::Error("<where>: <arg>: <constraint>"). Touches no CUDA state.
GemmProblem make_gemm_problem(const TensorView& D, const TensorView& A, const TensorView& B,
                              const char* where = "coda::gemm");

// The same for a program that stores no D (its epilogue writes only its own outputs): A and B
// are checked alike; p.d is null, p.device is A's.
GemmProblem make_gemm_problem_without_d(const TensorView& A, const TensorView& B,
                                        const char* where);

}  // namespace coda::gemm
