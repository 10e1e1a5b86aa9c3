// SPDX-License-Identifier: BSD-3-Clause
// `coda-bench epilogue`: each example program against the plain GEMM of the same config (the cost of
// the epilogue alone) and cuBLAS, at the 8B shapes, Cooperative and Pingpong, same method as
// `coda-bench gemm` (interleaved rounds, median of per-round ratios).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coda/epilogue/example_instances.hpp"
#include "coda/epilogue/merge.hpp"
#include "gemm_bench.hpp"
#include "timing.hpp"

namespace coda::bench {
namespace {

struct Buffer {
  std::shared_ptr<void> p;
  explicit Buffer(std::size_t bytes) {
    void* raw = nullptr;
    check_cuda(cudaMalloc(&raw, bytes), "cudaMalloc");
    check_cuda(cudaMemset(raw, 0, bytes), "cudaMemset");
    p.reset(raw, [](void* q) { cudaFree(q); });
  }
  template <class T = void> T* get() const { return static_cast<T*>(p.get()); }
};

struct Timed { std::string name; std::function<void(int)> launch; };

std::vector<std::vector<double>> rounds_of(const std::vector<Timed>& v, int sets, int rounds,
                                           int reps, cudaStream_t s,
                                           std::vector<std::vector<double>>* all) {
  std::vector<std::vector<double>> per_round(v.size());
  all->assign(v.size(), {});
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < v.size(); ++j) {
      std::size_t i = r % 2 ? v.size() - 1 - j : j;
      auto ms = time_launches([&](int x) { v[i].launch((r * reps + x) % sets); }, reps, s);
      (*all)[i].insert((*all)[i].end(), ms.begin(), ms.end());
      per_round[i].push_back(median(ms));
    }
  return per_round;
}

double ratio(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (std::size_t i = 0; i < num.size(); ++i) r.push_back(num[i] / den[i]);
  return median(r);
}

}  // namespace

