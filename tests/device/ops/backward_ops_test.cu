// SPDX-License-Identifier: BSD-3-Clause
// The backward ops against the float64 *standard* backward (reference/llama.hpp: separate gate/up
// halves, hand-derived gradients checked against finite differences in the host tests), under
// the numerics contract (docs/numerics.md); the framework model is PyTorch's bf16 autograd. Ragged
// and Llama-1B widths, M = 1 … 16383, fresh seeds, poisoned outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "coda/ops/linear_bias_gelu.hpp"
#include "coda/ops/linear_cross_entropy.hpp"
#include "coda/ops/linear_rmsnorm_bwd.hpp"
#include "coda/ops/linear_swiglu_bwd.hpp"
#include "coda/ops/norm_stats.hpp"
#include "coda/ops/qknorm_rope_bwd.hpp"
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
using testing::meets_contract_f32;
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

// dY = dOut · W_down → dZ (interleaved), Y recomputed, zdz = Σ z·dz per row; K = 1 (hidden 1) and
// F % 8 ≠ 0; under the op's own kernel choice and both forced configs (kernel_choices).
TEST(BackwardOps, SwiGluBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.SwiGluBackwardAgainstStandard"));
  struct Shape { int m, hidden, ffn; };
  const Shape shapes[] = {{1, 520, 260},    {199, 2048, 8192}, {1000, 776, 1000},
                          {16383, 264, 520}, {130, 1, 77}};
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
    // Cooperative runs with its epilogue load stages capped (gemm/kernel.hpp).
    for (const OpOptions& options : kernel_choices(OpKey::kLinearSwigluBwd, s.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceMatrix dz = output(s.m, 2 * s.ffn), y = output(s.m, s.ffn);
      DeviceBuffer zdz(s.m * 4), ws(linear_swiglu_bwd_workspace_bytes(s.m, s.ffn));
      zdz.poison();
      ws.poison();
      linear_swiglu_bwd(dz.view(), y.view(), vector_view(zdz, s.m, DType::kF32), d_dout.view(),
                        d_w.view(), d_z.view(), ws.get(), linear_swiglu_bwd_workspace_bytes(s.m, s.ffn),
                        nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());

      bool pad[2];
      EXPECT_TRUE(meets_contract(download(dz, &pad[0]).v, interleave(dg64, du64).v,
                                 interleave(dg_fw, du_fw).v, "dZ"));
      EXPECT_TRUE(meets_contract(download(y, &pad[1]).v, y64.v, y_fw.v, "Y recomputed"));
      const std::vector<float> got = zdz.download<float>();
      EXPECT_TRUE(meets_contract_f32(std::vector<double>(got.begin(), got.end()), zdz64, zdz_fw, "zdz"));
      for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
    }
  }
}

