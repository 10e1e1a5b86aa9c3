// SPDX-License-Identifier: BSD-3-Clause
// `coda-bench gemm`: the fixed mainloop against cuBLAS on the Llama-3 GEMMs, under the kernel a
// user gets (choose_kernel: the GPU's table, else the rule).
//
// Method (docs/benchmarks.md §3, §5): uniform random bf16 operands in >= 2 sets rotated past
// the L2; a sanity check against cuBLAS before timing; warm-up; then interleaved rounds (the
// variant order alternates), several launches per variant per round, each timed by its own pair
// of CUDA events. Reported: median ms per variant over all launches, and the median of per-round
// ratios cuBLAS / coda (> 1: coda faster), which cancels most of the power-cap clock drift.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "coda/gemm/choose_config.hpp"
#include "gemm_variants.hpp"

namespace coda::bench {
namespace {

double tflops(const GemmShape& s, double ms) { return 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12; }

// Host time per call (µs) of `launch`, enqueueing `calls` launches back to back: the GPU is busier
// than the host, so this is the host-side cost of one call (validation, TMA descriptors, launch).
double host_us_per_call(const Timed& v, int sets, cudaStream_t stream) {
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
  BenchDevice dev;
  const std::string gpu = dev.prop.name;
  std::printf("coda-bench gemm on %s, %d rounds, M = %s\n", gpu.c_str(), args.rounds,
              args.token_list().c_str());
  struct Row {
    GemmShape shape;
    std::string kernel;
    double coda_ms, cublas_ms, ratio, diff, coda_host_us, cublas_host_us;
  };
  std::vector<Row> rows;
  std::vector<GemmShape> shapes;
  for (int tokens : args.token_counts)
    for (const GemmShape& s : llama3_gemm_shapes(tokens, args.models, args.passes))
      shapes.push_back(s);
  for (const GemmShape& s : shapes) {
    OperandSets ops(s, kRotationBytes);
    std::vector<std::shared_ptr<void>> keep;
    gemm::KernelChoice choice = gemm::choose_kernel(s.layout, DType::kBF16, s.m, s.n, s.k);
    std::vector<Timed> variants = {cublas_variant(ops, dev.handle),
                                   coda_variant(ops, choice, dev.stream, keep)};
    const double diff = check_against_cublas(ops, variants[1], dev.handle, s);
    std::vector<std::vector<double>> all;
    interleaved_rounds(variants, ops.count(), 1, 2, dev.stream, &all);  // warm-up, and an estimate
    const int reps = reps_for(median(all[0]), 40.0, 2, 10);
    auto rounds = interleaved_rounds(variants, ops.count(), args.rounds, reps, dev.stream, &all);
    Row row{s, variants[1].name, median(all[1]), median(all[0]),
            median_ratio(rounds[0], rounds[1]), diff,
            host_us_per_call(variants[1], ops.count(), dev.stream),
            host_us_per_call(variants[0], ops.count(), dev.stream)};
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

}  // namespace coda::bench
