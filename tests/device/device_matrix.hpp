// SPDX-License-Identifier: BSD-3-Clause
// Device-test helpers for bf16 matrices: upload with NaN row padding, NaN-poisoned outputs,
// download with a check that nothing past the last 16-byte unit of a row was written, and the
// numerics contract of docs/numerics.md on one output.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "coda/tensor.hpp"
#include "device/device_buffer.hpp"
#include "reference/bf16.hpp"
#include "reference/epilogue.hpp"

namespace coda::testing {

constexpr std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

// A bf16 matrix in device memory with a padded row stride (padding NaN).
struct DeviceMatrix {
  DeviceBuffer buffer;
  int rows, cols;
  std::int64_t ld;
  TensorView view() const { return TensorView::matrix(buffer.get(), DType::kBF16, rows, cols, ld); }
};

inline DeviceMatrix upload(const ref::Matrix& x) {
  const std::int64_t ld = round_up(x.cols, 8) + 8;
  std::vector<std::uint16_t> host(std::size_t(x.rows) * ld, 0xFFFF);
  for (int r = 0; r < x.rows; ++r)
    for (int c = 0; c < x.cols; ++c) host[r * ld + c] = ref::float_to_bf16_bits(float(x(r, c)));
  DeviceMatrix d{DeviceBuffer(host.size() * 2), x.rows, x.cols, ld};
  d.buffer.upload(host);
  return d;
}

inline DeviceMatrix output(int rows, int cols) {
  const std::int64_t ld = round_up(cols, 8) + 8;
  DeviceMatrix d{DeviceBuffer(std::size_t(rows) * ld * 2), rows, cols, ld};
  d.buffer.poison();
  return d;
}

// The values, and whether anything past the 16-byte unit holding the last column was written.
inline ref::Matrix download(const DeviceMatrix& d, bool* padding_untouched) {
  auto host = d.buffer.download<std::uint16_t>();
  ref::Matrix x(d.rows, d.cols);
  *padding_untouched = true;
  for (int r = 0; r < d.rows; ++r)
    for (std::int64_t c = 0; c < d.ld; ++c) {
      if (c < d.cols) x(r, c) = ref::bf16_bits_to_float(host[r * d.ld + c]);
      else if (c >= round_up(d.cols, 8) && host[r * d.ld + c] != 0xFFFF) *padding_untouched = false;
    }
  return x;
}

// Whether every byte of b is still as poison() left it: nothing was written to it.
inline bool still_poisoned(const DeviceBuffer& b) {
  const std::vector<std::uint8_t> bytes = b.download<std::uint8_t>();
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t v) { return v == 0xFF; });
}

inline ref::Matrix to_matrix(const std::vector<float>& v, int rows, int cols) {
  ref::Matrix x(rows, cols);
  for (std::size_t i = 0; i < v.size(); ++i) x.v[i] = v[i];
  return x;
}

// The contract on one output: max |out − ref| ≤ 2 · max |framework − ref| + 1e-6, all finite.
inline ::testing::AssertionResult meets_contract(const std::vector<double>& out,
                                                const std::vector<double>& ref,
                                                const std::vector<double>& framework,
                                                const char* what) {
  double fw = 0.0, worst = 0.0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    fw = std::max(fw, std::abs(framework[i] - ref[i]));
    double err = std::isfinite(out[i]) ? std::abs(out[i] - ref[i]) : INFINITY;
    if (err > worst) worst = err, at = i;
  }
  const double tolerance = 2 * fw + 1e-6;
  if (worst <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": worst at " << at << ": got " << out[at]
                                       << ", ref " << ref[at] << ", |err| " << worst
                                       << " > tolerance " << tolerance;
}

// The contract with the framework's error on each element taken as at least `rounding(ref)`: what
// the framework's own rounding of that value may cost. Without a floor, an element whose framework
// value happens to land within a fraction of an ulp (a single row, M = 1) holds even a correctly
// rounded result to a tolerance below half an ulp.
template <class Rounding>
::testing::AssertionResult meets_contract_floored(const std::vector<double>& out,
                                                  const std::vector<double>& ref,
                                                  const std::vector<double>& framework,
                                                  const char* what, Rounding rounding) {
  std::vector<double> floored(framework);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double floor = rounding(ref[i]);
    if (std::abs(framework[i] - ref[i]) < floor)
      floored[i] = ref[i] + (framework[i] >= ref[i] ? floor : -floor);
  }
  return meets_contract(out, ref, floored, what);
}

// An fp32 output (a row reduction): a framework's fp32 result is itself rounded to fp32.
inline ::testing::AssertionResult meets_contract_f32(const std::vector<double>& out,
                                                    const std::vector<double>& ref,
                                                    const std::vector<double>& framework,
                                                    const char* what) {
  return meets_contract_floored(out, ref, framework, what,
                                [](double x) { return std::abs(double(float(x)) - x); });
}

// A value a framework takes from a bf16 tensor (a target logit gathered from the bf16 logits): at
// least half a bf16 ulp of the reference (M = 1: a framework value 0.004 from the reference at 318,
// where half an ulp is 1, CODA_TEST_SEED 92755150 of EpiloguePrograms.CrossEntropyPartials).
inline ::testing::AssertionResult meets_contract_bf16(const std::vector<double>& out,
                                                     const std::vector<double>& ref,
                                                     const std::vector<double>& framework,
                                                     const char* what) {
  return meets_contract_floored(out, ref, framework, what, [](double x) {
    int exponent = 0;
    std::frexp(x, &exponent);  // |x| = f · 2^exponent, f in [0.5, 1); bf16 keeps 8 bits
    return x == 0.0 ? 0.0 : std::ldexp(1.0, exponent - 9);
  });
}

}  // namespace coda::testing