// dPre = (dOut · W_down) ⊙ GELU_tanh'(Pre) and ∂b = Σ_m dPre (linear_bias_gelu_bwd) against the
// float64 standard (reference/epilogue.hpp: the tanh form's derivative, finite-difference-checked
// in the host tests); the framework is PyTorch's bf16 autograd of F.linear(F.gelu(Pre,
// approximate="tanh"), W_down): dY = dOut · W_down rounded to bf16, GeluBackward in fp32 rounded to
// bf16, and ∂b its bf16 dPre summed (PyTorch's grad.sum(0), taken before its final rounding to bf16:
// the stricter bound). Pre rows of scale 1, 1e-20 (GELU' = 1/2), 1e-3 and 30 (saturated: 0 or 1);
// K = 1 (hidden 1) and N % 8 ≠ 0; the same ∂b bits on a second run; under the op's own kernel
// choice and both forced configs (kernel_choices).
TEST(BackwardOps, BiasGeluBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.BiasGeluBackwardAgainstStandard"));
  struct Shape { int m, hidden, n; };
  const Shape shapes[] = {{1, 520, 776},     {199, 768, 3072}, {1000, 776, 1000},
                          {16383, 264, 520}, {130, 1, 77}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " hidden " + std::to_string(s.hidden) + " n " +
                 std::to_string(s.n));
    const Matrix d_out = random_bf16(s.m, s.hidden, rng, 1.0);
    const Matrix w_down = random_bf16(s.hidden, s.n, rng, 1.0 / std::sqrt(double(s.hidden)));
    const Matrix pre = scale_rows(random_bf16(s.m, s.n, rng, 2.0), row_scales(s.m, true, 30.0));
    const Matrix w_t = ref::transpose(w_down);  // linear64(x, w) is x · wᵀ

    const Matrix dp64 = ref::gelu_tanh_backward(pre, linear64(d_out, w_t));
    const Matrix dp_fw = ref::round_to_bf16(ref::gelu_tanh_backward(pre, linear_framework(d_out, w_t)));
    std::vector<double> db64(s.n, 0.0), db_fw(s.n, 0.0);
    for (int m = 0; m < s.m; ++m)
      for (int n = 0; n < s.n; ++n) db64[n] += dp64(m, n), db_fw[n] += dp_fw(m, n);

    DeviceMatrix d_dout = upload(d_out), d_w = upload(w_down), d_pre = upload(pre);
    const std::size_t ws_bytes = linear_bias_gelu_bwd_workspace_bytes(s.m, s.n);
    for (const OpOptions& options : kernel_choices(OpKey::kLinearBiasGeluBwd, s.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceMatrix dp = output(s.m, s.n);
      DeviceBuffer db(s.n * 4), db_again(s.n * 4), ws(ws_bytes);
      for (DeviceBuffer* b : {&db, &db_again, &ws}) b->poison();
      for (DeviceBuffer* b : {&db, &db_again})
        linear_bias_gelu_bwd(dp.view(), vector_view(*b, s.n, DType::kF32), d_dout.view(), d_w.view(),
                             d_pre.view(), ws.get(), ws_bytes, nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());

      bool pad = false;
      EXPECT_TRUE(meets_contract(download(dp, &pad).v, dp64.v, dp_fw.v, "dPre"));
      EXPECT_TRUE(pad) << "row padding written";
      const std::vector<float> got = db.download<float>();
      EXPECT_TRUE(meets_contract_f32(std::vector<double>(got.begin(), got.end()), db64, db_fw, "∂b"));
      EXPECT_EQ(db_again.download<float>(), got) << "∂b deterministic across runs";
    }
  }
}

