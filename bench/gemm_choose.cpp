// SPDX-License-Identifier: BSD-3-Clause
// `coda-bench choose --gpu h100|h200|untuned|h100-rule|h200-rule`: the kernel a GPU would run, for
// each line on stdin, printed as "<line>  <choice>" in the tuners' spelling (`-rule`: a fused op's
// choice from that GPU's rule alone, as where no table row is near; the plain GEMM as usual):
//   "fwd|dgrad|wgrad M N K"   the plain GEMM (gemm::choose_kernel_for)
//   "op NAME M N K"           a fused op at its call's M × N × K (ops::detail::op_choice: the
//                             GPU's op table, else the op's fallback; `untuned`: the fallback)
// Runs on any machine (no GPU): scripts/gemm_rule_replay.py and scripts/rule_coverage.py price a
// choice on the GPU's tuner logs before the GPU runs it.
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "coda/gemm/choose_config.hpp"
#include "coda/ops/op_key.hpp"
#include "gemm_bench.hpp"
#include "gemm_variants.hpp"
#include "src/ops/op_checks.hpp"

namespace coda::bench {

int run_choose(const std::string& gpu_arg) {
  // "h100-rule" / "h200-rule": that GPU's rule alone (its fallback, fitted), no op table.
  const bool rule_only = gpu_arg.size() > 5 && gpu_arg.compare(gpu_arg.size() - 5, 5, "-rule") == 0;
  const std::string gpu_name = rule_only ? gpu_arg.substr(0, gpu_arg.size() - 5) : gpu_arg;
  const gemm::TunedGpu gpu = gpu_name == "h100"   ? gemm::TunedGpu::kH100
                             : gpu_name == "h200" ? gemm::TunedGpu::kH200
                                                  : gemm::TunedGpu::kUntuned;
  if (gpu == gemm::TunedGpu::kUntuned && (rule_only || gpu_name != "untuned")) {
    std::fprintf(stderr,
                 "coda-bench choose: --gpu takes h100, h200, untuned, h100-rule or h200-rule; "
                 "got %s\n",
                 gpu_arg.c_str());
    return 2;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string pass, op_name;
    long m = 0, n = 0, k = 0;
    const bool op = line.rfind("op ", 0) == 0;
    if (op) in >> pass >> op_name;
    else in >> pass;
    const std::optional<ops::OpKey> key = ops::op_key_from_name(op_name);
    if (!(in >> m >> n >> k) || m <= 0 || n <= 0 || k <= 0 || m > (1L << 31) ||
        n > (1L << 31) || k > (1L << 31) || (op && !key) ||
        (!op && pass != "fwd" && pass != "dgrad" && pass != "wgrad")) {
      std::fprintf(stderr,
                   "coda-bench choose: expected \"fwd|dgrad|wgrad M N K\" or \"op NAME M N K\" "
                   "(NAME an op key, positive dims), got \"%s\"\n",
                   line.c_str());
      return 2;
    }
    gemm::KernelChoice c;
    if (op) {
      c = rule_only ? ops::detail::rule_choice(gpu, *key, m, n, k)
                    : ops::detail::op_choice(gpu, *key, m, n, k);
    } else {
      const gemm::OperandLayout layout = pass == "fwd"     ? gemm::OperandLayout::kAkBk
                                         : pass == "dgrad" ? gemm::OperandLayout::kAkBn
                                                           : gemm::OperandLayout::kAmBn;
      c = gemm::choose_kernel_for(gpu, layout, DType::kBF16, int(m), int(n), int(k));
    }
    std::printf("%s  %s\n", line.c_str(), choice_name(c).c_str());
  }
  return 0;
}

}  // namespace coda::bench
