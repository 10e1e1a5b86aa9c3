// SPDX-License-Identifier: BSD-3-Clause
// Bad input over the public C++ API, on the GPU: every bad call throws coda::Error naming the
// entry point, the argument and the constraint, and leaves every byte of every buffer (device and
// host) as it was. Each entry point is described once — its tensors as named slots in one device
// arena, its other arguments, how to call it — and the cases are generated from that description:
// every slot broken in every way that applies (null, dtype, rank, shape, alignment, strides, host
// memory, another device, an output aliasing another argument), an empty batch, then the op's own
// scalar arguments (statistics, workspace, eps, QK-norm heads, cross-entropy options, kernel
// choice). Odd-but-valid calls (in place where documented) must succeed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
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
#include "device/device_buffer.hpp"

namespace coda::ops {
namespace {

using testing::DeviceBuffer;

// Pinned host memory that the "host memory" cases point arguments at (set up by the test).
void* g_host_for_cases = nullptr;

// M rows (ragged), K features, N = 2F gate/up or (2 + 2·1)·64 QKV columns, V vocabulary.
constexpr std::int64_t kM = 200, kK = 128, kN = 256, kF = kN / 2, kV = 1000, kHeadDim = 64;

struct Slot {
  std::string name;
  TensorView view;
  bool output = false;
  bool optional = false;  // absent (null) is a valid call
  bool raw = false;       // passed as a bare pointer: only its address can be wrong
  bool m_rows = false;    // dim 0 (or the length) is M
  bool free_rows = false; // dim 0 is an extent no other argument shares (any value is valid)
};

// One call's arguments: the slots and everything that is not a tensor.
struct Args {
  std::vector<Slot> slots;
  RowNormStats stats;  // consumers: filled; producers: an empty buffer
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  float eps = 1e-5f;
  QkNorm qk;  // the weights come from the slots; heads and eps from here
  CrossEntropyOptions ce;
  OpOptions options;
  gemm::GemmOptions gemm_options;

  const TensorView& operator[](const std::string& name) const {
    for (const Slot& s : slots)
      if (s.name == name) return s.view;
    throw std::logic_error("no slot " + name);
  }
  Slot& slot(const std::string& name) {
    for (Slot& s : slots)
      if (s.name == name) return s;
    throw std::logic_error("no slot " + name);
  }
};

enum Uses : unsigned {
  kStatsIn = 1,  // a consumer's filled statistics
  kStatsOut = 2,
  kWorkspace = 4,
  kEps = 8,
  kQk = 16,
  kCe = 32,
  kProgramChoice = 64,  // options.choice of a fused program
};

// Device memory for one entry point's slots, with gaps between them so that a slot moved by a few
// bytes (the misalignment cases) still overlaps nothing.
class Arena {
 public:
  explicit Arena(std::size_t bytes) : buffer_(bytes) {
    // 0x3C3C: 0.0115 in bf16, ~0.0115 in f32 — finite, non-zero inputs for the valid call.
    CODA_CHECK_CUDA(cudaMemset(buffer_.get(), 0x3C, bytes));
  }
  void* take(std::size_t bytes) {
    void* p = buffer_.get<char>() + used_;
    used_ += (bytes + 511) / 512 * 512 + 512;
    if (used_ > buffer_.bytes()) throw std::logic_error("arena too small");
    return p;
  }
  std::vector<unsigned char> bytes() const {
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
    return buffer_.download<unsigned char>();
  }

 private:
  DeviceBuffer buffer_;
  std::size_t used_ = 0;
};

struct Op {
  const char* entry;  // the prefix of its messages
  Args args;          // a valid call
  unsigned uses = 0;
  std::vector<std::pair<std::string, std::string>> in_place;  // (output, input) pairs allowed
  std::function<void(Args&)> call;
};

class Builder {
 public:
  explicit Builder(Arena& arena) : arena_(arena) {}
  Builder& matrix(const char* name, std::int64_t rows, std::int64_t cols, DType t, bool output,
                  bool m_rows = true) {
    void* p = arena_.take(std::size_t(rows * cols) * dtype_bytes(t));
    args_.slots.push_back(
        {name, TensorView::matrix(p, t, rows, cols), output, false, false, m_rows});
    return *this;
  }
  Builder& vector(const char* name, std::int64_t n, DType t, bool output, bool m_rows) {
    void* p = arena_.take(std::size_t(n) * dtype_bytes(t));
    args_.slots.push_back({name, TensorView::vector(p, t, n), output, false, false, m_rows});
    return *this;
  }
  Builder& optional() { return args_.slots.back().optional = true, *this; }
  Builder& free_rows() { return args_.slots.back().free_rows = true, *this; }
  Builder& raw() { return args_.slots.back().raw = true, *this; }
  // Integer inputs (targets, positions) are 0: in range for any vocabulary.
  Builder& zero() {
    const TensorView& v = args_.slots.back().view;
    CODA_CHECK_CUDA(cudaMemset(v.data, 0, std::size_t(v.numel()) * v.element_bytes()));
    return *this;
  }
  Builder& stats_filled(std::int64_t width) {
    args_.stats = {static_cast<float*>(arena_.take(std::size_t(kM) * 4)),
                   kM,
                   {1, kM},
                   static_cast<int>(width)};
    return *this;
  }
  Builder& stats_buffer(std::int64_t m, std::int64_t n) {
    const std::int64_t floats = norm_stats_floats(m, n);
    args_.stats = {static_cast<float*>(arena_.take(std::size_t(floats) * 4)), floats};
    return *this;
  }
  Builder& workspace(std::size_t bytes) {
    args_.workspace = arena_.take(bytes);
    args_.workspace_bytes = bytes;
    return *this;
  }
  Args done() { return args_; }

