// SPDX-License-Identifier: BSD-3-Clause
// Every public op is bitwise deterministic and CUDA-graph capturable (issue 14). For each op — the
// plain GEMM and every op of include/coda/ops — under each compiled config of its program (the
// plain GEMM: its own choice, both program configs and stream-K with its workspace): run it twice
// eagerly into freshly poisoned outputs and require the same bits in every output (statistics,
// lse, weight gradients and row sums included, every element written); then capture the same call
// on a non-default stream in cudaStreamCaptureModeGlobal (no sync, allocation or forbidden query
// may happen in the op), check that capturing ran nothing, and replay the graph twice, each time
// into poisoned outputs, requiring the eager bits. Outputs an op adds into (accumulate) or
// overwrites in place are restored to their initial contents before every run, as their contract
// asks. One table entry per op says how to build its arguments and launch it; one test body runs
// them all. Small ragged shapes (M = 300, N and K a few hundred, QKV heads of 64 and 128), plus a
// plain GEMM large enough for several waves and a real stream-K split. Test names
// AllOps/Capture.BitwiseDeterministicAndGraphReplayed/<op>_<config> (gtest filters select ops).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <ostream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "coda/gemm/gemm.hpp"
#include "coda/ops/autotune.hpp"
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

namespace coda::ops {
namespace {

using gemm::KernelChoice;
using gemm::TileConfig;
using Choice = std::optional<KernelChoice>;

constexpr int kM = 300;    // ragged against every tile height (128, 256)
constexpr int kK = 520;    // 8 K-blocks of 64 and a ragged one
constexpr int kN = 776;    // 3 tiles of 256 and a ragged one
constexpr int kFfn = 388;  // Z: [M, 776]
constexpr int kVocab = 2051;
constexpr float kEps = 1e-5f;

struct Heads {
  int q, kv, hd;
  int n() const { return (q + 2 * kv) * hd; }
};
constexpr Heads kRopeHeads{4, 2, 64};  // N = 512
constexpr Heads kQkHeads{3, 1, 128};   // N = 640

// The elements of an output that are compared: rows × cols elements of `elem` bytes, rows ld
// elements apart (row padding and a statistics buffer's unused capacity are left out).
struct Region {
  std::int64_t rows, cols, ld;
  int elem;
};

// How an output starts each run: poisoned (every byte 0xFF: NaN in bf16 and fp32, so an element
// the op never writes is caught), or random contents restored each time (an output the op adds
// into, or an input it overwrites in place).
enum class Init { kPoison, kRandom };

struct Output {
  std::string name;
  testing::DeviceBuffer buffer;
  std::vector<std::uint8_t> initial;  // the whole buffer at the start of a run; empty: poisoned
  Region region;
  const RowNormStats* stats = nullptr;  // a statistics buffer: compare what its producer laid out

  Region compared() const {
    if (stats == nullptr) return region;
    return {stats->layout.tiles, region.cols, stats->layout.padded, 4};
  }
};

using Snapshot = std::vector<std::vector<std::uint8_t>>;  // each output's compared bytes

std::string hex(const std::uint8_t* p, int bytes) {
  std::string s = "0x";
  char digits[3];
  for (int i = bytes - 1; i >= 0; --i)
    std::snprintf(digits, sizeof digits, "%02x", p[i]), s += digits;
  return s;
}

// Everything one op call touches: random inputs (uploaded once), workspaces, and the outputs the
// test resets before each run and compares after it.
class OpBuffers {
 public:
  explicit OpBuffers(std::uint64_t seed) : rng_(seed) {}

