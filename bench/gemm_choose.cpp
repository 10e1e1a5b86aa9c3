// SPDX-License-Identifier: BSD-3-Clause
// `coda-bench choose --gpu h100|h200|untuned`: the plain GEMM's kernel choice (gemm::choose_kernel_for)
// for each line "fwd|dgrad|wgrad M N K" on stdin, printed as "<line>  <choice>" in the tuner's
// spelling. Runs on any machine (no GPU): scripts/gemm_rule_replay.py prices a changed rule on
// the GPU's tuner logs before the GPU runs it.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "coda/gemm/choose_config.hpp"
#include "gemm_bench.hpp"
#include "gemm_variants.hpp"

namespace coda::bench {

int run_choose(const std::string& gpu_name) {
  const gemm::TunedGpu gpu = gpu_name == "h100"   ? gemm::TunedGpu::kH100
                             : gpu_name == "h200" ? gemm::TunedGpu::kH200
                                                  : gemm::TunedGpu::kUntuned;
  if (gpu == gemm::TunedGpu::kUntuned && gpu_name != "untuned") {
    std::fprintf(stderr, "coda-bench choose: --gpu takes h100, h200 or untuned; got %s\n",
                 gpu_name.c_str());
    return 2;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string pass;
    int m = 0, n = 0, k = 0;
    if (!(in >> pass >> m >> n >> k) || m <= 0 || n <= 0 || k <= 0 ||
        (pass != "fwd" && pass != "dgrad" && pass != "wgrad")) {
      std::fprintf(stderr, "coda-bench choose: expected \"fwd|dgrad|wgrad M N K\", got \"%s\"\n",
                   line.c_str());
      return 2;
    }
    const gemm::OperandLayout layout = pass == "fwd"     ? gemm::OperandLayout::kAkBk
                                       : pass == "dgrad" ? gemm::OperandLayout::kAkBn
                                                         : gemm::OperandLayout::kAmBn;
    const gemm::KernelChoice c = gemm::choose_kernel_for(gpu, layout, DType::kBF16, m, n, k);
    std::printf("%s %d %d %d  %s\n", pass.c_str(), m, n, k, choice_name(c).c_str());
  }
  return 0;
}

}  // namespace coda::bench
