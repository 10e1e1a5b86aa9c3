// SPDX-License-Identifier: BSD-3-Clause
// What the forward and backward op tests share: random bf16 inputs, the float64 and the bf16
// framework GEMM (x · wᵀ), small device vectors, the contract per class of scale and for
// reductions, the kernel choices each op runs under, and the reference RoPE turns.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "coda/epilogue/program_launchers.hpp"
#include "coda/gemm/config.hpp"
#include "coda/ops/op_key.hpp"
#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"
#include "device/device_buffer.hpp"
#include "device/device_matrix.hpp"
#include "device/gemm_oracle.hpp"
#include "reference/bf16.hpp"
#include "reference/epilogue.hpp"
#include "reference/llama.hpp"

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

// The numerics contract applied to each class of elements of one scale separately, each class
// divided by its largest |reference|: rows of RMS 1e-20 are held to the standard of rows of RMS 1,
// which a single absolute tolerance over the whole tensor would not do. A class is the rows of one
// scale (scales: one per row) and, for the per-head ops (head_dim > 0), one head of them: heads of
// scale 3e-3 … 30 are each held to their own standard too.
inline ::testing::AssertionResult meets_contract_by_row_scale_and_head(
    const std::vector<double>& out, const std::vector<double>& ref,
    const std::vector<double>& framework, const std::vector<double>& scales, int head_dim,
    const char* what) {
  const std::size_t cols = ref.size() / scales.size();
  struct Class {
    std::vector<double> o, r, f;
  };
  std::map<std::pair<double, std::size_t>, Class> classes;  // (row scale, head)
  for (std::size_t i = 0; i < ref.size(); ++i) {
    Class& k = classes[{scales[i / cols], head_dim > 0 ? i % cols / head_dim : 0}];
    k.o.push_back(out[i]), k.r.push_back(ref[i]), k.f.push_back(framework[i]);
  }
  for (auto& [key, k] : classes) {
    double largest = 0.0;
    for (double v : k.r) largest = std::max(largest, std::abs(v));
    if (largest > 0.0)
      for (std::size_t i = 0; i < k.r.size(); ++i)
        k.o[i] /= largest, k.r[i] /= largest, k.f[i] /= largest;
    char label[200];
    if (head_dim > 0)
      std::snprintf(label, sizeof label, "%s (rows of scale %g, head %zu)", what, key.first,
                    key.second);
    else
      std::snprintf(label, sizeof label, "%s (rows of scale %g)", what, key.first);
    ::testing::AssertionResult result = testing::meets_contract(k.o, k.r, k.f, label);
    if (!result) return result;
  }
  return ::testing::AssertionSuccess();
}

// The framework model of a deferred-norm output (RMSNorm(X)·Wᵀ as diag(rstd)·((X⊙w)·Wᵀ)) at K = 1.
// With one column, RMSNorm(x) = ±(1 − ~5e-6) rounds to exactly ±1, so the framework's normalized
// input ±w is exact and its output has a single rounding; the rewrite rounds x⊙w to bf16 before the
// GEMM, one rounding more, of relative size up to bf16's unit roundoff u = 2⁻⁸. The model's error
// is therefore floored per element at u·|ref| (the rounding it skips), so the bound, twice the
// model's error, covers the rewrite's two roundings. At K > 1 the framework rounds its normalized
// input too, and the model is returned unchanged (docs/numerics.md, "The deferred norm at K = 1").
inline Matrix deferred_norm_framework(const Matrix& ref64, Matrix framework, int k) {
  if (k != 1) return framework;
  const double unit_roundoff = std::ldexp(1.0, -8);
  for (std::size_t i = 0; i < framework.v.size(); ++i) {
    const double floor = unit_roundoff * std::abs(ref64.v[i]);
    if (std::abs(framework.v[i] - ref64.v[i]) < floor)
      framework.v[i] = ref64.v[i] + (framework.v[i] < ref64.v[i] ? -floor : floor);
  }
  return framework;
}