  // Inputs.
  TensorView bf16(int rows, int cols, double stddev) {
    testing::DeviceMatrix d = testing::upload(random_bf16(rows, cols, rng_, stddev));
    const TensorView view = d.view();
    inputs_.push_back(std::move(d.buffer));
    return view;
  }
  TensorView weight(int rows, int cols) { return bf16(rows, cols, 1.0 / std::sqrt(double(cols))); }
  TensorView norm_weight(int n) {
    inputs_.push_back(upload_bf16_vector(random_norm_weight(n, rng_)));
    return vector_view(inputs_.back(), n, DType::kBF16);
  }
  template <class T>
  TensorView host_vector(const std::vector<T>& values, DType dtype) {
    inputs_.emplace_back(values.size() * sizeof(T));
    inputs_.back().upload(values);
    return vector_view(inputs_.back(), std::int64_t(values.size()), dtype);
  }
  TensorView uniform_f32(int n, float lo, float hi) {
    std::vector<float> v(n);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& x : v) x = dist(rng_);
    return host_vector(v, DType::kF32);
  }
  // Positions past 100k with a document reset every 97 tokens.
  TensorView positions(int m) {
    std::vector<std::int32_t> pos(m);
    for (int i = 0, p = std::uniform_int_distribution<int>(100000, 1000000)(rng_); i < m; ++i, ++p)
      pos[i] = i % 97 == 96 ? (p = 0) : p;
    return host_vector(pos, DType::kI32);
  }
  TensorView frequencies(const Heads& h) {
    return host_vector(rope_frequencies(h.q, h.kv, h.hd, 500000.0), DType::kF32);
  }
  QkNorm qk_norm(const Heads& h) {
    return {norm_weight(h.hd), norm_weight(h.hd), h.q, h.kv, 1e-6f};
  }
  // Targets in [0, V), every 7th row ignore_index (-100).
  TensorView targets(int m, int vocab, DType dtype) {
    std::vector<std::int64_t> t(m);
    std::uniform_int_distribution<std::int64_t> col(0, vocab - 1);
    for (int i = 0; i < m; ++i) t[i] = i % 7 == 3 ? -100 : col(rng_);
    if (dtype == DType::kI64) return host_vector(t, dtype);
    return host_vector(std::vector<std::int32_t>(t.begin(), t.end()), dtype);
  }
  // Scratch the op owns (any contents must do): poisoned once, as the op tests do.
  void* workspace(std::size_t bytes) {
    inputs_.emplace_back(bytes);
    inputs_.back().poison();
    return inputs_.back().get();
  }

  // The saved state of an RMSNorm over a random X [m, n]: H = X ⊙ w and Σx² by rms_norm_stats
  // (run once here, eagerly), what the consumers and the norm backward read.
  struct Norm {
    TensorView x, h, weight;
    RowNormStats stats;
  };
  Norm norm(int m, int n) {
    Norm s{bf16(m, n, 1.0), {}, norm_weight(n), {}};
    testing::DeviceMatrix h = testing::output(m, n);
    s.h = h.view();
    inputs_.push_back(std::move(h.buffer));
    const std::int64_t floats = norm_stats_floats(m, n);
    s.stats = {static_cast<float*>(workspace(std::size_t(floats) * 4)), floats};
    rms_norm_stats(s.h, s.stats, s.x, s.weight);
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
    return s;
  }

  // Outputs. bf16 matrices have padded rows (as testing::output); fp32 matrices are contiguous
  // (weight gradients must be).
  TensorView out_matrix(const char* name, int rows, int cols, DType dtype = DType::kBF16,
                        Init init = Init::kPoison) {
    const bool bf16 = dtype == DType::kBF16;
    const std::int64_t ld = bf16 ? testing::round_up(cols, 8) + 8 : cols;
    std::vector<std::uint8_t> initial;
    if (init == Init::kRandom && bf16) {
      initial = testing::upload(random_bf16(rows, cols, rng_, 1.0)).buffer.download<std::uint8_t>();
    } else if (init == Init::kRandom) {
      std::vector<float> v(std::size_t(rows) * cols);
      std::normal_distribution<float> dist(0.0f, 1.0f);
      for (float& x : v) x = dist(rng_);
      initial.resize(v.size() * 4);
      std::memcpy(initial.data(), v.data(), initial.size());
    }
    void* p = add(name, std::size_t(rows) * ld * dtype_bytes(dtype), std::move(initial),
                  {rows, cols, ld, int(dtype_bytes(dtype))});
    return TensorView::matrix(p, dtype, rows, cols, ld);
  }
  TensorView out_vector(const char* name, int n, Init init = Init::kPoison) {
    const TensorView m = out_matrix(name, 1, n, DType::kF32, init);
    return TensorView::vector(m.data, DType::kF32, n);
  }
  // A statistics buffer for an m × n producer; compared over the layout the producer records.
  RowNormStats* out_stats(const char* name, int m, int n) {
    const std::int64_t floats = norm_stats_floats(m, n);
    stats_.push_back(
        {static_cast<float*>(add(name, std::size_t(floats) * 4, {}, {1, m, floats, 4})), floats});
    outputs_.back().stats = &stats_.back();
    return &stats_.back();
  }

  // Every output back to its start state; the device is idle afterwards.
  void reset() {
    for (Output& o : outputs_) {
      if (o.initial.empty())
        CODA_CHECK_CUDA(cudaMemset(o.buffer.get(), 0xFF, o.buffer.bytes()));
      else
        o.buffer.upload(o.initial);
    }
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
  }

  Snapshot snapshot() const {
    Snapshot s;
    for (const Output& o : outputs_) {
      const std::vector<std::uint8_t> all = o.buffer.download<std::uint8_t>();
      const Region r = o.compared();
      std::vector<std::uint8_t> bytes;
      for (std::int64_t row = 0; row < r.rows; ++row) {
        const auto begin = all.begin() + row * r.ld * r.elem;
        bytes.insert(bytes.end(), begin, begin + r.cols * r.elem);
      }
      s.push_back(std::move(bytes));
    }
    return s;
  }

