// SPDX-License-Identifier: BSD-3-Clause
// `coda-bench gemm` and `coda-bench tune`: the fixed mainloop against cuBLAS on the Llama-3 GEMMs.
//
// Method (docs/benchmarks.md §3, §5): uniform random bf16 operands in >= 2 sets rotated past
// the L2; a sanity check against cuBLAS before timing; warm-up; then interleaved rounds (the
// variant order alternates), several launches per variant per round, each timed by its own pair
// of CUDA events. Reported: median ms per variant over all launches, and the median of per-round
// ratios cuBLAS / coda (> 1: coda faster), which cancels most of the power-cap clock drift.
#include "gemm_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>

#include "coda/gemm/choose_config.hpp"
#include "timing.hpp"

namespace coda::bench {
namespace {

constexpr std::size_t kRotationBytes = 256u << 20;  // > 4x the H100's 50 MB L2

struct Variant {
  std::string name;
  std::function<void(int set)> launch;
};

struct Measured {
  std::vector<double> ms;                   // every launch
  std::vector<double> round_median;         // per round
};

// Interleaved rounds over `variants`; returns the samples of each.
std::vector<Measured> measure(const std::vector<Variant>& variants, int sets, int rounds,
                              int reps, cudaStream_t stream) {
  std::vector<Measured> out(variants.size());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < variants.size(); ++j) {
      std::size_t v = (r % 2 == 0) ? j : variants.size() - 1 - j;
      auto ms = time_launches([&](int i) { variants[v].launch((r * reps + i) % sets); }, reps,
                              stream);
      out[v].ms.insert(out[v].ms.end(), ms.begin(), ms.end());
      out[v].round_median.push_back(median(ms));
    }
  return out;
}

double median_ratio(const Measured& baseline, const Measured& candidate) {
  std::vector<double> ratios;
  for (std::size_t r = 0; r < baseline.round_median.size(); ++r)
    ratios.push_back(baseline.round_median[r] / candidate.round_median[r]);
  return median(ratios);
}

// A coda variant over the operand sets, its workspace owned by the variant.
Variant coda_variant(const OperandSets& ops, const gemm::KernelChoice& choice, cudaStream_t stream,
                     std::vector<std::shared_ptr<void>>& keep_alive) {
  gemm::GemmOptions options;
  options.choice = choice;
  std::size_t ws = gemm::workspace_bytes(ops.d(0), ops.a(0), ops.b(0), options);
  if (ws) {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, ws), "cudaMalloc workspace");
    keep_alive.emplace_back(p, [](void* q) { cudaFree(q); });
    options.workspace = p;
    options.workspace_bytes = ws;
  }
  std::string name = std::string(gemm::to_string(choice.config)) + " " +
                     gemm::to_string(choice.raster) + " s" + std::to_string(choice.swizzle) +
                     (gemm::is_stream_k(choice.config)
                          ? std::string(" ") + gemm::to_string(choice.decomposition) : "");
  return {name, [&ops, options, stream](int set) {
            gemm::gemm(ops.d(set), ops.a(set), ops.b(set), options, stream);
          }};
}

Variant cublas_variant(const OperandSets& ops, cublasHandle_t handle) {
  return {"cublas", [&ops, handle](int set) { ops.cublas_gemm(handle, set); }};
}

// cuBLAS into set 0's D, kept; then coda into it; max |coda − cuBLAS| / max |cuBLAS|.
double check_against_cublas(const OperandSets& ops, const Variant& coda, cublasHandle_t handle,
                            const GemmShape& s) {
  const std::size_t count = std::size_t(s.m) * s.n;
  void* expected = nullptr;
  check_cuda(cudaMalloc(&expected, 2 * count), "cudaMalloc");
  // The launches go to the bench's non-blocking stream, which does not order against the legacy
  // stream of cudaMemcpy/cudaMemset: synchronise the device between the steps.
  ops.cublas_gemm(handle, 0);
  check_cuda(cudaDeviceSynchronize(), "cuBLAS launch");
  check_cuda(cudaMemcpy(expected, ops.d(0).data, 2 * count, cudaMemcpyDeviceToDevice), "copy");
  check_cuda(cudaMemset(ops.d(0).data, 0xFF, 2 * count), "poison");
  check_cuda(cudaDeviceSynchronize(), "poison");
  coda.launch(0);
  check_cuda(cudaDeviceSynchronize(), "coda launch");
  double diff = relative_difference(ops.d(0).data, expected, count);
  cudaFree(expected);
  return diff;
}

