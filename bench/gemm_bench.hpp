// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>
#include <vector>

namespace coda::bench {

struct BenchArgs {
  std::vector<int> token_counts = {16384};  // --tokens 4096,8192: gemm and tune loop over them
  int rounds = 10;
  std::string models = "all";   // comma list: 1B,8B,70B (ops: also sq2048,sq4096,sq8192)
  std::string passes = "all";   // comma list: fwd,dgrad,wgrad
  std::string ops = "all";      // ops, tune-ops: comma list of op names (rows named so)
  std::string json;             // write results here
  std::string table_out = "kernel_table.inc";
  bool autotune = false;        // ops: also time the op with the autotuner on (variant "tuned")
  bool epilogue_cost = false;   // tune-ops: also time the plain GEMM under each candidate kernel
  double min_gain = 0.02;       // tune: a pick replaces today's choice only this much faster
  int confirm_rounds = 10;      // tune: rounds of the head-to-head pick vs today's choice
  std::string commit = "unknown", date = "unknown", command;

  int tokens() const { return token_counts.front(); }  // ops, tune-ops, epilogue: the first
  std::string token_list() const {
    std::string out;
    for (int m : token_counts) out += (out.empty() ? "" : ",") + std::to_string(m);
    return out;
  }
};

int run_gemm_bench(const BenchArgs& args);
int run_tune(const BenchArgs& args);
int run_choose(const std::string& gpu);  // gemm_choose.cpp; no GPU
int run_epilogue_bench(const BenchArgs& args);
int run_ops_bench(const BenchArgs& args, bool tune);

}  // namespace coda::bench