 private:
  Arena& arena_;
  Args args_;
};

// Pinned host memory: a kernel given it would write there instead of faulting, so an unchecked
// host pointer shows up as a changed byte rather than a crashed test binary.
struct PinnedHost {
  static constexpr std::size_t kBytes = 1 << 20;
  void* p = nullptr;
  PinnedHost() {
    CODA_CHECK_CUDA(cudaMallocHost(&p, kBytes));
    std::memset(p, 0x5A, kBytes);
  }
  ~PinnedHost() { cudaFreeHost(p); }
  std::vector<unsigned char> bytes() const {
    const auto* b = static_cast<const unsigned char*>(p);
    return {b, b + kBytes};
  }
};

struct Case {
  std::string what;
  std::function<void(Args&)> breaks;
  std::vector<std::string> expect;  // substrings of the message (after the entry point's prefix)
  bool names_any_slot = false;      // the message may name another slot (derived extents)
};

DType other_dtype(DType t) {
  switch (t) {
    case DType::kBF16:
      return DType::kF16;
    case DType::kF32:
      return DType::kBF16;
    default:
      return DType::kF32;
  }
}

// The cases every slot generates.
std::vector<Case> slot_cases(const Op& op, std::size_t i) {
  const Slot& s = op.args.slots[i];
  const std::string n = s.name;
  auto on = [i](std::function<void(Slot&)> f) { return [i, f](Args& a) { f(a.slots[i]); }; };
  std::vector<Case> out;
  // One element off (two bytes for a bare pointer, which need only be 4-byte aligned).
  const std::int64_t e = s.raw ? 2 : static_cast<std::int64_t>(s.view.element_bytes());
  out.push_back({n + " misaligned",
                 on([e](Slot& t) { t.view.data = (char*)t.view.data + e; }),
                 {n + ":", "aligned"}});
  out.push_back({n + " in host memory",
                 on([](Slot& t) { t.view.data = g_host_for_cases; }),
                 {n + ":", "device memory"}});
  if (!s.optional)
    out.push_back({n + " null", on([](Slot& t) { t.view.data = nullptr; }), {n + ":", "null"}});
  if (s.output)
    for (std::size_t j = 0; j < op.args.slots.size(); ++j) {
      const Slot& other = op.args.slots[j];
      bool allowed = j == i;
      for (const auto& p : op.in_place) allowed |= p.first == n && p.second == other.name;
      if (allowed) continue;
      out.push_back({n + " aliasing " + other.name,
                     [i, j](Args& a) { a.slots[i].view.data = a.slots[j].view.data; },
                     {"overlaps"}});
      break;  // one aliasing case per output; the first other slot
    }
  for (const auto& p : op.in_place)
    if (p.first == n) {
      std::size_t j = 0;
      while (op.args.slots[j].name != p.second) ++j;
      out.push_back({n + " overlapping " + p.second + " partially (in place needs the same view)",
                     [i, j](Args& a) {
                       a.slots[i].view.data = static_cast<char*>(a.slots[j].view.data) + 16;
                     },
                     {n + ": may be " + p.second + " itself"}});
    }
  if (s.raw) return out;
  out.push_back({n + " of another dtype",
                 on([](Slot& t) { t.view.dtype = other_dtype(t.view.dtype); }),
                 {n + ":", "dtype"}});
  out.push_back({n + " of rank 3",
                 on([](Slot& t) {
                   TensorView& v = t.view;
                   for (int d = v.rank; d > 0; --d)
                     v.shape[d] = v.shape[d - 1], v.stride[d] = v.stride[d - 1];
                   v.shape[0] = 1, v.stride[0] = v.numel(), v.rank += 1;
                 }),
                 {n + ":", "rank"}});
  out.push_back({n + " on device 1",
                 on([](Slot& t) { t.view.device = 1; }),
                 {"device 1"},
                 true});  // names the slot or the first it disagrees with
  if (s.view.rank == 2) {
    // A shape that disagrees: the message may name this slot or one whose extent it defines.
    out.push_back({n + " 8 columns wider",
                   on([](Slot& t) { t.view.shape[1] += 8, t.view.stride[0] += 8; }),
                   {},
                   true});
    if (!s.free_rows)
      out.push_back({n + " one row longer", on([](Slot& t) { t.view.shape[0] += 1; }), {}, true});
    out.push_back({n + " with a row stride of 16n + 2 bytes",
                   on([](Slot& t) { t.view.stride[0] += 1; }),
                   {n + ":", "stride"}});
    out.push_back({n + " with non-contiguous rows",
                   on([](Slot& t) { t.view.stride[1] = 2; }),
                   {n + ":", "stride"}});
  } else {
    out.push_back({n + " longer", on([](Slot& t) { t.view.shape[0] += 4; }), {}, true});
    out.push_back(
        {n + " strided", on([](Slot& t) { t.view.stride[0] = 2; }), {n + ":", "contiguous"}});
  }
  return out;
}

// The cases an op's non-tensor arguments generate.
std::vector<Case> scalar_cases(const Op& op) {
  std::vector<Case> out;
  std::string first_output, first_input;
  for (const Slot& s : op.args.slots) {
    if (s.output && first_output.empty()) first_output = s.name;
    if (!s.output && !s.raw && first_input.empty()) first_input = s.name;
  }
  out.push_back({"an empty batch (M = 0)",
                 [](Args& a) {
                   for (Slot& s : a.slots)
                     if (s.m_rows) s.view.shape[0] = 0;
                 },
                 {"every dim must be positive"}});
  if (op.uses & kStatsIn) {
    out.push_back({"stats unfilled",
                   [](Args& a) { a.stats.layout = {}, a.stats.width = 0; },
                   {"not filled"}});
    out.push_back(
        {"stats of another width", [](Args& a) { a.stats.width += 64; }, {"stats.width"}});
    out.push_back({"stats for fewer rows",
                   [](Args& a) { a.stats.layout.padded = kM / 2; },
                   {"produced for"}});
    out.push_back(
        {"stats null", [](Args& a) { a.stats.partials = nullptr; }, {"stats.partials", "null"}});
    out.push_back({"stats in host memory",
                   [](Args& a) { a.stats.partials = static_cast<float*>(g_host_for_cases); },
                   {"stats.partials", "device memory"}});
    out.push_back(
        {"stats aliasing " + first_output,
         [first_output](Args& a) { a.stats.partials = static_cast<float*>(a[first_output].data); },
         {"overlaps"}});
  }
  if (op.uses & kStatsOut) {
    out.push_back(
        {"stats buffer too small", [](Args& a) { a.stats.capacity -= 1; }, {"stats.capacity"}});
    out.push_back({"stats buffer misaligned",
                   [](Args& a) { a.stats.partials += 1; },
                   {"stats.partials", "aligned"}});
    out.push_back({"stats buffer null",
                   [](Args& a) { a.stats.partials = nullptr; },
                   {"stats.partials", "null"}});
    out.push_back({"stats buffer in host memory",
                   [](Args& a) { a.stats.partials = static_cast<float*>(g_host_for_cases); },
                   {"stats.partials", "device memory"}});
    out.push_back(
        {"stats buffer aliasing " + first_input,
         [first_input](Args& a) { a.stats.partials = static_cast<float*>(a[first_input].data); },
         {"overlaps"}});
  }
  if (op.uses & kWorkspace) {
    out.push_back(
        {"workspace null", [](Args& a) { a.workspace = nullptr; }, {"workspace", "null"}});
    out.push_back({"workspace too small",
                   [](Args& a) { a.workspace_bytes -= 16; },
                   {"workspace_bytes", "needs"}});
    out.push_back({"workspace misaligned",
                   [](Args& a) { a.workspace = (char*)a.workspace + 4; },
                   {"workspace", "aligned"}});
    out.push_back({"workspace in host memory",
                   [](Args& a) { a.workspace = g_host_for_cases; },
                   {"workspace", "device memory"}});
    out.push_back({"workspace aliasing " + first_input,
                   [first_input](Args& a) { a.workspace = a[first_input].data; },
                   {"overlaps"}});
  }
  if (op.uses & kEps) {
    out.push_back({"eps negative", [](Args& a) { a.eps = -1e-5f; }, {"eps", "non-negative"}});
    out.push_back({"eps NaN", [](Args& a) { a.eps = std::nanf(""); }, {"eps", "non-negative"}});
  }
  if (op.uses & kQk) {
    out.push_back({"no query heads", [](Args& a) { a.qk.q_heads = 0; }, {"q_heads", "positive"}});
    out.push_back(
        {"heads that do not divide N", [](Args& a) { a.qk.kv_heads = 2; }, {"head_dim 64 or 128"}});
    out.push_back({"QK-norm eps negative", [](Args& a) { a.qk.eps = -1.0f; }, {"qk_norm.eps"}});
  }
  if (op.uses & kCe) {
    out.push_back({"z_loss negative", [](Args& a) { a.ce.z_loss = -0.1f; }, {"ce.z_loss"}});
    out.push_back({"z_loss infinite", [](Args& a) { a.ce.z_loss = INFINITY; }, {"ce.z_loss"}});
    out.push_back({"softcap NaN", [](Args& a) { a.ce.softcap = std::nanf(""); }, {"ce.softcap"}});
  }
  if (op.uses & kProgramChoice) {
    out.push_back({"a kernel config the programs are not compiled for",
                   [](Args& a) {
                     a.options.choice =
                         gemm::KernelChoice{gemm::TileConfig::kCoop256x128Cluster1x2};
                   },
                   {"options.choice.config"}});
    out.push_back({"stream-K for a fused program",
                   [](Args& a) {
                     a.options.choice =
                         gemm::KernelChoice{gemm::TileConfig::kCoop128x256Cluster2x1};
                     a.options.choice->decomposition = gemm::Decomposition::kStreamK;
                   },
                   {"options.choice.decomposition"}});
  }
  return out;
}

// ---- The entry points, each described once ----------------------------------------------------

constexpr DType kBf16 = DType::kBF16, kF32 = DType::kF32, kI32 = DType::kI32;

Op gemm_op(Arena& arena) {
  Op op{"coda::gemm"};
  op.args = Builder(arena)
                .matrix("D", kM, kN, kBf16, true)
                .matrix("A", kM, kK, kBf16, false)
                .matrix("B", kN, kK, kBf16, false, false)
                .vector("options.alpha", 1, kF32, false, false)
                .optional()
                .raw()
                .done();
  op.call = [](Args& a) {
    gemm::GemmOptions o = a.gemm_options;
    o.alpha = static_cast<const float*>(a["options.alpha"].data);
    gemm::gemm(a["D"], a["A"], a["B"], o);
  };
  return op;
}

Op linear_residual_rms_op(Arena& arena) {
  Op op{"coda::ops::linear_residual_rms"};
  op.args = Builder(arena)
                .matrix("X", kM, kN, kBf16, true)
                .matrix("H", kM, kN, kBf16, true)
                .matrix("A", kM, kK, kBf16, false)
                .matrix("W", kN, kK, kBf16, false, false)
                .matrix("R", kM, kN, kBf16, false)
                .vector("norm_weight", kN, kBf16, false, false)
                .stats_buffer(kM, kN)
                .done();
  op.uses = kStatsOut | kProgramChoice;
  op.call = [](Args& a) {
    linear_residual_rms(a["X"], a["H"], a.stats, a["A"], a["W"], a["R"], a["norm_weight"], nullptr,
                        a.options);
  };
  return op;
}

Op linear_rmsnorm_op(Arena& arena) {
  Op op{"coda::ops::linear_rmsnorm"};
  op.args = Builder(arena)
                .matrix("D", kM, kN, kBf16, true)
                .matrix("H", kM, kK, kBf16, false)
                .matrix("W", kN, kK, kBf16, false, false)
                .stats_filled(kK)
                .done();
  op.uses = kStatsIn | kEps | kProgramChoice;
  op.call = [](Args& a) {
    linear_rmsnorm(a["D"], a["H"], a["W"], a.stats, a.eps, nullptr, a.options);
  };
  return op;
}

Op rms_norm_stats_op(Arena& arena) {
  Op op{"coda::ops::rms_norm_stats"};
  op.args = Builder(arena)
                .matrix("H", kM, kK, kBf16, true)
                .matrix("X", kM, kK, kBf16, false)
                .vector("norm_weight", kK, kBf16, false, false)
                .stats_buffer(kM, kK)
                .done();
  op.uses = kStatsOut;
  op.call = [](Args& a) { rms_norm_stats(a["H"], a.stats, a["X"], a["norm_weight"]); };
  return op;
}

// QKV = (q_heads + 2·kv_heads) · head_dim = (2 + 2) · 64 = kN columns.
Builder& rope_inputs(Builder& b) {
  return b.vector("positions", kM, kI32, false, true)
      .zero()
      .vector("frequencies", kN, kF32, false, false);
}
Builder& qk_weights(Builder& b) {
  return b.vector("qk_norm.q_weight", kHeadDim, kBf16, false, false)
      .vector("qk_norm.k_weight", kHeadDim, kBf16, false, false);
}
QkNorm qk_of(const Args& a) {
  return {a["qk_norm.q_weight"], a["qk_norm.k_weight"], a.qk.q_heads, a.qk.kv_heads, a.qk.eps};
}

Op linear_rope_op(Arena& arena, bool rmsnorm) {
  Op op{rmsnorm ? "coda::ops::linear_rmsnorm_rope" : "coda::ops::linear_rope"};
  Builder b(arena);
  b.matrix("QKV", kM, kN, kBf16, true)
      .matrix(rmsnorm ? "H" : "A", kM, kK, kBf16, false)
      .matrix("W_qkv", kN, kK, kBf16, false, false);
  rope_inputs(b);
  if (rmsnorm) b.stats_filled(kK);
  op.args = b.done();
  op.uses = kProgramChoice | (rmsnorm ? kStatsIn | kEps : 0u);
  if (rmsnorm)
    op.call = [](Args& a) {
      linear_rmsnorm_rope(a["QKV"], a["H"], a["W_qkv"], a.stats, a.eps, a["positions"],
                          a["frequencies"], nullptr, a.options);
    };
  else
    op.call = [](Args& a) {
      linear_rope(a["QKV"], a["A"], a["W_qkv"], a["positions"], a["frequencies"], nullptr,
                  a.options);
    };
  return op;
}

Op linear_qknorm_rope_op(Arena& arena, bool rmsnorm) {
  Op op{rmsnorm ? "coda::ops::linear_rmsnorm_qknorm_rope" : "coda::ops::linear_qknorm_rope"};
  Builder b(arena);
  b.matrix("QKV", kM, kN, kBf16, true)
      .matrix("Pre", kM, kN, kBf16, true)
      .optional()
      .matrix(rmsnorm ? "H" : "A", kM, kK, kBf16, false)
      .matrix("W_qkv", kN, kK, kBf16, false, false);
  qk_weights(rope_inputs(b));
  if (rmsnorm) b.stats_filled(kK);
  op.args = b.done();
  op.args.qk.q_heads = 2, op.args.qk.kv_heads = 1;
  op.uses = kQk | kProgramChoice | (rmsnorm ? kStatsIn | kEps : 0u);
  if (rmsnorm)
    op.call = [](Args& a) {
      linear_rmsnorm_qknorm_rope(a["QKV"], a["Pre"], a["H"], a["W_qkv"], a.stats, a.eps,
                                 a["positions"], a["frequencies"], qk_of(a), nullptr, a.options);
    };
  else
    op.call = [](Args& a) {
      linear_qknorm_rope(a["QKV"], a["Pre"], a["A"], a["W_qkv"], a["positions"], a["frequencies"],
                         qk_of(a), nullptr, a.options);
    };
  return op;
}

Op linear_swiglu_op(Arena& arena, bool rmsnorm) {
  Op op{rmsnorm ? "coda::ops::linear_rmsnorm_swiglu" : "coda::ops::linear_swiglu"};
  Builder b(arena);
  b.matrix("Z", kM, kN, kBf16, true)
      .optional()
      .matrix("Y", kM, kF, kBf16, true)
      .matrix(rmsnorm ? "H" : "A", kM, kK, kBf16, false)
      .matrix("W_gate_up", kN, kK, kBf16, false, false);
  if (rmsnorm) b.stats_filled(kK);
  op.args = b.done();
  op.uses = kProgramChoice | (rmsnorm ? kStatsIn | kEps : 0u);
  if (rmsnorm)
    op.call = [](Args& a) {
      linear_rmsnorm_swiglu(a["Z"], a["Y"], a["H"], a["W_gate_up"], a.stats, a.eps, nullptr,
                            a.options);
    };
  else
    op.call = [](Args& a) {
      linear_swiglu(a["Z"], a["Y"], a["A"], a["W_gate_up"], nullptr, a.options);
    };
  return op;
}

Op linear_swiglu_bwd_op(Arena& arena) {
  Op op{"coda::ops::linear_swiglu_bwd"};
  op.args = Builder(arena)
                .matrix("dZ", kM, kN, kBf16, true)
                .matrix("Y", kM, kF, kBf16, true)
                .vector("zdz", kM, kF32, true, true)
                .matrix("dOut", kM, kK, kBf16, false)
                .matrix("W_down", kK, kF, kBf16, false, false)
                .matrix("Z", kM, kN, kBf16, false)
                .workspace(linear_swiglu_bwd_workspace_bytes(kM, kF))
                .done();
  op.uses = kWorkspace | kProgramChoice;
  op.call = [](Args& a) {
    linear_swiglu_bwd(a["dZ"], a["Y"], a["zdz"], a["dOut"], a["W_down"], a["Z"], a.workspace,
                      a.workspace_bytes, nullptr, a.options);
  };
  return op;
}

Op linear_bias_gelu_op(Arena& arena) {
  Op op{"coda::ops::linear_bias_gelu"};
  op.args = Builder(arena)
                .matrix("Y", kM, kN, kBf16, true)
                .matrix("Pre", kM, kN, kBf16, true)
                .optional()
                .matrix("X", kM, kK, kBf16, false)
                .matrix("W", kN, kK, kBf16, false, false)
                .vector("bias", kN, kBf16, false, false)
                .done();
  op.uses = kProgramChoice;
  op.call = [](Args& a) {
    linear_bias_gelu(a["Y"], a["Pre"], a["X"], a["W"], a["bias"], nullptr, a.options);
  };
  return op;
}

Op linear_bias_gelu_bwd_op(Arena& arena) {
  Op op{"coda::ops::linear_bias_gelu_bwd"};
  op.args = Builder(arena)
                .matrix("dPre", kM, kN, kBf16, true)
                .vector("dbias", kN, kF32, true, false)
                .matrix("dOut", kM, kK, kBf16, false)
                .matrix("W_down", kK, kN, kBf16, false, false)
                .matrix("Pre", kM, kN, kBf16, false)
                .workspace(linear_bias_gelu_bwd_workspace_bytes(kM, kN))
                .done();
  op.uses = kWorkspace | kProgramChoice;
  op.call = [](Args& a) {
    linear_bias_gelu_bwd(a["dPre"], a["dbias"], a["dOut"], a["W_down"], a["Pre"], a.workspace,
                         a.workspace_bytes, nullptr, a.options);
  };
  return op;
}

Op linear_rmsnorm_bwd_op(Arena& arena) {
  Op op{"coda::ops::linear_rmsnorm_bwd"};
  op.args = Builder(arena)
                .matrix("dX", kM, kK, kBf16, true)
                .matrix("N", kM, kK, kBf16, true)
                .vector("dw", kK, kF32, true, false)
                .matrix("dZ", kM, kN, kBf16, false)
                .matrix("W", kN, kK, kBf16, false, false)
                .matrix("norm.X", kM, kK, kBf16, false)
                .vector("norm.weight", kK, kBf16, false, false)
                .vector("zdz", kM, kF32, false, true)
                .vector("alpha", 1, kF32, false, false)
                .optional()
                .stats_filled(kK)
                .workspace(linear_rmsnorm_bwd_workspace_bytes(kM, kK))
                .done();
  op.uses = kStatsIn | kEps | kWorkspace | kProgramChoice;
  op.call = [](Args& a) {
    const RmsNormSaved norm{a["norm.X"], a.stats, a["norm.weight"], a.eps};
    linear_rmsnorm_bwd(a["dX"], false, a["N"], a["dw"], a["dZ"], a["W"], norm, a["zdz"],
                       a.workspace, a.workspace_bytes, a["alpha"], nullptr, a.options);
  };
  return op;
}

Op qknorm_rope_bwd_op(Arena& arena) {
  Op op{"coda::ops::qknorm_rope_bwd"};
  Builder b(arena);
  b.matrix("dPre", kM, kN, kBf16, true)
      .vector("zdz", kM, kF32, true, true)
      .vector("dgamma.q_weight", kHeadDim, kF32, true, false)
      .vector("dgamma.k_weight", kHeadDim, kF32, true, false)
      .matrix("Pre", kM, kN, kBf16, false)
      .matrix("dQKV", kM, kN, kBf16, false);
  qk_weights(rope_inputs(b)).workspace(qknorm_rope_bwd_workspace_bytes(kM, kHeadDim));
  op.args = b.done();
  op.args.qk.q_heads = 2, op.args.qk.kv_heads = 1;
  op.uses = kQk | kWorkspace;
  op.in_place = {{"dPre", "dQKV"}};
  op.call = [](Args& a) {
    qknorm_rope_bwd(a["dPre"], a["zdz"], {a["dgamma.q_weight"], a["dgamma.k_weight"]}, a["Pre"],
                    a["dQKV"], a["positions"], a["frequencies"], qk_of(a), a.workspace,
                    a.workspace_bytes);
  };
  return op;
}

Op rope_bwd_op(Arena& arena) {
  Op op{"coda::ops::rope_bwd"};
  Builder b(arena);
  b.matrix("dZ", kM, kN, kBf16, true)
      .vector("zdz", kM, kF32, true, true)
      .matrix("QKV", kM, kN, kBf16, false)
      .matrix("dQKV", kM, kN, kBf16, false);
  op.args = rope_inputs(b).done();
  op.in_place = {{"dZ", "dQKV"}};
  op.call = [](Args& a) {
    rope_bwd(a["dZ"], a["zdz"], a["QKV"], a["dQKV"], a["positions"], a["frequencies"]);
  };
  return op;
}

Op linear_cross_entropy_op(Arena& arena) {
  Op op{"coda::ops::linear_cross_entropy"};
  op.args = Builder(arena)
                .vector("loss", 1, kF32, true, false)
                .vector("lse", kM, kF32, true, true)
                .matrix("X", kM, kK, kBf16, false)
                .matrix("W", kV, kK, kBf16, false, false)
                .free_rows()  // V: the loss-only op has no output of V columns
                .vector("targets", kM, kI32, false, true)
                .zero()
                .workspace(linear_cross_entropy_workspace_bytes(kM, kV))
                .done();
  op.uses = kCe | kWorkspace | kProgramChoice;
  op.call = [](Args& a) {
    linear_cross_entropy(a["loss"], a["lse"], a["X"], a["W"], a["targets"], a.ce, a.workspace,
                         a.workspace_bytes, nullptr, a.options);
  };
  return op;
}

Op linear_cross_entropy_fwd_bwd_op(Arena& arena) {
  Op op{"coda::ops::linear_cross_entropy_fwd_bwd"};
  op.args = Builder(arena)
                .vector("loss", 1, kF32, true, false)
                .vector("lse", kM, kF32, true, true)
                .matrix("grads.dX", kM, kK, kBf16, true)
                .matrix("grads.dW", kV, kK, kF32, true, false)
                .vector("grads.zdz", kM, kF32, true, true)
                .optional()
                .matrix("X", kM, kK, kBf16, false)
                .matrix("W", kV, kK, kBf16, false, false)
                .vector("targets", kM, kI32, false, true)
                .zero()
                .vector("grads.alpha", 1, kF32, false, false)
                .optional()
                .workspace(linear_cross_entropy_fwd_bwd_workspace_bytes(kM, kV))
                .done();
  op.uses = kCe | kWorkspace;
  op.call = [](Args& a) {
    const CrossEntropyGrads g{a["grads.dX"], a["grads.dW"], false, a["grads.zdz"],
                              a["grads.alpha"]};
    linear_cross_entropy_fwd_bwd(a["loss"], a["lse"], g, a["X"], a["W"], a["targets"], a.ce,
                                 a.workspace, a.workspace_bytes, nullptr, a.options);
  };
  return op;
}

// Cases beyond the generated ones, for one entry point.
std::vector<Case> own_cases(const Op& op) {
  const std::string entry = op.entry;
  if (entry == "coda::gemm")
    return {{"options.choice.swizzle 3",
             [](Args& a) {
               a.gemm_options.choice = gemm::KernelChoice{gemm::TileConfig::kCoop128x256Cluster2x1};
               a.gemm_options.choice->swizzle = 3;
             },
             {"swizzle must be 1, 2, 4 or 8"}}};
  if (entry == "coda::ops::linear_cross_entropy_fwd_bwd")
    return {{"ce.chunk_rows not a multiple of 128",
             [](Args& a) { a.ce.chunk_rows = 100; },
             {"ce.chunk_rows"}},
            {"options.choice.swizzle 3 (the chunk GEMMs)",
             [](Args& a) {
               a.options.choice = gemm::KernelChoice{gemm::TileConfig::kCoop128x256Cluster2x1};
               a.options.choice->swizzle = 3;
             },
             {"swizzle must be 1, 2, 4 or 8"}}};
  return {};
}

// ---- The runner --------------------------------------------------------------------------------

struct Outcome {
  int cases = 0;
  std::vector<std::string> failures;
};

void run_case(const Op& op, const Case& c, const Arena& arena, const PinnedHost& host,
              Outcome& outcome) {
  Args args = op.args;
  c.breaks(args);
  const auto device_before = arena.bytes();
  const auto host_before = host.bytes();
  std::string message;
  try {
    op.call(args);
  } catch (const Error& e) {
    message = e.what();
  }
  const cudaError_t sticky = cudaDeviceSynchronize();
  ++outcome.cases;
  auto fail = [&](const std::string& why) {
    outcome.failures.push_back(std::string(op.entry) + " / " + c.what + ": " + why +
                               (message.empty() ? "" : " — got: " + message));
  };
  if (sticky != cudaSuccess) {
    fail(std::string("CUDA error after the call: ") + cudaGetErrorString(sticky));
    return;
  }
  if (message.empty()) return fail("accepted");
  const std::string prefix = std::string(op.entry) + ": ";
  if (message.rfind(prefix, 0) != 0) fail("the message does not start with '" + prefix + "'");
  for (const std::string& want : c.expect)
    if (message.find(want) == std::string::npos) fail("the message does not say '" + want + "'");
  if (c.names_any_slot) {
    bool named = false;
    for (const Slot& s : op.args.slots) named |= message.find(s.name + ":") != std::string::npos;
    if (!named) fail("the message names no argument");
  }
  if (arena.bytes() != device_before) fail("device memory was written");
  if (host.bytes() != host_before) fail("host memory was written");
}

using OpFactory = std::function<Op(Arena&)>;

std::vector<OpFactory> all_ops() {
  return {gemm_op,
          linear_residual_rms_op,
          linear_rmsnorm_op,
          rms_norm_stats_op,
          [](Arena& a) { return linear_rope_op(a, false); },
          [](Arena& a) { return linear_rope_op(a, true); },
          [](Arena& a) { return linear_qknorm_rope_op(a, false); },
          [](Arena& a) { return linear_qknorm_rope_op(a, true); },
          [](Arena& a) { return linear_swiglu_op(a, false); },
          [](Arena& a) { return linear_swiglu_op(a, true); },
          linear_swiglu_bwd_op,
          linear_rmsnorm_bwd_op,
          qknorm_rope_bwd_op,
          rope_bwd_op,
          linear_cross_entropy_op,
          linear_cross_entropy_fwd_bwd_op,
          linear_bias_gelu_op,
          linear_bias_gelu_bwd_op};
}

TEST(BadInput, EveryEntryPointRefusesBeforeWritingAnything) {
  PinnedHost host;
  g_host_for_cases = host.p;
  Outcome outcome;
  int entry_points = 0;
  for (const OpFactory& make : all_ops()) {
    Arena arena(4 << 20);
    const Op op = make(arena);
    ++entry_points;
    // The description is a valid call: it runs and writes its outputs.
    {
      Args args = op.args;
      const auto before = arena.bytes();
      try {
        op.call(args);
      } catch (const Error& e) {
        ADD_FAILURE() << op.entry << ": the valid call was refused: " << e.what();
        continue;
      }
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << op.entry;
      EXPECT_NE(arena.bytes(), before) << op.entry << ": the valid call wrote nothing";
    }
    std::vector<Case> cases;
    for (std::size_t i = 0; i < op.args.slots.size(); ++i)
      for (Case& c : slot_cases(op, i)) cases.push_back(std::move(c));
    for (Case& c : scalar_cases(op)) cases.push_back(std::move(c));
    for (Case& c : own_cases(op)) cases.push_back(std::move(c));
    for (const Case& c : cases) run_case(op, c, arena, host, outcome);
  }
  EXPECT_EQ(entry_points, 18);
  EXPECT_GE(outcome.cases, 100);
  std::printf("[ bad input ] %d cases over %d entry points, %zu failed\n", outcome.cases,
              entry_points, outcome.failures.size());
  std::string report;
  for (const std::string& f : outcome.failures) report += "  " + f + "\n";
  EXPECT_TRUE(outcome.failures.empty()) << report;
}

// In place where documented: the very same view is accepted (and computes; the op tests check
// the values).
TEST(BadInput, InPlaceWhereDocumentedIsAccepted) {
  for (const OpFactory& make : {OpFactory(qknorm_rope_bwd_op), OpFactory(rope_bwd_op)}) {
    Arena arena(4 << 20);
    const Op op = make(arena);
    for (const auto& [out, in] : op.in_place) {
      Args args = op.args;
      args.slot(out).view = args[in];
      EXPECT_NO_THROW(op.call(args)) << op.entry << ": " << out << " = " << in;
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
  }
}

}  // namespace
}  // namespace coda::ops
