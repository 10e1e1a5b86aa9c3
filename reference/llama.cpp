// SPDX-License-Identifier: BSD-3-Clause
#include "reference/llama.hpp"

#include <cmath>

#include "reference/bf16.hpp"

namespace coda::ref {

Matrix linear(const Matrix& x, const Matrix& w) {
  Matrix y(x.rows, w.rows);
  for (int m = 0; m < x.rows; ++m)
    for (int n = 0; n < w.rows; ++n) {
      double s = 0.0;
      for (int k = 0; k < x.cols; ++k) s += x(m, k) * w(n, k);
      y(m, n) = s;
    }
  return y;
}

Matrix permute_rows(const Matrix& w, const std::vector<std::int64_t>& rows) {
  Matrix out(static_cast<int>(rows.size()), w.cols);
  for (int r = 0; r < out.rows; ++r)
    for (int c = 0; c < w.cols; ++c) out(r, c) = w(static_cast<int>(rows[r]), c);
  return out;
}

Matrix permute_cols(const Matrix& x, const std::vector<std::int64_t>& cols) {
  Matrix out(x.rows, static_cast<int>(cols.size()));
  for (int r = 0; r < x.rows; ++r)
    for (int c = 0; c < out.cols; ++c) out(r, c) = x(r, static_cast<int>(cols[c]));
  return out;
}

std::vector<double> rstd_of(const Matrix& x, double eps) {
  std::vector<double> r(x.rows);
  for (int m = 0; m < x.rows; ++m) {
    double s = 0.0;
    for (int n = 0; n < x.cols; ++n) s += x(m, n) * x(m, n);
    r[m] = 1.0 / std::sqrt(s / x.cols + eps);
  }
  return r;
}

Matrix rms_norm(const Matrix& x, const std::vector<double>& w, double eps) {
  return mul_per_col(mul_per_row(x, rstd_of(x, eps)), w);
}

Matrix rms_norm_framework(const Matrix& x, const std::vector<double>& w, double eps) {
  std::vector<double> r(x.rows);
  for (int m = 0; m < x.rows; ++m) {
    float s = 0.0f;  // fp32 statistics of the bf16 input
    for (int n = 0; n < x.cols; ++n) s += float(x(m, n)) * float(x(m, n));
    r[m] = 1.0f / std::sqrt(s / float(x.cols) + float(eps));
  }
  return round_to_bf16(mul_per_col(round_to_bf16(mul_per_row(x, r)), w));
}

Matrix qk_norm(const Matrix& x, int q_heads, int kv_heads, int head_dim,
               const std::vector<double>& gamma_q, const std::vector<double>& gamma_k, double eps,
               bool framework) {
  Matrix y = x;
  Matrix head(1, head_dim);
  for (int m = 0; m < x.rows; ++m)
    for (int h = 0; h < q_heads + kv_heads; ++h) {
      for (int i = 0; i < head_dim; ++i) head(0, i) = x(m, h * head_dim + i);
      const std::vector<double>& gamma = h < q_heads ? gamma_q : gamma_k;
      const Matrix normed =
          framework ? rms_norm_framework(head, gamma, eps) : rms_norm(head, gamma, eps);
      for (int i = 0; i < head_dim; ++i) y(m, h * head_dim + i) = normed(0, i);
    }
  return y;
}

void qk_norm_backward(const Matrix& x, int q_heads, int kv_heads, int head_dim,
                      const std::vector<double>& gamma_q, const std::vector<double>& gamma_k,
                      double eps, const Matrix& dy, Matrix* dx, std::vector<double>* dgamma_q,
                      std::vector<double>* dgamma_k) {
  *dx = dy;
  dgamma_q->assign(head_dim, 0.0);
  dgamma_k->assign(head_dim, 0.0);
  Matrix head(1, head_dim), dhead(1, head_dim), dx_head;
  std::vector<double> dgamma;
  for (int m = 0; m < x.rows; ++m)
    for (int h = 0; h < q_heads + kv_heads; ++h) {
      for (int i = 0; i < head_dim; ++i)
        head(0, i) = x(m, h * head_dim + i), dhead(0, i) = dy(m, h * head_dim + i);
      rms_norm_backward(head, h < q_heads ? gamma_q : gamma_k, eps, dhead, &dx_head, &dgamma);
      for (int i = 0; i < head_dim; ++i) {
        (*dx)(m, h * head_dim + i) = dx_head(0, i);
        (h < q_heads ? *dgamma_q : *dgamma_k)[i] += dgamma[i];
      }
    }
}

void rms_norm_backward(const Matrix& x, const std::vector<double>& w, double eps, const Matrix& dy,
                       Matrix* dx, std::vector<double>* dw) {
  const std::vector<double> r = rstd_of(x, eps);
  *dx = Matrix(x.rows, x.cols);
  dw->assign(x.cols, 0.0);
  for (int m = 0; m < x.rows; ++m) {
    double c = 0.0;
    for (int n = 0; n < x.cols; ++n) c += dy(m, n) * w[n] * x(m, n) * r[m];
    c /= x.cols;
    for (int n = 0; n < x.cols; ++n) {
      const double u = x(m, n) * r[m];
      (*dx)(m, n) = r[m] * (dy(m, n) * w[n] - u * c);
      (*dw)[n] += dy(m, n) * u;
    }
  }
}

Matrix silu_mul(const Matrix& gate, const Matrix& up) {
  Matrix y(gate.rows, gate.cols);
  for (std::size_t i = 0; i < y.v.size(); ++i)
    y.v[i] = gate.v[i] / (1.0 + std::exp(-gate.v[i])) * up.v[i];
  return y;
}

void silu_mul_backward(const Matrix& gate, const Matrix& up, const Matrix& dy, Matrix* dgate,
                       Matrix* dup, bool framework) {
  *dgate = Matrix(gate.rows, gate.cols);
  *dup = Matrix(gate.rows, gate.cols);
  auto r = [&](double v) { return framework ? double(round_to_bf16(float(v))) : v; };
  for (std::size_t i = 0; i < gate.v.size(); ++i) {
    const double g = gate.v[i], sig = 1.0 / (1.0 + std::exp(-g));
    const double s = r(g * sig);             // silu(g), a bf16 tensor in the framework
    const double ds = r(dy.v[i] * up.v[i]);  // ∂silu
    dup->v[i] = r(dy.v[i] * s);
    dgate->v[i] = r(ds * sig * (1.0 + g * (1.0 - sig)));
  }
}

Matrix transpose(const Matrix& x) {
  Matrix t(x.cols, x.rows);
  for (int r = 0; r < x.rows; ++r)
    for (int c = 0; c < x.cols; ++c) t(c, r) = x(r, c);
  return t;
}

Matrix hadamard(const Matrix& a, const Matrix& b) {
  Matrix y(a.rows, a.cols);
  for (std::size_t i = 0; i < y.v.size(); ++i) y.v[i] = a.v[i] * b.v[i];
  return y;
}

Matrix rope_rotate_half(const Matrix& x, const std::vector<std::int64_t>& positions,
                        const std::vector<double>& inv_freq, int rotated_heads, int head_dim) {
  Matrix y = x;
  const int half = head_dim / 2;
  for (int m = 0; m < x.rows; ++m)
    for (int h = 0; h < rotated_heads; ++h)
      for (int i = 0; i < half; ++i) {
        const double theta = double(positions[m]) * inv_freq[i];
        const double c = std::cos(theta), s = std::sin(theta);
        const int a = h * head_dim + i, b = a + half;
        y(m, a) = x(m, a) * c - x(m, b) * s;
        y(m, b) = x(m, b) * c + x(m, a) * s;
      }
  return y;
}

std::vector<double> rope_inverse_frequencies(int head_dim, double base,
                                             const Llama3RopeScaling& scaling) {
  const double pi = std::acos(-1.0);
  std::vector<double> inv_freq(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i)
    inv_freq[i] = 1.0 / std::pow(base, double(2 * i) / double(head_dim));
  if (scaling.factor == 0.0) return inv_freq;
  // _compute_llama3_parameters: wavelengths shorter than old_context_len / high_freq_factor stay,
  // longer than old_context_len / low_freq_factor are divided by the factor, and those between
  // are interpolated with a smooth factor.
  const double factor = scaling.factor, low = scaling.low_freq_factor,
               high = scaling.high_freq_factor,
               old_context_len = scaling.original_max_position_embeddings;
  const double low_freq_wavelen = old_context_len / low, high_freq_wavelen = old_context_len / high;
  for (double& f : inv_freq) {
    const double wavelen = 2 * pi / f;
    const double llama = wavelen > low_freq_wavelen ? f / factor : f;
    const double smooth_factor = (old_context_len / wavelen - low) / (high - low);
    const double smoothed = (1 - smooth_factor) * llama / factor + smooth_factor * llama;
    const bool is_medium_freq = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
    f = is_medium_freq ? smoothed : llama;
  }
  return inv_freq;
}

}  // namespace coda::ref
