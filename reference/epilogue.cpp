// SPDX-License-Identifier: BSD-3-Clause
#include "reference/epilogue.hpp"

#include <algorithm>
#include <cmath>

#include "reference/bf16.hpp"

namespace coda::ref {
namespace {

template <class F>
Matrix map(const Matrix& x, F f) {
  Matrix out(x.rows, x.cols);
  for (std::size_t i = 0; i < x.v.size(); ++i) out.v[i] = f(x.v[i]);
  return out;
}

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

}  // namespace

Matrix add(const Matrix& x, const Matrix& y) {
  Matrix out(x.rows, x.cols);
  for (std::size_t i = 0; i < x.v.size(); ++i) out.v[i] = x.v[i] + y.v[i];
  return out;
}
Matrix scale(const Matrix& x, double alpha) { return map(x, [&](double a) { return alpha * a; }); }
Matrix silu(const Matrix& x) { return map(x, [](double a) { return a / (1.0 + std::exp(-a)); }); }
Matrix gelu(const Matrix& x) {
  return map(x, [](double a) { return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0))); });
}
namespace {
const double kSqrt2OverPi = std::sqrt(2.0 / std::acos(-1.0)), kGeluKappa = 0.044715;
}  // namespace
Matrix gelu_tanh(const Matrix& x) {
  return map(x, [](double a) {
    return 0.5 * a * (1.0 + std::tanh(kSqrt2OverPi * (a + kGeluKappa * a * a * a)));
  });
}
Matrix gelu_tanh_backward(const Matrix& x, const Matrix& dy) {
  Matrix out(x.rows, x.cols);
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    const double a = x.v[i], t = std::tanh(kSqrt2OverPi * (a + kGeluKappa * a * a * a));
    const double inner = kSqrt2OverPi * (1.0 + 3.0 * kGeluKappa * a * a);
    out.v[i] = dy.v[i] * (0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * inner);
  }
  return out;
}
Matrix round_to_bf16(const Matrix& x) {
  return map(x, [](double a) { return double(ref::round_to_bf16(float(a))); });
}

Matrix mul_per_row(const Matrix& x, const std::vector<double>& v) {
  Matrix out = x;
  for (int r = 0; r < x.rows; ++r)
    for (int c = 0; c < x.cols; ++c) out(r, c) *= v[r];
  return out;
}
Matrix mul_per_col(const Matrix& x, const std::vector<double>& v) {
  Matrix out = x;
  for (int r = 0; r < x.rows; ++r)
    for (int c = 0; c < x.cols; ++c) out(r, c) *= v[c];
  return out;
}
Matrix add_per_col(const Matrix& x, const std::vector<double>& v) {
  Matrix out = x;
  for (int r = 0; r < x.rows; ++r)
    for (int c = 0; c < x.cols; ++c) out(r, c) += v[c];
  return out;
}

Partials per_row_partials(const Matrix& x, int tile_m, int tile_n, bool square) {
  Partials p{(x.cols + tile_n - 1) / tile_n, round_up(x.rows, tile_m), {}};
  p.v.assign(std::size_t(p.tiles) * p.padded, 0.0);
  for (int r = 0; r < x.rows; ++r)
    for (int c = 0; c < x.cols; ++c)
      p.v[std::size_t(c / tile_n) * p.padded + r] += square ? x(r, c) * x(r, c) : x(r, c);
  return p;
}

Partials per_col_partials(const Matrix& x, int tile_m, int tile_n) {
  Partials p{(x.rows + tile_m - 1) / tile_m, round_up(x.cols, tile_n), {}};
  p.v.assign(std::size_t(p.tiles) * p.padded, 0.0);
  for (int r = 0; r < x.rows; ++r)
    for (int c = 0; c < x.cols; ++c) p.v[std::size_t(r / tile_m) * p.padded + c] += x(r, c);
  return p;
}

std::vector<double> merge(const Partials& p, int count) {
  std::vector<double> out(count, 0.0);
  for (int t = 0; t < p.tiles; ++t)
    for (int i = 0; i < count; ++i) out[i] += p.v[std::size_t(t) * p.padded + i];
  return out;
}

std::vector<double> rstd(const Partials& p, int count, int width, double eps) {
  std::vector<double> out = merge(p, count);
  for (double& s : out) s = 1.0 / std::sqrt(s / width + eps);
  return out;
}

Matrix rope_pairs(const Matrix& x, const std::vector<std::int64_t>& positions,
                  const std::vector<double>& turns) {
  Matrix y(x.rows, x.cols);
  const double two_pi = 2.0 * std::acos(-1.0);
  for (int m = 0; m < x.rows; ++m)
    for (int j = 0; 2 * j + 1 < x.cols; ++j) {
      // Reduce pos · f to a fraction of a turn first: at pos ~ 1e6 the product has ~20 integer bits.
      const double t = static_cast<double>(positions[m]) * turns[j];
      const double theta = two_pi * (t - std::nearbyint(t));
      const double c = std::cos(theta), s = std::sin(theta);
      const double x0 = x(m, 2 * j), x1 = x(m, 2 * j + 1);
      y(m, 2 * j) = x0 * c - x1 * s;
      y(m, 2 * j + 1) = x0 * s + x1 * c;
    }
  return y;
}

namespace {
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
}  // namespace

Matrix silu_gate_pairs(const Matrix& z) {
  Matrix y(z.rows, z.cols / 2);
  for (int m = 0; m < z.rows; ++m)
    for (int j = 0; j < y.cols; ++j) {
      const double g = z(m, 2 * j), u = z(m, 2 * j + 1);
      y(m, j) = g * sigmoid(g) * u;
    }
  return y;
}

Matrix silu_gate_pairs_grad(const Matrix& dy, const Matrix& z) {
  Matrix dz(z.rows, z.cols);
  for (int m = 0; m < z.rows; ++m)
    for (int j = 0; j < dy.cols; ++j) {
      const double g = z(m, 2 * j), u = z(m, 2 * j + 1), s = sigmoid(g);
      dz(m, 2 * j) = dy(m, j) * u * s * (1.0 + g * (1.0 - s));
      dz(m, 2 * j + 1) = dy(m, j) * g * s;
    }
  return dz;
}

namespace {
double log_sum_exp(const std::vector<double>& v) {
  double max = -INFINITY;
  for (double x : v) max = std::max(max, x);
  if (max == -INFINITY) return -INFINITY;
  double sum = 0.0;
  for (double x : v) sum += std::exp(x - max);
  return max + std::log(sum);
}
}  // namespace

Partials per_row_lse_partials(const Matrix& x, int tile_m, int tile_n) {
  Partials p{(x.cols + tile_n - 1) / tile_n, round_up(x.rows, tile_m), {}};
  p.v.assign(std::size_t(p.tiles) * p.padded, 0.0);
  for (int t = 0; t < p.tiles; ++t)
    for (int m = 0; m < x.rows; ++m) {
      std::vector<double> tile;
      for (int n = t * tile_n; n < std::min(x.cols, (t + 1) * tile_n); ++n) tile.push_back(x(m, n));
      p.v[t * p.padded + m] = log_sum_exp(tile);
    }
  return p;
}

std::vector<double> merge_lse(const Partials& p, int count) {
  std::vector<double> out(count);
  for (int m = 0; m < count; ++m) {
    std::vector<double> column;
    for (int t = 0; t < p.tiles; ++t) column.push_back(p.v[t * p.padded + m]);
    out[m] = log_sum_exp(column);
  }
  return out;
}

}  // namespace coda::ref
