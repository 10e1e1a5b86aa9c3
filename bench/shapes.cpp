// SPDX-License-Identifier: BSD-3-Clause
#include "shapes.hpp"

namespace coda::bench {
namespace {

struct Model {
  const char* name;
  int hidden, heads, kv_heads, mlp;
};
// Llama-3.2 1B, Llama-3.1 8B and 70B.
const Model kModels[] = {{"1B", 2048, 32, 8, 8192}, {"8B", 4096, 32, 8, 14336},
                         {"70B", 8192, 64, 8, 28672}};
constexpr int kVocab = 128256;

bool listed(const std::string& list, const std::string& item) {
  if (list.empty() || list == "all") return true;
  return ("," + list + ",").find("," + item + ",") != std::string::npos;
}

}  // namespace

std::vector<GemmShape> llama3_gemm_shapes(int tokens, const std::string& models,
                                          const std::string& passes) {
  std::vector<GemmShape> shapes;
  for (const Model& m : kModels) {
    if (!listed(models, m.name)) continue;
    const int head_dim = m.hidden / m.heads;
    struct Linear { const char* name; int out, in; };
    const Linear linears[] = {{"qkv", m.hidden + 2 * m.kv_heads * head_dim, m.hidden},
                              {"o", m.hidden, m.hidden},
                              {"gate_up", 2 * m.mlp, m.hidden},
                              {"down", m.hidden, m.mlp},
                              {"lm_head", kVocab, m.hidden}};
    for (const Linear& l : linears) {
      if (listed(passes, "fwd"))
        shapes.push_back({m.name, l.name, "fwd", gemm::OperandLayout::kAkBk, tokens, l.out, l.in});
      if (listed(passes, "dgrad"))
        shapes.push_back({m.name, l.name, "dgrad", gemm::OperandLayout::kAkBn, tokens, l.in, l.out});
      if (listed(passes, "wgrad"))
        shapes.push_back({m.name, l.name, "wgrad", gemm::OperandLayout::kAmBn, l.out, l.in, tokens});
    }
  }
  return shapes;
}

}  // namespace coda::bench
