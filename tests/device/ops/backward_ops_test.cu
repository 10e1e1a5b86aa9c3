// SPDX-License-Identifier: BSD-3-Clause
// The backward ops against the float64 *standard* backward (reference/llama.hpp: separate gate/up
// halves, hand-derived gradients checked against finite differences in the host tests), under
// the numerics contract (DESIGN.md §5); the framework model is PyTorch's bf16 autograd. Ragged
// and Llama-1B widths, M = 1 … 16383, fresh seeds, poisoned outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "coda/ops/linear_rmsnorm_bwd.hpp"
#include "coda/ops/linear_swiglu_bwd.hpp"
#include "coda/ops/norm_stats.hpp"
#include "coda/ops/rope_bwd.hpp"
#include "coda/ops/weights.hpp"
#include "device/device_matrix.hpp"
#include "device/ops/ops_test_support.hpp"
#include "reference/llama.hpp"

namespace coda::ops {
namespace {

using testing::DeviceMatrix;
using testing::download;
using testing::meets_contract;
using testing::output;
using testing::upload;

// Columns [a | b] interleaved: out[:, 2j] = a[:, j], out[:, 2j + 1] = b[:, j].
Matrix interleave(const Matrix& a, const Matrix& b) {
  Matrix out(a.rows, 2 * a.cols);
  for (int r = 0; r < a.rows; ++r)
    for (int j = 0; j < a.cols; ++j) out(r, 2 * j) = a(r, j), out(r, 2 * j + 1) = b(r, j);
  return out;
}

std::vector<double> row_dot(const Matrix& g, const Matrix& u, const Matrix& dg, const Matrix& du) {
  std::vector<double> s(g.rows, 0.0);
  for (int r = 0; r < g.rows; ++r)
    for (int j = 0; j < g.cols; ++j) s[r] += g(r, j) * dg(r, j) + u(r, j) * du(r, j);
  return s;
}

// dY = dOut · W_down → dZ (interleaved), Y recomputed, zdz = Σ z·dz per row.
TEST(BackwardOps, SwiGluBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.SwiGluBackwardAgainstStandard"));
  struct Shape { int m, hidden, ffn; };
  const Shape shapes[] = {{1, 520, 260}, {199, 2048, 8192}, {1000, 776, 1000}, {16383, 264, 520}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " hidden " + std::to_string(s.hidden) + " ffn " +
                 std::to_string(s.ffn));
    const Matrix d_out = random_bf16(s.m, s.hidden, rng, 1.0);
    const Matrix w_down = random_bf16(s.hidden, s.ffn, rng, 0.03);
    const Matrix gate = random_bf16(s.m, s.ffn, rng, 2.0), up = random_bf16(s.m, s.ffn, rng, 1.0);
    const Matrix w_t = ref::transpose(w_down);  // linear64(x, w) is x · wᵀ

    Matrix dg64, du64, dg_fw, du_fw;
    ref::silu_mul_backward(gate, up, linear64(d_out, w_t), &dg64, &du64);
    ref::silu_mul_backward(gate, up, linear_framework(d_out, w_t), &dg_fw, &du_fw, true);
    const Matrix y64 = ref::silu_mul(gate, up);
    const Matrix y_fw = ref::round_to_bf16(ref::hadamard(ref::round_to_bf16(ref::silu(gate)), up));
    const std::vector<double> zdz64 = row_dot(gate, up, dg64, du64);
    const std::vector<double> zdz_fw = row_dot(gate, up, dg_fw, du_fw);

    DeviceMatrix d_dout = upload(d_out), d_w = upload(w_down), d_z = upload(interleave(gate, up));
    DeviceMatrix dz = output(s.m, 2 * s.ffn), y = output(s.m, s.ffn);
    DeviceBuffer zdz(s.m * 4), ws(linear_swiglu_bwd_workspace_bytes(s.m, s.ffn));
    zdz.poison();
    ws.poison();
    linear_swiglu_bwd(dz.view(), y.view(), vector_view(zdz, s.m, DType::kF32), d_dout.view(),
                      d_w.view(), d_z.view(), ws.get(), linear_swiglu_bwd_workspace_bytes(s.m, s.ffn));
    CODA_CHECK_CUDA(cudaDeviceSynchronize());

    bool pad[2];
    EXPECT_TRUE(meets_contract(download(dz, &pad[0]).v, interleave(dg64, du64).v,
                               interleave(dg_fw, du_fw).v, "dZ"));
    EXPECT_TRUE(meets_contract(download(y, &pad[1]).v, y64.v, y_fw.v, "Y recomputed"));
    const std::vector<float> got = zdz.download<float>();
    EXPECT_TRUE(meets_contract(std::vector<double>(got.begin(), got.end()), zdz64, zdz_fw, "zdz"));
    for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
  }
}

// G = α · dZ · W → dX = r · (G ⊙ w − u · c) (fresh and added into an incoming gradient), N, dw;
// rows of X from 1e-3 to 1e3 in scale, c from the exact ⟨z, dz⟩ as the consumer's backward gives it.
TEST(BackwardOps, RmsNormBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.RmsNormBackwardAgainstStandard"));
  struct Shape { int m, d, n; float alpha; };
  const Shape shapes[] = {{1, 520, 776, 1.0f}, {199, 2048, 3072, 0.5f}, {1000, 776, 1000, 1.0f},
                          {16383, 264, 520, 2.0f}};
  const double eps = 1e-5;
  for (const Shape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " d " + std::to_string(s.d) + " n " + std::to_string(s.n));
    Matrix x = random_bf16(s.m, s.d, rng, 1.0);
    for (int m = 0; m < s.m; ++m) {  // RMS from ~1e-3 to ~1e3
      const double scale = std::pow(10.0, double(m % 7) - 3.0);
      for (int k = 0; k < s.d; ++k) x(m, k) = ref::round_to_bf16(x(m, k) * scale);
    }
    const std::vector<double> w = random_norm_weight(s.d, rng);
    const Matrix W = random_bf16(s.n, s.d, rng, 0.03), dz = random_bf16(s.m, s.n, rng, 1.0);
    const Matrix dx_in = random_bf16(s.m, s.d, rng, 1.0);
    const Matrix w_t = ref::transpose(W);  // linear64(dz, w_t) = dz · W

    // Standard: autograd of Z = RMSNorm(X) · Wᵀ with upstream α · dZ.
    const Matrix g64 = ref::scale(linear64(dz, w_t), s.alpha);
    const Matrix g_fw = ref::round_to_bf16(ref::scale(linear_framework(dz, w_t), s.alpha));
    Matrix dx64, dx_fw;
    std::vector<double> dw64, dw_fw;
    ref::rms_norm_backward(x, w, eps, g64, &dx64, &dw64);
    ref::rms_norm_backward(x, w, eps, g_fw, &dx_fw, &dw_fw);
    const Matrix n64 = ref::rms_norm(x, w, eps), n_fw = ref::rms_norm_framework(x, w, eps);
    // zdz = Σ_k z · (α dZ) with z = N · Wᵀ: what the consumer's backward (linear_swiglu_bwd) hands on.
    const Matrix z = linear64(n64, W);
    std::vector<float> zdz(s.m, 0.0f);
    for (int m = 0; m < s.m; ++m) {
      double acc = 0.0;
      for (int k = 0; k < s.n; ++k) acc += z(m, k) * dz(m, k) * s.alpha;
      zdz[m] = float(acc);
    }

    DeviceMatrix d_x = upload(x), d_w = upload(W), d_dz = upload(dz), h = output(s.m, s.d);
    DeviceMatrix dx_fresh = output(s.m, s.d), dx_acc = upload(dx_in), n_out = output(s.m, s.d);
    DeviceBuffer d_gamma = upload_bf16_vector(w), d_zdz(s.m * 4), dw(s.d * 4), alpha(4);
    d_zdz.upload(zdz);
    alpha.upload(std::vector<float>{s.alpha});
    DeviceBuffer partials(norm_stats_floats(s.m, s.d) * 4), ws(linear_rmsnorm_bwd_workspace_bytes(s.m, s.d));
    partials.poison();
    ws.poison();
    dw.poison();
    RmsNormSaved saved{d_x.view(), {partials.get<float>(), norm_stats_floats(s.m, s.d)},
                       vector_view(d_gamma, s.d, DType::kBF16), float(eps)};
    rms_norm_stats(h.view(), saved.stats, d_x.view(), saved.weight);  // the forward's statistics
    const std::size_t ws_bytes = linear_rmsnorm_bwd_workspace_bytes(s.m, s.d);
    const TensorView zdz_view = vector_view(d_zdz, s.m, DType::kF32), dw_view = vector_view(dw, s.d, DType::kF32);
    linear_rmsnorm_bwd(dx_fresh.view(), false, n_out.view(), dw_view, d_dz.view(), d_w.view(), saved,
                       zdz_view, ws.get(), ws_bytes, vector_view(alpha, 1, DType::kF32));
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
    const std::vector<float> dw_fresh = dw.download<float>();
    linear_rmsnorm_bwd(dx_acc.view(), true, n_out.view(), dw_view, d_dz.view(), d_w.view(), saved,
                       zdz_view, ws.get(), ws_bytes, vector_view(alpha, 1, DType::kF32));
    CODA_CHECK_CUDA(cudaDeviceSynchronize());

    bool pad[3];
    EXPECT_TRUE(meets_contract(download(dx_fresh, &pad[0]).v, dx64.v, ref::round_to_bf16(dx_fw).v, "dX"));
    EXPECT_TRUE(meets_contract(download(dx_acc, &pad[1]).v, ref::add(dx_in, dx64).v,
                               ref::round_to_bf16(ref::add(dx_in, ref::round_to_bf16(dx_fw))).v,
                               "dX_in + dX (reduce-add)"));
    EXPECT_TRUE(meets_contract(download(n_out, &pad[2]).v, n64.v, n_fw.v, "N = u ⊙ w"));
    EXPECT_TRUE(meets_contract(std::vector<double>(dw_fresh.begin(), dw_fresh.end()), dw64, dw_fw, "dw"));
    EXPECT_EQ(dw.download<float>(), dw_fresh) << "dw deterministic across runs";
    for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
  }
}

