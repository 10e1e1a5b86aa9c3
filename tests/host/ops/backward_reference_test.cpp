// SPDX-License-Identifier: BSD-3-Clause
// The hand-derived backward formulas the backward ops are tested against, checked in float64:
// against central finite differences of the standard forward, against the interleaved (packed)
// form the fused epilogue computes, and the ⟨z, dz⟩ identity that lets an RMSNorm backward take
// its per-row scalar from the next op's backward (docs/ops-math.md §2.0); and the library's RoPE
// table against the reference's own frequencies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "coda/ops/weights.hpp"
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

// L = ⟨dy, gelu_tanh(x)⟩: ∂L/∂x is gelu_tanh_backward's output; and gelu_tanh is the tanh form
// (its values at 0, ±1 and ±3 as PyTorch's F.gelu(approximate="tanh") gives them in float64).
TEST(BackwardReference, GeluTanhBackwardMatchesFiniteDifferences) {
  std::mt19937_64 rng(16);
  const Matrix x = random(3, 9, rng, 3.0), dy = random(3, 9, rng);
  const Matrix dx = gelu_tanh_backward(x, dy);
  const double h = 1e-6;
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    Matrix xp = x, xm = x;
    xp.v[i] += h, xm.v[i] -= h;
    const double fd = (dot(dy, gelu_tanh(xp)) - dot(dy, gelu_tanh(xm))) / (2 * h);
    EXPECT_NEAR(dx.v[i], fd, 1e-7 * (1 + std::abs(fd))) << i;
  }
  Matrix points(1, 5);
  points.v = {0.0, 1.0, -1.0, 3.0, -3.0};
  const Matrix y = gelu_tanh(points);
  const double want[] = {0.0, 0.8411919906082768, -0.15880800939172324, 2.996362607918227,
                         -0.0036373920817729943};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y.v[i], want[i], 1e-12) << points.v[i];
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

// QK-norm + RoPE backward (Qwen3 order: per-head RMSNorm, then rotate-half RoPE): dn = R(−θ) dy,
// then the per-head RMSNorm backward (qk_norm_backward) — what qknorm_rope_bwd computes. dx, ∂γ_q
// and ∂γ_k against central finite differences of L = ⟨dy, RoPE(QkNorm(x))⟩, with heads of very
// different scale and V columns passing through.
TEST(BackwardReference, QkNormRopeBackwardMatchesFiniteDifferences) {
  std::mt19937_64 rng(15);
  const int m = 3, q_heads = 2, kv_heads = 1, hd = 8, n = (q_heads + 2 * kv_heads) * hd;
  const double eps = 1e-6;
  Matrix x = random(m, n, rng);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) x(r, c) *= std::pow(10.0, double(c / hd) - 1.0);
  const Matrix dy = random(m, n, rng);
  std::vector<double> gq(hd), gk(hd);
  for (double& v : gq) v = 1.0 + 0.3 * std::normal_distribution<double>()(rng);
  for (double& v : gk) v = 1.0 + 0.3 * std::normal_distribution<double>()(rng);
  const std::vector<std::int64_t> pos = {3, 100001, 7}, neg = {-3, -100001, -7};
  const std::vector<double> inv = rope_inverse_frequencies(hd, 10000.0);
  auto loss = [&](const Matrix& xx, const std::vector<double>& q, const std::vector<double>& k) {
    return dot(dy, rope_rotate_half(qk_norm(xx, q_heads, kv_heads, hd, q, k, eps), pos, inv,
                                    q_heads + kv_heads, hd));
  };
  Matrix dx;
  std::vector<double> dgq, dgk;
  qk_norm_backward(x, q_heads, kv_heads, hd, gq, gk, eps,
                   rope_rotate_half(dy, neg, inv, q_heads + kv_heads, hd), &dx, &dgq, &dgk);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      const double h = 1e-6 * std::max(1.0, std::abs(x(r, c)));
      Matrix xp = x, xm = x;
      xp(r, c) += h, xm(r, c) -= h;
      const double fd = (loss(xp, gq, gk) - loss(xm, gq, gk)) / (2 * h);
      EXPECT_NEAR(dx(r, c), fd, 1e-6 * (1 + std::abs(fd))) << "row " << r << " col " << c;
    }
  for (int i = 0; i < hd; ++i) {
    std::vector<double> p = gq, q = gq, pk = gk, qk = gk;
    const double h = 1e-6;
    p[i] += h, q[i] -= h, pk[i] += h, qk[i] -= h;
    const double fd_q = (loss(x, p, gk) - loss(x, q, gk)) / (2 * h);
    const double fd_k = (loss(x, gq, pk) - loss(x, gq, qk)) / (2 * h);
    EXPECT_NEAR(dgq[i], fd_q, 1e-6 * (1 + std::abs(fd_q))) << "γ_q " << i;
    EXPECT_NEAR(dgk[i], fd_k, 1e-6 * (1 + std::abs(fd_k))) << "γ_k " << i;
  }
}

