// SPDX-License-Identifier: BSD-3-Clause
// float64 reference GEMM and the "framework" computation the numerics contract compares against.
#pragma once

#include <cstdint>
#include <vector>

namespace coda::ref {

// A strided read-only matrix view over doubles or floats: element (r, c) at data[r*rs + c*cs].
template <class T>
struct Strided {
  const T* data;
  std::int64_t row_stride, col_stride;
  T operator()(std::int64_t r, std::int64_t c) const { return data[r * row_stride + c * col_stride]; }
};

// D[m, n] = alpha · Σ_k A(m, k) · B(n, k), in float64. D is dense row-major M×N.
std::vector<double> gemm_f64(int m, int n, int k, Strided<double> a, Strided<double> b,
                             double alpha = 1.0);

// What an unfused framework GEMM computes: fp32 products accumulated in fp32 in k order, times
// alpha, rounded to bf16 when `bf16_out`. D is dense row-major M×N.
std::vector<double> gemm_framework(int m, int n, int k, Strided<float> a, Strided<float> b,
                                   float alpha, bool bf16_out);

// The numerics contract (docs/numerics.md): the tolerance for an output is
// 2 · max |framework − ref64| + 1e-6.
double contract_tolerance(const std::vector<double>& framework, const std::vector<double>& ref64);

}  // namespace coda::ref