// G = α · dZ · W → dX = r · (G ⊙ w − u · c) (fresh and added into an incoming gradient), N, dw;
// rows of X from 1e-3 to 1e3 in scale (the contract per row scale), c from the exact ⟨z, dz⟩ as
// the consumer's backward gives it; K = 1 (n 1) and D % 8 ≠ 0; under the op's own kernel choice
// and both forced configs (kernel_choices).
TEST(BackwardOps, RmsNormBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.RmsNormBackwardAgainstStandard"));
  struct Shape { int m, d, n; float alpha; };
  const Shape shapes[] = {{1, 520, 776, 1.0f},     {199, 2048, 3072, 0.5f}, {1000, 776, 1000, 1.0f},
                          {16383, 264, 520, 2.0f}, {130, 261, 1, 1.0f}};
  const double eps = 1e-5;
  for (const Shape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " d " + std::to_string(s.d) + " n " + std::to_string(s.n));
    std::vector<double> scales(s.m);  // RMS from ~1e-3 to ~1e3
    for (int m = 0; m < s.m; ++m) scales[m] = std::pow(10.0, double(m % 7) - 3.0);
    const Matrix x = scale_rows(random_bf16(s.m, s.d, rng, 1.0), scales);
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
    DeviceBuffer d_gamma = upload_bf16_vector(w), d_zdz(s.m * 4), alpha(4);
    d_zdz.upload(zdz);
    alpha.upload(std::vector<float>{s.alpha});
    DeviceBuffer partials(norm_stats_floats(s.m, s.d) * 4);
    partials.poison();
    RmsNormSaved saved{d_x.view(), {partials.get<float>(), norm_stats_floats(s.m, s.d)},
                       vector_view(d_gamma, s.d, DType::kBF16), float(eps)};
    rms_norm_stats(h.view(), saved.stats, d_x.view(), saved.weight);  // the forward's statistics
    const std::size_t ws_bytes = linear_rmsnorm_bwd_workspace_bytes(s.m, s.d);
    const TensorView zdz_view = vector_view(d_zdz, s.m, DType::kF32);
    for (const OpOptions& options : kernel_choices(OpKey::kLinearRmsnormBwd, s.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceMatrix dx_fresh = output(s.m, s.d), dx_acc = upload(dx_in), n_out = output(s.m, s.d);
      DeviceBuffer dw(s.d * 4), ws(ws_bytes);
      ws.poison();
      dw.poison();
      const TensorView dw_view = vector_view(dw, s.d, DType::kF32);
      linear_rmsnorm_bwd(dx_fresh.view(), false, n_out.view(), dw_view, d_dz.view(), d_w.view(), saved,
                         zdz_view, ws.get(), ws_bytes, vector_view(alpha, 1, DType::kF32), nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      const std::vector<float> dw_fresh = dw.download<float>();
      linear_rmsnorm_bwd(dx_acc.view(), true, n_out.view(), dw_view, d_dz.view(), d_w.view(), saved,
                         zdz_view, ws.get(), ws_bytes, vector_view(alpha, 1, DType::kF32), nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());

      bool pad[3];
      auto contract = [&](const Matrix& got, const Matrix& r64, const Matrix& fw, const char* what) {
        return meets_contract_by_row_scale(got.v, r64.v, fw.v, scales, what);
      };
      EXPECT_TRUE(contract(download(dx_fresh, &pad[0]), dx64, ref::round_to_bf16(dx_fw), "dX"));
      EXPECT_TRUE(contract(download(dx_acc, &pad[1]), ref::add(dx_in, dx64),
                           ref::round_to_bf16(ref::add(dx_in, ref::round_to_bf16(dx_fw))), "dX_in + dX (reduce-add)"));
      EXPECT_TRUE(contract(download(n_out, &pad[2]), n64, n_fw, "N = u ⊙ w"));
      EXPECT_TRUE(meets_contract(std::vector<double>(dw_fresh.begin(), dw_fresh.end()), dw64, dw_fw, "dw"));
      EXPECT_EQ(dw.download<float>(), dw_fresh) << "dw deterministic across runs";
      for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
    }
  }
}

// dZ = R(θ)ᵀ dQKV on the Q/K pairs (V through), zdz = Σ QKV · dQKV; in place and out of place; GQA,
// hd 64 and 128 (and 6: N % 8 ≠ 0), positions past 100k with resets.
TEST(BackwardOps, RopeBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.RopeBackwardAgainstStandard"));
  struct Shape { int m, q_heads, kv_heads, hd; };
  const Shape shapes[] = {{1, 4, 2, 128},     {199, 32, 8, 64}, {1000, 5, 1, 64},
                          {16383, 2, 1, 128}, {130, 3, 1, 6}};
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
    // The reference's own frequencies; the library's table only as the kernel's input.
    const std::vector<double> turns = rope_turns(s.q_heads, s.kv_heads, s.hd, 500000.0);
    const std::vector<float> table = rope_frequencies(s.q_heads, s.kv_heads, s.hd, 500000.0);
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
    EXPECT_TRUE(meets_contract_f32(std::vector<double>(z1.begin(), z1.end()), zdz64, zdz_fw, "zdz"));
    EXPECT_EQ(zdz2.download<float>(), z1);
    for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
  }
}