// One Llama block, forward standard and backward rewritten. The block: h1 = RMSNorm(x)·w1 →
// QKV (rotate-half RoPE on Q and K) → mixer → o-proj + residual → x2; h2 = RMSNorm(x2)·w2 →
// gate/up → SwiGLU → down-proj + residual → out. Attention is replaced by an element-wise stand-in
// a = q ⊙ k ⊙ v (its backward by hand), which no CODA op fuses. L = ⟨dout, out⟩.
// The rewritten backward is what the backward ops compute, in their layouts (interleaved gate/up,
// adjacent-pair RoPE with permuted Q/K rows): linear_swiglu_bwd → linear_rmsnorm_bwd (MLP norm,
// c from ⟨z, dz⟩, dX added to the residual gradient) → o-proj/mixer backward → rope_bwd →
// linear_rmsnorm_bwd (attention norm). dx, dw1, dw2 against central finite differences of L.
TEST(BackwardReference, RewrittenBlockBackwardEqualsStandard) {
  std::mt19937_64 rng(14);
  const int m = 5, d = 8, heads = 2, hd = 4, f = 6, n_qkv = 3 * heads * hd;
  const double eps = 1e-5;
  const Matrix x = random(m, d, rng), dout = random(m, d, rng);
  const Matrix w_qkv = random(n_qkv, d, rng, 0.5), w_o = random(d, heads * hd, rng, 0.5);
  const Matrix w_gate = random(f, d, rng, 0.5), w_up = random(f, d, rng, 0.5), w_down = random(d, f, rng, 0.5);
  std::vector<double> w1(d), w2(d);
  for (int i = 0; i < d; ++i) w1[i] = 1.0 + 0.1 * i, w2[i] = 1.5 - 0.05 * i;
  const std::vector<std::int64_t> pos = {3, 4, 5, 0, 100000};
  // The standard side takes the reference's own frequencies, the rewritten side the library's
  // table (what the kernels take).
  const std::vector<double> inv = rope_inverse_frequencies(hd, 500000.0);
  const int qk = 2 * heads * hd;  // Q and K columns

  auto cols = [](const Matrix& a, int c0, int n) {
    Matrix out(a.rows, n);
    for (int r = 0; r < a.rows; ++r)
      for (int c = 0; c < n; ++c) out(r, c) = a(r, c0 + c);
    return out;
  };
  auto mixer = [&](const Matrix& qkv) {  // q ⊙ k ⊙ v, standard column order
    return hadamard(hadamard(cols(qkv, 0, heads * hd), cols(qkv, heads * hd, heads * hd)),
                    cols(qkv, 2 * heads * hd, heads * hd));
  };
  auto block = [&](const Matrix& xin, const std::vector<double>& a1, const std::vector<double>& a2) {
    const Matrix qkv = rope_rotate_half(linear(rms_norm(xin, a1, eps), w_qkv), pos, inv, 2 * heads, hd);
    const Matrix x2 = add(xin, linear(mixer(qkv), w_o));
    const Matrix h2 = rms_norm(x2, a2, eps);
    return add(x2, linear(silu_mul(linear(h2, w_gate), linear(h2, w_up)), w_down));
  };

  // Rewritten layouts and the forward's saved tensors.
  std::vector<std::int64_t> qkv_rows = ops::rope_interleave_rows(2 * heads, hd);
  for (int r = qk; r < n_qkv; ++r) qkv_rows.push_back(r);
  const Matrix w_qkv_p = permute_rows(w_qkv, qkv_rows);
  Matrix w_cat(2 * f, d);
  for (int i = 0; i < f * d; ++i) w_cat.v[i] = w_gate.v[i], w_cat.v[f * d + i] = w_up.v[i];
  const Matrix w_gu = permute_rows(w_cat, ops::gate_up_interleave_rows(f));
  const std::vector<float> table = ops::rope_frequencies(heads, heads, hd, 500000.0);
  std::vector<double> turns(n_qkv / 2);
  for (int j = 0; j < n_qkv / 2; ++j) turns[j] = double(table[2 * j]) + double(table[2 * j + 1]);
  std::vector<std::int64_t> neg(pos.size());
  for (std::size_t i = 0; i < pos.size(); ++i) neg[i] = -pos[i];
  const Matrix qkv_p = rope_pairs(linear(rms_norm(x, w1, eps), w_qkv_p), pos, turns);  // saved
  std::vector<std::int64_t> unperm(n_qkv);
  for (int c = 0; c < n_qkv; ++c) unperm[qkv_rows[c]] = c;
  const Matrix qkv_std = permute_cols(qkv_p, unperm);
  const Matrix x2 = add(x, linear(mixer(qkv_std), w_o));         // saved (residual stream)
  const Matrix z = linear(rms_norm(x2, w2, eps), w_gu);           // saved, interleaved

  auto rms_norm_bwd = [&](const Matrix& xin, const std::vector<double>& w, const Matrix& g,
                          const std::vector<double>& zdz, Matrix* dx, std::vector<double>* dw) {
    const std::vector<double> r = rstd_of(xin, eps);
    dw->assign(d, 0.0);
    for (int row = 0; row < m; ++row)
      for (int k = 0; k < d; ++k) {
        const double u = xin(row, k) * r[row];
        (*dx)(row, k) += r[row] * (g(row, k) * w[k] - u * zdz[row] / d);
        (*dw)[k] += g(row, k) * u;
      }
  };
  auto row_dot = [&](const Matrix& a, const Matrix& b) {
    std::vector<double> s(a.rows, 0.0);
    for (int r = 0; r < a.rows; ++r)
      for (int c = 0; c < a.cols; ++c) s[r] += a(r, c) * b(r, c);
    return s;
  };

  // Rewritten backward.
  Matrix dx = dout;                                                     // residual gradient
  const Matrix dz = silu_gate_pairs_grad(linear(dout, transpose(w_down)), z);  // linear_swiglu_bwd
  std::vector<double> dw2, dw1;
  rms_norm_bwd(x2, w2, linear(dz, transpose(w_gu)), row_dot(z, dz), &dx, &dw2);  // linear_rmsnorm_bwd
  const Matrix da = linear(dx, transpose(w_o));                         // o-proj dgrad
  const Matrix q = cols(qkv_std, 0, heads * hd), k = cols(qkv_std, heads * hd, heads * hd),
               v = cols(qkv_std, 2 * heads * hd, heads * hd);
  Matrix dqkv_std(m, n_qkv);
  const Matrix dq = hadamard(da, hadamard(k, v)), dk = hadamard(da, hadamard(q, v)),
               dv = hadamard(da, hadamard(q, k));
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < heads * hd; ++c)
      dqkv_std(r, c) = dq(r, c), dqkv_std(r, heads * hd + c) = dk(r, c),
                  dqkv_std(r, 2 * heads * hd + c) = dv(r, c);
  const Matrix dqkv = permute_cols(dqkv_std, qkv_rows);                 // our column order
  const Matrix dz_qkv = rope_pairs(dqkv, neg, turns);                   // rope_bwd
  rms_norm_bwd(x, w1, linear(dz_qkv, transpose(w_qkv_p)), row_dot(qkv_p, dqkv), &dx, &dw1);

  const double h = 1e-6;
  for (int i = 0; i < m * d; ++i) {
    Matrix xp = x, xm = x;
    xp.v[i] += h, xm.v[i] -= h;
    const double fd = (dot(dout, block(xp, w1, w2)) - dot(dout, block(xm, w1, w2))) / (2 * h);
    EXPECT_NEAR(dx.v[i], fd, 1e-6 * (1 + std::abs(fd))) << "dx " << i;
  }
  for (int i = 0; i < d; ++i) {
    std::vector<double> p1 = w1, m1 = w1, p2 = w2, m2 = w2;
    p1[i] += h, m1[i] -= h, p2[i] += h, m2[i] -= h;
    const double fd1 = (dot(dout, block(x, p1, w2)) - dot(dout, block(x, m1, w2))) / (2 * h);
    const double fd2 = (dot(dout, block(x, w1, p2)) - dot(dout, block(x, w1, m2))) / (2 * h);
    EXPECT_NEAR(dw1[i], fd1, 1e-6 * (1 + std::abs(fd1))) << "dw1 " << i;
    EXPECT_NEAR(dw2[i], fd2, 1e-6 * (1 + std::abs(fd2))) << "dw2 " << i;
  }
}