  // "" if a and b hold the same bits, else which elements differ.
  std::string difference(const Snapshot& a, const Snapshot& b) const {
    std::string out;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      const int elem = outputs_[i].compared().elem;
      std::int64_t differ = 0, first = -1;
      for (std::size_t e = 0; e * elem < a[i].size(); ++e)
        if (std::memcmp(&a[i][e * elem], &b[i][e * elem], elem) != 0 && differ++ == 0) first = e;
      if (differ)
        out += describe(i, first, std::to_string(differ) + " elements differ, first") + ": " +
               hex(&a[i][first * elem], elem) + " vs " + hex(&b[i][first * elem], elem) + "; ";
    }
    return out;
  }

  // "" if every element of every poisoned output was written in `s`.
  std::string unwritten(const Snapshot& s) const {
    std::string out;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      if (!outputs_[i].initial.empty()) continue;
      const int elem = outputs_[i].compared().elem;
      std::int64_t count = 0, first = -1;
      for (std::size_t e = 0; e * elem < s[i].size(); ++e) {
        bool poisoned = true;
        for (int b = 0; b < elem; ++b) poisoned = poisoned && s[i][e * elem + b] == 0xFF;
        if (poisoned && count++ == 0) first = e;
      }
      if (count)
        out += describe(i, first, std::to_string(count) + " elements never written, first") + "; ";
    }
    return out;
  }

  // "" if every output still holds its start state (whole buffers, padding included).
  std::string changed_since_reset() const {
    std::string out;
    for (const Output& o : outputs_) {
      const std::vector<std::uint8_t> all = o.buffer.download<std::uint8_t>();
      const bool same =
          o.initial.empty() ? all == std::vector<std::uint8_t>(all.size(), 0xFF) : all == o.initial;
      if (!same) out += o.name + "; ";
    }
    return out;
  }

 private:
  void* add(const char* name, std::size_t bytes, std::vector<std::uint8_t> initial, Region region) {
    outputs_.push_back({name, testing::DeviceBuffer(bytes), std::move(initial), region});
    return outputs_.back().buffer.get();
  }
  std::string describe(std::size_t output, std::int64_t element, const std::string& what) const {
    const std::int64_t cols = outputs_[output].compared().cols;
    return outputs_[output].name + ": " + what + " at (" + std::to_string(element / cols) + ", " +
           std::to_string(element % cols) + ")";
  }

  std::mt19937_64 rng_;
  std::deque<testing::DeviceBuffer> inputs_;  // deques: growing them moves no element
  std::deque<Output> outputs_;
  std::deque<RowNormStats> stats_;
};

// One call of the op on a stream, with everything bound.
using Launch = std::function<void(cudaStream_t)>;

// Which kernel choices an op runs under.
enum class Configs {
  kNone,       // no GEMM: one run, no choice
  kProgram,    // a fused program: its two compiled configs (OpOptions.choice)
  kPlainBf16,  // the plain GEMM, bf16 D: its own choice, both program configs, stream-K
  kPlainF32,   // the plain GEMM, fp32 D: its two compiled configs, stream-K included
};

struct OpCase {
  const char* name;
  Configs configs;
  // Allocates the op's arguments in `b` and binds them; `choice` as the op takes it.
  std::function<Launch(OpBuffers& b, const Choice& choice)> build;
};

std::vector<Choice> choices(Configs configs) {
  const KernelChoice coop{TileConfig::kCoop128x256Cluster2x1},
      pingpong{TileConfig::kPingpong128x128Cluster2x1},
      stream_k{TileConfig::kStreamKCoop128x256Cluster2x1, gemm::RasterOrder::kHeuristic, 1,
               gemm::Decomposition::kStreamK};
  switch (configs) {
    case Configs::kNone:
      return {std::nullopt};
    case Configs::kProgram:
      return {coop, pingpong};
    case Configs::kPlainBf16:
      return {std::nullopt, coop, pingpong, stream_k};
    case Configs::kPlainF32:
      return {coop, stream_k};
  }
  return {};
}

std::string choice_name(const Choice& c) {
  if (!c) return "default";
  std::string s = gemm::to_string(c->config);
  if (c->decomposition == gemm::Decomposition::kStreamK) s += "_stream_k";
  return s;
}

// D = α·A·Bᵀ with α a device scalar, and the stream-K workspace gemm::workspace_bytes asks for.
Launch plain_gemm(OpBuffers& b, const Choice& choice, int m, int n, int k, DType d_dtype) {
  const TensorView d = b.out_matrix("D", m, n, d_dtype), a = b.bf16(m, k, 1.0), w = b.weight(n, k);
  gemm::GemmOptions o;
  o.alpha = static_cast<const float*>(b.host_vector(std::vector<float>{0.5f}, DType::kF32).data);
  o.choice = choice;
  const std::size_t bytes = gemm::workspace_bytes(d, a, w, o);
  if (bytes > 0) o.workspace = b.workspace(bytes), o.workspace_bytes = bytes;
  return [=](cudaStream_t s) { gemm::gemm(d, a, w, o, s); };
}

