// SPDX-License-Identifier: BSD-3-Clause
// coda::gemm::gemm on the GPU: every compiled kernel, every operand layout, ragged shapes, against
// the float64 reference with the numerics contract of docs/numerics.md; NaN-poisoned outputs and
// operand padding; α as a device scalar; CUDA-graph capture; determinism; rejections on device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coda/gemm/gemm.hpp"
#include "coda/gemm/instance.hpp"
#include "device/device_buffer.hpp"
#include "device/gemm_oracle.hpp"
#include "reference/bf16.hpp"
#include "reference/gemm.hpp"

namespace coda::gemm {
namespace {

using testing::DeviceBuffer;

constexpr std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

// The contract's "framework" (docs/numerics.md) is the standard unfused computation as a bf16
// framework stores it: cuBLAS's bf16 GEMM (fp32 accumulation), its result stored as bf16. That
// bar is the same for fp32 D, which is strictly more precise than the bf16 tensor a framework
// keeps; the fp32-accumulation accuracy of fp32 D is measured against cuBLAS in docs/numerics.md.
struct Oracle {
  std::vector<double> ref64, framework;
  double tolerance;
};

Oracle run_oracle(int m, int n, int k, const std::vector<float>& a, const std::vector<float>& b,
                  float alpha) {
  Oracle o{testing::gemm_ref64(m, n, k, a, b, alpha), {}, 0.0};
  for (float x : testing::gemm_cublas_f32(m, n, k, a, b, alpha))
    o.framework.push_back(ref::round_to_bf16(x));
  o.tolerance = ref::contract_tolerance(o.framework, o.ref64);
  return o;
}

using testing::random_bf16_matrix;

constexpr std::uint16_t kBf16NaN = 0xFFFF;

// An operand stored in device memory in the requested major-ness with padded strides; the padding
// holds NaN, so a kernel that reads past an extent produces NaN and fails.
struct StoredOperand {
  DeviceBuffer buffer;
  TensorView view;
};

StoredOperand store(const std::vector<float>& logical, std::int64_t rows, std::int64_t cols,
                    bool row_contiguous) {
  const std::int64_t outer = row_contiguous ? rows : cols;
  const std::int64_t inner = row_contiguous ? cols : rows;
  const std::int64_t ld = round_up(inner, 8) + 8;
  std::vector<std::uint16_t> host(outer * ld, kBf16NaN);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      std::int64_t at = row_contiguous ? r * ld + c : c * ld + r;
      host[at] = ref::float_to_bf16_bits(logical[r * cols + c]);
    }
  StoredOperand s{DeviceBuffer(host.size() * 2), {}};
  s.buffer.upload(host);
  s.view = row_contiguous ? TensorView::matrix(s.buffer.get(), DType::kBF16, rows, cols, ld)
                          : TensorView::matrix_col_major(s.buffer.get(), DType::kBF16, rows, cols, ld);
  return s;
}

struct Output {
  DeviceBuffer buffer;
  TensorView view;
};

Output make_output(int m, int n, DType dtype) {
  const std::int64_t per16 = 16 / dtype_bytes(dtype);
  const std::int64_t ld = round_up(n, per16) + per16;
  Output o{DeviceBuffer(m * ld * dtype_bytes(dtype)), {}};
  o.view = TensorView::matrix(o.buffer.get(), dtype, m, n, ld);
  return o;
}

// D's values, and a description of any write into the row padding past the 16-byte unit that
// holds column N − 1, "" if none.
std::vector<double> read_output(const Output& o, std::string* padding_writes) {
  const TensorView& v = o.view;
  const std::int64_t m = v.shape[0], n = v.shape[1], ld = v.stride[0];
  const bool bf16 = v.dtype == DType::kBF16;
  auto bits16 = bf16 ? o.buffer.download<std::uint16_t>() : std::vector<std::uint16_t>{};
  auto bits32 = bf16 ? std::vector<std::uint32_t>{} : o.buffer.download<std::uint32_t>();
  // TMA stores whole 16-byte units: columns N .. round_up(N, 16 bytes) − 1 are D's scratch
  // (gemm.hpp); anything past them is a bug.
  const std::int64_t n_16b = round_up(n, 16 / static_cast<std::int64_t>(v.element_bytes()));
  std::vector<double> out(m * n);
  std::int64_t writes = 0, first_row = -1, first_col = -1, last_col = -1;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < ld; ++j) {
      const std::int64_t at = i * ld + j;
      float value;
      if (bf16) {
        value = ref::bf16_bits_to_float(bits16[at]);
      } else {
        std::memcpy(&value, &bits32[at], 4);
      }
      const bool poisoned = bf16 ? bits16[at] == kBf16NaN : bits32[at] == 0xFFFFFFFFu;
      if (j < n) {
        out[i * n + j] = value;
      } else if (j >= n_16b && !poisoned) {
        if (writes++ == 0) first_row = i, first_col = j;
        last_col = std::max(last_col, j);
      }
    }
  padding_writes->clear();
  if (writes)
    *padding_writes = std::to_string(writes) + " padding elements written, first at row " +
                      std::to_string(first_row) + " col " + std::to_string(first_col) +
                      ", last col " + std::to_string(last_col) + " (N " + std::to_string(n) +
                      ", ld " + std::to_string(ld) + ")";
  return out;
}

