// SPDX-License-Identifier: BSD-3-Clause
#include "reference/gemm.hpp"

#include <algorithm>
#include <cmath>

#include "reference/bf16.hpp"

namespace coda::ref {

std::vector<double> gemm_f64(int m, int n, int k, Strided<double> a, Strided<double> b,
                             double alpha) {
  std::vector<double> d(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int p = 0; p < k; ++p) acc += a(i, p) * b(j, p);
      d[static_cast<std::size_t>(i) * n + j] = alpha * acc;
    }
  return d;
}

std::vector<double> gemm_framework(int m, int n, int k, Strided<float> a, Strided<float> b,
                                   float alpha, bool bf16_out) {
  std::vector<double> d(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int p = 0; p < k; ++p) acc = std::fma(a(i, p), b(j, p), acc);
      float out = alpha * acc;
      d[static_cast<std::size_t>(i) * n + j] = bf16_out ? round_to_bf16(out) : out;
    }
  return d;
}

double contract_tolerance(const std::vector<double>& framework, const std::vector<double>& ref64) {
  double worst = 0.0;
  for (std::size_t i = 0; i < ref64.size(); ++i)
    worst = std::max(worst, std::abs(framework[i] - ref64[i]));
  return 2.0 * worst + 1e-6;
}

}  // namespace coda::ref
