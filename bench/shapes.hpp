// SPDX-License-Identifier: BSD-3-Clause
// The GEMMs of a Llama-3 layer and LM head (docs/benchmarks.md §1), forward and both backward
// GEMMs.
#pragma once

#include <string>
#include <vector>

#include "coda/gemm/config.hpp"

namespace coda::bench {

struct GemmShape {
  std::string model;       // "1B", "8B", "70B"
  std::string projection;  // "qkv", "o", "gate_up", "down", "lm_head"
  std::string pass;        // "fwd" (Y = X·Wᵀ), "dgrad" (dX = dY·W), "wgrad" (dW = dYᵀ·X)
  gemm::OperandLayout layout;
  int m, n, k;
  std::string label() const { return model + " " + projection; }
};

// Every (model, projection, pass) at `tokens` tokens, optionally filtered by comma lists.
std::vector<GemmShape> llama3_gemm_shapes(int tokens, const std::string& models,
                                          const std::string& passes);

}  // namespace coda::bench