// max |out − ref64| against the contract's tolerance; non-finite outputs count as failures.
::testing::AssertionResult meets_contract(const std::vector<double>& out, const Oracle& o) {
  double worst = 0.0;
  std::size_t worst_at = 0, bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    double err = std::abs(out[i] - o.ref64[i]);
    if (!std::isfinite(out[i]) || err > o.tolerance) ++bad;
    if (!std::isfinite(out[i]) || err > worst) worst = std::isfinite(out[i]) ? err : INFINITY, worst_at = i;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << out.size() << " outputs fail; worst at " << worst_at << ": got "
         << out[worst_at] << ", ref " << o.ref64[worst_at] << ", |err| " << worst
         << " > tolerance " << o.tolerance;
}

// fp32 D must carry the fp32 accumulator, not a value rounded through 16 bits: its worst error is
// far below that of bf16 storage (measured: ~1e-6 relative against bf16's 2e-3; the margin of
// 64x still fails any 16-bit round trip).
::testing::AssertionResult keeps_fp32_precision(const std::vector<double>& out, const Oracle& o) {
  double worst = 0.0, bf16_storage = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    worst = std::max(worst, std::abs(out[i] - o.ref64[i]));
    bf16_storage = std::max(bf16_storage, std::abs(o.framework[i] - o.ref64[i]));
  }
  if (worst * 64 <= bf16_storage + 1e-6) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "fp32 D error " << worst << " is not below 1/64 of the "
                                       << "bf16 storage error " << bf16_storage;
}

struct LayoutCase {
  OperandLayout layout;
  bool a_k_major, b_k_major;
};
const LayoutCase kLayouts[] = {{OperandLayout::kAkBk, true, true},
                               {OperandLayout::kAkBn, true, false},
                               {OperandLayout::kAmBn, false, false}};

struct Shape { int m, n, k; };
// Ragged on purpose: 1 (a single row/column/K step), 199 and 4095 (one under a power of two,
// odd), 1000 (not a multiple of any tile), K = 1 (no full K block).
const Shape kShapes[] = {{1, 199, 1000},  {199, 1000, 4095}, {1000, 4095, 199}, {4095, 199, 1},
                         {1000, 1, 4095}, {256, 512, 128},   {1000, 1000, 1000}};

// The kernel choices each (layout, D dtype) is tested with: every compiled config at default
// scheduler settings, plus the raster/swizzle and stream-K decompositions the shape table uses.
std::vector<std::optional<KernelChoice>> choices_for(OperandLayout layout, DType d) {
  std::vector<std::optional<KernelChoice>> out = {std::nullopt};  // choose_kernel's own pick
  for (int c = 0; c < kNumTileConfigs; ++c) {
    TileConfig config = static_cast<TileConfig>(c);
    if (!find_instance(layout, d, config)) continue;
    out.push_back(KernelChoice{config});
    if (config == TileConfig::kCoop128x256Cluster2x1) {
      out.push_back(KernelChoice{config, RasterOrder::kAlongM, 8});
      out.push_back(KernelChoice{config, RasterOrder::kAlongN, 4});
    }
    if (is_stream_k(config)) {
      out.push_back(KernelChoice{config, RasterOrder::kHeuristic, 1, Decomposition::kStreamK});
      out.push_back(KernelChoice{config, RasterOrder::kAlongN, 2, Decomposition::kDataParallel});
    }
  }
  return out;
}