// linear_swiglu / linear_rmsnorm_swiglu, Z stored or not.
Launch swiglu(OpBuffers& b, const Choice& choice, bool deferred_norm, bool store_z) {
  const TensorView z = store_z ? b.out_matrix("Z", kM, 2 * kFfn) : TensorView{};
  const TensorView y = b.out_matrix("Y", kM, kFfn), w = b.weight(2 * kFfn, kK);
  const OpOptions o{choice};
  if (!deferred_norm) {
    const TensorView a = b.bf16(kM, kK, 1.0);
    return [=](cudaStream_t s) { linear_swiglu(z, y, a, w, s, o); };
  }
  const OpBuffers::Norm in = b.norm(kM, kK);
  return [=](cudaStream_t s) { linear_rmsnorm_swiglu(z, y, in.h, w, in.stats, kEps, s, o); };
}

// linear_rope / linear_rmsnorm_rope.
Launch rope(OpBuffers& b, const Choice& choice, bool deferred_norm) {
  const int n = kRopeHeads.n();
  const TensorView qkv = b.out_matrix("QKV", kM, n), w = b.weight(n, kK);
  const TensorView pos = b.positions(kM), freq = b.frequencies(kRopeHeads);
  const OpOptions o{choice};
  if (!deferred_norm) {
    const TensorView a = b.bf16(kM, kK, 1.0);
    return [=](cudaStream_t s) { linear_rope(qkv, a, w, pos, freq, s, o); };
  }
  const OpBuffers::Norm in = b.norm(kM, kK);
  return
      [=](cudaStream_t s) { linear_rmsnorm_rope(qkv, in.h, w, in.stats, kEps, pos, freq, s, o); };
}

// linear_qknorm_rope / linear_rmsnorm_qknorm_rope, Pre saved or not.
Launch qknorm_rope(OpBuffers& b, const Choice& choice, bool deferred_norm, bool save_pre) {
  const int n = kQkHeads.n();
  const TensorView qkv = b.out_matrix("QKV", kM, n);
  const TensorView pre = save_pre ? b.out_matrix("Pre", kM, n) : TensorView{};
  const TensorView w = b.weight(n, kK), pos = b.positions(kM), freq = b.frequencies(kQkHeads);
  const QkNorm qk = b.qk_norm(kQkHeads);
  const OpOptions o{choice};
  if (!deferred_norm) {
    const TensorView a = b.bf16(kM, kK, 1.0);
    return [=](cudaStream_t s) { linear_qknorm_rope(qkv, pre, a, w, pos, freq, qk, s, o); };
  }
  const OpBuffers::Norm in = b.norm(kM, kK);
  return [=](cudaStream_t s) {
    linear_rmsnorm_qknorm_rope(qkv, pre, in.h, w, in.stats, kEps, pos, freq, qk, s, o);
  };
}

// What both cross-entropy entry points take: loss ([M] for none, else [1]), lse, X, W, targets.
struct CrossEntropyArgs {
  TensorView loss, lse, x, w, targets;
  CrossEntropyOptions ce;
};
CrossEntropyArgs cross_entropy_args(OpBuffers& b, Reduction reduction, DType targets) {
  CrossEntropyArgs a;
  a.ce.reduction = reduction;
  a.ce.z_loss = 1e-4f;
  a.ce.softcap = targets == DType::kI64 ? 30.0f : 0.0f;
  a.loss = b.out_vector("loss", reduction == Reduction::kNone ? kM : 1);
  a.lse = b.out_vector("lse", kM);
  a.x = b.bf16(kM, kK, 1.0);
  a.w = b.bf16(kVocab, kK, 2.0 / std::sqrt(double(kK)));
  a.targets = b.targets(kM, kVocab, targets);
  return a;
}

Launch cross_entropy(OpBuffers& b, const Choice& choice, Reduction reduction, DType targets) {
  const CrossEntropyArgs a = cross_entropy_args(b, reduction, targets);
  const std::size_t bytes = linear_cross_entropy_workspace_bytes(kM, kVocab);
  void* ws = b.workspace(bytes);
  const OpOptions o{choice};
  return [=](cudaStream_t s) {
    linear_cross_entropy(a.loss, a.lse, a.x, a.w, a.targets, a.ce, ws, bytes, s, o);
  };
}

