// SPDX-License-Identifier: BSD-3-Clause
// The rewritten forward equals the standard forward in float64: the deferred RMSNorm, the
// interleaved gate/up weight, adjacent-pair RoPE with permuted Q/K rows and the hi/lo frequency
// table (what the fused ops compute, by their host twins) against the Hugging Face computation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "coda/epilogue/rope_table.hpp"
#include "coda/ops/weights.hpp"
#include "coda/status.hpp"
#include "reference/epilogue.hpp"
#include "reference/llama.hpp"

namespace coda::ops {
namespace {

using ref::Matrix;

Matrix random(int rows, int cols, std::mt19937_64& rng, double stddev = 1.0) {
  std::normal_distribution<double> d(0.0, stddev);
  Matrix x(rows, cols);
  for (double& v : x.v) v = d(rng);
  return x;
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.v.size(), b.v.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < a.v.size(); ++i) worst = std::max(worst, std::abs(a.v[i] - b.v[i]));
  return worst;
}

TEST(RewrittenForward, DeferredRmsNormEqualsRmsNormThenLinear) {
  std::mt19937_64 rng(1);
  const Matrix x = random(7, 48, rng, 3.0), w_next = random(20, 48, rng);
  std::vector<double> gamma(48);
  for (double& g : gamma) g = std::normal_distribution<double>(1.0, 0.2)(rng);
  const Matrix standard = ref::linear(ref::rms_norm(x, gamma, 1e-5), w_next);
  // The producer leaves H = X ⊙ w and Σx² partials; the consumer scales rows of H · Wᵀ by rstd.
  const ref::Partials p = ref::per_row_partials(x, 4, 16, /*square=*/true);
  const Matrix rewritten = ref::mul_per_row(ref::linear(ref::mul_per_col(x, gamma), w_next),
                                            ref::rstd(p, x.rows, x.cols, 1e-5));
  EXPECT_LT(max_abs_diff(standard, rewritten), 1e-12);
}

TEST(RewrittenForward, InterleavedGateUpEqualsSwiGlu) {
  std::mt19937_64 rng(2);
  const int ffn = 24, hidden = 32;
  const Matrix x = random(5, hidden, rng), w_gate = random(ffn, hidden, rng),
               w_up = random(ffn, hidden, rng);
  Matrix w_cat(2 * ffn, hidden);  // [W_gate; W_up], as torchtitan's w1 and w3 stacked
  for (int r = 0; r < ffn; ++r)
    for (int c = 0; c < hidden; ++c) {
      w_cat(r, c) = w_gate(r, c);
      w_cat(ffn + r, c) = w_up(r, c);
    }
  const Matrix w_gu = ref::permute_rows(w_cat, gate_up_interleave_rows(ffn));
  const Matrix standard = ref::silu_mul(ref::linear(x, w_gate), ref::linear(x, w_up));
  const Matrix rewritten = ref::silu_gate_pairs(ref::linear(x, w_gu));
  EXPECT_LT(max_abs_diff(standard, rewritten), 1e-12);
}

TEST(RewrittenForward, AdjacentPairRopeWithPermutedRowsEqualsRotateHalf) {
  std::mt19937_64 rng(3);
  const int q_heads = 4, kv_heads = 2, hd = 16, hidden = 24;
  const int rotated = (q_heads + kv_heads) * hd, n = (q_heads + 2 * kv_heads) * hd;
  const Matrix x = random(6, hidden, rng), w_qkv = random(n, hidden, rng);
  const std::vector<std::int64_t> positions = {0, 1, 7, 4095, 131071, (1 << 20) - 1};
  const RopeScaling scaling{8.0, 1.0, 4.0, 8192.0};  // Llama 3.1
  const std::vector<double> inv = rope_inverse_frequencies(hd, 500000.0, scaling);
  const Matrix standard = ref::rope_rotate_half(ref::linear(x, w_qkv), positions, inv,
                                                q_heads + kv_heads, hd);

  // Permute the Q and K rows of each head; V rows stay.
  std::vector<std::int64_t> rows = rope_interleave_rows(q_heads + kv_heads, hd);
  for (int r = rotated; r < n; ++r) rows.push_back(r);
  const std::vector<float> table = rope_frequencies(q_heads, kv_heads, hd, 500000.0, scaling);
  ASSERT_EQ(table.size(), std::size_t(n));
  std::vector<double> turns(n / 2);
  for (int j = 0; j < n / 2; ++j) turns[j] = double(table[2 * j]) + double(table[2 * j + 1]);
  const Matrix rotated_pairs =
      ref::rope_pairs(ref::linear(x, ref::permute_rows(w_qkv, rows)), positions, turns);
  // Back to the standard column order: column rows[c] of the standard output is column c here.
  Matrix rewritten(rotated_pairs.rows, n);
  for (int m = 0; m < rewritten.rows; ++m)
    for (int c = 0; c < n; ++c) rewritten(m, int(rows[c])) = rotated_pairs(m, c);
  // The hi/lo table carries inv_freq / 2π to ~2^-48: at position 2^20 that is ~1e-8 radians.
  EXPECT_LT(max_abs_diff(standard, rewritten), 1e-6);
}

// QK-norm before RoPE: the norm of a head does not depend on its column order, so with γ permuted
// like the head's rows (rope_interleave_rows(1, hd)) the rewrite still equals the standard model.
TEST(RewrittenForward, QkNormThenAdjacentPairRopeEqualsStandard) {
  std::mt19937_64 rng(4);
  const int q_heads = 4, kv_heads = 2, hd = 16, hidden = 24;
  const int n = (q_heads + 2 * kv_heads) * hd;
  const Matrix x = random(5, hidden, rng), w_qkv = random(n, hidden, rng);
  std::vector<double> gamma_q(hd), gamma_k(hd);
  for (int i = 0; i < hd; ++i) gamma_q[i] = 0.5 + 0.1 * i, gamma_k[i] = 2.0 - 0.07 * i;
  const std::vector<std::int64_t> positions = {0, 3, 100000, 524287, 1 << 20};
  const std::vector<double> inv = rope_inverse_frequencies(hd, 1000000.0);
  const Matrix standard =
      ref::rope_rotate_half(ref::qk_norm(ref::linear(x, w_qkv), q_heads, kv_heads, hd, gamma_q,
                                         gamma_k, 1e-6),
                            positions, inv, q_heads + kv_heads, hd);

  std::vector<std::int64_t> rows = rope_interleave_rows(q_heads + kv_heads, hd);
  for (int r = (q_heads + kv_heads) * hd; r < n; ++r) rows.push_back(r);
  const std::vector<std::int64_t> head_perm = rope_interleave_rows(1, hd);
  std::vector<double> gq_perm(hd), gk_perm(hd);
  for (int i = 0; i < hd; ++i) gq_perm[i] = gamma_q[head_perm[i]], gk_perm[i] = gamma_k[head_perm[i]];
  const std::vector<float> table = rope_frequencies(q_heads, kv_heads, hd, 1000000.0);
  std::vector<double> turns(n / 2);
  for (int j = 0; j < n / 2; ++j) turns[j] = double(table[2 * j]) + double(table[2 * j + 1]);
  const Matrix ours = ref::rope_pairs(
      ref::qk_norm(ref::linear(x, ref::permute_rows(w_qkv, rows)), q_heads, kv_heads, hd, gq_perm,
                   gk_perm, 1e-6),
      positions, turns);
  EXPECT_LT(max_abs_diff(ref::permute_cols(standard, rows), ours), 1e-6);
  // And the norm did something: without it the outputs differ.
  EXPECT_GT(max_abs_diff(ref::permute_cols(ref::rope_rotate_half(ref::linear(x, w_qkv), positions,
                                                                 inv, q_heads + kv_heads, hd),
                                           rows),
                         ours),
            0.1);
}

TEST(Weights, TablesAndPermutations) {
  const std::vector<std::int64_t> gu = gate_up_interleave_rows(3);
  EXPECT_EQ(gu, (std::vector<std::int64_t>{0, 3, 1, 4, 2, 5}));
  const std::vector<std::int64_t> rope = rope_interleave_rows(2, 4);
  EXPECT_EQ(rope, (std::vector<std::int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
  const std::vector<float> t = rope_frequencies(2, 1, 4, 10000.0);
  ASSERT_EQ(t.size(), 16u);
  const double two_pi = 2.0 * std::acos(-1.0);
  EXPECT_NEAR(double(t[0]) + double(t[1]), 1.0 / two_pi, 1e-15);                 // i = 0
  EXPECT_NEAR(double(t[2]) + double(t[3]), std::pow(10000.0, -0.5) / two_pi, 1e-15);  // i = 1
  for (int c = 12; c < 16; ++c) EXPECT_EQ(t[c], 0.0f) << "V columns pass through";
  // Llama 3.1 scaling: the highest frequency is kept, the lowest divided by the factor.
  const RopeScaling s{8.0, 1.0, 4.0, 8192.0};
  const std::vector<double> plain = rope_inverse_frequencies(128, 500000.0);
  const std::vector<double> scaled = rope_inverse_frequencies(128, 500000.0, s);
  EXPECT_DOUBLE_EQ(scaled[0], plain[0]);
  EXPECT_DOUBLE_EQ(scaled[63], plain[63] / 8.0);
  EXPECT_THROW(rope_interleave_rows(2, 5), Error);
}

}  // namespace
}  // namespace coda::ops