std::string describe(const std::optional<KernelChoice>& c) {
  if (!c) return "choose_kernel";
  return std::string(to_string(c->config)) + " " + to_string(c->raster) + " s" +
         std::to_string(c->swizzle) + " " + to_string(c->decomposition);
}

void run_gemm(const Output& d, const StoredOperand& a, const StoredOperand& b,
              GemmOptions options, cudaStream_t stream = nullptr) {
  std::size_t ws = workspace_bytes(d.view, a.view, b.view, options);
  DeviceBuffer workspace(ws);
  options.workspace = ws ? workspace.get() : nullptr;
  options.workspace_bytes = ws;
  gemm(d.view, a.view, b.view, options, stream);
  CODA_CHECK_CUDA(cudaStreamSynchronize(stream));
}

TEST(Gemm, EveryKernelEveryLayoutRaggedShapes) {
  std::mt19937_64 rng(testing::fresh_seed("Gemm.EveryKernelEveryLayoutRaggedShapes"));
  for (const Shape& s : kShapes) {
    auto a = random_bf16_matrix(s.m, s.k, rng);
    auto b = random_bf16_matrix(s.n, s.k, rng);
    for (DType d_dtype : {DType::kBF16, DType::kF32}) {
      Oracle oracle = run_oracle(s.m, s.n, s.k, a, b, 1.0f);
      for (const LayoutCase& l : kLayouts) {
        StoredOperand sa = store(a, s.m, s.k, l.a_k_major);
        StoredOperand sb = store(b, s.n, s.k, l.b_k_major);
        for (const auto& choice : choices_for(l.layout, d_dtype)) {
          SCOPED_TRACE(std::string(to_string(l.layout)) + " D " + dtype_name(d_dtype) + " " +
                       std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                       std::to_string(s.k) + " " + describe(choice));
          Output d = make_output(s.m, s.n, d_dtype);
          d.buffer.poison();
          GemmOptions options;
          options.choice = choice;
          run_gemm(d, sa, sb, options);
          std::string padding_writes;
          auto out = read_output(d, &padding_writes);
          EXPECT_TRUE(meets_contract(out, oracle));
          if (d_dtype == DType::kF32) EXPECT_TRUE(keeps_fp32_precision(out, oracle));
          EXPECT_EQ(padding_writes, "") << "the kernel wrote past D's last 16-byte unit";
        }
      }
    }
  }
}

TEST(Gemm, AlphaIsADeviceScalar) {
  std::mt19937_64 rng(testing::fresh_seed("Gemm.AlphaIsADeviceScalar"));
  const Shape s{333, 520, 776};
  auto a = random_bf16_matrix(s.m, s.k, rng);
  auto b = random_bf16_matrix(s.n, s.k, rng);
  for (float alpha : {0.37f, -3.0f, 0.0f}) {
    DeviceBuffer dalpha(4);
    dalpha.upload(std::vector<float>{alpha});
    for (DType d_dtype : {DType::kBF16, DType::kF32}) {
      Oracle oracle = run_oracle(s.m, s.n, s.k, a, b, alpha);
      for (const LayoutCase& l : kLayouts) {
        SCOPED_TRACE(std::string(to_string(l.layout)) + " alpha " + std::to_string(alpha));
        StoredOperand sa = store(a, s.m, s.k, l.a_k_major);
        StoredOperand sb = store(b, s.n, s.k, l.b_k_major);
        Output d = make_output(s.m, s.n, d_dtype);
        d.buffer.poison();
        GemmOptions options;
        options.alpha = dalpha.get<float>();
        run_gemm(d, sa, sb, options);
        std::string padding_writes;
        EXPECT_TRUE(meets_contract(read_output(d, &padding_writes), oracle));
        EXPECT_EQ(padding_writes, "");
      }
    }
  }
}