// Fwd+bwd: mean over tokens with a scalar α into a fresh dW, in chunks of 128 rows (3 chunks);
// or (accumulate) per-token α, int64 targets and a soft-cap, dW added into, automatic chunks.
Launch cross_entropy_fwd_bwd(OpBuffers& b, const Choice& choice, bool accumulate) {
  CrossEntropyArgs a = cross_entropy_args(b, accumulate ? Reduction::kNone : Reduction::kMean,
                                          accumulate ? DType::kI64 : DType::kI32);
  a.ce.chunk_rows = accumulate ? 0 : 128;
  CrossEntropyGrads g;
  g.dX = b.out_matrix("dX", kM, kK);
  g.dW = b.out_matrix("dW", kVocab, kK, DType::kF32, accumulate ? Init::kRandom : Init::kPoison);
  g.accumulate_dW = accumulate;
  g.zdz = b.out_vector("zdz", kM);
  g.alpha = accumulate ? b.uniform_f32(kM, -1.0f, 2.0f)
                       : b.host_vector(std::vector<float>{0.5f}, DType::kF32);
  const std::size_t bytes =
      linear_cross_entropy_fwd_bwd_workspace_bytes(kM, kVocab, a.ce.chunk_rows);
  void* ws = b.workspace(bytes);
  const OpOptions o{choice};
  return [=](cudaStream_t s) {
    linear_cross_entropy_fwd_bwd(a.loss, a.lse, g, a.x, a.w, a.targets, a.ce, ws, bytes, s, o);
  };
}

// dX written, or (accumulate) added into an incoming gradient.
Launch rmsnorm_bwd(OpBuffers& b, const Choice& choice, bool accumulate) {
  const TensorView dx =
      b.out_matrix("dX", kM, kK, DType::kBF16, accumulate ? Init::kRandom : Init::kPoison);
  const TensorView n_out = b.out_matrix("N", kM, kK), dw = b.out_vector("dw", kK);
  const TensorView dz = b.bf16(kM, kN, 1.0), w = b.weight(kN, kK);
  const TensorView zdz = b.uniform_f32(kM, -10.0f, 10.0f);
  const TensorView alpha = b.host_vector(std::vector<float>{0.5f}, DType::kF32);
  const OpBuffers::Norm in = b.norm(kM, kK);
  const RmsNormSaved saved{in.x, in.stats, in.weight, kEps};
  const std::size_t bytes = linear_rmsnorm_bwd_workspace_bytes(kM, kK);
  void* ws = b.workspace(bytes);
  const OpOptions o{choice};
  return [=](cudaStream_t s) {
    linear_rmsnorm_bwd(dx, accumulate, n_out, dw, dz, w, saved, zdz, ws, bytes, alpha, s, o);
  };
}

// dZ into its own buffer, or in place over dQKV (restored before each run).
Launch rope_backward(OpBuffers& b, const Choice&, bool in_place) {
  const int n = kRopeHeads.n();
  const TensorView dqkv =
      in_place ? b.out_matrix("dQKV = dZ", kM, n, DType::kBF16, Init::kRandom) : b.bf16(kM, n, 1.0);
  const TensorView dz = in_place ? dqkv : b.out_matrix("dZ", kM, n), zdz = b.out_vector("zdz", kM);
  const TensorView qkv = b.bf16(kM, n, 1.0), pos = b.positions(kM),
                   freq = b.frequencies(kRopeHeads);
  return [=](cudaStream_t s) { rope_bwd(dz, zdz, qkv, dqkv, pos, freq, s); };
}

// dPre into its own buffer with ∂γ written; or in place over dQKV with ∂γ added into.
Launch qknorm_rope_backward(OpBuffers& b, const Choice&, bool in_place_accumulate) {
  const int n = kQkHeads.n(), hd = kQkHeads.hd;
  const Init init = in_place_accumulate ? Init::kRandom : Init::kPoison;
  const TensorView dqkv = in_place_accumulate
                              ? b.out_matrix("dQKV = dPre", kM, n, DType::kBF16, init)
                              : b.bf16(kM, n, 1.0);
  const TensorView dpre = in_place_accumulate ? dqkv : b.out_matrix("dPre", kM, n);
  const TensorView zdz = b.out_vector("zdz", kM);
  const QkNormGrads g{b.out_vector("dgamma_q", hd, init), b.out_vector("dgamma_k", hd, init),
                      in_place_accumulate};
  const TensorView pre = b.bf16(kM, n, 1.0), pos = b.positions(kM), freq = b.frequencies(kQkHeads);
  const QkNorm qk = b.qk_norm(kQkHeads);
  const std::size_t bytes = qknorm_rope_bwd_workspace_bytes(kM, hd);
  void* ws = b.workspace(bytes);
  return [=](cudaStream_t s) {
    qknorm_rope_bwd(dpre, zdz, g, pre, dqkv, pos, freq, qk, ws, bytes, s);
  };
}