inline ::testing::AssertionResult meets_contract_by_row_scale(const std::vector<double>& out,
                                                              const std::vector<double>& ref,
                                                              const std::vector<double>& framework,
                                                              const std::vector<double>& scales,
                                                              const char* what) {
  return meets_contract_by_row_scale_and_head(out, ref, framework, scales, 0, what);
}

// The contract for a sum (weight 1) or mean (weight 1 / count) of per-token values ref: as
// |Σ e| ≤ Σ |e|, the framework's error is taken per token and reduced,
//   |out − w · Σ ref| ≤ 2 · w · Σ |framework − ref| + 1e-6,
// not twice the framework's scalar error (one random sum of per-token errors, which can land
// arbitrarily near zero, or far from it).
inline ::testing::AssertionResult meets_reduced_contract(double out, const std::vector<double>& ref,
                                                         const std::vector<double>& framework,
                                                         double weight, const char* what) {
  double sum = 0.0, errors = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    sum += ref[i], errors += std::abs(framework[i] - ref[i]);
  // meets_contract with a framework scalar off by exactly the reduced per-token error.
  return testing::meets_contract({out}, {weight * sum}, {weight * (sum + errors)}, what);
}

// The kernel choices an op test runs a shape under: the op's own (its table or rule) and, up to
// kForcedMaxRows rows, each config the op's program is compiled for, forced (OpOptions;
// src/ops/op_checks.cpp), so every compiled kernel of every program is held to the contract.
// Taller shapes run the op's own choice only, to keep the suite's runtime down. A test that runs
// several ops under one choice names one of them: they share their configs.
constexpr std::int64_t kForcedMaxRows = 1000;
inline std::vector<OpOptions> kernel_choices(OpKey op, std::int64_t m) {
  std::vector<OpOptions> choices(1);
  if (m <= kForcedMaxRows)
    for (gemm::TileConfig c : epilogue::kProgramConfigs)
      if (epilogue::has_program_instance(op, c)) choices.push_back(OpOptions{gemm::KernelChoice{c}});
  return choices;
}
// `options` for `op` in a test that runs several ops under one forced config: a config the op is
// not compiled for (the overlapped Cooperative one, for the ops that scale the accumulator by the
// deferred RMSNorm's rstd) runs the op's own choice instead, so every other op still runs forced.
inline OpOptions for_op(const OpOptions& options, OpKey op) {
  if (options.choice && !epilogue::has_program_instance(op, options.choice->config)) return {};
  return options;
}
inline std::string describe_choice(const OpOptions& options) {
  return options.choice ? std::string("forced ") + gemm::to_string(options.choice->config)
                        : std::string("op's choice");
}

// The turns per column pair (adjacent-pair layout, Q and K heads rotated, V pairs 0) that
// rope_frequencies should hold, from the independent float64 frequencies (reference/llama.hpp).
inline std::vector<double> rope_turns(int q_heads, int kv_heads, int head_dim, double theta) {
  const std::vector<double> inv = ref::rope_inverse_frequencies(head_dim, theta);
  std::vector<double> turns(std::size_t(q_heads + 2 * kv_heads) * head_dim / 2, 0.0);
  for (int h = 0; h < q_heads + kv_heads; ++h)
    for (int i = 0; i < head_dim / 2; ++i)
      turns[std::size_t(h) * head_dim / 2 + i] = inv[i] / (2.0 * std::acos(-1.0));
  return turns;
}

// The op keys (CODA_OP_KEYS, the registry) that no entry of a per-op test table is named after,
// comma-separated: a table that tests every op says so with EXPECT_EQ(…, "").
template <class Table>
std::string op_keys_missing_from(const Table& table) {
  std::string missing;
  for (int i = 0; i < int(OpKey::kCount); ++i) {
    const std::string key = name(OpKey(i));
    const bool found = std::any_of(std::begin(table), std::end(table),
                                   [&](const auto& entry) { return key == entry.name; });
    if (!found) missing += (missing.empty() ? "" : ", ") + key;
  }
  return missing;
}

}  // namespace coda::ops
