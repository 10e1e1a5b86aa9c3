// SPDX-License-Identifier: BSD-3-Clause
// NaN and Inf through every op, forward and backward (issue 14, docs/numerics.md). One element of
// one input is made NaN (each activation and each weight in turn) or +Inf (each activation), and
// every output is held, element by element, to the float64 standard computation on the same
// inputs and to a run of the op on the clean inputs:
//   - where the standard's value is unchanged by the poison (the other rows, columns, heads), the
//     op's has the clean run's bits: finite and unchanged;
//   - where it changes, the op's is of the same kind: NaN, the same ±Inf, or finite. For an Inf
//     input only outputs the op computes as the standard does are held to that (the GEMM, the norm
//     statistics, the cross-entropy as PyTorch gives it); elsewhere finite vs not finite, because
//     which of NaN and ±Inf an Inf meeting a zero or another Inf becomes depends on the algebraic
//     form, and the fused ops compute rewrites of the standard one (the norm deferred past the
//     GEMM, c from ⟨z, dz⟩).
// The standard computations are reference/llama.hpp's float64 pieces and the formulas below, never
// the kernels' code. Small ragged shapes, fresh seeds; before a poisoned run the outputs are filled
// with a finite sentinel, so an element the op never writes cannot pass as NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "coda/gemm/gemm.hpp"
#include "coda/ops/linear_bias_gelu.hpp"
#include "coda/ops/linear_cross_entropy.hpp"
#include "coda/ops/linear_norm.hpp"
#include "coda/ops/linear_rmsnorm_bwd.hpp"
#include "coda/ops/linear_rope.hpp"
#include "coda/ops/linear_swiglu.hpp"
#include "coda/ops/linear_swiglu_bwd.hpp"
#include "coda/ops/norm_stats.hpp"
#include "coda/ops/qknorm_rope_bwd.hpp"
#include "coda/ops/rope_bwd.hpp"
#include "coda/ops/weights.hpp"
#include "device/device_buffer.hpp"
#include "device/device_matrix.hpp"
#include "device/ops/ops_test_support.hpp"
#include "reference/bf16.hpp"
#include "reference/llama.hpp"

namespace coda::ops {
namespace {

using testing::DeviceMatrix;
using testing::upload;

// M ragged against both tile heights (128, 256); N, K and the vocabulary not multiples of a tile.
constexpr int kM = 263, kK = 264, kN = 328, kFfn = 200, kVocab = 1000;
constexpr double kEps = 1e-5, kQkEps = 1e-6, kWeightStd = 0.06;
constexpr std::int64_t kIgnore = -100;

// --- inputs, outputs and an op's case -----------------------------------------------------------

enum class Role { kActivation, kWeight };

// One input as the standard model holds it (`run` converts layouts). Activations get a NaN and a
// +Inf site, weights a NaN site, each at a random element; also_row / also_col add a site there
// (the other coordinate random) that a random one may miss: a V row, a counted token.
struct InputSpec {
  const char* name;
  int rows, cols;
  Role role;
  double mean = 0.0, stddev = 1.0;
  int also_row = -1, also_col = -1;
};
using Inputs = std::vector<Matrix>;  // vectors are 1 × n

struct Output {
  std::string name;
  Matrix value;                  // per-row vectors are M × 1, scalars 1 × 1
  bool exact_under_inf = false;  // computed as the standard computes it: an Inf input too
};
using Outputs = std::vector<Output>;

struct OpCase {
  std::vector<InputSpec> inputs;
  // The op on the device, its outputs filled with `fill` bytes first.
  std::function<Outputs(const Inputs&, std::uint8_t fill)> run;
  // The float64 standard computation: the same outputs, in the same order and layout.
  std::function<Outputs(const Inputs&)> standard;
};

Matrix generate(const InputSpec& s, std::mt19937_64& rng) {
  Matrix x = random_bf16(s.rows, s.cols, rng, s.stddev);
  for (double& v : x.v) v = ref::round_to_bf16(float(v + s.mean));
  return x;
}

// --- device buffers -----------------------------------------------------------------------------

constexpr std::uint8_t kNanFill = 0xFF;       // clean runs: an element never written is NaN
constexpr std::uint8_t kSentinelFill = 0x7F;  // poisoned runs: bf16 0x7F7F, f32 0x7F7F7F7F
constexpr double kSentinel = 3.0e38;          // both fills are finite and at least this large

void fill_bytes(const DeviceBuffer& b, std::uint8_t byte) {
  CODA_CHECK_CUDA(cudaMemset(b.get(), byte, b.bytes()));
  CODA_CHECK_CUDA(cudaDeviceSynchronize());
}
DeviceMatrix out_bf16(int rows, int cols, std::uint8_t fill) {
  DeviceMatrix d = testing::output(rows, cols);
  fill_bytes(d.buffer, fill);
  return d;
}
DeviceBuffer out_f32(int n, std::uint8_t fill) {
  DeviceBuffer b(std::size_t(n) * 4);
  fill_bytes(b, fill);
  return b;
}
TensorView f32_view(const DeviceBuffer& b, int n) { return vector_view(b, n, DType::kF32); }
TensorView bf16_view(const DeviceBuffer& b, int n) { return vector_view(b, n, DType::kBF16); }

Matrix values(const DeviceMatrix& d) {
  CODA_CHECK_CUDA(cudaDeviceSynchronize());
  bool padding_untouched = false;  // the contract tests check padding; this one checks values
  return testing::download(d, &padding_untouched);
}
Matrix values(const DeviceBuffer& b, int rows, int cols) {
  CODA_CHECK_CUDA(cudaDeviceSynchronize());
  const std::vector<float> f = b.download<float>();
  Matrix x(rows, cols);
  for (std::size_t i = 0; i < x.v.size(); ++i) x.v[i] = f[i];
  return x;
}

// A RowNormStats buffer, and Σx² per row summed (in double) from the partials its producer wrote.
struct Stats {
  DeviceBuffer partials;
  RowNormStats stats;
  Stats(int m, int n, std::uint8_t fill)
      : partials(std::size_t(norm_stats_floats(m, n)) * 4),
        stats{partials.get<float>(), norm_stats_floats(m, n)} {
    fill_bytes(partials, fill);
  }
  Matrix row_sums(int m) const {
    const Matrix p = values(partials, 1, int(stats.capacity));
    Matrix s(m, 1);
    for (int r = 0; r < m; ++r)
      for (int t = 0; t < stats.layout.tiles; ++t) s.v[r] += p.v[t * stats.layout.padded + r];
    return s;
  }
};

// --- standard pieces ----------------------------------------------------------------------------

Matrix columns(const Matrix& x, int c0, int c1) {
  Matrix y(x.rows, c1 - c0);
  for (int r = 0; r < x.rows; ++r)
    for (int c = c0; c < c1; ++c) y(r, c - c0) = x(r, c);
  return y;
}
// Columns [a | b] interleaved: out[:, 2j] = a[:, j], out[:, 2j + 1] = b[:, j].
Matrix interleave(const Matrix& a, const Matrix& b) {
  Matrix out(a.rows, 2 * a.cols);
  for (int r = 0; r < a.rows; ++r)
    for (int j = 0; j < a.cols; ++j) out(r, 2 * j) = a(r, j), out(r, 2 * j + 1) = b(r, j);
  return out;
}
// Σ_k a[m, k] · b[m, k] per row, as an M × 1 column.
Matrix row_dot(const Matrix& a, const Matrix& b) {
  Matrix s(a.rows, 1);
  for (int r = 0; r < a.rows; ++r)
    for (int c = 0; c < a.cols; ++c) s.v[r] += a(r, c) * b(r, c);
  return s;
}
std::vector<double> permuted(const std::vector<double>& v, const std::vector<std::int64_t>& order) {
  std::vector<double> out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[order[i]];
  return out;
}
Matrix as_row(const std::vector<double>& v) {
  Matrix x(1, int(v.size()));
  x.v = v;
  return x;
}

// RoPE of a fused QKV projection [Q heads | K heads | V heads]: heads, random positions, and the
// layouts: the standard (rotate-half) one the references use, the adjacent-pair one of the ops.
struct Rope {
  int q_heads, kv_heads, hd;
  double theta;
  std::vector<std::int64_t> positions;