// Y with Pre saved, or Y alone (N = kN, K = kK).
Launch bias_gelu(OpBuffers& b, const Choice& choice, bool save_pre) {
  const TensorView y = b.out_matrix("Y", kM, kN);
  const TensorView pre = save_pre ? b.out_matrix("Pre", kM, kN) : TensorView{};
  const TensorView x = b.bf16(kM, kK, 1.0), w = b.weight(kN, kK), bias = b.norm_weight(kN);
  const OpOptions o{choice};
  return [=](cudaStream_t s) { linear_bias_gelu(y, pre, x, w, bias, s, o); };
}

// dPre and ∂b from dOut [M, K] · W_down [K, N] and a saved Pre.
Launch bias_gelu_backward(OpBuffers& b, const Choice& choice) {
  const TensorView dpre = b.out_matrix("dPre", kM, kN), dbias = b.out_vector("dbias", kN);
  const TensorView d_out = b.bf16(kM, kK, 1.0), w_down = b.weight(kK, kN), pre = b.bf16(kM, kN, 2.0);
  const std::size_t bytes = linear_bias_gelu_bwd_workspace_bytes(kM, kN);
  void* ws = b.workspace(bytes);
  const OpOptions o{choice};
  return [=](cudaStream_t s) {
    linear_bias_gelu_bwd(dpre, dbias, d_out, w_down, pre, ws, bytes, s, o);
  };
}

// A table entry's builder: `build` with the choice and these fixed arguments.
template <class Build, class... Args>
std::function<Launch(OpBuffers&, const Choice&)> with(Build build, Args... args) {
  return [=](OpBuffers& b, const Choice& c) { return build(b, c, args...); };
}

const OpCase kOps[] = {
    {"gemm", Configs::kPlainBf16, with(plain_gemm, kM, kN, kK, DType::kBF16)},
    // 64 × 4 output tiles of 128 × 256: two waves on 132 SMs; stream-K splits them further.
    {"gemm_many_waves", Configs::kPlainBf16, with(plain_gemm, 8191, 1000, 1032, DType::kBF16)},
    {"gemm_f32", Configs::kPlainF32, with(plain_gemm, kM, kN, kK, DType::kF32)},
    {"linear_residual_rms", Configs::kProgram,
     [](OpBuffers& b, const Choice& c) -> Launch {
       const TensorView x = b.out_matrix("X", kM, kN), h = b.out_matrix("H", kM, kN);
       RowNormStats* stats = b.out_stats("stats", kM, kN);
       const TensorView a = b.bf16(kM, kK, 1.0), w = b.weight(kN, kK), r = b.bf16(kM, kN, 1.0),
                        gamma = b.norm_weight(kN);
       const OpOptions o{c};
       return [=](cudaStream_t s) { linear_residual_rms(x, h, *stats, a, w, r, gamma, s, o); };
     }},
    {"linear_rmsnorm", Configs::kProgram,
     [](OpBuffers& b, const Choice& c) -> Launch {
       const TensorView d = b.out_matrix("D", kM, kN), w = b.weight(kN, kK);
       const OpBuffers::Norm in = b.norm(kM, kK);
       const OpOptions o{c};
       return [=](cudaStream_t s) { linear_rmsnorm(d, in.h, w, in.stats, kEps, s, o); };
     }},
    {"rms_norm_stats", Configs::kNone,
     [](OpBuffers& b, const Choice&) -> Launch {
       const TensorView h = b.out_matrix("H", kM, kK);
       RowNormStats* stats = b.out_stats("stats", kM, kK);
       const TensorView x = b.bf16(kM, kK, 1.0), gamma = b.norm_weight(kK);
       return [=](cudaStream_t s) { rms_norm_stats(h, *stats, x, gamma, s); };
     }},
    {"linear_rope", Configs::kProgram, with(rope, false)},
    {"linear_rmsnorm_rope", Configs::kProgram, with(rope, true)},
    {"linear_qknorm_rope", Configs::kProgram, with(qknorm_rope, false, false)},
    {"linear_qknorm_rope_save_pre", Configs::kProgram, with(qknorm_rope, false, true)},
    {"linear_rmsnorm_qknorm_rope", Configs::kProgram, with(qknorm_rope, true, false)},
    {"linear_rmsnorm_qknorm_rope_save_pre", Configs::kProgram, with(qknorm_rope, true, true)},
    {"linear_swiglu", Configs::kProgram, with(swiglu, false, true)},
    {"linear_swiglu_no_z", Configs::kProgram, with(swiglu, false, false)},
    {"linear_rmsnorm_swiglu", Configs::kProgram, with(swiglu, true, true)},
    {"linear_rmsnorm_swiglu_no_z", Configs::kProgram, with(swiglu, true, false)},
    {"linear_cross_entropy", Configs::kProgram, with(cross_entropy, Reduction::kMean, DType::kI32)},
    {"linear_cross_entropy_none", Configs::kProgram,
     with(cross_entropy, Reduction::kNone, DType::kI64)},
    {"linear_cross_entropy_fwd_bwd", Configs::kProgram, with(cross_entropy_fwd_bwd, false)},
    {"linear_cross_entropy_fwd_bwd_accumulate", Configs::kProgram,
     with(cross_entropy_fwd_bwd, true)},
    {"linear_swiglu_bwd", Configs::kProgram,
     [](OpBuffers& b, const Choice& c) -> Launch {
       const TensorView dz = b.out_matrix("dZ", kM, 2 * kFfn), y = b.out_matrix("Y", kM, kFfn),
                        zdz = b.out_vector("zdz", kM);
       const TensorView d_out = b.bf16(kM, kK, 1.0), w_down = b.weight(kK, kFfn),
                        z = b.bf16(kM, 2 * kFfn, 1.0);
       const std::size_t bytes = linear_swiglu_bwd_workspace_bytes(kM, kFfn);
       void* ws = b.workspace(bytes);
       const OpOptions o{c};
       return [=](cudaStream_t s) {
         linear_swiglu_bwd(dz, y, zdz, d_out, w_down, z, ws, bytes, s, o);
       };
     }},
    {"linear_rmsnorm_bwd", Configs::kProgram, with(rmsnorm_bwd, false)},
    {"linear_rmsnorm_bwd_accumulate", Configs::kProgram, with(rmsnorm_bwd, true)},
    {"qknorm_rope_bwd", Configs::kNone, with(qknorm_rope_backward, false)},
    {"qknorm_rope_bwd_in_place_accumulate", Configs::kNone, with(qknorm_rope_backward, true)},
    {"rope_bwd", Configs::kNone, with(rope_backward, false)},
    {"rope_bwd_in_place", Configs::kNone, with(rope_backward, true)},
    {"linear_bias_gelu", Configs::kProgram, with(bias_gelu, false)},
    {"linear_bias_gelu_save_pre", Configs::kProgram, with(bias_gelu, true)},
    {"linear_bias_gelu_bwd", Configs::kProgram, bias_gelu_backward},
};