int reps_for(double est_ms, double budget_ms, int lo, int hi) {
  return std::clamp(static_cast<int>(std::ceil(budget_ms / std::max(est_ms, 1e-3))), lo, hi);
}

double tflops(const GemmShape& s, double ms) { return 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12; }

struct Context {
  cudaStream_t stream;
  cublasHandle_t handle;
  void* cublas_workspace;
  Context() {
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_cublas(cublasCreate(&handle), "cublasCreate");
    check_cublas(cublasSetStream(handle, stream), "cublasSetStream");
    check_cuda(cudaMalloc(&cublas_workspace, 32u << 20), "cuBLAS workspace");
    check_cublas(cublasSetWorkspace(handle, cublas_workspace, 32u << 20), "cublasSetWorkspace");
  }
  ~Context() {
    cublasDestroy(handle);
    cudaFree(cublas_workspace);
    cudaStreamDestroy(stream);
  }
};

std::string gpu_name() {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  return prop.name;
}

std::string choice_literal(const gemm::KernelChoice& c) {
  static const std::map<gemm::TileConfig, const char*> configs = {
      {gemm::TileConfig::kCoop128x256Cluster1x2, "kCoop128x256Cluster1x2"},
      {gemm::TileConfig::kCoop128x256Cluster2x1, "kCoop128x256Cluster2x1"},
      {gemm::TileConfig::kCoop256x128Cluster1x2, "kCoop256x128Cluster1x2"},
      {gemm::TileConfig::kStreamKCoop128x256Cluster2x1, "kStreamKCoop128x256Cluster2x1"},
      {gemm::TileConfig::kPingpong128x128Cluster2x1, "kPingpong128x128Cluster2x1"}};
  const char* raster[] = {"kHeuristic", "kAlongM", "kAlongN"};
  const char* decomposition[] = {"kHeuristic", "kDataParallel", "kStreamK"};
  return std::string("{TileConfig::") + configs.at(c.config) + ", RasterOrder::" +
         raster[int(c.raster)] + ", " + std::to_string(c.swizzle) + ", Decomposition::" +
         decomposition[int(c.decomposition)] + "}";
}

// Host time per call (µs) of `launch`, enqueueing `calls` launches back to back: the GPU is busier
// than the host, so this is the host-side cost of one call (validation, TMA descriptors, launch).
double host_us_per_call(const Variant& v, int sets, cudaStream_t stream) {
  constexpr int calls = 100;
  for (int i = 0; i < 3; ++i) v.launch(i % sets);
  check_cuda(cudaStreamSynchronize(stream), "warm-up");
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) v.launch(i % sets);
  auto end = std::chrono::steady_clock::now();
  check_cuda(cudaStreamSynchronize(stream), "host overhead");
  return std::chrono::duration<double, std::micro>(end - start).count() / calls;
}

}  // namespace