// QK-norm + RoPE backward (qknorm_rope_bwd) against the float64 standard (Qwen3: per-head
// RMSNorm, rotate-half RoPE; reference/llama.hpp, finite-difference-checked in the host tests):
// dPre, ⟨pre, dpre⟩ per row, ∂γ_q and ∂γ_k; hd 64 and 128, GQA 32/8 and 64/8 (70B), M = 1 …
// 16383, positions past 100k with resets, heads of scale 3e-3 … 30 (dPre's contract per head); in
// place, and ∂γ accumulated.
TEST(BackwardOps, QkNormRopeBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.QkNormRopeBackwardAgainstStandard"));
  struct Shape { int m, q_heads, kv_heads, hd; };
  const Shape shapes[] = {{1, 4, 2, 128}, {199, 32, 8, 64}, {1000, 5, 1, 64}, {16383, 2, 1, 128},
                          {33, 64, 8, 128}};
  const double eps = 1e-6;
  for (const Shape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " hd " + std::to_string(s.hd) + " heads " +
                 std::to_string(s.q_heads) + "/" + std::to_string(s.kv_heads));
    const int rotated = s.q_heads + s.kv_heads, n = (s.q_heads + 2 * s.kv_heads) * s.hd;
    // Standard column order: the projection before the norm (heads of very different scale) and
    // the gradient of the rotated output.
    Matrix pre_std = random_bf16(s.m, n, rng, 1.0);
    for (int r = 0; r < s.m; ++r)
      for (int c = 0; c < n; ++c)
        pre_std(r, c) = ref::round_to_bf16(pre_std(r, c) * 3.0 * std::pow(10.0, double((c / s.hd) % 5) - 3.0));
    const Matrix dy_std = random_bf16(s.m, n, rng, 1.0);
    const std::vector<double> gq = random_norm_weight(s.hd, rng), gk = random_norm_weight(s.hd, rng);
    std::vector<std::int64_t> pos(s.m), neg(s.m);
    std::uniform_int_distribution<std::int64_t> start(100000, 1000000);
    for (int m = 0, p = int(start(rng)); m < s.m; ++m, ++p) {
      if (m % 300 == 299) p = 0;
      pos[m] = p, neg[m] = -p;
    }
    const std::vector<double> inv = ref::rope_inverse_frequencies(s.hd, 1000000.0);

    // float64: dn = R(−θ) dy, then the per-head RMSNorm backward.
    Matrix dx64;
    std::vector<double> dgq64, dgk64;
    ref::qk_norm_backward(pre_std, s.q_heads, s.kv_heads, s.hd, gq, gk, eps,
                          ref::rope_rotate_half(dy_std, neg, inv, rotated, s.hd), &dx64, &dgq64, &dgk64);
    // PyTorch's bf16 autograd: the RoPE backward with bf16 cos/sin, each product rounded; then
    // Qwen3RMSNorm's `γ * x̂.to(bf16)`: dx̂ = bf16(dn·γ), ∂γ = bf16(Σ bf16(dn·bf16(x̂))), and the
    // fp32 normalisation backward rounded to bf16.
    auto r16 = [](double v) { return double(ref::round_to_bf16(float(v))); };
    Matrix dn_fw = dy_std;
    const int half = s.hd / 2;
    for (int m = 0; m < s.m; ++m)
      for (int h = 0; h < rotated; ++h)
        for (int i = 0; i < half; ++i) {
          const double theta = double(pos[m]) * inv[i], c = r16(std::cos(theta)), sn = r16(std::sin(theta));
          const int a = h * s.hd + i, b = a + half;
          dn_fw(m, a) = r16(r16(dy_std(m, a) * c) + r16(dy_std(m, b) * sn));
          dn_fw(m, b) = r16(r16(dy_std(m, b) * c) - r16(dy_std(m, a) * sn));
        }
    Matrix dx_fw = dn_fw;
    std::vector<double> dgq_fw(s.hd, 0.0), dgk_fw(s.hd, 0.0);
    const std::vector<double> ones(s.hd, 1.0);
    Matrix head(1, s.hd), dhat(1, s.hd), dhead;
    std::vector<double> unused;
    for (int m = 0; m < s.m; ++m)
      for (int h = 0; h < rotated; ++h) {
        const std::vector<double>& g = h < s.q_heads ? gq : gk;
        std::vector<double>& dg = h < s.q_heads ? dgq_fw : dgk_fw;
        for (int i = 0; i < s.hd; ++i) head(0, i) = pre_std(m, h * s.hd + i);
        const double r = ref::rstd_of(head, eps)[0];
        for (int i = 0; i < s.hd; ++i) {
          const double dn = dn_fw(m, h * s.hd + i);
          dhat(0, i) = r16(dn * g[i]);
          dg[i] += r16(dn * r16(head(0, i) * r));
        }
        ref::rms_norm_backward(head, ones, eps, dhat, &dhead, &unused);
        for (int i = 0; i < s.hd; ++i) dx_fw(m, h * s.hd + i) = r16(dhead(0, i));
      }
    for (double& v : dgq_fw) v = r16(v);
    for (double& v : dgk_fw) v = r16(v);
    std::vector<double> zdz64(s.m, 0.0), zdz_fw(s.m, 0.0);
    for (int m = 0; m < s.m; ++m) {
      float acc = 0.0f;
      for (int k = 0; k < n; ++k) zdz64[m] += pre_std(m, k) * dx64(m, k), acc += float(pre_std(m, k) * dx_fw(m, k));
      zdz_fw[m] = acc;
    }

    // Our layout: adjacent-pair order within the Q/K heads, γ permuted alike.
    std::vector<std::int64_t> cols = rope_interleave_rows(rotated, s.hd);
    for (int c = rotated * s.hd; c < n; ++c) cols.push_back(c);
    const std::vector<std::int64_t> head_cols = rope_interleave_rows(1, s.hd);
    std::vector<double> gq_perm(s.hd), gk_perm(s.hd), dgq64_perm(s.hd), dgk64_perm(s.hd),
        dgq_fw_perm(s.hd), dgk_fw_perm(s.hd);
    for (int i = 0; i < s.hd; ++i) {
      const std::int64_t j = head_cols[i];
      gq_perm[i] = gq[j], gk_perm[i] = gk[j];
      dgq64_perm[i] = dgq64[j], dgk64_perm[i] = dgk64[j];
      dgq_fw_perm[i] = dgq_fw[j], dgk_fw_perm[i] = dgk_fw[j];
    }
    // The library's table only as the kernel's input (the reference took its own frequencies).
    const std::vector<float> table = rope_frequencies(s.q_heads, s.kv_heads, s.hd, 1000000.0);

    DeviceMatrix d_pre = upload(ref::permute_cols(pre_std, cols)), d_dy = upload(ref::permute_cols(dy_std, cols)),
                 dpre = output(s.m, n);
    DeviceBuffer d_gq = upload_bf16_vector(gq_perm), d_gk = upload_bf16_vector(gk_perm), zdz(s.m * 4),
                 zdz2(s.m * 4), dgq(s.hd * 4), dgk(s.hd * 4), d_pos(s.m * 4), d_freq(table.size() * 4);
    for (DeviceBuffer* b : {&zdz, &zdz2, &dgq, &dgk}) b->poison();
    d_pos.upload(std::vector<std::int32_t>(pos.begin(), pos.end()));
    d_freq.upload(table);
    const std::size_t ws_bytes = qknorm_rope_bwd_workspace_bytes(s.m, s.hd);
    DeviceBuffer ws(ws_bytes);
    ws.poison();
    const QkNorm qk{vector_view(d_gq, s.hd, DType::kBF16), vector_view(d_gk, s.hd, DType::kBF16),
                    s.q_heads, s.kv_heads, float(eps)};
    const TensorView positions = vector_view(d_pos, s.m, DType::kI32),
                     frequencies = vector_view(d_freq, n, DType::kF32);
    QkNormGrads grads{vector_view(dgq, s.hd, DType::kF32), vector_view(dgk, s.hd, DType::kF32), false};
    qknorm_rope_bwd(dpre.view(), vector_view(zdz, s.m, DType::kF32), grads, d_pre.view(), d_dy.view(),
                    positions, frequencies, qk, ws.get(), ws_bytes);
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
    const std::vector<float> dgq1 = dgq.download<float>(), dgk1 = dgk.download<float>();
    // In place (dPre = dQKV), ∂γ added into the first call's.
    grads.accumulate = true;
    qknorm_rope_bwd(d_dy.view(), vector_view(zdz2, s.m, DType::kF32), grads, d_pre.view(), d_dy.view(),
                    positions, frequencies, qk, ws.get(), ws_bytes);
    CODA_CHECK_CUDA(cudaDeviceSynchronize());

    bool pad[2];
    const Matrix got = download(dpre, &pad[0]);
    // Per head (rows all of scale 1): dPre scales as 1 / the head's scale. Our column order
    // permutes within heads only.
    EXPECT_TRUE(meets_contract_by_row_scale_and_head(got.v, ref::permute_cols(dx64, cols).v,
                                                     ref::permute_cols(dx_fw, cols).v,
                                                     std::vector<double>(s.m, 1.0), s.hd,
                                                     "dPre = QkNorm'ᵀ R(θ)ᵀ dQKV"));
    EXPECT_EQ(download(d_dy, &pad[1]).v, got.v) << "in place: same bits";
    for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
    const std::vector<float> z1 = zdz.download<float>();
    EXPECT_TRUE(meets_contract_f32(std::vector<double>(z1.begin(), z1.end()), zdz64, zdz_fw, "zdz"));
    EXPECT_EQ(zdz2.download<float>(), z1);
    EXPECT_TRUE(meets_contract(std::vector<double>(dgq1.begin(), dgq1.end()), dgq64_perm, dgq_fw_perm, "∂γ_q"));
    EXPECT_TRUE(meets_contract(std::vector<double>(dgk1.begin(), dgk1.end()), dgk64_perm, dgk_fw_perm, "∂γ_k"));
    std::vector<float> twice_q(dgq1), twice_k(dgk1);
    for (float& v : twice_q) v += v;
    for (float& v : twice_k) v += v;
    EXPECT_EQ(dgq.download<float>(), twice_q) << "accumulate: the same sum added (deterministic)";
    EXPECT_EQ(dgk.download<float>(), twice_k);
  }
}