struct Param {
  const OpCase* op;
  Choice choice;
  std::string name;
};
void PrintTo(const Param& p, std::ostream* os) { *os << p.name; }

// Every op key (one per program an op runs) has its case here, named after it.
TEST(CaptureTable, HasEveryOpKey) { EXPECT_EQ(op_keys_missing_from(kOps), ""); }

std::vector<Param> all_params() {
  std::vector<Param> params;
  for (const OpCase& op : kOps)
    for (const Choice& c : choices(op.configs))
      params.push_back({&op, c, std::string(op.name) + "_" + choice_name(c)});
  return params;
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CODA_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
};

// Captures `launch` on `stream` (global mode: any forbidden call, from this thread or another, ends
// the capture with an error) and instantiates it. "" or what went wrong.
std::string capture(cudaStream_t stream, const Launch& launch, Graph* g) {
  CODA_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  std::string error;
  try {
    launch(stream);
  } catch (const std::exception& e) {
    error = std::string("the op threw during capture: ") + e.what();
  }
  const cudaError_t end = cudaStreamEndCapture(stream, &g->graph);
  const cudaError_t last = cudaGetLastError();  // clears what a failed launch left behind
  if (error.empty() && end != cudaSuccess)
    error = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
  if (error.empty() && last != cudaSuccess)
    error = std::string("a CUDA call during capture: ") + cudaGetErrorString(last);
  std::size_t nodes = 0;
  if (error.empty()) CODA_CHECK_CUDA(cudaGraphGetNodes(g->graph, nullptr, &nodes));
  if (error.empty() && nodes == 0) error = "the graph holds no work";
  if (error.empty()) {
    const cudaError_t inst = cudaGraphInstantiate(&g->exec, g->graph, 0);
    if (inst != cudaSuccess)
      error = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(inst);
  }
  return error;
}

class Capture : public ::testing::TestWithParam<Param> {};

TEST_P(Capture, BitwiseDeterministicAndGraphReplayed) {
  const Param& p = GetParam();
  OpBuffers b(testing::fresh_seed(("Capture." + p.name).c_str()));
  const Launch launch = p.op->build(b, p.choice);
  auto eager = [&] {
    b.reset();
    launch(nullptr);
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
    return b.snapshot();
  };

  const Snapshot first = eager();
  EXPECT_EQ(b.unwritten(first), "") << "an output element the op never wrote";
  EXPECT_EQ(b.difference(first, eager()), "") << "two eager runs on the same inputs differ";

  Stream stream;
  Graph graph;
  b.reset();
  const std::string error = capture(stream.s, launch, &graph);
  ASSERT_EQ(error, "") << "the op cannot be captured into a CUDA graph";
  EXPECT_EQ(b.changed_since_reset(), "") << "capturing ran work instead of recording it";
  for (int replay = 0; replay < 2; ++replay) {
    b.reset();
    CODA_CHECK_CUDA(cudaGraphLaunch(graph.exec, stream.s));
    CODA_CHECK_CUDA(cudaStreamSynchronize(stream.s));
    EXPECT_EQ(b.difference(first, b.snapshot()), "")
        << "graph replay " << replay << " differs from eager";
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, Capture, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return info.param.name;
                         });

