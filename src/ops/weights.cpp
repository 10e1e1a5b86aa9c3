// SPDX-License-Identifier: BSD-3-Clause
#include "coda/ops/weights.hpp"

#include <cmath>

#include "coda/epilogue/rope_table.hpp"
#include "coda/status.hpp"

namespace coda::ops {

std::vector<std::int64_t> gate_up_interleave_rows(std::int64_t ffn_dim) {
  require(ffn_dim > 0, "coda::ops::gate_up_interleave_rows", "ffn_dim: must be positive");
  std::vector<std::int64_t> rows(2 * ffn_dim);
  for (std::int64_t j = 0; j < ffn_dim; ++j) {
    rows[2 * j] = j;
    rows[2 * j + 1] = ffn_dim + j;
  }
  return rows;
}

std::vector<std::int64_t> rope_interleave_rows(int heads, int head_dim) {
  require(heads > 0 && head_dim > 0 && head_dim % 2 == 0, "coda::ops::rope_interleave_rows",
          "heads > 0 and an even head_dim > 0 are required");
  std::vector<std::int64_t> rows(std::size_t(heads) * head_dim);
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < head_dim / 2; ++i) {
      const std::int64_t base = std::int64_t(h) * head_dim;
      rows[base + 2 * i] = base + i;
      rows[base + 2 * i + 1] = base + i + head_dim / 2;
    }
  return rows;
}

std::vector<double> rope_inverse_frequencies(int head_dim, double theta, RopeScaling s) {
  require(head_dim > 0 && head_dim % 2 == 0 && theta > 1.0, "coda::ops::rope_inverse_frequencies",
          "an even head_dim > 0 and theta > 1 are required");
  const double two_pi = 2.0 * std::acos(-1.0);
  std::vector<double> inv(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i) {
    double f = std::pow(theta, -2.0 * i / head_dim);
    if (s.factor > 0.0) {
      const double wavelen = two_pi / f;
      const double low_wavelen = s.original_max_position / s.low_freq_factor;
      const double high_wavelen = s.original_max_position / s.high_freq_factor;
      if (wavelen > low_wavelen) {
        f /= s.factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (s.original_max_position / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
    inv[i] = f;
  }
  return inv;
}

std::vector<float> rope_frequencies(int q_heads, int kv_heads, int head_dim, double theta,
                                    RopeScaling scaling) {
  require(q_heads > 0 && kv_heads > 0, "coda::ops::rope_frequencies",
          "q_heads and kv_heads must be positive");
  const std::vector<double> inv = rope_inverse_frequencies(head_dim, theta, scaling);
  const double two_pi = 2.0 * std::acos(-1.0);
  const int rotated_heads = q_heads + kv_heads, heads = q_heads + 2 * kv_heads;
  std::vector<float> table(std::size_t(heads) * head_dim, 0.0f);
  for (int h = 0; h < rotated_heads; ++h)
    for (int i = 0; i < head_dim / 2; ++i) {
      const epilogue::RopeFrequency f = epilogue::rope_frequency(inv[i] / two_pi);
      const std::size_t pair = std::size_t(h) * head_dim / 2 + i;
      table[2 * pair] = f.hi;
      table[2 * pair + 1] = f.lo;
    }
  return table;
}

}  // namespace coda::ops
