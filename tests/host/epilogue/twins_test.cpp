// SPDX-License-Identifier: BSD-3-Clause
// The host twins of the epilogue primitives against direct formulas.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/epilogue.hpp"

namespace coda::ref {
namespace {

Matrix iota(int rows, int cols) {
  Matrix x(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) x(r, c) = 0.25 * (r + 1) - 0.5 * c;
  return x;
}

TEST(EpilogueTwins, ElementwiseAndBroadcasts) {
  Matrix x = iota(3, 5);
  std::vector<double> row = {2, -1, 0.5}, col = {1, 2, 3, 4, 5};
  Matrix y = add_per_col(mul_per_col(mul_per_row(scale(x, 3.0), row), col), col);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c) EXPECT_DOUBLE_EQ(y(r, c), 3.0 * x(r, c) * row[r] * col[c] + col[c]);
  Matrix s = silu(x), g = gelu(x), sum = add(x, x);
  EXPECT_DOUBLE_EQ(s(0, 0), 0.25 / (1 + std::exp(-0.25)));
  EXPECT_NEAR(g(2, 0), 0.75 * 0.5 * (1 + std::erf(0.75 / std::sqrt(2.0))), 1e-15);
  EXPECT_NEAR(gelu(Matrix(1, 1, 1.0))(0, 0), 0.8413447460685429, 1e-15);  // Φ(1)
  EXPECT_DOUBLE_EQ(sum(1, 3), 2 * x(1, 3));
  EXPECT_EQ(round_to_bf16(Matrix(1, 1, 1.0 + 1.0 / 512))(0, 0), 1.0);
}

TEST(EpilogueTwins, PerRowPartialsRaggedTiles) {
  // 5 × 7 with 2 × 3 tiles: N-tiles {0,1,2}, {3,4,5}, {6}; rows padded to 6.
  Matrix x = iota(5, 7);
  Partials p = per_row_partials(x, 2, 3, /*square=*/true);
  ASSERT_EQ(p.tiles, 3);
  ASSERT_EQ(p.padded, 6);
  for (int r = 0; r < 5; ++r) {
    EXPECT_DOUBLE_EQ(p.v[0 * 6 + r], x(r, 0) * x(r, 0) + x(r, 1) * x(r, 1) + x(r, 2) * x(r, 2));
    EXPECT_DOUBLE_EQ(p.v[2 * 6 + r], x(r, 6) * x(r, 6));
  }
  for (int t = 0; t < 3; ++t) EXPECT_EQ(p.v[t * 6 + 5], 0.0) << "padding row";
  std::vector<double> total = merge(p, 5), r = rstd(p, 5, 7, 1e-5);
  for (int m = 0; m < 5; ++m) {
    double direct = 0;
    for (int n = 0; n < 7; ++n) direct += x(m, n) * x(m, n);
    EXPECT_NEAR(total[m], direct, 1e-12);
    EXPECT_NEAR(r[m], 1.0 / std::sqrt(direct / 7 + 1e-5), 1e-12);
  }
  Partials plain = per_row_partials(x, 2, 3, /*square=*/false);
  EXPECT_DOUBLE_EQ(plain.v[1 * 6 + 0], x(0, 3) + x(0, 4) + x(0, 5));
}

TEST(EpilogueTwins, PerColPartialsRaggedTiles) {
  Matrix x = iota(5, 7);  // M-tiles of 2 rows: {0,1}, {2,3}, {4}; columns padded to 9
  Partials p = per_col_partials(x, 2, 3);
  ASSERT_EQ(p.tiles, 3);
  ASSERT_EQ(p.padded, 9);
  for (int n = 0; n < 7; ++n) {
    EXPECT_DOUBLE_EQ(p.v[0 * 9 + n], x(0, n) + x(1, n));
    EXPECT_DOUBLE_EQ(p.v[2 * 9 + n], x(4, n));
  }
  EXPECT_EQ(p.v[1 * 9 + 8], 0.0);
}

TEST(EpilogueTwins, RopePairsRotateByPositionTimesFrequency) {
  Matrix x = iota(3, 6);
  const std::vector<std::int64_t> pos = {0, 1, (1 << 20) + 3};
  const std::vector<double> turns = {0.25, 1.0 / 3.0, 0.0};  // the last pair passes through
  Matrix y = rope_pairs(x, pos, turns);
  const double pi = std::acos(-1.0);
  for (int m = 0; m < 3; ++m)
    for (int j = 0; j < 3; ++j) {
      const double theta = 2 * pi * double(pos[m]) * turns[j];  // direct, exact enough here
      const double x0 = x(m, 2 * j), x1 = x(m, 2 * j + 1);
      EXPECT_NEAR(y(m, 2 * j), x0 * std::cos(theta) - x1 * std::sin(theta), 1e-9);
      EXPECT_NEAR(y(m, 2 * j + 1), x0 * std::sin(theta) + x1 * std::cos(theta), 1e-9);
    }
  EXPECT_DOUBLE_EQ(y(0, 0), x(0, 0)) << "position 0 is the identity";
  EXPECT_NEAR(y(1, 0), -x(1, 1), 1e-15) << "a quarter turn: (x0, x1) -> (-x1, x0)";
  EXPECT_NEAR(y(1, 1), x(1, 0), 1e-15);
}

TEST(EpilogueTwins, SiluGatePairsAndTheirGradient) {
  Matrix z = iota(2, 6);  // pairs (g, u) = columns (0,1), (2,3), (4,5)
  Matrix y = silu_gate_pairs(z);
  ASSERT_EQ(y.cols, 3);
  for (int m = 0; m < 2; ++m)
    for (int j = 0; j < 3; ++j) {
      const double g = z(m, 2 * j), u = z(m, 2 * j + 1);
      EXPECT_DOUBLE_EQ(y(m, j), g / (1 + std::exp(-g)) * u);
    }
  // The gradient against central finite differences of L = Σ dy ⊙ y.
  Matrix dy(2, 3);
  for (int i = 0; i < 6; ++i) dy.v[i] = 0.3 * i - 0.7;
  Matrix dz = silu_gate_pairs_grad(dy, z);
  auto loss = [&](const Matrix& zz) {
    Matrix yy = silu_gate_pairs(zz);
    double l = 0;
    for (std::size_t i = 0; i < yy.v.size(); ++i) l += dy.v[i] * yy.v[i];
    return l;
  };
  for (std::size_t i = 0; i < z.v.size(); ++i) {
    const double h = 1e-6;
    Matrix plus = z, minus = z;
    plus.v[i] += h;
    minus.v[i] -= h;
    EXPECT_NEAR(dz.v[i], (loss(plus) - loss(minus)) / (2 * h), 1e-7) << "element " << i;
  }
}

TEST(EpilogueTwins, LsePartialsMergeToTheRowLogSumExp) {
  Matrix x = iota(5, 7);
  x(1, 4) = 1e4;   // a huge logit: no overflow
  x(2, 0) = -1e4;  // a tiny one
  for (int n = 0; n < 7; ++n) x(3, n) = -INFINITY;  // an empty row
  Partials p = per_row_lse_partials(x, 2, 3);
  ASSERT_EQ(p.tiles, 3);
  EXPECT_DOUBLE_EQ(p.v[2 * p.padded + 0], x(0, 6)) << "a one-column tile";
  std::vector<double> lse = merge_lse(p, 5);
  for (int m = 0; m < 5; ++m) {
    if (m == 3) {
      EXPECT_EQ(lse[m], -INFINITY);
      continue;
    }
    double max = -INFINITY, sum = 0;
    for (int n = 0; n < 7; ++n) max = std::max(max, x(m, n));
    for (int n = 0; n < 7; ++n) sum += std::exp(x(m, n) - max);
    EXPECT_NEAR(lse[m], max + std::log(sum), 1e-12);
  }
  EXPECT_NEAR(lse[1], 1e4, 1e-9);
}

}  // namespace
}  // namespace coda::ref
