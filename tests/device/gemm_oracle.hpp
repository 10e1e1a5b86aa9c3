// SPDX-License-Identifier: BSD-3-Clause
// GEMM oracles for the device tests: float64 on the GPU, and cuBLAS (the framework's GEMM).
// A is M×K and B is N×K, dense row-major, values already bf16-representable.
#pragma once

#include <random>
#include <vector>

namespace coda::testing {

// α · A·Bᵀ in float64 (one GPU thread per output, k in order), row-major M×N.
std::vector<double> gemm_ref64(int m, int n, int k, const std::vector<float>& a,
                               const std::vector<float>& b, float alpha = 1.0f);

// α · A·Bᵀ by cuBLAS from bf16 operands with fp32 accumulation and fp32 output, row-major M×N.
std::vector<float> gemm_cublas_f32(int m, int n, int k, const std::vector<float>& a,
                                   const std::vector<float>& b, float alpha = 1.0f);

// rows × cols of N(0, scale²) values rounded to bf16.
std::vector<float> random_bf16_matrix(long rows, long cols, std::mt19937_64& rng, float scale = 1.0f);

}  // namespace coda::testing