// dZ = R(θ)ᵀ dQKV on the Q/K pairs (V through), zdz = Σ QKV · dQKV; in place and out of place; GQA,
// hd 64 and 128, positions past 100k with resets.
TEST(BackwardOps, RopeBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.RopeBackwardAgainstStandard"));
  struct Shape { int m, q_heads, kv_heads, hd; };
  const Shape shapes[] = {{1, 4, 2, 128}, {199, 32, 8, 64}, {1000, 5, 1, 64}, {16383, 2, 1, 128}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " hd " + std::to_string(s.hd));
    const int n = (s.q_heads + 2 * s.kv_heads) * s.hd;
    const Matrix y = random_bf16(s.m, n, rng, 1.0), dy = random_bf16(s.m, n, rng, 1.0);
    std::vector<std::int64_t> pos(s.m), neg(s.m);
    std::uniform_int_distribution<std::int64_t> start(100000, 1000000);
    for (int m = 0, p = int(start(rng)); m < s.m; ++m, ++p) {
      if (m % 300 == 299) p = 0;
      pos[m] = p, neg[m] = -p;
    }
    const std::vector<float> table = rope_frequencies(s.q_heads, s.kv_heads, s.hd, 500000.0);
    std::vector<double> turns(n / 2);
    for (int j = 0; j < n / 2; ++j) turns[j] = double(table[2 * j]) + double(table[2 * j + 1]);
    const Matrix dz64 = ref::rope_pairs(dy, neg, turns);  // R(θ)ᵀ = R(−θ)
    // PyTorch's bf16 autograd of q·cos + rotate(q)·sin: cos/sin in bf16, each product rounded.
    Matrix dz_fw(s.m, n);
    auto r = [](double v) { return double(ref::round_to_bf16(float(v))); };
    for (int m = 0; m < s.m; ++m)
      for (int j = 0; j < n / 2; ++j) {
        const double theta = 2 * M_PI * double(pos[m]) * turns[j];
        const double c = r(std::cos(theta)), sn = r(std::sin(theta));
        const double g0 = dy(m, 2 * j), g1 = dy(m, 2 * j + 1);
        dz_fw(m, 2 * j) = r(r(g0 * c) + r(g1 * sn));
        dz_fw(m, 2 * j + 1) = r(r(g1 * c) - r(g0 * sn));
      }
    std::vector<double> zdz64(s.m, 0.0), zdz_fw(s.m, 0.0);
    for (int m = 0; m < s.m; ++m) {
      float acc = 0.0f;  // a framework's fp32 row sum, in column order
      for (int k = 0; k < n; ++k) zdz64[m] += y(m, k) * dy(m, k), acc += float(y(m, k) * dy(m, k));
      zdz_fw[m] = acc;
    }

    DeviceMatrix d_y = upload(y), d_dy = upload(dy), dz = output(s.m, n);
    DeviceBuffer zdz(s.m * 4), zdz2(s.m * 4), d_pos(s.m * 4), d_freq(table.size() * 4);
    zdz.poison();
    zdz2.poison();
    d_pos.upload(std::vector<std::int32_t>(pos.begin(), pos.end()));
    d_freq.upload(table);
    const TensorView positions = vector_view(d_pos, s.m, DType::kI32),
                     frequencies = vector_view(d_freq, n, DType::kF32);
    rope_bwd(dz.view(), vector_view(zdz, s.m, DType::kF32), d_y.view(), d_dy.view(), positions, frequencies);
    rope_bwd(d_dy.view(), vector_view(zdz2, s.m, DType::kF32), d_y.view(), d_dy.view(), positions,
             frequencies);  // in place
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
    bool pad[2];
    const Matrix got = download(dz, &pad[0]);
    EXPECT_TRUE(meets_contract(got.v, dz64.v, dz_fw.v, "dZ = R(θ)ᵀ dQKV"));
    EXPECT_EQ(download(d_dy, &pad[1]).v, got.v) << "in place: same bits";
    const std::vector<float> z1 = zdz.download<float>();
    EXPECT_TRUE(meets_contract(std::vector<double>(z1.begin(), z1.end()), zdz64, zdz_fw, "zdz"));
    EXPECT_EQ(zdz2.download<float>(), z1);
    for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
  }
}

}  // namespace
}  // namespace coda::ops