  int rotated() const { return q_heads + kv_heads; }
  int n() const { return (q_heads + 2 * kv_heads) * hd; }
  // Our column c is the standard column order()[c]; head_order() within one head (γ).
  std::vector<std::int64_t> order() const {
    std::vector<std::int64_t> c = rope_interleave_rows(rotated(), hd);
    for (int k = rotated() * hd; k < n(); ++k) c.push_back(k);
    return c;
  }
  std::vector<std::int64_t> head_order() const { return rope_interleave_rows(1, hd); }
  // Hugging Face's RoPE by +θ, or by −θ (R(θ)ᵀ, the backward), with inv_freq[i] = θ^(−2i / hd)
  // written here from its definition.
  Matrix rotate(const Matrix& x, bool transposed) const {
    std::vector<double> inv(hd / 2);
    for (int i = 0; i < hd / 2; ++i) inv[i] = std::pow(theta, -2.0 * i / hd);
    std::vector<std::int64_t> p = positions;
    if (transposed)
      for (std::int64_t& v : p) v = -v;
    return ref::rope_rotate_half(x, p, inv, rotated(), hd);
  }
  // The ops' arguments: int32 positions and the library's frequency table.
  DeviceBuffer device_positions() const {
    DeviceBuffer b(positions.size() * 4);
    b.upload(std::vector<std::int32_t>(positions.begin(), positions.end()));
    return b;
  }
  DeviceBuffer device_frequencies() const {
    const std::vector<float> table = rope_frequencies(q_heads, kv_heads, hd, theta);
    DeviceBuffer b(table.size() * 4);
    b.upload(table);
    return b;
  }
};

Rope make_rope(int q_heads, int kv_heads, int hd, std::mt19937_64& rng) {
  Rope r{q_heads, kv_heads, hd, 500000.0, std::vector<std::int64_t>(kM)};
  std::uniform_int_distribution<std::int64_t> position(0, 200000);
  for (std::int64_t& p : r.positions) p = position(rng);
  return r;
}

// --- the projection input: A, or RMSNorm(X) deferred -------------------------------------------

// The plain ops read A; their rmsnorm variants read X and its norm weight w: on the device
// H = X ⊙ w and X's Σx² from rms_norm_stats (the norm then applied in the op's epilogue), in the
// standard Hugging Face's RMSNorm(X). Either way the weights of the op follow at index weights().
std::vector<InputSpec> projection_inputs(bool rmsnorm) {
  if (!rmsnorm) return {{"A", kM, kK, Role::kActivation}};
  return {{"X", kM, kK, Role::kActivation}, {"w", 1, kK, Role::kWeight, 1.0, 0.2}};
}
int weights(bool rmsnorm) { return rmsnorm ? 2 : 1; }
Matrix standard_projection_input(const Inputs& in, bool rmsnorm) {
  return rmsnorm ? ref::rms_norm(in[0], in[1].v, kEps) : in[0];
}

struct ProjectionInput {
  DeviceMatrix h;  // A, or H
  Stats stats;     // X's, for the rmsnorm variants
};
ProjectionInput device_projection_input(const Inputs& in, bool rmsnorm) {
  ProjectionInput p{rmsnorm ? testing::output(kM, kK) : upload(in[0]), Stats(kM, kK, kNanFill)};
  if (rmsnorm) {
    const DeviceMatrix x = upload(in[0]);
    const DeviceBuffer w = upload_bf16_vector(in[1].v);
    rms_norm_stats(p.h.view(), p.stats.stats, x.view(), bf16_view(w, kK));
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
  }
  return p;
}

// --- the forward ops ----------------------------------------------------------------------------

OpCase gemm_case(std::mt19937_64&) {
  OpCase c;
  c.inputs = {{"A", kM, kK, Role::kActivation}, {"B", kN, kK, Role::kWeight, 0.0, kWeightStd}};
  c.run = [](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix a = upload(in[0]), b = upload(in[1]);
    const DeviceMatrix d = out_bf16(kM, kN, fill);
    const DeviceBuffer ws(gemm::workspace_bytes(d.view(), a.view(), b.view()));
    gemm::GemmOptions options;
    options.workspace = ws.get();
    options.workspace_bytes = ws.bytes();
    gemm::gemm(d.view(), a.view(), b.view(), options);
    return Outputs{{"D", values(d), true}};
  };
  c.standard = [](const Inputs& in) { return Outputs{{"D", ref::linear(in[0], in[1])}}; };
  return c;
}

// Σ_n x[m, n]² per row, as an M × 1 column.
Matrix sum_squares(const Matrix& x) { return row_dot(x, x); }

OpCase residual_rms_case(std::mt19937_64&) {
  OpCase c;
  c.inputs = {{"A", kM, kK, Role::kActivation},
              {"W", kN, kK, Role::kWeight, 0.0, kWeightStd},
              {"R", kM, kN, Role::kActivation},
              {"w", 1, kN, Role::kWeight, 1.0, 0.2}};
  c.run = [](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix a = upload(in[0]), w = upload(in[1]), r = upload(in[2]);
    const DeviceBuffer gamma = upload_bf16_vector(in[3].v);
    const DeviceMatrix x = out_bf16(kM, kN, fill), h = out_bf16(kM, kN, fill);
    Stats s(kM, kN, fill);
    linear_residual_rms(x.view(), h.view(), s.stats, a.view(), w.view(), r.view(),
                        bf16_view(gamma, kN));
    return Outputs{{"X", values(x), true}, {"H", values(h), true}, {"Σx²", s.row_sums(kM), true}};
  };
  c.standard = [](const Inputs& in) {
    const Matrix x = ref::add(ref::linear(in[0], in[1]), in[2]);
    return Outputs{{"X", x}, {"H", ref::mul_per_col(x, in[3].v)}, {"Σx²", sum_squares(x)}};
  };
  return c;
}

OpCase rms_norm_stats_case(std::mt19937_64&) {
  OpCase c;
  c.inputs = projection_inputs(true);
  c.run = [](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix x = upload(in[0]), h = out_bf16(kM, kK, fill);
    const DeviceBuffer w = upload_bf16_vector(in[1].v);
    Stats s(kM, kK, fill);
    rms_norm_stats(h.view(), s.stats, x.view(), bf16_view(w, kK));
    return Outputs{{"H", values(h), true}, {"Σx²", s.row_sums(kM), true}};
  };
  c.standard = [](const Inputs& in) {
    return Outputs{{"H", ref::mul_per_col(in[0], in[1].v)}, {"Σx²", sum_squares(in[0])}};
  };
  return c;
}

OpCase linear_rmsnorm_case(std::mt19937_64&) {
  OpCase c;
  c.inputs = projection_inputs(true);
  c.inputs.push_back({"W", kN, kK, Role::kWeight, 0.0, kWeightStd});
  c.run = [](const Inputs& in, std::uint8_t fill) {
    const ProjectionInput p = device_projection_input(in, true);
    const DeviceMatrix w = upload(in[2]), d = out_bf16(kM, kN, fill);
    linear_rmsnorm(d.view(), p.h.view(), w.view(), p.stats.stats, float(kEps));
    return Outputs{{"D", values(d)}};
  };
  c.standard = [](const Inputs& in) {
    return Outputs{{"D", ref::linear(standard_projection_input(in, true), in[2])}};
  };
  return c;
}

// linear_swiglu, linear_rmsnorm_swiglu: W_gate_up is [W_gate; W_up] (2F × K), interleaved by row
// for the op (gate_up_interleave_rows).
OpCase swiglu_case(bool rmsnorm) {
  OpCase c;
  c.inputs = projection_inputs(rmsnorm);
  c.inputs.push_back({"W_gate_up", 2 * kFfn, kK, Role::kWeight, 0.0, kWeightStd});
  c.run = [rmsnorm](const Inputs& in, std::uint8_t fill) {
    const ProjectionInput p = device_projection_input(in, rmsnorm);
    const DeviceMatrix w =
        upload(ref::permute_rows(in[weights(rmsnorm)], gate_up_interleave_rows(kFfn)));
    const DeviceMatrix z = out_bf16(kM, 2 * kFfn, fill), y = out_bf16(kM, kFfn, fill);
    if (rmsnorm)
      linear_rmsnorm_swiglu(z.view(), y.view(), p.h.view(), w.view(), p.stats.stats, float(kEps));
    else
      linear_swiglu(z.view(), y.view(), p.h.view(), w.view());
    return Outputs{{"Z", values(z), !rmsnorm}, {"Y", values(y)}};
  };
  c.standard = [rmsnorm](const Inputs& in) {
    const Matrix gu = ref::linear(standard_projection_input(in, rmsnorm), in[weights(rmsnorm)]);
    const Matrix g = columns(gu, 0, kFfn), u = columns(gu, kFfn, 2 * kFfn);
    return Outputs{{"Z", interleave(g, u)}, {"Y", ref::silu_mul(g, u)}};
  };
  return c;
}

// linear_bias_gelu, Pre saved or not: Pre = X·Wᵀ + b is computed as the standard computes it (exact
// under an Inf input too), Y = GELU_tanh(Pre) in another algebraic form (x · σ(2u)).
OpCase bias_gelu_case(bool save_pre) {
  OpCase c;
  c.inputs = {{"X", kM, kK, Role::kActivation},
              {"W", kN, kK, Role::kWeight, 0.0, kWeightStd},
              {"b", 1, kN, Role::kWeight, 0.0, 0.5}};
  c.run = [save_pre](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix x = upload(in[0]), w = upload(in[1]);
    const DeviceBuffer b = upload_bf16_vector(in[2].v);
    const DeviceMatrix y = out_bf16(kM, kN, fill), pre = out_bf16(kM, kN, fill);
    linear_bias_gelu(y.view(), save_pre ? pre.view() : TensorView{}, x.view(), w.view(),
                     bf16_view(b, kN));
    Outputs out{{"Y", values(y)}};
    if (save_pre) out.push_back({"Pre", values(pre), true});
    return out;
  };
  c.standard = [save_pre](const Inputs& in) {
    const Matrix pre = ref::add_per_col(ref::linear(in[0], in[1]), in[2].v);
    Outputs out{{"Y", ref::gelu_tanh(pre)}};
    if (save_pre) out.push_back({"Pre", pre});
    return out;
  };
  return c;
}

// linear_rope and linear_rmsnorm_rope, or with qk_norm linear_qknorm_rope and
// linear_rmsnorm_qknorm_rope (with save_pre also storing Pre: another program); W_qkv, γ_q and γ_k
// in the standard (rotate-half) order.
// A site in the last V row: V passes through untouched, so its NaN column must not spread to the
// other column of its pair.
OpCase rope_case(std::mt19937_64& rng, bool rmsnorm, bool qk_norm, bool save_pre = false) {
  const Rope r = make_rope(2, 1, rmsnorm ? 128 : 64, rng);
  const int wi = weights(rmsnorm);
  OpCase c;
  c.inputs = projection_inputs(rmsnorm);
  c.inputs.push_back({"W_qkv", r.n(), kK, Role::kWeight, 0.0, kWeightStd, r.n() - 1});
  if (qk_norm) {
    c.inputs.push_back({"γ_q", 1, r.hd, Role::kWeight, 1.0, 0.2});
    c.inputs.push_back({"γ_k", 1, r.hd, Role::kWeight, 1.0, 0.2});
  }
  c.run = [r, rmsnorm, qk_norm, save_pre, wi](const Inputs& in, std::uint8_t fill) {
    const ProjectionInput p = device_projection_input(in, rmsnorm);
    const DeviceMatrix w = upload(ref::permute_rows(in[wi], r.order()));
    const DeviceMatrix qkv = out_bf16(kM, r.n(), fill), pre = out_bf16(kM, r.n(), fill);
    const DeviceBuffer pos = r.device_positions(), freq = r.device_frequencies();
    const TensorView positions = vector_view(pos, kM, DType::kI32),
                     frequencies = f32_view(freq, r.n());
    if (!qk_norm) {
      if (rmsnorm)
        linear_rmsnorm_rope(qkv.view(), p.h.view(), w.view(), p.stats.stats, float(kEps), positions,
                            frequencies);
      else
        linear_rope(qkv.view(), p.h.view(), w.view(), positions, frequencies);
      return Outputs{{"QKV", values(qkv)}};
    }
    const DeviceBuffer gq = upload_bf16_vector(permuted(in[wi + 1].v, r.head_order())),
                       gk = upload_bf16_vector(permuted(in[wi + 2].v, r.head_order()));
    const QkNorm qk{bf16_view(gq, r.hd), bf16_view(gk, r.hd), r.q_heads, r.kv_heads, float(kQkEps)};
    const TensorView pre_out = save_pre ? pre.view() : TensorView{};
    if (rmsnorm)
      linear_rmsnorm_qknorm_rope(qkv.view(), pre_out, p.h.view(), w.view(), p.stats.stats,
                                 float(kEps), positions, frequencies, qk);
    else
      linear_qknorm_rope(qkv.view(), pre_out, p.h.view(), w.view(), positions, frequencies, qk);
    if (!save_pre) return Outputs{{"QKV", values(qkv)}};
    return Outputs{{"QKV", values(qkv)}, {"Pre", values(pre), !rmsnorm}};
  };
  c.standard = [r, rmsnorm, qk_norm, save_pre, wi](const Inputs& in) {
    const Matrix pre = ref::linear(standard_projection_input(in, rmsnorm), in[wi]);
    const Matrix normed =
        qk_norm ? ref::qk_norm(pre, r.q_heads, r.kv_heads, r.hd, in[wi + 1].v, in[wi + 2].v, kQkEps)
                : pre;
    Outputs out{{"QKV", ref::permute_cols(r.rotate(normed, false), r.order())}};
    if (save_pre) out.push_back({"Pre", ref::permute_cols(pre, r.order())});
    return out;
  };
  return c;
}

// --- cross-entropy
// --------------------------------------------------------------------------------

// Targets in [0, V), every 7th token (m % 7 == 3) ignored; the X site in row kM − 2 is counted.
std::vector<std::int64_t> make_targets(std::mt19937_64& rng) {
  std::vector<std::int64_t> t(kM);
  std::uniform_int_distribution<std::int64_t> column(0, kVocab - 1);
  for (int m = 0; m < kM; ++m) t[m] = m % 7 == 3 ? kIgnore : column(rng);
  return t;
}
std::vector<InputSpec> cross_entropy_inputs() {
  return {{"X", kM, kK, Role::kActivation, 0.0, 1.0, kM - 2},
          {"W", kVocab, kK, Role::kWeight, 0.0, 2.0 / std::sqrt(double(kK))}};
}
DeviceBuffer device_targets(const std::vector<std::int64_t>& targets) {
  DeviceBuffer b(targets.size() * 8);
  b.upload(targets);
  return b;
}

// Cross-entropy as PyTorch computes it, in float64: lse as torch.logsumexp (an infinite row max
// masked to 0: a +Inf logit gives +Inf), log_softmax shifted by the row max (a +Inf logit makes
// the whole row NaN: inf − inf), loss = −log_softmax[target], 0 for an ignored token (and not
// counted by the mean); grad = softmax − onehot, F.cross_entropy's gradient before the upstream
// scale. A NaN logit makes the row max NaN (std::max would drop it, hence the flag).
struct CrossEntropy {
  Matrix lse, loss, grad;  // M × 1, M × 1, M × V
  double sum = 0.0, mean = 0.0;
  int counted = 0;
};
CrossEntropy cross_entropy_standard(const Matrix& logits,
                                    const std::vector<std::int64_t>& targets) {
  CrossEntropy ce{Matrix(kM, 1), Matrix(kM, 1), Matrix(kM, kVocab)};
  std::vector<double> log_softmax(kVocab);
  for (int m = 0; m < kM; ++m) {
    double max = -INFINITY;
    bool nan = false;
    for (int v = 0; v < kVocab; ++v)
      nan |= std::isnan(logits(m, v)), max = std::max(max, logits(m, v));
    if (nan) max = NAN;
    const double masked = std::isinf(max) ? 0.0 : max;
    double sum = 0.0, shifted = 0.0;
    for (int v = 0; v < kVocab; ++v)
      sum += std::exp(logits(m, v) - masked), shifted += std::exp(logits(m, v) - max);
    ce.lse.v[m] = std::log(sum) + masked;
    for (int v = 0; v < kVocab; ++v) log_softmax[v] = logits(m, v) - max - std::log(shifted);
    const std::int64_t t = targets[m];
    if (t != kIgnore) ce.loss.v[m] = -log_softmax[t], ce.sum += ce.loss.v[m], ++ce.counted;
    for (int v = 0; v < kVocab; ++v)
      ce.grad(m, v) = std::exp(log_softmax[v]) - (v == t ? 1.0 : 0.0);
  }
  ce.mean = ce.sum / ce.counted;
  return ce;
}

// linear_cross_entropy, loss only, with each reduction (none, sum, mean).
OpCase cross_entropy_case(std::mt19937_64& rng) {
  const std::vector<std::int64_t> targets = make_targets(rng);
  OpCase c;
  c.inputs = cross_entropy_inputs();
  c.run = [targets](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix x = upload(in[0]), w = upload(in[1]);
    const DeviceBuffer t = device_targets(targets), lse = out_f32(kM, fill),
                       rows = out_f32(kM, fill), sum = out_f32(1, fill), mean = out_f32(1, fill);
    const std::size_t ws_bytes = linear_cross_entropy_workspace_bytes(kM, kVocab);
    const DeviceBuffer ws(ws_bytes);
    CrossEntropyOptions ce;
    for (const auto& [reduction, loss, n] :
         {std::tuple{Reduction::kNone, &rows, kM}, std::tuple{Reduction::kSum, &sum, 1},
          std::tuple{Reduction::kMean, &mean, 1}}) {
      ce.reduction = reduction;
      linear_cross_entropy(f32_view(*loss, n), f32_view(lse, kM), x.view(), w.view(),
                           vector_view(t, kM, DType::kI64), ce, ws.get(), ws_bytes);
    }
    return Outputs{{"lse", values(lse, kM, 1), true},
                   {"loss (none)", values(rows, kM, 1), true},
                   {"loss (sum)", values(sum, 1, 1), true},
                   {"loss (mean)", values(mean, 1, 1), true}};
  };
  c.standard = [targets](const Inputs& in) {
    const CrossEntropy ce = cross_entropy_standard(ref::linear(in[0], in[1]), targets);
    return Outputs{{"lse", ce.lse},
                   {"loss (none)", ce.loss},
                   {"loss (sum)", Matrix(1, 1, ce.sum)},
                   {"loss (mean)", Matrix(1, 1, ce.mean)}};
  };
  return c;
}

// linear_cross_entropy_fwd_bwd (upstream gradient 1), in chunks of 128 rows: the NaN of a row in
// a later chunk must reach dW, accumulated over the chunks.
OpCase cross_entropy_fwd_bwd_case(std::mt19937_64& rng, Reduction reduction) {
  const std::vector<std::int64_t> targets = make_targets(rng);
  const int loss_rows = reduction == Reduction::kNone ? kM : 1;
  OpCase c;
  c.inputs = cross_entropy_inputs();
  c.run = [targets, reduction, loss_rows](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix x = upload(in[0]), w = upload(in[1]), dx = out_bf16(kM, kK, fill);
    const DeviceBuffer t = device_targets(targets), loss = out_f32(loss_rows, fill),
                       lse = out_f32(kM, fill), zdz = out_f32(kM, fill),
                       dw = out_f32(kVocab * kK, fill);
    CrossEntropyOptions ce;
    ce.reduction = reduction;
    ce.chunk_rows = 128;
    const std::size_t ws_bytes = linear_cross_entropy_fwd_bwd_workspace_bytes(kM, kVocab, 128);
    const DeviceBuffer ws(ws_bytes);
    const CrossEntropyGrads grads{dx.view(),
                                  TensorView::matrix(dw.get(), DType::kF32, kVocab, kK),
                                  false,
                                  f32_view(zdz, kM),
                                  {}};
    linear_cross_entropy_fwd_bwd(f32_view(loss, loss_rows), f32_view(lse, kM), grads, x.view(),
                                 w.view(), vector_view(t, kM, DType::kI64), ce, ws.get(), ws_bytes);
    return Outputs{{"loss", values(loss, loss_rows, 1), true},
                   {"lse", values(lse, kM, 1), true},
                   {"dX", values(dx), true},
                   {"dW", values(dw, kVocab, kK), true},
                   {"zdz", values(zdz, kM, 1), true}};
  };
  c.standard = [targets, reduction](const Inputs& in) {
    const Matrix logits = ref::linear(in[0], in[1]);
    CrossEntropy ce = cross_entropy_standard(logits, targets);
    const bool mean = reduction == Reduction::kMean;
    for (int m = 0; m < kM; ++m)  // dlogits: 0 · grad for an ignored token (NaN stays NaN)
      for (int v = 0; v < kVocab; ++v)
        ce.grad(m, v) *= targets[m] == kIgnore ? 0.0 : mean ? 1.0 / ce.counted : 1.0;
    const Matrix loss = mean ? Matrix(1, 1, ce.mean) : ce.loss;
    return Outputs{{"loss", loss},
                   {"lse", ce.lse},
                   {"dX", ref::linear(ce.grad, ref::transpose(in[1]))},
                   {"dW", ref::linear(ref::transpose(ce.grad), ref::transpose(in[0]))},
                   {"zdz", row_dot(logits, ce.grad)}};
  };
  return c;
}

// --- the backward ops ---------------------------------------------------------------------------

// linear_swiglu_bwd: Z = [gate, up] interleaved by column, as the forward saved it.
OpCase swiglu_bwd_case(std::mt19937_64&) {
  OpCase c;
  c.inputs = {{"dOut", kM, kK, Role::kActivation},
              {"W_down", kK, kFfn, Role::kWeight, 0.0, kWeightStd},
              {"gate", kM, kFfn, Role::kActivation, 0.0, 2.0},
              {"up", kM, kFfn, Role::kActivation}};
  c.run = [](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix d_out = upload(in[0]), w = upload(in[1]),
                       z = upload(interleave(in[2], in[3]));
    const DeviceMatrix dz = out_bf16(kM, 2 * kFfn, fill), y = out_bf16(kM, kFfn, fill);
    const DeviceBuffer zdz = out_f32(kM, fill);
    const std::size_t ws_bytes = linear_swiglu_bwd_workspace_bytes(kM, kFfn);
    const DeviceBuffer ws(ws_bytes);
    linear_swiglu_bwd(dz.view(), y.view(), f32_view(zdz, kM), d_out.view(), w.view(), z.view(),
                      ws.get(), ws_bytes);
    return Outputs{{"dZ", values(dz)}, {"Y", values(y)}, {"zdz", values(zdz, kM, 1)}};
  };
  c.standard = [](const Inputs& in) {
    Matrix dg, du;
    ref::silu_mul_backward(in[2], in[3], ref::linear(in[0], ref::transpose(in[1])), &dg, &du);
    const Matrix dz = interleave(dg, du);
    return Outputs{{"dZ", dz},
                   {"Y", ref::silu_mul(in[2], in[3])},
                   {"zdz", row_dot(interleave(in[2], in[3]), dz)}};
  };
  return c;
}

// linear_bias_gelu_bwd: dPre = (dOut · W_down) ⊙ GELU_tanh'(Pre), ∂b = Σ_m dPre (the standard's
// derivative in the tanh form: NaN at Pre = ±Inf, as PyTorch's).
OpCase bias_gelu_bwd_case(std::mt19937_64&) {
  OpCase c;
  c.inputs = {{"dOut", kM, kK, Role::kActivation},
              {"W_down", kK, kN, Role::kWeight, 0.0, kWeightStd},
              {"Pre", kM, kN, Role::kActivation, 0.0, 2.0}};
  c.run = [](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix d_out = upload(in[0]), w = upload(in[1]), pre = upload(in[2]);
    const DeviceMatrix dpre = out_bf16(kM, kN, fill);
    const DeviceBuffer db = out_f32(kN, fill);
    const std::size_t ws_bytes = linear_bias_gelu_bwd_workspace_bytes(kM, kN);
    const DeviceBuffer ws(ws_bytes);
    linear_bias_gelu_bwd(dpre.view(), f32_view(db, kN), d_out.view(), w.view(), pre.view(),
                         ws.get(), ws_bytes);
    return Outputs{{"dPre", values(dpre)}, {"∂b", values(db, 1, kN)}};
  };
  c.standard = [](const Inputs& in) {
    const Matrix dpre = ref::gelu_tanh_backward(in[2], ref::linear(in[0], ref::transpose(in[1])));
    Matrix db(1, kN);
    for (int r = 0; r < kM; ++r)
      for (int n = 0; n < kN; ++n) db.v[n] += dpre(r, n);
    return Outputs{{"dPre", dpre}, {"∂b", db}};
  };
  return c;
}

// linear_rmsnorm_bwd for Z = RMSNorm(X) · Wᵀ: X's statistics from rms_norm_stats, and zdz =
// ⟨Z, dZ⟩ per row as the consumer's backward hands it on (from the float64 standard forward).
OpCase rmsnorm_bwd_case(std::mt19937_64&) {
  OpCase c;
  c.inputs = projection_inputs(true);
  c.inputs.push_back({"dZ", kM, kN, Role::kActivation});
  c.inputs.push_back({"W", kN, kK, Role::kWeight, 0.0, kWeightStd});
  c.run = [](const Inputs& in, std::uint8_t fill) {
    const ProjectionInput p = device_projection_input(in, true);
    const DeviceMatrix x = upload(in[0]), dz = upload(in[2]), w = upload(in[3]);
    const DeviceBuffer gamma = upload_bf16_vector(in[1].v);
    const Matrix zdz64 = row_dot(ref::linear(standard_projection_input(in, true), in[3]), in[2]);
    DeviceBuffer zdz(kM * 4);
    zdz.upload(std::vector<float>(zdz64.v.begin(), zdz64.v.end()));
    const DeviceMatrix dx = out_bf16(kM, kK, fill), n = out_bf16(kM, kK, fill);
    const DeviceBuffer dw = out_f32(kK, fill);
    const std::size_t ws_bytes = linear_rmsnorm_bwd_workspace_bytes(kM, kK);
    const DeviceBuffer ws(ws_bytes);
    const RmsNormSaved saved{x.view(), p.stats.stats, bf16_view(gamma, kK), float(kEps)};
    linear_rmsnorm_bwd(dx.view(), false, n.view(), f32_view(dw, kK), dz.view(), w.view(), saved,
                       f32_view(zdz, kM), ws.get(), ws_bytes);
    return Outputs{{"dX", values(dx)}, {"N", values(n)}, {"dw", values(dw, 1, kK)}};
  };
  c.standard = [](const Inputs& in) {
    Matrix dx;
    std::vector<double> dw;
    const Matrix g = ref::linear(in[2], ref::transpose(in[3]));  // the norm's output gradient
    ref::rms_norm_backward(in[0], in[1].v, kEps, g, &dx, &dw);
    return Outputs{{"dX", dx}, {"N", standard_projection_input(in, true)}, {"dw", as_row(dw)}};
  };
  return c;
}

// qknorm_rope_bwd: Pre and dQKV in the standard column order (permuted for the op), γ likewise.
OpCase qknorm_rope_bwd_case(std::mt19937_64& rng) {
  const Rope r = make_rope(2, 1, 64, rng);
  OpCase c;
  c.inputs = {{"Pre", kM, r.n(), Role::kActivation},
              {"dQKV", kM, r.n(), Role::kActivation},
              {"γ_q", 1, r.hd, Role::kWeight, 1.0, 0.2},
              {"γ_k", 1, r.hd, Role::kWeight, 1.0, 0.2}};
  c.run = [r](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix pre = upload(ref::permute_cols(in[0], r.order())),
                       dqkv = upload(ref::permute_cols(in[1], r.order()));
    const DeviceBuffer gq = upload_bf16_vector(permuted(in[2].v, r.head_order())),
                       gk = upload_bf16_vector(permuted(in[3].v, r.head_order()));
    const DeviceMatrix dpre = out_bf16(kM, r.n(), fill);
    const DeviceBuffer zdz = out_f32(kM, fill), dgq = out_f32(r.hd, fill),
                       dgk = out_f32(r.hd, fill);
    const DeviceBuffer pos = r.device_positions(), freq = r.device_frequencies();
    const std::size_t ws_bytes = qknorm_rope_bwd_workspace_bytes(kM, r.hd);
    const DeviceBuffer ws(ws_bytes);
    const QkNorm qk{bf16_view(gq, r.hd), bf16_view(gk, r.hd), r.q_heads, r.kv_heads, float(kQkEps)};
    qknorm_rope_bwd(dpre.view(), f32_view(zdz, kM),
                    {f32_view(dgq, r.hd), f32_view(dgk, r.hd), false}, pre.view(), dqkv.view(),
                    vector_view(pos, kM, DType::kI32), f32_view(freq, r.n()), qk, ws.get(),
                    ws_bytes);
    return Outputs{{"dPre", values(dpre)},
                   {"zdz", values(zdz, kM, 1)},
                   {"∂γ_q", values(dgq, 1, r.hd)},
                   {"∂γ_k", values(dgk, 1, r.hd)}};
  };
  c.standard = [r](const Inputs& in) {
    Matrix dpre;
    std::vector<double> dgq, dgk;
    ref::qk_norm_backward(in[0], r.q_heads, r.kv_heads, r.hd, in[2].v, in[3].v, kQkEps,
                          r.rotate(in[1], true), &dpre, &dgq, &dgk);
    return Outputs{{"dPre", ref::permute_cols(dpre, r.order())},
                   {"zdz", row_dot(in[0], dpre)},
                   {"∂γ_q", as_row(permuted(dgq, r.head_order()))},
                   {"∂γ_k", as_row(permuted(dgk, r.head_order()))}};
  };
  return c;
}

// rope_bwd: zdz = Σ QKV · dQKV as documented. A dQKV site in the last V column: V passes
// through, so its NaN must not spread to the other column of its pair.
OpCase rope_bwd_case(std::mt19937_64& rng) {
  const Rope r = make_rope(2, 1, 128, rng);
  OpCase c;
  c.inputs = {{"QKV", kM, r.n(), Role::kActivation},
              {"dQKV", kM, r.n(), Role::kActivation, 0.0, 1.0, -1, r.n() - 1}};
  c.run = [r](const Inputs& in, std::uint8_t fill) {
    const DeviceMatrix qkv = upload(ref::permute_cols(in[0], r.order())),
                       dqkv = upload(ref::permute_cols(in[1], r.order()));
    const DeviceMatrix dz = out_bf16(kM, r.n(), fill);
    const DeviceBuffer zdz = out_f32(kM, fill);
    const DeviceBuffer pos = r.device_positions(), freq = r.device_frequencies();
    rope_bwd(dz.view(), f32_view(zdz, kM), qkv.view(), dqkv.view(),
             vector_view(pos, kM, DType::kI32), f32_view(freq, r.n()));
    return Outputs{{"dZ", values(dz)}, {"zdz", values(zdz, kM, 1)}};
  };
  c.standard = [r](const Inputs& in) {
    return Outputs{{"dZ", ref::permute_cols(r.rotate(in[1], true), r.order())},
                   {"zdz", row_dot(in[0], in[1])}};
  };
  return c;
}

// --- the check ----------------------------------------------------------------------------------

enum class Kind { kFinite, kNaN, kPlusInf, kMinusInf };
Kind kind(double v) {
  if (std::isnan(v)) return Kind::kNaN;
  if (std::isinf(v)) return v > 0 ? Kind::kPlusInf : Kind::kMinusInf;
  return Kind::kFinite;
}
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// One output of a poisoned run (got) against the standard on the same inputs (want) and the
// clean runs of both (want_clean, got_clean). exact: the kinds must match, else finiteness.
::testing::AssertionResult as_the_standard(const Output& got, const Matrix& got_clean,
                                           const Matrix& want, const Matrix& want_clean,
                                           bool exact) {
  std::size_t wrong = 0;
  std::string shown;
  for (std::size_t i = 0; i < want.v.size(); ++i) {
    const double g = got.value.v[i], w = want.v[i];
    const char* problem = nullptr;
    if (std::isfinite(g) && std::abs(g) >= kSentinel)
      problem = "never written";
    else if (same_bits(w, want_clean.v[i]))
      problem = same_bits(g, got_clean.v[i]) ? nullptr : "changed, the standard's is not";
    else if (exact ? kind(g) != kind(w) : std::isfinite(g) != std::isfinite(w))
      problem = exact ? "not the standard's kind" : "not as finite as the standard's";
    if (problem != nullptr && wrong++ < 3)
      shown += "\n  (" + std::to_string(i / want.cols) + ", " + std::to_string(i % want.cols) +
               "): got " + std::to_string(g) + ", standard " + std::to_string(w) + ", clean run " +
               std::to_string(got_clean.v[i]) + ": " + problem;
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << got.name << ": " << wrong << " of " << want.v.size() << " elements" << shown;
}

bool all_finite(const Matrix& x) {
  for (double v : x.v)
    if (!std::isfinite(v) || std::abs(v) >= kSentinel) return false;
  return true;
}

struct Site {
  int input, row, col;
  double value;
};

std::vector<Site> sites_of(const std::vector<InputSpec>& specs, std::mt19937_64& rng) {
  std::vector<Site> sites;
  for (int i = 0; i < int(specs.size()); ++i) {
    const InputSpec& s = specs[i];
    std::uniform_int_distribution<int> row(0, s.rows - 1), col(0, s.cols - 1);
    const std::vector<double> values =
        s.role == Role::kActivation ? std::vector<double>{NAN, INFINITY} : std::vector<double>{NAN};
    const bool also = s.also_row >= 0 || s.also_col >= 0;
    for (int fixed = 0; fixed <= int(also); ++fixed)
      for (double v : values)
        sites.push_back({i, fixed && s.also_row >= 0 ? s.also_row : row(rng),
                         fixed && s.also_col >= 0 ? s.also_col : col(rng), v});
  }
  return sites;
}

struct CaseEntry {
  const char* name;
  OpCase (*make)(std::mt19937_64&);
};
void PrintTo(const CaseEntry& c, std::ostream* os) { *os << c.name; }

class NanPropagation : public ::testing::TestWithParam<CaseEntry> {};

TEST_P(NanPropagation, EveryOutputAsTheStandard) {
  const std::string test = std::string("NanPropagation.") + GetParam().name;
  std::mt19937_64 rng(testing::fresh_seed(test.c_str()));
  const OpCase op = GetParam().make(rng);
  Inputs clean;
  for (const InputSpec& s : op.inputs) clean.push_back(generate(s, rng));
  const Outputs got_clean = op.run(clean, kNanFill), want_clean = op.standard(clean);
  ASSERT_EQ(got_clean.size(), want_clean.size());
  for (std::size_t o = 0; o < got_clean.size(); ++o) {
    ASSERT_TRUE(all_finite(got_clean[o].value)) << got_clean[o].name << ": the clean run";
    ASSERT_TRUE(all_finite(want_clean[o].value)) << want_clean[o].name << ": the clean standard";
  }
  for (const Site& site : sites_of(op.inputs, rng)) {
    const InputSpec& spec = op.inputs[site.input];
    SCOPED_TRACE(std::string(spec.name) + "(" + std::to_string(site.row) + ", " +
                 std::to_string(site.col) + ") = " + (std::isnan(site.value) ? "NaN" : "+Inf"));
    Inputs poisoned = clean;
    poisoned[site.input](site.row, site.col) = site.value;
    const Outputs got = op.run(poisoned, kSentinelFill), want = op.standard(poisoned);
    bool reached = false;  // the test's own premise: the poison reaches some output
    for (std::size_t o = 0; o < got.size(); ++o) {
      reached = reached || !all_finite(want[o].value);
      const bool exact = std::isnan(site.value) || got[o].exact_under_inf;
      EXPECT_TRUE(
          as_the_standard(got[o], got_clean[o].value, want[o].value, want_clean[o].value, exact));
    }
    EXPECT_TRUE(reached) << "no output of the standard computation is affected";
  }
}

OpCase swiglu(std::mt19937_64&) { return swiglu_case(false); }
OpCase bias_gelu(std::mt19937_64&) { return bias_gelu_case(false); }
OpCase bias_gelu_save_pre(std::mt19937_64&) { return bias_gelu_case(true); }
OpCase rmsnorm_swiglu(std::mt19937_64&) { return swiglu_case(true); }
OpCase rope(std::mt19937_64& rng) { return rope_case(rng, false, false); }
OpCase rmsnorm_rope(std::mt19937_64& rng) { return rope_case(rng, true, false); }
OpCase qknorm_rope(std::mt19937_64& rng) { return rope_case(rng, false, true); }
OpCase qknorm_rope_save_pre(std::mt19937_64& rng) { return rope_case(rng, false, true, true); }
OpCase rmsnorm_qknorm_rope(std::mt19937_64& rng) { return rope_case(rng, true, true); }
OpCase rmsnorm_qknorm_rope_save_pre(std::mt19937_64& rng) {
  return rope_case(rng, true, true, true);
}
OpCase ce_fwd_bwd_mean(std::mt19937_64& rng) {
  return cross_entropy_fwd_bwd_case(rng, Reduction::kMean);
}
OpCase ce_fwd_bwd_none(std::mt19937_64& rng) {
  return cross_entropy_fwd_bwd_case(rng, Reduction::kNone);
}

const CaseEntry kCases[] = {{"gemm", gemm_case},
                            {"linear_residual_rms", residual_rms_case},
                            {"rms_norm_stats", rms_norm_stats_case},
                            {"linear_rmsnorm", linear_rmsnorm_case},
                            {"linear_swiglu", swiglu},
                            {"linear_rmsnorm_swiglu", rmsnorm_swiglu},
                            {"linear_rope", rope},
                            {"linear_rmsnorm_rope", rmsnorm_rope},
                            {"linear_qknorm_rope", qknorm_rope},
                            {"linear_qknorm_rope_save_pre", qknorm_rope_save_pre},
                            {"linear_rmsnorm_qknorm_rope", rmsnorm_qknorm_rope},
                            {"linear_rmsnorm_qknorm_rope_save_pre", rmsnorm_qknorm_rope_save_pre},
                            {"linear_cross_entropy", cross_entropy_case},
                            {"linear_cross_entropy_fwd_bwd_mean", ce_fwd_bwd_mean},
                            {"linear_cross_entropy_fwd_bwd_none", ce_fwd_bwd_none},
                            {"linear_swiglu_bwd", swiglu_bwd_case},
                            {"linear_rmsnorm_bwd", rmsnorm_bwd_case},
                            {"qknorm_rope_bwd", qknorm_rope_bwd_case},
                            {"rope_bwd", rope_bwd_case},
                            {"linear_bias_gelu", bias_gelu},
                            {"linear_bias_gelu_save_pre", bias_gelu_save_pre},
                            {"linear_bias_gelu_bwd", bias_gelu_bwd_case}};

// Every op key (one per program an op runs) has its case here, named after it.
TEST(NanPropagationTable, HasEveryOpKey) { EXPECT_EQ(op_keys_missing_from(kCases), ""); }

INSTANTIATE_TEST_SUITE_P(EveryOp, NanPropagation, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<CaseEntry>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace coda::ops
