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

#include "coda/epilogue/program_launchers.hpp"
#include "src/epilogue/example_launchers.hpp"
#include "coda/epilogue/merge.hpp"
#include "gemm_bench.hpp"
#include "rounds.hpp"
#include "timing.hpp"

namespace coda::bench {

int run_epilogue_bench(const BenchArgs& args) {
  const BenchDevice device;
  cudaStream_t stream = device.stream;
  cublasHandle_t handle = device.handle;
  const cudaDeviceProp& prop = device.prop;
  std::printf("coda-bench epilogue on %s, %d rounds\n", prop.name, args.rounds);

  const GemmShape shapes[] = {
      {"8B", "o", "fwd", gemm::OperandLayout::kAkBk, args.tokens(), 4096, 4096},
      {"8B", "gate_up", "fwd", gemm::OperandLayout::kAkBk, args.tokens(), 28672, 4096}};
  struct Row { std::string family, program, shape, config; double ms, plain_ms, cublas_ms, over_plain; };
  std::vector<Row> rows;
  for (const GemmShape& s : shapes) {
    OperandSets ops(s, 256u << 20);
    const std::size_t mn = std::size_t(s.m) * s.n;
    DeviceAlloc residual(mn * 2), normed(mn * 2), weight(s.n * 2), row_scale(s.m * 4), alpha(4);
    DeviceAlloc packed_z(mn * 4), packed_dz(mn * 4), positions(s.m * 4), freq(s.n / 2 * 8),
        targets(s.m * 4), target_logits(s.m * 4), rstd(s.m * 4);
    std::vector<float> one = {1.0f};
    check_cuda(cudaMemcpy(alpha.get(), one.data(), 4, cudaMemcpyHostToDevice), "alpha");
    for (gemm::TileConfig config : epilogue::kExampleConfigs) {  // the configs all of them have
      const gemm::KernelChoice choice{config};
      const epilogue::PartialLayout row_layout = epilogue::per_row_partial_layout(config, s.m, s.n);
      DeviceAlloc row_partials(row_layout.floats() * 4);
      DeviceAlloc col_partials(epilogue::per_col_partial_layout(config, s.m, s.n).floats() * 4);
      epilogue::ResidualRmsParams rr{residual.get(), s.n, weight.get(), normed.get(), s.n,
                                     row_partials.get<float>()};
      epilogue::RowScaleParams rs{alpha.get<float>(), row_scale.get<float>()};
      epilogue::BiasSiluColSumParams bs{weight.get(), col_partials.get<float>()};
      epilogue::ResidualAddParams ra{residual.get(), s.n};
      epilogue::RowSumSquaresParams rq{row_partials.get<float>()};
      epilogue::SwiGluPairsParams sw{normed.get(), s.n / 2};
      epilogue::RopeRotateParams ro{positions.get<std::int32_t>(), freq.get<epilogue::RopeFrequency>()};
      epilogue::SwiGluPairsGradParams sg{packed_z.get(), s.n, packed_dz.get(), s.n};
      // The norm statistics of a 4096-wide producer (16 N-tiles of 256), as in a Llama block.
      const epilogue::PartialLayout stats = epilogue::per_row_partial_layout(config, s.m, 4096);
      epilogue::RstdRowScaleParams leaf{{row_partials.get<float>(), stats, 4096}, 1e-6f};
      epilogue::CrossEntropyPartialsParams ce;
      ce.lse_partials = row_partials.get<float>();
      ce.lse_padded = row_layout.padded;
      ce.targets = targets.get();
      ce.target_logits = target_logits.get<float>();
      gemm::GemmOptions plain;
      plain.choice = choice;
      std::vector<Timed> v = {
          {"cublas", [&](int i) { ops.cublas_gemm(handle, i); }},
          {"plain", [&](int i) { gemm::gemm(ops.d(i), ops.a(i), ops.b(i), plain, stream); }},
          {"activation", [&](int i) { epilogue::activation(ops.d(i), ops.a(i), ops.b(i), {}, choice, stream); }, "elementwise"},
          {"swiglu_pairs", [&](int i) { epilogue::swiglu_pairs(ops.d(i), ops.a(i), ops.b(i), sw, choice, stream); }, "elementwise"},
          {"rope_rotate", [&](int i) { epilogue::rope_rotate(ops.d(i), ops.a(i), ops.b(i), ro, choice, stream); }, "elementwise"},
          {"row_scale", [&](int i) { epilogue::row_scale(ops.d(i), ops.a(i), ops.b(i), rs, choice, stream); }, "broadcast"},
          {"rstd_row_scale", [&](int i) { epilogue::rstd_row_scale(ops.d(i), ops.a(i), ops.b(i), leaf, choice, stream); }, "broadcast"},
          {"rstd_merge+row_scale", [&](int i) {
             epilogue::rstd_from_partials(row_partials.get<float>(), stats, s.m, 4096, 1e-6f, rstd.get<float>(), stream);
             epilogue::row_scale(ops.d(i), ops.a(i), ops.b(i), {nullptr, rstd.get<float>()}, choice, stream); }, "broadcast"},
          {"residual_add", [&](int i) { epilogue::residual_add(ops.d(i), ops.a(i), ops.b(i), ra, choice, stream); }, "tile"},
          {"residual_accumulate", [&](int i) { epilogue::residual_accumulate(ops.d(i), ops.a(i), ops.b(i), {}, choice, stream); }, "tile"},
          {"swiglu_pairs_grad", [&](int i) { epilogue::swiglu_pairs_grad(ops.d(i), ops.a(i), ops.b(i), sg, choice, stream); }, "tile"},
          {"row_sum_squares", [&](int i) { epilogue::row_sum_squares(ops.d(i), ops.a(i), ops.b(i), rq, choice, stream); }, "reduce"},
          {"bias_silu_col_sum", [&](int i) { epilogue::bias_silu_col_sum(ops.d(i), ops.a(i), ops.b(i), bs, choice, stream); }, "reduce"},
          {"residual_rms", [&](int i) { epilogue::residual_rms(ops.d(i), ops.a(i), ops.b(i), rr, choice, stream); }, "tile"},
          {"cross_entropy_partials", [&](int i) { epilogue::cross_entropy_partials(ops.d(i), ops.a(i), ops.b(i), ce, choice, stream); }, "online"}};
      std::vector<std::vector<double>> all;
      interleaved_rounds(v, ops.count(), 1, 2, stream, &all);  // warm-up
      const int reps = std::max(2, std::min(10, int(40.0 / std::max(median(all[0]), 0.01))));
      auto per_round = interleaved_rounds(v, ops.count(), args.rounds, reps, stream, &all);
      // bias_silu_col_sum and residual_rms compose several families (per-col reduce + element-wise
      // + broadcast; tile load + tile store + per-row reduce + broadcast): filed under the costliest.
      for (std::size_t i = 2; i < v.size(); ++i) {
        rows.push_back({v[i].family, v[i].name, s.label(), gemm::to_string(config), median(all[i]),
                        median(all[1]), median(all[0]), median_ratio(per_round[i], per_round[1])});
        const Row& r = rows.back();
        std::printf("%-11s %-22s %-10s %-22s %.3f ms  plain %.3f  cuBLAS %.3f  ×plain %.3f\n",
                    r.family.c_str(), r.program.c_str(), r.shape.c_str(), r.config.c_str(), r.ms,
                    r.plain_ms, r.cublas_ms, r.over_plain);
        std::fflush(stdout);
      }
    }
  }
  if (!args.json.empty()) {
    std::ofstream f(args.json);
    write_json_header(f, args, prop.name);
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
  return 0;
}

}  // namespace coda::bench