// LM head + cross-entropy forward and backward in chunks of rows: loss, lse, dX, dW (fp32, also
// accumulated), ⟨z, dz⟩; ignored rows, int32/int64 targets, z-loss, soft-cap, the three reductions
// (none with random per-token upstream gradients), several chunks, M = 1 (the wgrad's K = 1),
// H % 8 ≠ 0 and rows of RMS 1e-20 … 1e17 (logits up to ~1e18: each row's lse, loss and ⟨z, dz⟩
// held to its own scale); under the op's own kernel choice and both forced configs.
TEST(BackwardOps, CrossEntropyForwardBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.CrossEntropyForwardBackwardAgainstStandard"));
  struct Case {
    int m, hidden, vocab;
    bool int64;
    float z_loss, softcap;
    Reduction reduction;
    float alpha;
    int chunk;
    bool extreme;  // rows of X of RMS 1e-20 … 1e17
  };
  const Case cases[] = {{199, 520, 32777, false, 0.0f, 0.0f, Reduction::kMean, 1.0f, 0, false},
                        {300, 264, 4099, true, 1e-4f, 3.0f, Reduction::kSum, 0.5f, 128, false},
                        {1000, 776, 4099, false, 0.0f, 0.0f, Reduction::kNone, 0.0f, 256, true},
                        {1, 260, 4099, true, 0.0f, 0.0f, Reduction::kMean, 1.0f, 0, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE("m " + std::to_string(c.m) + " V " + std::to_string(c.vocab) + " chunk " + std::to_string(c.chunk));
    const std::vector<double> scales = row_scales(c.m, c.extreme, 1e17);
    const Matrix x = scale_rows(random_bf16(c.m, c.hidden, rng, 1.0), scales);
    const Matrix w = random_bf16(c.vocab, c.hidden, rng, 2.0 / std::sqrt(double(c.hidden)));
    std::vector<std::int64_t> targets(c.m);
    std::uniform_int_distribution<std::int64_t> col(0, c.vocab - 1);
    for (int m = 0; m < c.m; ++m) targets[m] = m % 7 == 3 ? -100 : col(rng);
    // Per-row outputs; with extreme rows, each class of rows of one scale against its own largest
    // value (dX's rows are all of order 1, dW is dominated by the largest rows on both sides).
    auto rows_meet = [&](const std::vector<double>& out, const std::vector<double>& ref,
                         const std::vector<double>& framework, const char* what) {
      return c.extreme ? meets_contract_by_row_scale(out, ref, framework, scales, what)
                       : meets_contract(out, ref, framework, what);
    };
    std::vector<float> alpha_rows(c.m);
    for (float& a : alpha_rows) a = float(std::uniform_real_distribution<double>(-1.0, 2.0)(rng));
    int counted = 0;
    for (auto t : targets) counted += t != -100;

    // Standard (float64 from exact logits; the framework from bf16 logits, dlogits cast to bf16).
    auto grads = [&](const Matrix& raw, bool framework, std::vector<double>* lse, std::vector<double>* loss,
                     std::vector<double>* zdz) {
      Matrix d(c.m, c.vocab);
      lse->assign(c.m, 0.0), loss->assign(c.m, 0.0), zdz->assign(c.m, 0.0);
      for (int m = 0; m < c.m; ++m) {
        std::vector<double> y(c.vocab);
        double mx = -INFINITY, sum = 0.0;
        for (int v = 0; v < c.vocab; ++v) {
          y[v] = c.softcap > 0 ? c.softcap * std::tanh(raw(m, v) / c.softcap) : raw(m, v);
          if (framework) y[v] = ref::round_to_bf16(float(y[v]));
          mx = std::max(mx, y[v]);
        }
        for (int v = 0; v < c.vocab; ++v) sum += std::exp(y[v] - mx);
        const double l = mx + std::log(sum);
        (*lse)[m] = l;
        const bool ignored = targets[m] == -100;
        if (!ignored) (*loss)[m] = l - y[targets[m]] + c.z_loss * l * l;
        const double a = ignored ? 0.0
                         : c.reduction == Reduction::kNone ? alpha_rows[m]
                         : c.reduction == Reduction::kSum ? c.alpha : c.alpha / counted;
        for (int v = 0; v < c.vocab; ++v) {
          double g = std::exp(y[v] - l) * (1 + 2 * c.z_loss * l) - (v == targets[m] ? 1.0 : 0.0);
          if (c.softcap > 0) g *= 1 - (y[v] / c.softcap) * (y[v] / c.softcap);
          d(m, v) = framework ? ref::round_to_bf16(float(a * g)) : a * g;
          (*zdz)[m] += raw(m, v) * a * g;
        }
      }
      return d;
    };
    std::vector<double> lse64, loss64, zdz64, lse_fw, loss_fw, zdz_fw;
    const Matrix logits64 = linear64(x, w), logits_fw = linear_framework(x, w);
    const Matrix d64 = grads(logits64, false, &lse64, &loss64, &zdz64);
    const Matrix d_fw = grads(logits_fw, true, &lse_fw, &loss_fw, &zdz_fw);
    const Matrix dx64 = linear64(d64, ref::transpose(w));
    const Matrix dx_fw = linear_framework(d_fw, ref::transpose(w));
    const Matrix dw64 = linear64(ref::transpose(d64), ref::transpose(x));
    Matrix dw_fw(c.vocab, c.hidden);
    {
      const auto f = testing::gemm_cublas_f32(c.vocab, c.hidden, c.m, as_floats(ref::transpose(d_fw)),
                                              as_floats(ref::transpose(x)));
      dw_fw.v.assign(f.begin(), f.end());
    }

    DeviceMatrix d_x = upload(x), d_w = upload(w);
    DeviceBuffer d_targets(c.m * 8), alpha(c.m * 4), ones(c.m * 4);
    if (c.int64) d_targets.upload(targets);
    else d_targets.upload(std::vector<std::int32_t>(targets.begin(), targets.end()));
    const bool none = c.reduction == Reduction::kNone;
    alpha.upload(none ? alpha_rows : std::vector<float>{c.alpha});
    ones.upload(std::vector<float>(c.m, 1.0f));
    CrossEntropyOptions ce;
    ce.reduction = c.reduction;
    ce.z_loss = c.z_loss;
    ce.softcap = c.softcap;
    ce.chunk_rows = c.chunk;
    const std::size_t ws_bytes = linear_cross_entropy_fwd_bwd_workspace_bytes(c.m, c.vocab, c.chunk);
    const TensorView t_view = vector_view(d_targets, c.m, c.int64 ? DType::kI64 : DType::kI32);
    auto to_double = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
    for (const OpOptions& options : kernel_choices(OpKey::kLinearCrossEntropy, c.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceMatrix dx = output(c.m, c.hidden);
      DeviceBuffer loss(c.m * 4), lse(c.m * 4), zdz(c.m * 4), dw(std::size_t(c.vocab) * c.hidden * 4),
          ws(ws_bytes);
      for (DeviceBuffer* b : {&loss, &lse, &zdz, &dw, &ws}) b->poison();
      CrossEntropyGrads g{dx.view(), TensorView::matrix(dw.get(), DType::kF32, c.vocab, c.hidden),
                          false, vector_view(zdz, c.m, DType::kF32),
                          vector_view(alpha, none ? c.m : 1, DType::kF32)};
      const TensorView loss_view = vector_view(loss, none ? c.m : 1, DType::kF32);
      linear_cross_entropy_fwd_bwd(loss_view, vector_view(lse, c.m, DType::kF32), g, d_x.view(), d_w.view(),
                                   t_view, ce, ws.get(), ws_bytes, nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      const std::vector<float> dw1 = dw.download<float>();
      g.accumulate_dW = true;  // a second micro-batch: dW doubles
      linear_cross_entropy_fwd_bwd(loss_view, vector_view(lse, c.m, DType::kF32), g, d_x.view(), d_w.view(),
                                   t_view, ce, ws.get(), ws_bytes, nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());

      EXPECT_TRUE(rows_meet(to_double(lse.download<float>()), lse64, lse_fw, "lse"));
      const std::vector<double> losses = to_double(loss.download<float>());
      if (none) {
        EXPECT_TRUE(rows_meet(losses, loss64, loss_fw, "loss per row"));
      }
      bool pad = false;
      EXPECT_TRUE(meets_contract(download(dx, &pad).v, dx64.v, dx_fw.v, "dX"));
      EXPECT_TRUE(pad);
      EXPECT_TRUE(meets_contract(to_double(dw1), dw64.v, dw_fw.v, "dW"));
      const std::vector<float> dw2 = dw.download<float>();
      // Chunk by chunk onto dW: 2 · dW up to fp32 rounding of the running sums (~1e-7 relative).
      std::vector<double> twice(dw1.size()), slack(dw1.size());
      for (std::size_t i = 0; i < dw1.size(); ++i) twice[i] = 2.0 * dw1[i], slack[i] = twice[i] * (1 + 1e-6);
      EXPECT_TRUE(meets_contract(to_double(dw2), twice, slack, "dW accumulated = 2 · dW"));
      const std::vector<double> zdz_got = to_double(zdz.download<float>());
      EXPECT_TRUE(c.extreme ? rows_meet(zdz_got, zdz64, zdz_fw, "zdz")
                            : meets_contract_f32(zdz_got, zdz64, zdz_fw, "zdz"));
      if (!none) {
        // Sum and mean: against the per-token errors reduced (|Σ e| ≤ Σ |e|); and the rows
        // (reduction none, same inputs) meet the contract, the scalar being their reduction to
        // within fp32 summation error (n · 2⁻²⁴ · Σ|row|).
        const double k = c.reduction == Reduction::kMean ? 1.0 / counted : 1.0;
        EXPECT_TRUE(meets_reduced_contract(losses[0], loss64, loss_fw, k, "reduced loss"));
        DeviceBuffer rows(c.m * 4);
        rows.poison();
        CrossEntropyOptions per_row = ce;
        per_row.reduction = Reduction::kNone;
        g.alpha = vector_view(ones, c.m, DType::kF32);
        linear_cross_entropy_fwd_bwd(vector_view(rows, c.m, DType::kF32), vector_view(lse, c.m, DType::kF32),
                                     g, d_x.view(), d_w.view(), t_view, per_row, ws.get(), ws_bytes, nullptr,
                                     options);
        CODA_CHECK_CUDA(cudaDeviceSynchronize());
        const std::vector<double> got_rows = to_double(rows.download<float>());
        EXPECT_TRUE(rows_meet(got_rows, loss64, loss_fw, "loss per row"));
        double sum = 0.0, magnitude = 0.0;
        for (double r : got_rows) sum += r, magnitude += std::abs(r);
        EXPECT_NEAR(losses[0], sum * k, c.m * 0x1p-24 * magnitude * k) << "the scalar reduces the rows";
      }
    }
  }
}

}  // namespace
}  // namespace coda::ops