// Same inputs, same kernel -> the same bits, stream-K included (deterministic reduction), and a
// CUDA-graph replay gives the eager result: no host sync or host-side state in the launch path.
TEST(Gemm, DeterministicAndGraphCapturable) {
  std::mt19937_64 rng(testing::fresh_seed("Gemm.DeterministicAndGraphCapturable"));
  const Shape s{1024, 768, 8192};  // long K: stream-K splits it across CTAs
  auto a = random_bf16_matrix(s.m, s.k, rng);
  auto b = random_bf16_matrix(s.n, s.k, rng);
  StoredOperand sa = store(a, s.m, s.k, true);
  StoredOperand sb = store(b, s.n, s.k, true);
  for (KernelChoice choice :
       {KernelChoice{TileConfig::kStreamKCoop128x256Cluster2x1, RasterOrder::kHeuristic, 1,
                     Decomposition::kStreamK},
        KernelChoice{TileConfig::kCoop128x256Cluster1x2, RasterOrder::kAlongM, 8}}) {
    SCOPED_TRACE(describe(choice));
    GemmOptions options;
    options.choice = choice;
    Output first = make_output(s.m, s.n, DType::kBF16), again = make_output(s.m, s.n, DType::kBF16);
    first.buffer.poison();
    again.buffer.poison();
    run_gemm(first, sa, sb, options);
    run_gemm(again, sa, sb, options);
    EXPECT_EQ(first.buffer.download<std::uint16_t>(), again.buffer.download<std::uint16_t>());

    cudaStream_t stream;
    CODA_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::size_t ws = workspace_bytes(first.view, sa.view, sb.view, options);
    DeviceBuffer workspace(ws);
    options.workspace = workspace.get();
    options.workspace_bytes = ws;
    Output graphed = make_output(s.m, s.n, DType::kBF16);
    graphed.buffer.poison();
    cudaGraph_t graph;
    CODA_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    gemm(graphed.view, sa.view, sb.view, options, stream);
    CODA_CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    CODA_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) CODA_CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CODA_CHECK_CUDA(cudaStreamSynchronize(stream));
    EXPECT_EQ(first.buffer.download<std::uint16_t>(), graphed.buffer.download<std::uint16_t>());
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// Rejections that need real memory: nothing is launched and D keeps its poison.
TEST(Gemm, RejectsOnDeviceWithoutTouchingD) {
  std::mt19937_64 rng(testing::fresh_seed("Gemm.RejectsOnDeviceWithoutTouchingD"));
  const Shape s{256, 256, 8192};
  StoredOperand sa = store(random_bf16_matrix(s.m, s.k, rng), s.m, s.k, true);
  StoredOperand sb = store(random_bf16_matrix(s.n, s.k, rng), s.n, s.k, true);
  Output d = make_output(s.m, s.n, DType::kBF16);
  auto expect_rejected = [&](const std::string& needle, auto&& call) {
    d.buffer.poison();
    std::string message;
    try {
      call();
    } catch (const Error& e) {
      message = e.what();
    }
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
    EXPECT_NE(message.find(needle), std::string::npos) << "got: \"" << message << "\"";
    for (std::uint16_t bits : d.buffer.download<std::uint16_t>()) {
      ASSERT_EQ(bits, kBf16NaN) << "D was written although the call was rejected";
    }
  };

  GemmOptions stream_k;
  stream_k.choice = KernelChoice{TileConfig::kStreamKCoop128x256Cluster2x1, RasterOrder::kHeuristic,
                                 1, Decomposition::kStreamK};
  ASSERT_GT(workspace_bytes(d.view, sa.view, sb.view, stream_k), 0u);
  expect_rejected("options.workspace: kernel skcoop_128x256_2x1 needs", [&] {
    gemm(d.view, sa.view, sb.view, stream_k);
  });

  std::vector<std::uint16_t> host_a(static_cast<std::size_t>(sa.view.stride[0]) * s.m + 8);
  TensorView on_host = sa.view;
  on_host.data = reinterpret_cast<void*>(round_up(reinterpret_cast<std::intptr_t>(host_a.data()), 16));
  expect_rejected("coda::gemm: A: must be device memory on device 0", [&] {
    gemm(d.view, on_host, sb.view);
  });

  TensorView wrong_device = d.view;
  wrong_device.device = 1;
  TensorView a1 = sa.view, b1 = sb.view;
  a1.device = b1.device = 1;
  expect_rejected("D: is on device 1 but the current device is 0", [&] {
    gemm(wrong_device, a1, b1);
  });
}

}  // namespace
}  // namespace coda::gemm
