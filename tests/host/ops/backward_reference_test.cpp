// SPDX-License-Identifier: BSD-3-Clause
// The hand-derived backward formulas the backward ops are tested against, checked in float64:
// against central finite differences of the standard forward, against the interleaved (packed)
// form the fused epilogue computes, and the ⟨z, dz⟩ identity that lets an RMSNorm backward take
// its per-row scalar from the next op's backward (coda-anchor §2.0).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "reference/epilogue.hpp"
#include "reference/llama.hpp"

namespace coda::ref {
namespace {

Matrix random(int rows, int cols, std::mt19937_64& rng, double stddev = 1.0) {
  std::normal_distribution<double> d(0.0, stddev);
  Matrix x(rows, cols);
  for (double& v : x.v) v = d(rng);
  return x;
}

double dot(const Matrix& a, const Matrix& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.v.size(); ++i) s += a.v[i] * b.v[i];
  return s;
}

// L = ⟨dy, silu(g) ⊙ u⟩: ∂L/∂g and ∂L/∂u are silu_mul_backward's outputs.
TEST(BackwardReference, SiluMulBackwardMatchesFiniteDifferences) {
  std::mt19937_64 rng(11);
  const Matrix g = random(3, 7, rng, 3.0), u = random(3, 7, rng), dy = random(3, 7, rng);
  Matrix dg, du;
  silu_mul_backward(g, u, dy, &dg, &du);
  const double h = 1e-6;
  for (std::size_t i = 0; i < g.v.size(); ++i) {
    Matrix gp = g, gm = g, up = u, um = u;
    gp.v[i] += h, gm.v[i] -= h, up.v[i] += h, um.v[i] -= h;
    const double fd_g = (dot(dy, silu_mul(gp, u)) - dot(dy, silu_mul(gm, u))) / (2 * h);
    const double fd_u = (dot(dy, silu_mul(g, up)) - dot(dy, silu_mul(g, um))) / (2 * h);
    EXPECT_NEAR(dg.v[i], fd_g, 1e-7 * (1 + std::abs(fd_g))) << i;
    EXPECT_NEAR(du.v[i], fd_u, 1e-7 * (1 + std::abs(fd_u))) << i;
  }
}

// The fused op's interleaved form equals the standard one column for column.
TEST(BackwardReference, InterleavedSwiGluBackwardEqualsStandard) {
  std::mt19937_64 rng(12);
  const Matrix g = random(4, 5, rng, 2.0), u = random(4, 5, rng), dy = random(4, 5, rng);
  Matrix z(4, 10);
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 5; ++j) z(r, 2 * j) = g(r, j), z(r, 2 * j + 1) = u(r, j);
  Matrix dg, du;
  silu_mul_backward(g, u, dy, &dg, &du);
  const Matrix dz = silu_gate_pairs_grad(dy, z);
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 5; ++j) {
      EXPECT_NEAR(dz(r, 2 * j), dg(r, j), 1e-12);
      EXPECT_NEAR(dz(r, 2 * j + 1), du(r, j), 1e-12);
    }
}

// RMSNorm backward: with u = x·r (r = rsqrt(mean x² + eps)), n = u ⊙ w, z = n · Wᵀ and upstream dz,
// G = dz · W and dX = r · (G ⊙ w − u · c), c = (1/D) Σ_n G ⊙ w ⊙ u = (1/D) Σ_k z · dz. Checked
// against finite differences of L = ⟨dz, RMSNorm(x) · Wᵀ⟩, and c against the ⟨z, dz⟩ form.
TEST(BackwardReference, RmsNormBackwardTakesItsScalarFromZdz) {
  std::mt19937_64 rng(13);
  const int m = 3, d = 6, n = 5;
  const double eps = 1e-5;
  const Matrix x = random(m, d, rng), w_out = random(n, d, rng), dz = random(m, n, rng);
  std::vector<double> w(d);
  for (double& v : w) v = 1.0 + 0.3 * std::normal_distribution<double>()(rng);
  const std::vector<double> r = rstd_of(x, eps);
  const Matrix u = mul_per_row(x, r), normed = mul_per_col(u, w), z = linear(normed, w_out);
  const Matrix g = linear(dz, transpose(w_out));  // dz · W
  for (int row = 0; row < m; ++row) {
    double c_direct = 0.0, c_zdz = 0.0;
    for (int k = 0; k < d; ++k) c_direct += g(row, k) * w[k] * u(row, k);
    for (int k = 0; k < n; ++k) c_zdz += z(row, k) * dz(row, k);
    EXPECT_NEAR(c_direct, c_zdz, 1e-10);
    const double c = c_zdz / d;
    Matrix dx_standard;
    std::vector<double> dw_standard;
    rms_norm_backward(x, w, eps, g, &dx_standard, &dw_standard);
    for (int k = 0; k < d; ++k) {
      const double dx = r[row] * (g(row, k) * w[k] - u(row, k) * c);
      Matrix xp = x, xm = x;
      const double h = 1e-6;
      xp(row, k) += h, xm(row, k) -= h;
      const double fd = (dot(dz, linear(rms_norm(xp, w, eps), w_out)) -
                         dot(dz, linear(rms_norm(xm, w, eps), w_out))) / (2 * h);
      EXPECT_NEAR(dx, fd, 1e-6 * (1 + std::abs(fd))) << "row " << row << " col " << k;
      EXPECT_NEAR(dx_standard(row, k), dx, 1e-10);
    }
  }
  // dw against finite differences in w.
  Matrix dx_unused;
  std::vector<double> dw;
  rms_norm_backward(x, w, eps, g, &dx_unused, &dw);
  for (int k = 0; k < d; ++k) {
    std::vector<double> wp = w, wm = w;
    const double h = 1e-6;
    wp[k] += h, wm[k] -= h;
    const double fd = (dot(dz, linear(rms_norm(x, wp, eps), w_out)) -
                       dot(dz, linear(rms_norm(x, wm, eps), w_out))) / (2 * h);
    EXPECT_NEAR(dw[k], fd, 1e-6 * (1 + std::abs(fd))) << "col " << k;
  }
}

}  // namespace
}  // namespace coda::ref