int run_epilogue_bench(const BenchArgs& args) {
  cudaStream_t stream;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cublasHandle_t handle;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  check_cublas(cublasSetStream(handle, stream), "cublasSetStream");
  Buffer cublas_ws(32u << 20);
  check_cublas(cublasSetWorkspace(handle, cublas_ws.get(), 32u << 20), "cublasSetWorkspace");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "props");
  std::printf("coda-bench epilogue on %s, %d rounds\n", prop.name, args.rounds);

  const GemmShape shapes[] = {
      {"8B", "o", "fwd", gemm::OperandLayout::kAkBk, args.tokens, 4096, 4096},
      {"8B", "gate_up", "fwd", gemm::OperandLayout::kAkBk, args.tokens, 28672, 4096}};
  const gemm::TileConfig configs[] = {gemm::TileConfig::kCoop128x256Cluster2x1,
                                      gemm::TileConfig::kPingpong128x128Cluster2x1};
  struct Row { std::string family, program, shape, config; double ms, plain_ms, cublas_ms, over_plain; };
  std::vector<Row> rows;
  for (const GemmShape& s : shapes) {
    OperandSets ops(s, 256u << 20);
    const std::size_t mn = std::size_t(s.m) * s.n;
    Buffer residual(mn * 2), normed(mn * 2), weight(s.n * 2), row_scale(s.m * 4), alpha(4);
    std::vector<float> one = {1.0f};
    check_cuda(cudaMemcpy(alpha.get(), one.data(), 4, cudaMemcpyHostToDevice), "alpha");
    for (gemm::TileConfig config : configs) {
      const gemm::KernelChoice choice{config};
      Buffer row_partials(epilogue::per_row_partial_layout(config, s.m, s.n).floats() * 4);
      Buffer col_partials(epilogue::per_col_partial_layout(config, s.m, s.n).floats() * 4);
      epilogue::ResidualRmsParams rr{residual.get(), s.n, weight.get(), normed.get(), s.n,
                                     row_partials.get<float>()};
      epilogue::RowScaleParams rs{alpha.get<float>(), row_scale.get<float>()};
      epilogue::BiasSiluColSumParams bs{weight.get(), col_partials.get<float>()};
      epilogue::ResidualAddParams ra{residual.get(), s.n};
      epilogue::RowSumSquaresParams rq{row_partials.get<float>()};
      gemm::GemmOptions plain;
      plain.choice = choice;
      std::vector<Timed> v = {
          {"cublas", [&](int i) { ops.cublas_gemm(handle, i); }},
          {"plain", [&](int i) { gemm::gemm(ops.d(i), ops.a(i), ops.b(i), plain, stream); }},
          {"activation", [&](int i) { epilogue::activation(ops.d(i), ops.a(i), ops.b(i), {}, choice, stream); }},
          {"row_scale", [&](int i) { epilogue::row_scale(ops.d(i), ops.a(i), ops.b(i), rs, choice, stream); }},
          {"residual_add", [&](int i) { epilogue::residual_add(ops.d(i), ops.a(i), ops.b(i), ra, choice, stream); }},
          {"row_sum_squares", [&](int i) { epilogue::row_sum_squares(ops.d(i), ops.a(i), ops.b(i), rq, choice, stream); }},
          {"bias_silu_col_sum", [&](int i) { epilogue::bias_silu_col_sum(ops.d(i), ops.a(i), ops.b(i), bs, choice, stream); }},
          {"residual_rms", [&](int i) { epilogue::residual_rms(ops.d(i), ops.a(i), ops.b(i), rr, choice, stream); }}};
      std::vector<std::vector<double>> all;
      rounds_of(v, ops.count(), 1, 2, stream, &all);  // warm-up
      const int reps = std::max(2, std::min(10, int(40.0 / std::max(median(all[0]), 0.01))));
      auto per_round = rounds_of(v, ops.count(), args.rounds, reps, stream, &all);
      // Each row's family; the last two compose several (per-col reduce + element-wise + broadcast;
      // tile load + tile store + per-row reduce + broadcast).
      const char* families[] = {"", "", "elementwise", "broadcast", "tile", "reduce", "reduce", "tile"};
      for (std::size_t i = 2; i < v.size(); ++i) {
        rows.push_back({families[i], v[i].name, s.label(), gemm::to_string(config), median(all[i]),
                        median(all[1]), median(all[0]), ratio(per_round[i], per_round[1])});
        const Row& r = rows.back();
        std::printf("%-10s %-18s %-10s %-22s %.3f ms  plain %.3f  cuBLAS %.3f  ×plain %.3f\n",
                    r.family.c_str(), r.program.c_str(), r.shape.c_str(), r.config.c_str(), r.ms,
                    r.plain_ms, r.cublas_ms, r.over_plain);
        std::fflush(stdout);
      }
    }
  }
  if (!args.json.empty()) {
    std::ofstream f(args.json);
    f << "{\n  \"commit\": \"" << args.commit << "\",\n  \"date\": \"" << args.date
      << "\",\n  \"gpu\": \"" << prop.name << "\",\n  \"command\": \"" << args.command
      << "\",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      f << "    {\"name\": \"" << r.family << "\", \"program\": \"" << r.program
        << "\", \"shape\": \"" << r.shape << "\", \"config\": \"" << r.config
        << "\", \"coda_ms\": " << r.ms << ", \"baseline\": {\"plain_gemm\": " << r.plain_ms
        << ", \"cublas_gemm\": " << r.cublas_ms << "}, \"ratio_over_plain\": " << r.over_plain
        << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    f << "  ]\n}\n";
  }
  std::printf("\n| family | program | shape | config | ms | plain ms | cuBLAS ms | × plain |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows)
    std::printf("| %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f |\n", r.family.c_str(),
                r.program.c_str(), r.shape.c_str(), r.config.c_str(), r.ms, r.plain_ms,
                r.cublas_ms, r.over_plain);
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace coda::bench
