// SPDX-License-Identifier: BSD-3-Clause
// coda-bench: the library's benchmarks against cuBLAS, measured in the same process.
//   coda-bench gemm [--models 1B,8B,70B] [--passes fwd,dgrad,wgrad] [--rounds N]
//                   [--tokens M[,M...]] [--json results.json]
//   coda-bench tune [--models ...] [--passes ...] [--tokens M[,M...]] [--table-out kernel_table.inc]
//                   [--rounds N] [--confirm-rounds N] [--min-gain 0.02]
//                  (a pick replaces the choice the GPU makes today only where fresh head-to-head
//                  rounds confirm it --min-gain faster; gemm_tune.cu)
//   coda-bench choose --gpu h100|h200|untuned[|h100-rule|h200-rule]  < "fwd|dgrad|wgrad M N K" or
//                  "op NAME M N K" lines
//                  (the kernel that GPU would run per line, on any machine: gemm_choose.cpp)
//   coda-bench epilogue [--rounds N] [--json results.json]
//   coda-bench ops [--fwd|--bwd] [--models 1B,8B,70B,sq2048,sq4096,sq8192] [--ops a,b]
//                  [--rounds N] [--tokens M] [--autotune] [--json results.json]
//                  (--autotune: the op with the autotuner on as a fourth variant, tuned in the
//                  warm-up; rule and tuned kernels in the same interleaved rounds)
//   coda-bench tune-ops [--models ...] [--ops a,b] [--rounds N] [--table-out op_table.inc]
//                       [--epilogue-cost]
//                  (--epilogue-cost: each candidate also against the plain GEMM under the same
//                  kernel, its "plain twin": fused / twin is what the epilogue costs in that kernel)
// CODA_COMMIT and CODA_DATE label the JSON (scripts/device-run.sh sets them).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "gemm_bench.hpp"

int main(int argc, char** argv) {
  using coda::bench::BenchArgs;
  if (argc < 2) {
    std::fprintf(stderr, "usage: coda-bench {gemm|tune|choose|epilogue|ops|tune-ops} [options]\n");
    return 2;
  }
  const std::string command = argv[1];
  if (command == "choose") {  // no GPU, its own one flag
    if (argc != 4 || std::string(argv[2]) != "--gpu") {
      std::fprintf(stderr,
                   "usage: coda-bench choose --gpu h100|h200|untuned|h100-rule|h200-rule < shapes\n");
      return 2;
    }
    return coda::bench::run_choose(argv[3]);
  }
  BenchArgs args;
  for (int i = 0; i < argc; ++i) args.command += (i ? " " : "") + std::string(argv[i]);
  if (const char* c = std::getenv("CODA_COMMIT")) args.commit = c;
  if (const char* d = std::getenv("CODA_DATE")) args.date = d;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--fwd" || flag == "--bwd") {  // ops: which pass (same as --passes fwd|bwd)
      args.passes = flag.substr(2);
      continue;
    }
    if (flag == "--autotune") {  // ops: a fourth variant, the op with the autotuner on
      args.autotune = true;
      continue;
    }
    if (flag == "--epilogue-cost") {  // tune-ops: each candidate against its own plain GEMM
      args.epilogue_cost = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "coda-bench: %s needs a value\n", flag.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    if (flag == "--models") args.models = value;
    else if (flag == "--passes") args.passes = value;
    else if (flag == "--ops") args.ops = value;
    else if (flag == "--rounds") args.rounds = std::stoi(value);
    else if (flag == "--tokens") {
      args.token_counts.clear();
      for (std::size_t at = 0; at != std::string::npos;) {
        const std::size_t comma = value.find(',', at);
        args.token_counts.push_back(std::stoi(value.substr(at, comma - at)));
        if (args.token_counts.back() <= 0) {
          std::fprintf(stderr, "coda-bench: --tokens takes positive token counts, got %s\n", value.c_str());
          return 2;
        }
        at = comma == std::string::npos ? comma : comma + 1;
      }
    }
    else if (flag == "--min-gain") args.min_gain = std::stod(value);
    else if (flag == "--confirm-rounds") args.confirm_rounds = std::stoi(value);
    else if (flag == "--json") args.json = value;
    else if (flag == "--table-out") args.table_out = value;
    else {
      std::fprintf(stderr, "coda-bench: unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    if (command == "gemm") return coda::bench::run_gemm_bench(args);
    if (command == "tune") return coda::bench::run_tune(args);
    if (command == "epilogue") return coda::bench::run_epilogue_bench(args);
    if (command == "ops") return coda::bench::run_ops_bench(args, false);
    if (command == "tune-ops") return coda::bench::run_ops_bench(args, true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coda-bench: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "coda-bench: unknown command %s (gemm, tune, choose, epilogue, ops, tune-ops)\n", command.c_str());
  return 2;
}