// The library's RoPE table (coda::ops::rope_frequencies, what the kernels take; and the inverse
// frequencies it is built from) against the reference's independent float64 frequencies, written
// from Hugging Face's definition: hi to float precision, hi + lo to ~2⁻⁴⁸ of the turns, V columns
// 0; plain θ and Llama-3.1 / 3.2 scaling, whose three bands (kept, interpolated, divided) the
// scaled cases span.
TEST(RopeReference, LibraryTableMatchesIndependentFrequencies) {
  struct Case {
    int q_heads, kv_heads, hd;
    double theta;
    Llama3RopeScaling scaling;
  };
  const Case cases[] = {{4, 2, 128, 500000.0, {}},
                        {5, 1, 64, 1000000.0, {}},
                        {3, 1, 6, 10000.0, {}},
                        {4, 2, 128, 500000.0, {8.0, 1.0, 4.0, 8192.0}},     // Llama 3.1
                        {4, 2, 64, 500000.0, {32.0, 1.0, 4.0, 8192.0}}};    // Llama 3.2
  const double two_pi = 2.0 * std::acos(-1.0);
  for (const Case& c : cases) {
    SCOPED_TRACE("hd " + std::to_string(c.hd) + " theta " + std::to_string(c.theta) + " factor " +
                 std::to_string(c.scaling.factor));
    const ops::RopeScaling scaling{c.scaling.factor, c.scaling.low_freq_factor,
                                   c.scaling.high_freq_factor,
                                   c.scaling.original_max_position_embeddings};
    const std::vector<double> inv = rope_inverse_frequencies(c.hd, c.theta, c.scaling);
    const std::vector<double> lib = ops::rope_inverse_frequencies(c.hd, c.theta, scaling);
    const std::vector<float> table = ops::rope_frequencies(c.q_heads, c.kv_heads, c.hd, c.theta, scaling);
    ASSERT_EQ(lib.size(), inv.size());
    ASSERT_EQ(table.size(), std::size_t(c.q_heads + 2 * c.kv_heads) * c.hd);
    for (int i = 0; i < c.hd / 2; ++i) EXPECT_NEAR(lib[i], inv[i], 1e-14 * inv[i]) << "inv_freq " << i;
    for (int h = 0; h < c.q_heads + 2 * c.kv_heads; ++h)
      for (int i = 0; i < c.hd / 2; ++i) {
        const std::size_t pair = std::size_t(h) * c.hd / 2 + i;
        const double hi = table[2 * pair], lo = table[2 * pair + 1];
        const double turns = h < c.q_heads + c.kv_heads ? inv[i] / two_pi : 0.0;
        EXPECT_NEAR(hi, turns, 0x1p-24 * turns) << "head " << h << " pair " << i;
        EXPECT_NEAR(hi + lo, turns, 0x1p-46 * turns) << "head " << h << " pair " << i;
      }
    if (c.scaling.factor > 0) {  // the scaled cases reach all three bands
      const std::vector<double> plain = rope_inverse_frequencies(c.hd, c.theta);
      int kept = 0, divided = 0, between = 0;
      for (int i = 0; i < c.hd / 2; ++i) {
        kept += inv[i] == plain[i];
        divided += inv[i] == plain[i] / c.scaling.factor;
        between += inv[i] < plain[i] && inv[i] > plain[i] / c.scaling.factor;
      }
      EXPECT_GT(kept, 0);
      EXPECT_GT(divided, 0);
      EXPECT_GT(between, 0);
    }
  }
}

}  // namespace
}  // namespace coda::ref