// The autotuner (coda/ops/autotune.hpp) on each fused program under its own choice, with a cache
// directory of its own:
//   1. a capture before anything is known runs the rule: no timing (global capture mode would
//      fail on it), no file;
//   2. the first eager call times the candidates on its own arguments and persists one winner;
//      the call's outputs have exactly the bits of that winner forced on the same inputs, from the
//      same start state (an output it adds into is restored after the timed runs);
//   3. in a fresh state (autotune_forget) the winner is read back from the file and reused: the
//      same bits, the file untouched (a second timing would rewrite it).
// Not the cross-entropy forward+backward: its chunk GEMMs are plain GEMMs (the GEMM table's).
class Autotune : public ::testing::TestWithParam<const OpCase*> {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/coda-autotune-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    setenv("CODA_TUNE_CACHE", dir, 1);
    autotune_forget();
    set_autotune(true);
  }
  void TearDown() override {
    set_autotune(false);
    autotune_forget();
    unsetenv("CODA_TUNE_CACHE");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string dir_;
};

std::vector<const OpCase*> tuned_programs() {
  std::vector<const OpCase*> v;
  for (const OpCase& op : kOps)
    if (op.configs == Configs::kProgram &&
        std::string(op.name).rfind("linear_cross_entropy_fwd_bwd", 0) != 0)
      v.push_back(&op);
  return v;
}

TEST_P(Autotune, TunedCallLeavesItsWinnersBitsAndTheWinnerPersists) {
  const OpCase& op = *GetParam();
  const std::uint64_t seed = testing::fresh_seed((std::string("Autotune.") + op.name).c_str());
  OpBuffers b(seed);
  const Launch tuned = op.build(b, std::nullopt);
  const std::string file = autotune_cache_file();
  ASSERT_EQ(file.rfind(dir_ + "/", 0), 0u) << file;

  Stream stream;
  Graph graph;
  b.reset();
  ASSERT_EQ(capture(stream.s, tuned, &graph), "") << "capture with the autotuner on";
  EXPECT_FALSE(std::filesystem::exists(file)) << "a capture timed candidates";

  b.reset();
  tuned(nullptr);
  CODA_CHECK_CUDA(cudaDeviceSynchronize());
  const Snapshot got = b.snapshot();
  EXPECT_EQ(b.unwritten(got), "");
  const std::string text = read(file);
  // The winner (a program config; the rule's own raster may be the heuristic one), read with a
  // pattern of the file's format rather than the library's parser.
  const std::regex entry(R"re("config": "(\w+)", "raster": "(\w+)", "swizzle": (\d+))re");
  std::vector<KernelChoice> winners;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator();
       ++it)
    for (TileConfig config : epilogue::kProgramConfigs)
      for (gemm::RasterOrder raster : {gemm::RasterOrder::kHeuristic, gemm::RasterOrder::kAlongM,
                                       gemm::RasterOrder::kAlongN})
        if ((*it)[1] == gemm::to_string(config) && (*it)[2] == gemm::to_string(raster))
          winners.push_back({config, raster, std::stoi((*it)[3]), gemm::Decomposition::kHeuristic});
  ASSERT_EQ(winners.size(), 1u) << "one winner, a program config, expected in " << file << ":\n"
                                << text;

  set_autotune(false);
  OpBuffers same(seed);  // the same seed draws the same inputs and start states
  const Launch forced = op.build(same, winners[0]);
  same.reset();
  forced(nullptr);
  CODA_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(b.difference(got, same.snapshot()), "")
      << "the tuned call differs from its winner " << gemm::to_string(winners[0].config) << " "
      << gemm::to_string(winners[0].raster) << " swizzle " << winners[0].swizzle;

  autotune_forget();
  set_autotune(true);
  b.reset();
  tuned(nullptr);
  CODA_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(b.difference(got, b.snapshot()), "") << "the winner read back runs another kernel";
  EXPECT_EQ(read(file), text) << "a known winner was timed again";
}

INSTANTIATE_TEST_SUITE_P(Programs, Autotune, ::testing::ValuesIn(tuned_programs()),
                         [](const ::testing::TestParamInfo<const OpCase*>& info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace coda::ops
