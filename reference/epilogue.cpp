// SPDX-License-Identifier: BSD-3-Clause
#include "reference/epilogue.hpp"

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

}  // namespace coda::ref
