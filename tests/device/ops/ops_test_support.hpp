// SPDX-License-Identifier: BSD-3-Clause
// What the forward and backward op tests share: random bf16 inputs, the float64 and the bf16
// framework GEMM (x · wᵀ), and small device vectors.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "coda/tensor.hpp"
#include "device/device_buffer.hpp"
#include "device/device_matrix.hpp"
#include "device/gemm_oracle.hpp"
#include "reference/bf16.hpp"
#include "reference/epilogue.hpp"

namespace coda::ops {

using ref::Matrix;
using testing::DeviceBuffer;

inline Matrix random_bf16(int rows, int cols, std::mt19937_64& rng, double stddev) {
  return testing::to_matrix(testing::random_bf16_matrix(rows, cols, rng, float(stddev)), rows,
                            cols);
}

inline std::vector<float> as_floats(const Matrix& x) {
  return std::vector<float>(x.v.begin(), x.v.end());
}

// x · wᵀ in float64 on the GPU.
inline Matrix linear64(const Matrix& x, const Matrix& w) {
  Matrix y(x.rows, w.rows);
  y.v = testing::gemm_ref64(x.rows, w.rows, x.cols, as_floats(x), as_floats(w));
  return y;
}
// x · wᵀ as a bf16 framework computes it (cuBLAS, fp32 accumulation, bf16 out).
inline Matrix linear_framework(const Matrix& x, const Matrix& w) {
  auto f = testing::gemm_cublas_f32(x.rows, w.rows, x.cols, as_floats(x), as_floats(w));
  Matrix y(x.rows, w.rows);
  for (std::size_t i = 0; i < f.size(); ++i) y.v[i] = ref::round_to_bf16(f[i]);
  return y;
}

inline TensorView vector_view(const DeviceBuffer& b, std::int64_t n, DType t) {
  return TensorView::vector(b.get(), t, n);
}

inline DeviceBuffer upload_bf16_vector(const std::vector<double>& v) {
  std::vector<std::uint16_t> bits(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) bits[i] = ref::float_to_bf16_bits(float(v[i]));
  DeviceBuffer b(bits.size() * 2);
  b.upload(bits);
  return b;
}

inline std::vector<double> random_norm_weight(int n, std::mt19937_64& rng) {
  std::vector<double> w(n);
  for (double& x : w) x = ref::round_to_bf16(std::normal_distribution<double>(1.0, 0.2)(rng));
  return w;
}

// Row magnitudes for the extreme-input tests: rows cycle through scale 1, 1e-20 (far below the
// norm's ε), 1e-3 (where ε matters) and `top`, chosen per test to bring the fp32 Σx² of a row
// within a few times of overflow (the standard fp32 RMSNorm's own limit: RMS 1e17 over 8192
// columns is 4× below it). Without `extreme` every row has scale 1.
inline std::vector<double> row_scales(int rows, bool extreme, double top) {
  const double cycle[] = {1.0, 1e-20, 1e-3, top};
  std::vector<double> s(rows, 1.0);
  if (extreme)
    for (int m = 0; m < rows; ++m) s[m] = cycle[m % 4];
  return s;
}

// Rows of x times their scale, rounded to bf16 (the rows stay exactly representable inputs).
inline Matrix scale_rows(Matrix x, const std::vector<double>& scales) {
  for (int m = 0; m < x.rows; ++m)
    for (int c = 0; c < x.cols; ++c) x(m, c) = ref::round_to_bf16(x(m, c) * scales[m]);
  return x;
}

// The numerics contract applied to each class of rows of one scale separately, each class divided
// by its largest |reference|: rows of RMS 1e-20 are held to the standard of rows of RMS 1, which a
// single absolute tolerance over the whole tensor would not do.
inline ::testing::AssertionResult meets_contract_by_row_scale(const std::vector<double>& out,
                                                              const std::vector<double>& ref,
                                                              const std::vector<double>& framework,
                                                              const std::vector<double>& scales,
                                                              const char* what) {
  const std::size_t cols = ref.size() / scales.size();
  std::vector<double> classes = scales;
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  for (double scale : classes) {
    std::vector<double> o, r, f;
    for (std::size_t m = 0; m < scales.size(); ++m)
      if (scales[m] == scale)
        for (std::size_t c = m * cols; c < (m + 1) * cols; ++c)
          o.push_back(out[c]), r.push_back(ref[c]), f.push_back(framework[c]);
    double largest = 0.0;
    for (double v : r) largest = std::max(largest, std::abs(v));
    if (largest > 0.0)
      for (std::size_t i = 0; i < r.size(); ++i) o[i] /= largest, r[i] /= largest, f[i] /= largest;
    char label[160];
    std::snprintf(label, sizeof label, "%s (rows of scale %g)", what, scale);
    ::testing::AssertionResult result = testing::meets_contract(o, r, f, label);
    if (!result) return result;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace coda::ops