int run_gemm_bench(const BenchArgs& args) {
  Context ctx;
  const std::string gpu = gpu_name();
  std::printf("coda-bench gemm on %s, %d rounds\n", gpu.c_str(), args.rounds);
  struct Row {
    GemmShape shape;
    std::string kernel;
    double coda_ms, cublas_ms, ratio, diff, coda_host_us, cublas_host_us;
  };
  std::vector<Row> rows;
  for (const GemmShape& s : llama3_gemm_shapes(args.tokens, args.models, args.passes)) {
    OperandSets ops(s, kRotationBytes);
    std::vector<std::shared_ptr<void>> keep;
    gemm::KernelChoice choice = gemm::choose_kernel(s.layout, DType::kBF16, s.m, s.n, s.k);
    std::vector<Variant> variants = {cublas_variant(ops, ctx.handle),
                                     coda_variant(ops, choice, ctx.stream, keep)};
    const double diff = check_against_cublas(ops, variants[1], ctx.handle, s);
    auto warm = measure(variants, ops.count(), 1, 2, ctx.stream);
    const int reps = reps_for(median(warm[0].ms), 40.0, 2, 10);
    auto m = measure(variants, ops.count(), args.rounds, reps, ctx.stream);
    Row row{s, variants[1].name, median(m[1].ms), median(m[0].ms), median_ratio(m[0], m[1]), diff,
            host_us_per_call(variants[1], ops.count(), ctx.stream),
            host_us_per_call(variants[0], ops.count(), ctx.stream)};
    rows.push_back(row);
    std::printf("%-4s %-8s %-5s %6dx%6dx%6d  %-40s cuBLAS %8.3f ms  coda %8.3f ms  ratio %.3f  "
                "(%.0f TFLOP/s)  diff %.1e\n",
                s.model.c_str(), s.projection.c_str(), s.pass.c_str(), s.m, s.n, s.k,
                row.kernel.c_str(), row.cublas_ms, row.coda_ms, row.ratio,
                tflops(s, row.coda_ms), diff);
    std::fflush(stdout);
  }

  double log_sum = 0, worst = 1e9;
  for (const Row& r : rows) {
    log_sum += std::log(r.ratio);
    worst = std::min(worst, r.ratio);
  }
  const double geomean = rows.empty() ? 0 : std::exp(log_sum / rows.size());

  if (!args.json.empty()) {
    std::ofstream f(args.json);
    f << "{\n  \"commit\": \"" << args.commit << "\",\n  \"date\": \"" << args.date
      << "\",\n  \"gpu\": \"" << gpu << "\",\n  \"command\": \"" << args.command
      << "\",\n  \"geomean_ratio_cublas_over_coda\": " << geomean
      << ",\n  \"min_ratio_cublas_over_coda\": " << worst << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      f << "    {\"name\": \"gemm_" << r.shape.pass << "\", \"shape\": \"" << r.shape.label()
        << "\", \"m\": " << r.shape.m << ", \"n\": " << r.shape.n << ", \"k\": " << r.shape.k
        << ", \"kernel\": \"" << r.kernel << "\", \"coda_ms\": " << r.coda_ms
        << ", \"baseline\": {\"cublas_gemm\": " << r.cublas_ms
        << "}, \"ratio_cublas_over_coda\": " << r.ratio << ", \"max_rel_diff_vs_cublas\": " << r.diff
        << ", \"host_us_per_call\": {\"coda\": " << r.coda_host_us << ", \"cublas\": "
        << r.cublas_host_us << "}"
        << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    f << "  ]\n}\n";
  }

  std::printf("\n| shape | pass | M×N×K | kernel | cuBLAS ms | coda ms | cuBLAS/coda | host µs "
              "coda / cuBLAS |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows)
    std::printf("| %s | %s | %d×%d×%d | %s | %.3f | %.3f | %.3f | %.1f / %.1f |\n",
                r.shape.label().c_str(), r.shape.pass.c_str(), r.shape.m, r.shape.n, r.shape.k,
                r.kernel.c_str(), r.cublas_ms, r.coda_ms, r.ratio, r.coda_host_us,
                r.cublas_host_us);
  std::printf("\ngeomean cuBLAS/coda %.3f, min %.3f over %zu shapes\n", geomean, worst, rows.size());
  bool bad = false;
  for (const Row& r : rows) bad |= !(r.diff < 1e-2);
  if (bad) std::printf("ERROR: a kernel disagreed with cuBLAS (diff >= 1e-2)\n");
  return bad ? 1 : 0;
}

int run_tune(const BenchArgs& args) {
  Context ctx;
  std::printf("coda-bench tune on %s\n", gpu_name().c_str());
  std::ofstream table(args.table_out);
  table << "// Shape -> kernel table for choose_kernel(), written by `coda-bench tune` on "
        << gpu_name() << " (" << args.date << ", commit " << args.commit << ").\n"
        << "// Phase 1: every candidate once; phase 2: the best 4 and cuBLAS in interleaved rounds.\n"
        << "// {layout, M, N, K, {config, raster, swizzle, decomposition}},  // shape: cuBLAS/coda\n";
  const std::pair<gemm::RasterOrder, int> settings[] = {
      {gemm::RasterOrder::kHeuristic, 1}, {gemm::RasterOrder::kAlongM, 1},
      {gemm::RasterOrder::kAlongM, 2},    {gemm::RasterOrder::kAlongM, 4},
      {gemm::RasterOrder::kAlongM, 8},    {gemm::RasterOrder::kAlongN, 1},
      {gemm::RasterOrder::kAlongN, 2},    {gemm::RasterOrder::kAlongN, 4},
      {gemm::RasterOrder::kAlongN, 8}};
  for (const GemmShape& s : llama3_gemm_shapes(args.tokens, args.models, args.passes)) {
    OperandSets ops(s, kRotationBytes);
    std::vector<std::shared_ptr<void>> keep;
    std::vector<gemm::KernelChoice> candidates;
    for (int c = 0; c < gemm::kNumTileConfigs; ++c)
      for (auto [raster, swizzle] : settings) {
        auto config = static_cast<gemm::TileConfig>(c);
        if (gemm::is_stream_k(config)) {
          for (auto d : {gemm::Decomposition::kHeuristic, gemm::Decomposition::kStreamK})
            candidates.push_back({config, raster, swizzle, d});
        } else {
          candidates.push_back({config, raster, swizzle});
        }
      }
    std::vector<Variant> all = {cublas_variant(ops, ctx.handle)};
    for (const auto& c : candidates) all.push_back(coda_variant(ops, c, ctx.stream, keep));
    auto warm = measure({all[0]}, ops.count(), 1, 2, ctx.stream);
    const double est = median(warm[0].ms);
    auto p1 = measure(all, ops.count(), 1, reps_for(est, 4.0, 2, 4), ctx.stream);
    std::vector<std::size_t> order(candidates.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return median(p1[x + 1].ms) < median(p1[y + 1].ms);
    });
    std::vector<Variant> finalists = {all[0]};
    for (std::size_t i = 0; i < 4 && i < order.size(); ++i) finalists.push_back(all[order[i] + 1]);
    auto p2 = measure(finalists, ops.count(), args.rounds, reps_for(est, 15.0, 2, 6), ctx.stream);
    std::size_t best = 1;
    for (std::size_t i = 2; i < finalists.size(); ++i)
      if (median_ratio(p2[0], p2[i]) > median_ratio(p2[0], p2[best])) best = i;
    const gemm::KernelChoice& winner = candidates[order[best - 1]];
    const double ratio = median_ratio(p2[0], p2[best]);
    const double diff = check_against_cublas(ops, finalists[best], ctx.handle, s);
    table << "{OperandLayout::k" << gemm::to_string(s.layout) << ", " << s.m << ", " << s.n << ", "
          << s.k << ", " << choice_literal(winner) << "},  // " << s.label() << " " << s.pass
          << ": " << std::fixed << std::setprecision(3) << ratio << "\n";
    table.flush();
    std::printf("%-4s %-8s %-5s %-45s cuBLAS/coda %.3f  (cuBLAS %.3f ms)  diff %.1e\n",
                s.model.c_str(), s.projection.c_str(), s.pass.c_str(),
                finalists[best].name.c_str(), ratio, median(p2[0].ms), diff);
    std::fflush(stdout);
    if (!(diff < 1e-2)) {
      std::printf("ERROR: the winner disagrees with cuBLAS\n");
      return 1;
    }
  }
  return 0;
}

}  // namespace coda::bench
