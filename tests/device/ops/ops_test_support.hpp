// SPDX-License-Identifier: BSD-3-Clause
// What the forward and backward op tests share: random bf16 inputs, the float64 and the bf16
// framework GEMM (x · wᵀ), and small device vectors.
#pragma once

#include <cstdint>
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

}  // namespace coda::ops
